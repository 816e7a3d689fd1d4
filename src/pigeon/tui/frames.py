"""How the mail screen's frames are made: only the lines a key changed (:mod:`pigeon.tui.compositor`), drawn as
soon as the key's binding has run, and a move of the focus in one frame.

Textual restyles the widget that lost the focus and the one that took it when their Blur and Focus events arrive,
each from its own queue, and a frame often fell between: opening a thread drew the reader's new look, then some 30
ms later the list's, the key bar's and the scrollbars' (measured at a pseudo-terminal, issue 16). Here the frame
waits until both events are handled, at most ``FOCUS_FRAME_WAIT``.
"""

from __future__ import annotations

from textual.geometry import Size
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

    def _screen_resized(self, size: Size) -> None:
        """Textual lays the whole screen out again on every resize, even to the size it has: at start-up the screen
        is sent the terminal's size three times (the driver's, the app's own at its first idle, and the screen's
        first layout telling the screen itself), and each drew the whole screen again just after the first frame
        (issue 16). A resize to the size the screen was laid out at changes nothing."""
        if size != self._size:
            super()._screen_resized(size)

    def draw_key(self, widget: Widget) -> None:
        """Draw what a key's binding changed in ``widget`` at once, when that is all it asked for: a repaint of its
        own lines (and its scrollbar's), no layout, no restyle. Textual would reach the same frame through five
        turns of the event loop (the widget's idle, an update message to the screen, the screen's idle, its update
        timer): a third of a millisecond of a 2 ms ``j`` at a pseudo-terminal (issue 16). Anything else the key
        changed is drawn the usual way, a frame later."""
        if (
            self.app._batch_count
            or not self.is_current
            or self._layout_required
            or self._scroll_required
            or self._repaint_required
            or self._recompose_required
            or not widget._repaint_required
            or widget._layout_required
            or widget._scroll_required
            or widget._refresh_styles_required
            or widget._recompose_required
            or widget.screen is not self
            or not widget.display
        ):
            return
        widget._repaint_required = False
        self._dirty_widgets.add(widget)
        for bar in (widget._vertical_scrollbar, widget._horizontal_scrollbar):  # moved with a scroll
            if bar is not None and bar._repaint_required and bar.display:
                bar._repaint_required = False
                self._dirty_widgets.add(bar)
        self._compositor.update_widgets(self._dirty_widgets)
        self._compositor_refresh()

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
