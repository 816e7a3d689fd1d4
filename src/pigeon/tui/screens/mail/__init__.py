"""The mail screen (:mod:`.screen`) and the parts it holds, each in a module of its own."""

from pigeon.tui.screens.mail.screen import MainScreen

__all__ = ["MainScreen"]
