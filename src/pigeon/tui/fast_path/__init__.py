"""Pigeon's fast path through Textual: the only place that uses Textual's private names.

The mail screen's frames (:mod:`.frames`, with the compositor of :mod:`.compositor`), the key path
(:mod:`.keys`) and the panes' focus and scrollbars (:mod:`.panes`) each make a key's frame sooner than Textual's
stock path would. Each runs only when :mod:`.guard` lets it: the installed Textual is one they were tested with,
every private name they use is there, and ``PIGEON_STOCK_FRAMES`` does not turn them off; otherwise Textual's
stock path runs everywhere and the log says why in one line. The architecture test keeps Textual's private names
out of every other module. docs/fast-path.md has what each piece buys.

The mail screen calls :func:`attach` (it does not inherit anything from here).
"""

from __future__ import annotations

from typing import Any
from weakref import WeakKeyDictionary

from textual.screen import Screen

from pigeon.tui.fast_path.frames import FOCUS_FRAME_WAIT, Frames
from pigeon.tui.fast_path.guard import SWITCH, TESTED_TEXTUAL, forget, running, why_stock
from pigeon.tui.fast_path.keys import run_bound_key
from pigeon.tui.fast_path.panes import (
    SteadyScrollBar,
    quiet_focus,
    set_subtitle_quietly,
    set_title_quietly,
    steady_vertical_scrollbar,
)

__all__ = [
    "FOCUS_FRAME_WAIT",
    "SWITCH",
    "TESTED_TEXTUAL",
    "Frames",
    "SteadyScrollBar",
    "attach",
    "attached",
    "forget",
    "quiet_focus",
    "run_bound_key",
    "running",
    "set_subtitle_quietly",
    "set_title_quietly",
    "steady_vertical_scrollbar",
    "why_stock",
]

_frames: WeakKeyDictionary[Screen[Any], Frames] = WeakKeyDictionary()


def attach(screen: Screen[Any]) -> Frames:
    """Give ``screen`` the fast path's frames (Textual's own when the guard says no): its ``draw_key`` and
    ``after_focus_frame`` delegate to what this returns."""
    why_stock(screen.app, screen)
    frames = Frames(screen)
    _frames[screen] = frames
    return frames


def attached(screen: Screen[Any]) -> Frames | None:
    """The frames :func:`attach` gave ``screen``, if any."""
    return _frames.get(screen)
