"""Whether the fast path runs: the installed Textual is one it was tested with, every private name it uses is
there, and ``PIGEON_STOCK_FRAMES`` does not turn it off. Otherwise Textual's stock path runs, and one line in the
log says why.

``PIGEON_STOCK_FRAMES=1`` turns the whole fast path off; a comma-separated list of pieces (:data:`PIECES`) turns
those off alone (for measuring each piece against the stock path).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from textual.app import App
from textual.screen import Screen
from textual.scrollbar import ScrollBar
from textual.widget import Widget

log = logging.getLogger("pigeon.tui.fast_path")

TESTED_TEXTUAL = frozenset({"8.2.8"})
"""The Textual versions the fast path was tested against (``tests/tui/test_key_path.py`` and friends)."""

SWITCH = "PIGEON_STOCK_FRAMES"
PIECES = (
    "compositor",
    "focus_frame",
    "resize",
    "layout_repaint",
    "draw_key",
    "key_layout",
    "key_path",
    "pane_focus",
    "scrollbar",
)

NEEDED_ON_CLASSES: dict[type, tuple[str, ...]] = {
    App: ("_begin_batch", "_end_batch", "_start_widget"),
    Screen: ("_screen_resized", "_refresh_layout", "_on_update", "_compositor_refresh", "_binding_chain"),
    Widget: ("_check_refresh", "_on_focus", "_on_blur", "_clear_arrangement_cache"),
    ScrollBar: ("render",),
}
"""The private names of Textual the fast path calls or replaces, by the class that defines them."""

NEEDED_ON_COMPOSITOR = ("_get_renders", "_dirty_regions", "render_partial_update", "visible_widgets")
NEEDED_ON_APP = ("_batch_count", "_message_queue")
NEEDED_ON_SCREEN = (
    "_compositor",
    "_dirty_widgets",
    "_layout_widgets",
    "_size",
    "_layout_required",
    "_scroll_required",
    "_repaint_required",
    "_recompose_required",
    "_refresh_styles_required",
    "_repaint_regions",
    "_vertical_scrollbar",
    "_horizontal_scrollbar",
    "_border_title",
    "_layout_updates",
)
"""Instance attributes Textual sets in ``__init__`` (the screen is a widget: it has a widget's as well)."""

_verdict: str | None = None  # why the fast path is off ("" while it runs); None until first asked
_screen_checked = False


def why_stock(app: App[Any], screen: Screen[Any] | None = None) -> str:
    """Why the stock path runs ("" when the fast path does): decided at first use (the screen's attributes at the
    first screen's), logged once."""
    global _verdict, _screen_checked
    if os.environ.get(SWITCH, "").strip() == "1":
        reason = f"{SWITCH}=1 in the environment"
        if _verdict is None:
            _verdict = reason
            log.info("Pigeon's fast path is off, Textual's stock path runs: %s", reason)
        return reason
    if _verdict is None:
        _verdict = _check(app)
        if _verdict:
            log.warning("Pigeon's fast path is off, Textual's stock path runs: %s", _verdict)
    if screen is not None and not _screen_checked and not _verdict:
        _screen_checked = True
        missing = [f"Screen.{name}" for name in NEEDED_ON_SCREEN if not hasattr(screen, name)]
        if missing:
            _verdict = f"Textual lacks {', '.join(missing)}"
            log.warning("Pigeon's fast path is off, Textual's stock path runs: %s", _verdict)
    return _verdict


def running(app: App[Any], piece: str) -> bool:
    """Whether ``piece`` of the fast path runs on ``app``."""
    if why_stock(app):
        return False
    off = os.environ.get(SWITCH, "")
    return piece not in {name.strip() for name in off.split(",")}


def forget() -> None:
    """Decide again at next use (tests that fake another Textual, or set the switch)."""
    global _verdict, _screen_checked
    _verdict = None
    _screen_checked = False


def installed_textual() -> str:
    """The installed Textual's version, read from its distribution's folder name (``importlib.metadata`` would
    load the email package before the first frame)."""
    import textual

    folder = Path(textual.__file__).parent.parent
    found = sorted(folder.glob("textual-*.dist-info"))
    return found[0].name.removeprefix("textual-").removesuffix(".dist-info") if len(found) == 1 else "unknown"


def _check(app: App[Any]) -> str:
    installed = installed_textual()
    if installed not in TESTED_TEXTUAL:
        return f"Textual {installed} is not a version it was tested with ({', '.join(sorted(TESTED_TEXTUAL))})"
    missing = [
        f"{cls.__name__}.{name}" for cls, names in NEEDED_ON_CLASSES.items() for name in names if not hasattr(cls, name)
    ]
    missing += [f"App.{name}" for name in NEEDED_ON_APP if not hasattr(app, name)]
    try:
        from textual._compositor import Compositor
    except ImportError:
        missing.append("textual._compositor.Compositor")
    else:
        compositor = Compositor()
        missing += [f"Compositor.{name}" for name in NEEDED_ON_COMPOSITOR if not hasattr(compositor, name)]
    if missing:
        return f"Textual {installed} lacks {', '.join(missing)}"
    return ""
