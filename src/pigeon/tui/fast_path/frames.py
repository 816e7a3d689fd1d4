"""How the mail screen's frames are made on the fast path: only the lines a key changed (:mod:`.compositor`),
drawn as soon as the key's binding has run, a move of the focus in one frame, and no layout for a resize to the
size the screen has.

Textual restyles the widget that lost the focus and the one that took it when their Blur and Focus events arrive,
each from its own queue, and a frame often fell between: the reader's new look first, the list's and the key bar's
a frame later. Here the frame waits until both events are handled, at most ``FOCUS_FRAME_WAIT``, and is drawn
there and then when repaints are all that wait; what should run after it (:meth:`Frames.after_focus_frame`) runs
then. Each piece is installed on the one screen it is attached to, and only when the guard lets it run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from textual.geometry import Size
from textual.screen import Screen
from textual.widget import Widget

from pigeon.tui.fast_path.compositor import LineCompositor
from pigeon.tui.fast_path.guard import running

FOCUS_FRAME_WAIT = 0.05  # seconds a focus move's frame waits at most for both widgets' new look


class _DirtyWidgets(set[Widget]):
    """The screen's widgets to draw at its next frame; a widget drawn early by :meth:`Frames.draw_key` whose update
    message then arrives with nothing left to draw is not added (Textual would make an empty frame for it)."""

    drawn_early: set[Widget]

    def add(self, widget: Widget) -> None:
        if widget in self.drawn_early and not widget._repaint_regions:
            self.drawn_early.discard(widget)
            return
        super().add(widget)


def _install(target: object, name: str, replacement: Callable[..., Any]) -> None:
    """Give ``target`` (one screen) its own ``name``, in front of its class's."""
    setattr(target, name, replacement)


class Frames:
    """The frames of one screen (see the module); with the fast path off, Textual's own."""

    def __init__(self, screen: Screen[Any]) -> None:
        self.screen = screen
        app = screen.app
        self.quick_keys = running(app, "draw_key")
        self.key_layouts = self.quick_keys and running(app, "key_layout")
        self.focus_frames = running(app, "focus_frame")
        self.holding = 0  # focus moves whose frame waits for both widgets' new look
        self.frame_held = False  # a frame came meanwhile
        self.after_frame: list[Callable[[], object]] = []  # to run once the focus move's frame is out
        if running(app, "compositor"):
            screen._compositor = LineCompositor()  # a key's frame draws the lines it changed
        if running(app, "resize"):
            self._textual_resized = screen._screen_resized
            _install(screen, "_screen_resized", self._screen_resized)
        if running(app, "layout_repaint"):
            self._textual_layout = screen._refresh_layout
            _install(screen, "_refresh_layout", self._refresh_layout)
        if self.quick_keys:
            dirty = _DirtyWidgets(screen._dirty_widgets)
            dirty.drawn_early = set()
            screen._dirty_widgets = dirty
        self.moving = False  # inside Textual's set_focus
        if self.focus_frames:
            self._textual_set_focus = screen.set_focus
            self._textual_refresh = screen._compositor_refresh
            self._textual_after_refresh = screen.call_after_refresh
            _install(screen, "set_focus", self._set_focus)
            _install(screen, "_compositor_refresh", self._compositor_refresh)
            _install(screen, "call_after_refresh", self._call_after_refresh)

    def draw_key(self, *widgets: Widget) -> None:
        """Draw what a key changed in ``widgets`` at once, when that is all it asked for: a repaint of their own
        lines (and their scrollbars'), no layout, no restyle. Textual would reach the same frame through five turns
        of the event loop (a widget's idle, an update message to the screen, the screen's idle, its update timer).
        Anything else the key changed is drawn the usual way, a frame later."""
        shown = [w for w in widgets if w._repaint_required and w.screen is self.screen]
        if self.key_layouts and any(self._lay_out_now(w) for w in widgets if w.screen is self.screen):
            return
        if self.quick_keys and shown:
            self._draw_repaints(shown)

    def after_focus_frame(self, callback: Callable[[], object]) -> None:
        """Run ``callback`` once the frame of the focus move under way is out (at once if none is), as
        ``call_after_refresh`` would if the focus move's batch did not hold its frame back."""
        if self.holding:
            self.after_frame.append(callback)
        else:
            self.screen.call_after_refresh(callback)

    def _set_focus(self, widget: Widget | None, scroll_visible: bool = True, from_app_focus: bool = False) -> None:
        """Move the focus, and show it in one frame. The panes never scroll into view (the screen does not scroll;
        asked to, Textual lays the screen out again a frame after the move)."""
        blurred = self.screen.focused
        self.moving = True
        try:
            self._textual_set_focus(widget, scroll_visible=False, from_app_focus=from_app_focus)
        finally:
            self.moving = False
        if self.screen.focused is not blurred:
            self.one_frame([node for node in (blurred, self.screen.focused) if node is not None])
        elif not self.holding:  # no frame to wait for
            waiting, self.after_frame = self.after_frame, []
            for callback in waiting:
                self._textual_after_refresh(callback)

    def _call_after_refresh(self, callback: Callable[..., object], *args: Any, **kwargs: Any) -> bool:
        """Textual's, except that while a focus move's frame is held, "after the refresh" is after that frame.
        (Textual's set_focus asks for the key bindings again after the refresh: run before the held frame, on a
        busy machine, that worked out the key bar's keys a second time before the frame.)"""
        if self.holding or self.moving:
            self.after_frame.append(partial(callback, *args, **kwargs))
            return True
        return self._textual_after_refresh(callback, *args, **kwargs)

    def _screen_resized(self, size: Size) -> None:
        """Textual lays the whole screen out again on every resize, even to the size it has (at start-up the screen
        is told the terminal's size three times, each drawing the whole screen again): a resize to the size the
        screen was laid out at changes nothing."""
        if size != self.screen._size:
            self._textual_resized(size)

    def _refresh_layout(self, size: Size | None = None, scroll: bool = False) -> None:
        """Textual's layout, without the second paint it left behind: a widget the layout gave a new size asks to
        be drawn whole, although the layout's frame draws it whole (its region changed), and that repaint went out
        with the next key (the first `j` after the offline banner came wrote the whole list again)."""
        screen = self.screen
        whole = not scroll or bool(screen._layout_widgets)  # (a scroll alone redraws only what it exposed)
        sizes = {widget: widget._size for widget in screen._compositor.visible_widgets}
        self._textual_layout(size, scroll)
        if not whole or not screen.is_current or screen.app._batch_count:
            return  # (the layout's frame does not draw them whole now: the repaint stays)
        for widget in screen._compositor.visible_widgets:
            if widget in sizes and sizes[widget] != widget._size:
                widget._repaint_regions.clear()

    def _lay_out_now(self, widget: Widget) -> bool:
        """When the key gave a widget in ``widget`` a new size (the reader's window of a long thread moved: its
        lines, another height, and a scroll), lay the screen out now and draw one frame with all of it, the
        scrollbars' new thumbs too. Textual would reach the layout two turns of the screen's queue later (the
        widget's idle sends a message, then the screen's update timer lays out), and draw the scrollbars a frame
        after that. False, and nothing done, when it asked for no layout, or for more (a restyle, a recompose)."""
        screen = self.screen
        if screen.app._batch_count or not screen.is_current or screen._recompose_required or not widget.display:
            return False
        inside = list(widget.walk_children(Widget, with_self=True))
        nodes = [node for node in inside if node._layout_required]
        if not nodes:  # (a scroll alone is drawn the usual way: laid out here, it measured no quicker)
            return False
        if any(node._refresh_styles_required or node._recompose_required for node in inside):
            return False
        scroll, widget._scroll_required = widget._scroll_required, False
        for node in nodes:  # (what Textual's ``_check_refresh`` and the screen's ``_on_layout`` do for each)
            node._layout_required = False
            asked: Widget = node
            for ancestor in node.ancestors:
                if not isinstance(ancestor, Widget):
                    break
                ancestor._clear_arrangement_cache()
                ancestor._layout_updates += 1
                screen._layout_widgets.setdefault(ancestor, set()).add(asked)
                if not ancestor.styles.auto_dimensions:
                    break
                asked = ancestor
        bars = (widget._vertical_scrollbar, widget._horizontal_scrollbar)

        def to_draw(nodes: Iterable[Widget | None]) -> bool:
            """Put the repaints ``nodes`` asked for among the screen's dirty widgets (no update message then)."""
            asked = [node for node in nodes if node is not None and node._repaint_required and node.display]
            for node in asked:
                node._repaint_required = False
                set.add(screen._dirty_widgets, node)
            return bool(asked)

        to_draw((*inside, *bars))
        screen._refresh_layout(scroll=scroll or screen._scroll_required)  # (draws the frame)
        screen._layout_required = screen._scroll_required = False
        screen._dirty_widgets.clear()
        if to_draw(bars):  # (the layout gave them a new thumb in a region of the same size, which it does not draw)
            screen._compositor.update_widgets(screen._dirty_widgets)
            screen._compositor_refresh()
            screen._dirty_widgets.clear()
        return True

    def _draw_repaints(self, widgets: list[Widget]) -> bool:
        """Draw the repaints ``widgets`` (and their scrollbars) asked for, now, if a repaint is all that any of them
        asked for and the screen waits for nothing else (no layout, scroll, restyle or recompose); False if not,
        and Textual's frame comes as usual."""
        screen = self.screen
        if (
            screen.app._batch_count
            or not screen.is_current
            or screen._layout_required
            or screen._scroll_required
            or screen._repaint_required
            or screen._recompose_required
        ):
            return False
        shown = [widget for widget in widgets if widget.display and widget.screen is screen]
        for widget in shown:
            if (
                widget._layout_required
                or widget._scroll_required
                or widget._refresh_styles_required
                or widget._recompose_required
            ):
                return False
        dirty = screen._dirty_widgets
        early: set[Widget] = set()
        for widget in shown:
            for node in (widget, widget._vertical_scrollbar, widget._horizontal_scrollbar):
                if node is None or not node.display:
                    continue
                if node._repaint_required:
                    node._repaint_required = False  # (so its idle asks for no frame of its own)
                    set.add(dirty, node)
                elif node._repaint_regions:  # its update message waits in the screen's queue
                    early.add(node)
                    set.add(dirty, node)
        if not dirty:
            return False
        if isinstance(dirty, _DirtyWidgets):
            dirty.drawn_early = early
        screen._compositor.update_widgets(dirty)
        screen._compositor_refresh()
        return True

    def _compositor_refresh(self) -> None:
        """Textual's frame; while a focus move's frame waits, a frame made meanwhile (a layout renders at once) is
        kept for it: Textual would render it and draw nothing (the app ignores frames in a batch)."""
        if self.holding:
            self.frame_held = True
            return
        self._textual_refresh()

    def one_frame(self, widgets: list[Widget]) -> None:
        """Hold the screen's frames until ``widgets`` have handled their Focus and Blur (at most
        ``FOCUS_FRAME_WAIT``), then draw one frame for all of them."""
        screen = self.screen
        app = screen.app
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
                self.holding -= 1
                # Restyled with them, their scrollbars repaint as well (the same look), and would ask for a frame of
                # their own a few frames later: they ask now, in time for this one.
                for widget in widgets:
                    for bar in (widget._vertical_scrollbar, widget._horizontal_scrollbar):
                        if bar is not None:
                            bar._check_refresh()
                app._end_batch()  # (Textual's own batch_update, which a with block cannot span)
                if self.frame_held and not self.holding:
                    self.frame_held = False
                    self._compositor_refresh()
                elif not self.holding and self.quick_keys:
                    # Drawn now when only repaints wait, not after the screen's queue (the widgets' update
                    # messages) and its update timer.
                    self._draw_repaints(list(screen.walk_children(Widget)))
                if not self.holding:
                    for callback in self.after_frame:
                        screen.call_later(callback)
                    self.after_frame.clear()
                screen.check_idle()

        def give_up() -> None:  # a widget removed meanwhile never answers
            nonlocal waiting
            if waiting >= 0:
                waiting = 0
                finish()

        app._begin_batch()
        self.holding += 1
        for widget in widgets:
            widget.call_later(handled)  # queued behind its Focus or Blur
        screen.set_timer(FOCUS_FRAME_WAIT, give_up)
