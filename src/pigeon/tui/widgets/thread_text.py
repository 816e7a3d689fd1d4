"""The reader's text: a thread's lines, drawn a line at a time (Textual's Line API).

A thread is laid out once, message by message, into lines no wider than the reader (``thread_view``). This widget
holds those lines and draws only the ones on screen, so a move of the message cursor or a fold redraws what is
seen, not the whole thread, however long it is.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content
from textual.geometry import Region, Size
from textual.reactive import Reactive
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

    virtual_size: Reactive[Size] = Reactive(Size(0, 0), repaint=False, layout=False)
    """Its lines' size, the same as its own (it does not scroll itself), set in the layout that draws it anew;
    Textual's asks for another layout, and a frame, after it."""

    KEPT = 10_000
    """Lines kept drawn; a thread's lines are kept while they are the same objects (a move of the cursor lays out
    two messages anew, and only their lines are drawn again)."""

    def __init__(self, content: Content, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: Sequence[Content] = ()
        self._drawn: dict[int, tuple[Content, Strip]] = {}
        self._drawn_as: tuple[int, object] = (0, None)
        self.show(content.split("\n"))

    @property
    def plain(self) -> str:
        """What it shows, as plain text."""
        return "\n".join(row.plain for row in self.rows)

    def update(self, content: Content) -> None:
        """Show ``content`` (split into its lines)."""
        self.show(content.split("\n"))

    def show(self, rows: Sequence[Content]) -> None:
        """Show ``rows``, one line each; only the lines that are not the same objects as before are drawn again."""
        before, self.rows = self.rows, rows
        if len(self._drawn) > self.KEPT:
            self._drawn.clear()
        width = self.size.width
        if not width:  # (not laid out yet: everything is drawn when it is)
            self.styles.height = max(len(rows), 1)
            self.refresh()
            return
        if len(rows) != len(before):  # a new height: the layout it asks for draws the lines, in its one frame
            self.styles.height = max(len(rows), 1)
            return
        changed = [y for y, (a, b) in enumerate(zip(before, rows, strict=True)) if a is not b]
        if changed:
            self.refresh(*(Region(0, start, width, count) for start, count in _runs(changed)))

    def render_line(self, y: int) -> Strip:
        width, style = self.size.width, self.visual_style
        if self._drawn_as != (width, style):  # (another width or theme: every line is drawn anew)
            self._drawn.clear()
            self._drawn_as = (width, style)
        if not 0 <= y < len(self.rows):
            return Strip.blank(width, style.rich_style)
        row = self.rows[y]
        kept = self._drawn.get(id(row))
        if kept is not None and kept[0] is row:
            return kept[1]
        strips = Visual.to_strips(self, row, width, 1, style, pad=True)
        drawn = strips[0] if strips else Strip.blank(width, style.rich_style)
        self._drawn[id(row)] = (row, drawn)
        return drawn


def _runs(lines: list[int]) -> list[tuple[int, int]]:
    """Ascending line numbers as (first, count) runs of consecutive lines."""
    runs: list[tuple[int, int]] = []
    for y in lines:
        if runs and runs[-1][0] + runs[-1][1] == y:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((y, 1))
    return runs
