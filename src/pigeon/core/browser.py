"""Which browser opens a web link, and whether it needs the terminal. Python's ``webbrowser`` is not used: with no
desktop it starts a console browser (w3m, lynx) on the app's own terminal, and it passes on Pigeon's environment.

The rule: ``$BROWSER`` first (a list of commands split by the path separator, ``%s`` standing for the link, as
``webbrowser`` and ``xdg-open`` read it); else the desktop's handler where there is a desktop (``open`` on macOS,
the system on Windows, ``xdg-open`` under X11 or Wayland); else a console browser. A console browser (known by its
name, or any ``$BROWSER`` where there is no desktop: ``sensible-browser`` over SSH starts w3m) runs in the terminal
while the app is suspended; any other program runs detached, without the terminal.
No Textual here.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from pigeon.sanitize import clean_line

CONSOLE_BROWSERS = frozenset(
    [
        "www-browser",
        "w3m",
        "lynx",
        "links",
        "links2",
        "elinks",
        "browsh",
        "carbonyl",
        "netrik",
        "retawq",
        "edbrowse",
        "chawan",
        "cha",
    ]
)
"""Browsers that draw in the terminal they are started from."""
CONSOLE_FALLBACK = ("www-browser", "w3m", "lynx", "elinks", "links")
"""Tried in this order when nothing else can open a link (as Debian's ``sensible-browser`` does)."""


@dataclass(frozen=True)
class Browser:
    command: list[str]
    """The whole command, the link in it (``[]``: the system opens it, on Windows)."""
    in_terminal: bool = False
    """It draws in the terminal: run it while the app is suspended, never beside it."""


class BadBrowserVariable(ValueError):
    """``$BROWSER`` cannot be read, or names no program found here (the message says which)."""


def system_handler() -> list[str]:
    """The command that opens a file or link as the desktop would: ``open`` on macOS, ``xdg-open`` elsewhere
    (``[]`` on Windows, where ``os.startfile`` does it)."""
    if sys.platform == "darwin":
        return ["open"]
    if sys.platform.startswith("win"):
        return []
    return ["xdg-open"]


def _from_variable(value: str, target: str) -> Browser | None:
    for entry in value.split(os.pathsep):
        try:
            words = shlex.split(entry)
        except ValueError:
            raise BadBrowserVariable(f"$BROWSER cannot be read: {clean_line(entry, limit=60)!r}") from None
        if not words or shutil.which(words[0]) is None:
            continue
        if any("%s" in word for word in words):
            command = [word.replace("%s", target) if "%s" in word else word.replace("%%", "%") for word in words]
        else:
            command = [*words, target]
        return Browser(command, in_terminal=Path(words[0]).name in CONSOLE_BROWSERS or not has_desktop())
    return None


def has_desktop() -> bool:
    """Whether links can open in a window: macOS and Windows always, elsewhere an X11 or Wayland display."""
    if sys.platform == "darwin" or sys.platform.startswith("win"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def browser_for(target: str) -> Browser | None:
    """The browser for the web link ``target`` by the rule above (None: none can be started here);
    :class:`BadBrowserVariable` for a ``$BROWSER`` that names nothing usable."""
    variable = os.environ.get("BROWSER", "").strip()
    if variable:
        chosen = _from_variable(variable, target)
        if chosen is None:
            raise BadBrowserVariable("no program $BROWSER names was found")
        return chosen
    if has_desktop():
        handler = system_handler()
        if not handler or shutil.which(handler[0]):
            return Browser([*handler, target] if handler else [])
    for name in CONSOLE_FALLBACK:
        if shutil.which(name):
            return Browser([name, target], in_terminal=True)
    return None
