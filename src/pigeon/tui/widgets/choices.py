"""A dialog's list of choices: Textual's option list, with j and k beside the arrows as in every list of Pigeon's."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import OptionList


class Choices(OptionList):
    """The choices of a dialog (snooze times, lanes, links, a pick): enter takes the one under the cursor."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", id="choices.down", show=False),
        Binding("k", "cursor_up", "Up", id="choices.up", show=False),
    ]
