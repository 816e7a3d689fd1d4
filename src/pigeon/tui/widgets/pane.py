"""A pane of the mail screen (sidebar, thread list, reader): its title shown as a badge in the accent colour while it
has the focus.

Moving the focus changes a pane's title line and nothing else of it (the thread list also changes its cursor's row,
:class:`pigeon.tui.widgets.thread_list.ThreadList`), and on the fast path (:mod:`pigeon.tui.fast_path`) those lines
are all that is drawn again. A focus cue in the stylesheet (``:focus { border: round $accent }``) would change a
cell of every line of both panes, and Textual would draw and restyle both panes whole. So no rule of the stylesheet
depends on a pane's ``:focus`` (a test holds app.tcss to it), and a pane that takes or loses the focus is not
restyled, only its title line repainted. A pane built on a Textual widget whose own stylesheet has ``:focus`` rules
(the sidebar's ``OptionList``) sets ``RESTYLE_ON_FOCUS``.

A pane also has its scrollbar styled as soon as it appears (:meth:`Pane.watch_show_vertical_scrollbar`), and on the
fast path drawn again only when what it shows changed (``SteadyScrollBar``).
"""

from __future__ import annotations

import contextlib
from typing import ClassVar, Self

from textual import events
from textual.content import Content
from textual.dom import NoScreen
from textual.geometry import Region
from textual.scrollbar import ScrollBar
from textual.widget import Widget

from pigeon.tui import fast_path

FOCUSED_TITLE = "bold reverse $text-accent"
"""The focused pane's title: a badge in the accent colour, the pane's background as its text (any theme)."""


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
            if fast_path.set_title_quietly(self, title.expand_tabs(4).split()[0]):
                self.refresh_title_line()
            else:
                self.border_title = title

    def show_subtitle(self, subtitle: Content | None) -> None:
        """Show ``subtitle`` in the pane's bottom border (a status): as Textual's ``border_subtitle`` does, without
        its repaint of the whole pane (the bottom line alone, on the fast path)."""
        if fast_path.set_subtitle_quietly(self, subtitle):
            if not self.is_mounted:
                self.refresh()
                return
            left, top = self.content_offset
            width, height = self.outer_size
            self.refresh(Region(-left, height - 1 - top, width, 1))
        else:
            self.border_subtitle = subtitle

    def refresh_title_line(self) -> None:
        """Draw the pane's top line again (its border and title), nothing else of it."""
        if not self.is_mounted:
            self.refresh()  # (drawn whole when it first shows)
            return
        left, top = self.content_offset
        self.refresh(Region(-left, -top, self.outer_size.width, 1))

    @property
    def restyles_on_focus(self) -> bool:
        """Whether taking or losing the focus restyles and repaints the whole pane (Textual's way)."""
        return self.RESTYLE_ON_FOCUS or not fast_path.running(self.app, "pane_focus")

    @property
    def vertical_scrollbar(self) -> ScrollBar:
        """Textual's vertical scrollbar; on the fast path one drawn again only when its look changes."""
        return fast_path.steady_vertical_scrollbar(self) or super().vertical_scrollbar

    def focus(self, scroll_visible: bool = True) -> Self:
        """Textual's, without its repaint of the whole pane (see the module)."""
        if self.restyles_on_focus:
            return super().focus(scroll_visible)

        def set_focus(widget: Widget) -> None:
            with contextlib.suppress(NoScreen):
                widget.screen.set_focus(self, scroll_visible=scroll_visible)

        self.app.call_later(set_focus, self)
        return self

    def on_focus(self, event: events.Focus) -> None:
        if not self.RESTYLE_ON_FOCUS:  # Textual's, without its repaint of the pane (on the fast path)
            fast_path.quiet_focus(self, event)

    def on_blur(self, event: events.Blur) -> None:
        if not self.RESTYLE_ON_FOCUS:
            fast_path.quiet_focus(self, event)

    def watch_has_focus(self, has_focus: bool) -> None:
        if self.restyles_on_focus:
            super().watch_has_focus(has_focus)  # (Textual restyles the widget)
        self._show_title()
        self.focus_shown(has_focus)

    def focus_shown(self, has_focus: bool) -> None:
        """Draw again what else of the pane shows the focus (the title is done)."""

    def watch_show_vertical_scrollbar(self, shown: bool) -> None:
        """Textual styles a new scrollbar from the stylesheet only when its widget is next restyled: that was the
        first focus move (opening the first thread), which then laid the whole screen out again. A scrollbar that
        appears is styled once the frame showing it is out (once: the reader's comes and goes with the length of
        the thread previewed)."""
        if shown:
            self.call_after_refresh(self._style_scrollbar)

    def _style_scrollbar(self) -> None:
        bar = self.vertical_scrollbar if self.show_vertical_scrollbar else None
        if bar is not None and bar is not self._styled_scrollbar:
            self._styled_scrollbar = bar
            self.update_node_styles(animate=False)
