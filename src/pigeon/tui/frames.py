"""How the mail screen's frames are made: only the lines a key changed (:mod:`pigeon.tui.compositor`), drawn as
soon as the key's binding has run, and a move of the focus in one frame.

Textual restyles the widget that lost the focus and the one that took it when their Blur and Focus events arrive,
each from its own queue, and a frame often fell between: opening a thread drew the reader's new look, then some 30
ms later the list's, the key bar's and the scrollbars' (measured at a pseudo-terminal, issue 16). Here the frame
waits until both events are handled, at most ``FOCUS_FRAME_WAIT``, and is drawn there and then when repaints are
all that wait; what should run after it (:meth:`QuickFrames.after_focus_frame`) runs then.
"""

from __future__ import annotations

from collections.abc import Callable

from textual import messages
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
        self._drawn_early: set[Widget] = set()  # drawn before their update message reached the screen
        self._after_frame: list[Callable[[], object]] = []  # to run once the focus move's frame is out

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
        if widget._repaint_required and widget.screen is self:
            self._draw_repaints([widget])

    def _draw_repaints(self, widgets: list[Widget]) -> bool:
        """Draw the repaints ``widgets`` (and their scrollbars) asked for, now, if a repaint is all that any of them
        asked for and the screen waits for nothing else (no layout, scroll, restyle or recompose); False if not,
        and Textual's frame comes as usual."""
        if (
            self.app._batch_count
            or not self.is_current
            or self._layout_required
            or self._scroll_required
            or self._repaint_required
            or self._recompose_required
        ):
            return False
        shown = [widget for widget in widgets if widget.display and widget.screen is self]
        for widget in shown:
            if (
                widget._layout_required
                or widget._scroll_required
                or widget._refresh_styles_required
                or widget._recompose_required
            ):
                return False
        dirty = self._dirty_widgets
        early: set[Widget] = set()
        for widget in shown:
            for node in (widget, widget._vertical_scrollbar, widget._horizontal_scrollbar):
                if node is None or not node.display:
                    continue
                if node._repaint_required:
                    node._repaint_required = False  # (so its idle asks for no frame of its own)
                    dirty.add(node)
                elif node._repaint_regions:  # its update message waits in the screen's queue
                    early.add(node)
                    dirty.add(node)
        if not dirty:
            return False
        self._drawn_early = early
        self._compositor.update_widgets(dirty)
        self._compositor_refresh()
        return True

    async def _on_update(self, message: messages.Update) -> None:
        """Textual's, except for a widget drawn early whose repaint was asked for before that frame (its update
        message was queued): nothing of it is left to draw, and Textual would make an empty frame for it."""
        widget = message.widget
        if widget in self._drawn_early and not widget._repaint_regions:
            self._drawn_early.discard(widget)
            message.stop()
            message.prevent_default()
            return
        await super()._on_update(message)

    def _compositor_refresh(self) -> None:
        """Textual's frame; while a focus move's frame waits, a frame made meanwhile (a layout renders at once) is
        kept for it: Textual would render it and draw nothing (``App._display`` ignores frames in a batch)."""
        if self._holding_frames:
            self._frame_held = True
            return
        super()._compositor_refresh()

    def after_focus_frame(self, callback: Callable[[], object]) -> None:
        """Run ``callback`` once the frame of the focus move under way is out (at once if none is), as
        ``call_after_refresh`` would if the focus move's batch did not hold its frame back."""
        if self._holding_frames:
            self._after_frame.append(callback)
        else:
            self.call_after_refresh(callback)

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
                elif not self._holding_frames:
                    # Drawn now when only repaints wait, not after the screen's queue (the widgets' update
                    # messages) and its update timer: 0.8 ms of a 5 ms Enter at a pseudo-terminal (issue 16).
                    self._draw_repaints(list(self.walk_children(Widget)))
                if not self._holding_frames:
                    for callback in self._after_frame:
                        self.call_later(callback)
                    self._after_frame.clear()
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
