"""A pane of the mail screen (sidebar, thread list, reader): its title shown as a badge in the accent colour while it
has the focus.

Moving the focus changes a pane's title line and nothing else of it (the thread list also changes its cursor's row,
:class:`pigeon.tui.widgets.thread_list.ThreadList`), and those lines are all that is drawn again. A focus cue in the
stylesheet (``:focus { border: round $accent }``) changes a cell of every line of both panes: Textual then draws
both panes whole, 12.5 of the 24 ms an Enter's frame took at a pseudo-terminal, and restyling them took 5 ms more
(1,000 threads, issue 16). So no rule of the stylesheet depends on a pane's ``:focus`` (a test holds app.tcss to it),
and a pane that takes or loses the focus is not restyled, only its title line repainted. A pane built on a Textual
widget whose own stylesheet has ``:focus`` rules (the sidebar's ``OptionList``) sets ``RESTYLE_ON_FOCUS``.

A pane also has its scrollbar styled as soon as it appears (:meth:`Pane.watch_show_vertical_scrollbar`), and drawn
again only when what it shows changed (:class:`SteadyScrollBar`).
"""

from __future__ import annotations

import contextlib
from typing import Any, ClassVar, Self

from textual import events
from textual.content import Content
from textual.dom import NoScreen
from textual.geometry import Region
from textual.scrollbar import ScrollBar
from textual.widget import Widget

FOCUSED_TITLE = "bold reverse $accent"
"""The focused pane's title: a badge in the accent colour, the pane's background as its text (any theme)."""


class SteadyScrollBar(ScrollBar):
    """A scrollbar drawn again only when what it shows changed.

    Textual restyles a widget's scrollbars with the widget, and its scrollbar-colour properties repaint them even
    when the colours stay the same: every focus move (opening a thread, going back) drew the list's and the reader's
    scrollbars anew, 5.8 of the 20 ms an Enter spent rendering lines (headless, 1,000 threads, a slow spell of this
    project's VM; issue 16). A plain ``refresh()`` that finds the look it last drew changes nothing here; any other
    refresh, or one after a change of size, position, colour or hover, is Textual's."""

    _shown: tuple[Any, ...] | None = None

    def _look(self) -> tuple[Any, ...] | None:
        parent = self.parent
        if parent is None or not self.is_mounted:
            return None
        styles = parent.styles
        return (
            self.size,
            self.thickness,
            self.grabbed,
            self.mouse_over,
            self.window_virtual_size,
            self.window_size,
            self.position,
            styles.scrollbar_color,
            styles.scrollbar_color_hover,
            styles.scrollbar_color_active,
            styles.scrollbar_background,
            styles.scrollbar_background_hover,
            styles.scrollbar_background_active,
            parent.background_colors,
            self.screen.styles.scrollbar_color,
        )

    def render(self) -> Any:
        self._shown = self._look()
        return super().render()

    def refresh(self, *regions: Any, repaint: bool = True, layout: bool = False, recompose: bool = False) -> Any:
        plain = not regions and repaint and not layout and not recompose
        if plain and self._shown is not None and self._look() == self._shown:
            return self
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)


class Pane(Widget):
    RESTYLE_ON_FOCUS: ClassVar[bool] = False
    """Restyle the pane when it takes or loses the focus (Textual's way): for a widget whose stylesheet has
    ``:focus`` rules."""

    _title = Content("")  # as set
    _shown_title = Content("")  # as shown (with the focus's colour)
    _styled_scrollbar: Widget | None = None

    @property
    def title(self) -> Content:
        """The pane's title, as set (without the focus's colour)."""
        return self._title

    @title.setter
    def title(self, title: str | Content) -> None:
        self._title = Content(title) if isinstance(title, str) else title
        self._show_title()

    def _show_title(self) -> None:
        focused = self.has_focus and self._title.plain
        title = Content.assemble(" ", self._title, " ").stylize(FOCUSED_TITLE) if focused else self._title
        shown = self._shown_title  # (Content's == compares the text alone)
        if title.plain != shown.plain or title.spans != shown.spans:
            self._shown_title = title
            # As Textual's ``border_title`` does, without its repaint of the whole pane: the title's line alone.
            self._border_title = title.expand_tabs(4).split()[0]
            self.refresh_title_line()

    def refresh_title_line(self) -> None:
        """Draw the pane's top line again (its border and title), nothing else of it."""
        if not self.is_mounted:
            self.refresh()  # (drawn whole when it first shows)
            return
        left, top = self.content_offset
        self.refresh(Region(-left, -top, self.outer_size.width, 1))

    @property
    def vertical_scrollbar(self) -> ScrollBar:
        """Textual's vertical scrollbar (made as ``Widget.vertical_scrollbar`` makes it), a :class:`SteadyScrollBar`."""
        if self._vertical_scrollbar is None:
            bar = SteadyScrollBar(vertical=True, name="vertical", thickness=self.scrollbar_size_vertical)
            bar.display = False
            self._vertical_scrollbar = bar
            self.app._start_widget(self, bar)
        return self._vertical_scrollbar

    def focus(self, scroll_visible: bool = True) -> Self:
        """Textual's, without its repaint of the whole pane (see the module)."""
        if self.RESTYLE_ON_FOCUS:
            return super().focus(scroll_visible)

        def set_focus(widget: Widget) -> None:
            with contextlib.suppress(NoScreen):
                widget.screen.set_focus(self, scroll_visible=scroll_visible)

        self.app.call_later(set_focus, self)
        return self

    def _on_focus(self, event: events.Focus) -> None:
        if not self.RESTYLE_ON_FOCUS:  # Textual's (Widget's, which this stops), without its repaint of the pane
            event.prevent_default()
            self.has_focus = True
            if self.parent is not None:
                self.parent.post_message(events.DescendantFocus(self))

    def _on_blur(self, event: events.Blur) -> None:
        if not self.RESTYLE_ON_FOCUS:
            event.prevent_default()
            self.has_focus = False
            if self.parent is not None:
                self.parent.post_message(events.DescendantBlur(self))

    def watch_has_focus(self, has_focus: bool) -> None:
        if self.RESTYLE_ON_FOCUS:
            super().watch_has_focus(has_focus)  # (Textual restyles the widget)
        self._show_title()
        self.focus_shown(has_focus)

    def focus_shown(self, has_focus: bool) -> None:
        """Draw again what else of the pane shows the focus (the title is done)."""

    def watch_show_vertical_scrollbar(self, shown: bool) -> None:
        """Textual styles a new scrollbar from the stylesheet only when its widget is next restyled: that was the
        first focus move (opening the first thread), which then laid the whole screen out again, 20-30 ms more.
        A scrollbar that appears is styled once the frame showing it is out (once: the reader's comes and goes with
        the length of the thread previewed)."""
        if shown:
            self.call_after_refresh(self._style_scrollbar)

    def _style_scrollbar(self) -> None:
        bar = self._vertical_scrollbar
        if bar is not None and bar is not self._styled_scrollbar:
            self._styled_scrollbar = bar
            self.update_node_styles(animate=False)
