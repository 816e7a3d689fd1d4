"""How the mail screen's frames are made: only the lines a key changed (:mod:`pigeon.tui.compositor`), and a move
of the focus in one frame.

Textual restyles the widget that lost the focus and the one that took it when their Blur and Focus events arrive,
each from its own queue, and a frame often fell between: opening a thread drew the reader's new look, then some 30
ms later the list's, the key bar's and the scrollbars' (measured at a pseudo-terminal, issue 16). Here the frame
waits until both events are handled, at most ``FOCUS_FRAME_WAIT``.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widget import Widget

from pigeon.tui.compositor import LineCompositor

FOCUS_FRAME_WAIT = 0.05  # seconds a focus move's frame waits at most for both widgets' new look


class QuickFrames(Screen[None]):
    """Mixed into the mail screen."""

    def __init__(self) -> None:
        super().__init__()
        self._compositor = LineCompositor()  # a key's frame draws the lines it changed
        self._holding_frames = 0  # focus moves whose frame waits for both widgets' new look
        self._frame_held = False  # a frame came meanwhile

    def set_focus(self, widget: Widget | None, scroll_visible: bool = True, from_app_focus: bool = False) -> None:
        """Move the focus, and show it in one frame (see the module). ``scroll_visible`` is Textual's, and not
        needed here."""
        blurred = self.focused
        # (The panes never scroll into view: the screen does not scroll. Asked to, Textual lays the screen out
        # again a frame after the move.)
        super().set_focus(widget, scroll_visible=False, from_app_focus=from_app_focus)
        if self.focused is not blurred:
            self._one_frame([node for node in (blurred, self.focused) if node is not None])

    def _compositor_refresh(self) -> None:
        """Textual's frame; while a focus move's frame waits, a frame made meanwhile (a layout renders at once) is
        kept for it: Textual would render it and draw nothing (``App._display`` ignores frames in a batch)."""
        if self._holding_frames:
            self._frame_held = True
            return
        super()._compositor_refresh()

    def _one_frame(self, widgets: list[Widget]) -> None:
        app = self.app
        waiting = len(widgets)

        def handled() -> None:
            nonlocal waiting
            if waiting > 0:
                waiting -= 1
                if waiting == 0:
                    finish()

        def finish() -> None:
            nonlocal waiting
            if waiting == 0:
                waiting = -1
                self._holding_frames -= 1
                # Restyled with them, their scrollbars repaint as well (the same look), and would ask for a frame of
                # their own some 40 ms later: they ask now, in time for this one.
                for widget in widgets:
                    for bar in (widget._vertical_scrollbar, widget._horizontal_scrollbar):
                        if bar is not None:
                            bar._check_refresh()
                app._end_batch()  # (Textual's own batch_update, which a with block cannot span)
                if self._frame_held and not self._holding_frames:
                    self._frame_held = False
                    self._compositor_refresh()
                self.check_idle()

        def give_up() -> None:  # a widget removed meanwhile never answers
            nonlocal waiting
            if waiting >= 0:
                waiting = 0
                finish()

        app._begin_batch()
        self._holding_frames += 1
        for widget in widgets:
            widget.call_later(handled)  # queued behind its Focus or Blur
        self.set_timer(FOCUS_FRAME_WAIT, give_up)
