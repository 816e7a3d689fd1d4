"""A pane of the mail screen (sidebar, thread list, reader): a border title in the accent colour while it has the
focus.

The stylesheet could say so (``:focus { border-title-color: $accent }``), but Textual repaints every child of a
widget whose colour rule changes: the reader's whole thread was laid out again each time it took or lost the focus,
most of the time an Enter on a previewed thread took (measured at a pseudo-terminal, issue 16). The title's colour
is part of its content here instead; the border's colour stays in the stylesheet (a border repaints the pane
alone).

A pane also has its scrollbar styled as soon as it appears (:meth:`Pane.watch_show_vertical_scrollbar`), and drawn
again only when what it shows changed (:class:`SteadyScrollBar`).
"""

from __future__ import annotations

from typing import Any

from textual.content import Content
from textual.scrollbar import ScrollBar
from textual.widget import Widget

FOCUSED_TITLE = "$accent"


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
        title = self._title.stylize(FOCUSED_TITLE) if self.has_focus else self._title
        shown = self._shown_title  # (Content's == compares the text alone)
        if title.plain != shown.plain or title.spans != shown.spans:  # a new title repaints the whole pane
            self._shown_title = self.border_title = title

    @property
    def vertical_scrollbar(self) -> ScrollBar:
        """Textual's vertical scrollbar (made as ``Widget.vertical_scrollbar`` makes it), a :class:`SteadyScrollBar`."""
        if self._vertical_scrollbar is None:
            bar = SteadyScrollBar(vertical=True, name="vertical", thickness=self.scrollbar_size_vertical)
            bar.display = False
            self._vertical_scrollbar = bar
            self.app._start_widget(self, bar)
        return self._vertical_scrollbar

    def watch_has_focus(self, has_focus: bool) -> None:
        super().watch_has_focus(has_focus)  # (Textual restyles the widget)
        self._show_title()

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
