"""The reader's text: a thread's lines, drawn a line at a time (Textual's Line API).

A thread is laid out once, message by message, into lines no wider than the reader (``thread_view``). This widget
holds those lines and draws only the ones on screen, so a move of the message cursor or a fold redraws what is
seen, not the whole thread, however long it is.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content
from textual.strip import Strip
from textual.visual import Visual
from textual.widget import Widget


class ThreadText(Widget):
    """Lines of content, each within the widget's width, drawn as they come into view."""

    DEFAULT_CSS = """
    ThreadText {
        width: 1fr;
        height: auto;
    }
    """

    def __init__(self, content: Content, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: Sequence[Content] = ()
        self._drawn: dict[tuple[int, int], Strip] = {}
        self.show(content.split("\n"))

    @property
    def plain(self) -> str:
        """What it shows, as plain text."""
        return "\n".join(row.plain for row in self.rows)

    def update(self, content: Content) -> None:
        """Show ``content`` (split into its lines)."""
        self.show(content.split("\n"))

    def show(self, rows: Sequence[Content]) -> None:
        """Show ``rows``, one line each."""
        self.rows = rows
        self._drawn.clear()
        self.styles.height = max(len(rows), 1)
        self.refresh()

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        drawn = self._drawn.get((y, width))
        if drawn is None:
            style = self.visual_style
            if 0 <= y < len(self.rows):
                strips = Visual.to_strips(self, self.rows[y], width, 1, style, pad=True)
                drawn = strips[0] if strips else Strip.blank(width, style.rich_style)
            else:
                drawn = Strip.blank(width, style.rich_style)
            self._drawn[(y, width)] = drawn
        return drawn
