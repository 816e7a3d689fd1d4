"""The part of a thread that is laid out: the messages around the message cursor, a few screens of lines above and
below it, and one line for each run of messages beyond them. A very long thread costs what its window costs,
not what the whole thread would; the window moves with the cursor (scrolling moves the cursor)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Set
from dataclasses import dataclass, replace

from textual.content import Content

from pigeon.tui.widgets.thread_view import Piece, ThreadView

WHOLE = 500
"""Threads of up to this many messages are laid out whole (their scrollbar is the thread's)."""
SCREENS_ABOVE, SCREENS_BELOW = 1, 2
"""Screens of lines laid out above the cursor's message, and below its end."""


@dataclass(frozen=True)
class Assembled:
    """The lines of a thread's window, where each message starts, and its text as written (unwrapped)."""

    rows: list[Content]
    starts: list[int]
    """The line of each message's first line; a message beyond the window: the line that stands for it."""
    texts: list[str]
    first: int
    """The first message laid out."""
    end: int
    """One past the last message laid out."""

    def at(self, line: int) -> int:
        """The message at ``line``: above the window, the one just before it; below it, the one just after."""
        index = max(0, min(bisect_right(self.starts, line) - 1, len(self.starts) - 1))
        return max(min(index, self.end), self.first - 1)

    def padded(self, before: Assembled, count: int) -> Assembled:
        """These lines, as many as ``before``'s while the window ends before the thread's ``count`` messages do: the
        text keeps its height, so the scroll of a move comes in the frame that draws the move."""
        short = len(before.rows) - len(self.rows)
        return replace(self, rows=[*self.rows, *[Content("")] * short]) if self.end < count and short > 0 else self

    def shift(self, before: Assembled, cursor: int) -> int:
        """How many lines the cursor's message moved down since ``before`` (the window moved: 0 if it did not)."""
        if (before.first, before.end) == (self.first, self.end) or len(before.starts) != len(self.starts):
            return 0
        return self.starts[cursor] - before.starts[cursor]


@dataclass(frozen=True)
class Layout:
    """How a thread's messages are laid out: the reader's width and state."""

    width: int
    folded: Set[str]
    cursor: int
    show_quotes: bool
    find: str = ""
    height: int = 40
    """The lines the reader shows: the window is a few screens of them."""

    def piece(self, view: ThreadView, index: int) -> Piece:
        return view.piece(
            index,
            self.width,
            folded=view.keys[index] in self.folded,
            current=index == self.cursor,
            show_quotes=self.show_quotes,
            find=self.find,
        )


def window(view: ThreadView, layout: Layout, *, stop: Callable[[], bool] = lambda: False) -> tuple[int, int]:
    """The messages laid out around the cursor: up to the first, or until ``SCREENS_ABOVE`` screens of lines; down
    to the last, or until ``SCREENS_BELOW`` screens past the end of the cursor's message. Laid out here (the view
    keeps them); ``stop()`` ends it early."""
    count = len(view)
    if count <= WHOLE:  # (laid out whole, here too: a preview lays it out off the UI thread)
        for index in range(count):
            if stop():
                break
            layout.piece(view, index)
        return 0, count
    cursor = max(0, min(layout.cursor, count - 1))
    first, lines = cursor, 0
    while first > 0 and lines < SCREENS_ABOVE * layout.height and not stop():
        first -= 1
        lines += layout.piece(view, first).lines
    end, lines = cursor + 1, 0
    while end < count and lines < SCREENS_BELOW * layout.height and not stop():
        lines += layout.piece(view, end).lines
        end += 1
    return first, end


def text_near(view: ThreadView, layout: Layout) -> int:
    """The characters of the unfolded messages a window around the cursor can hold (what laying it out costs): a
    thread laid out whole, all of them; else as many messages as the window has lines (each takes one or more)."""
    count, cursor, height = len(view), layout.cursor, layout.height
    if count <= WHOLE:
        near = range(count)
    else:
        near = range(max(0, cursor - SCREENS_ABOVE * height), min(count, cursor + SCREENS_BELOW * height + 1))
    return sum(
        len(block.content or "")
        for index in near
        if view.keys[index] not in layout.folded
        for block in view.at(index).content_blocks
    )


def beyond(count: int, later: bool, width: int) -> list[Content]:
    """The line that stands for ``count`` messages before (or after) the window."""
    words = f"{count:,} {'later' if later else 'earlier'} message{'s' if count != 1 else ''}"
    arrow, way = ("▼", "down") if later else ("▲", "up")
    line = Content.styled(f"{arrow} {words}: scroll {way} to read on", "italic $text-muted")
    return [Content(""), *line.wrap(width)] if later else [*line.wrap(width), Content("")]


def assemble(view: ThreadView, layout: Layout, progress: str) -> Assembled:
    """The lines of the thread's window at ``layout``, under the thread's title."""
    width = layout.width
    first, end = window(view, layout)
    title = view.title(progress, width)
    rows = [row for part in title for row in part.wrap(width)]
    texts = [part.plain for part in title]
    starts: list[int] = []
    if first:
        stand_in = beyond(first, False, width)
        starts += [len(rows)] * first
        rows += stand_in
        texts += [row.plain for row in stand_in]
    for index in range(first, end + 1):
        note = view.left_out(index) if index < end or end == len(view) else None
        if note is not None:
            rule = Content.styled("─" * max(width - 1, 10), "$panel")
            wrapped = [Content(""), rule, *note.wrap(width)]
            rows += wrapped
            texts += ["", rule.plain, note.plain]
        if index == end:
            break
        piece = layout.piece(view, index)
        starts.append(len(rows))
        rows += piece.rows
        texts.append(piece.text)
    if end < len(view):
        stand_in = beyond(len(view) - end, True, width)
        starts += [len(rows) + 1] * (len(view) - end)
        rows += stand_in
        texts += [row.plain for row in stand_in]
    return Assembled(rows, starts, texts, first, end)
