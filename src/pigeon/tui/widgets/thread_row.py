"""How one row of the thread list is drawn: its cells, their widths, and their styles, straight as segments."""

from __future__ import annotations

from datetime import datetime

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from pigeon.core.listing import ThreadRow, first_name
from pigeon.sanitize import clean_line
from pigeon.tui.render import relative_time

WHO_WIDTH = 22
NARROW_WHO_WIDTH = 14
WIDE_ROW = 72  # rows narrower than this give the sender fewer cells
TIME_WIDTH = 6
COUNT_WIDTH = 4
LEGEND = (
    "● unread   ★ starred   + files   (3) its messages   ▌ selected\n"
    "seen 2h: your last message was read · snoozed, done, muted, no answer: where it is · #label"
)
"""What the marks of a row say, for the help."""
MARK_WIDTH = 5
SUBJECT_ROOM = 16  # cells the subject keeps before "seen by" gives up its name, then itself
SEEN_NAME = 12


Age = tuple[str, str, str]
"""What a row says of time: its last message's age; who has read the user's last message, and how long ago."""


def ages(row: ThreadRow, now: datetime) -> Age:
    """A row's :data:`Age` as of ``now``: the reader named (by first name, as the sender column names people) is
    the latest, the others counted ("Ada +2")."""
    if not row.seen_by:
        return relative_time(row.when, now), "", ""
    more = f" +{len(row.seen_by) - 1}" if len(row.seen_by) > 1 else ""
    name = f"{clean_line(first_name(clean_line(row.seen_by[0])), limit=SEEN_NAME) or 'someone'}{more}"
    return relative_time(row.when, now), name, relative_time(row.seen_at, now)


def draw_row(
    row: ThreadRow, age: Age, width: int, cursor: Style | None, look: tuple[Style, Style, Style, Style]
) -> Strip:
    """A row's cells as segments, each fitted to its width as rich's ``Text.truncate`` fits it (an ellipsis where
    it is cut). Made straight as segments, not as rich ``Text`` laid out: a start draws a screenful of rows, and
    laying them out was a large part of its first frame (see docs/performance.md). ``age`` is what :func:`ages`
    says; ``look`` is the list's base style and its dim, unread and mark styles."""
    base, dim, unread, accent = look
    strong = unread if row.unread else None
    mark = accent if cursor is None else strong  # (the accent on the cursor's tint is faint in light themes)
    when, seen_by, seen_at = age
    tags = ([row.where] if row.where else []) + [f"#{label}" for label in row.labels]
    label_text = clean_line(" ".join(tags), limit=24)
    count = count_text(row.count)
    who_width = WHO_WIDTH if width >= WIDE_ROW else NARROW_WHO_WIDTH  # a narrow list gives the subject more
    subject_width = max(width - MARK_WIDTH - who_width - COUNT_WIDTH - TIME_WIDTH - 3, 4)
    seen = seen_words(seen_by, seen_at, subject_width - (len(label_text) + 1 if label_text else 0))
    marks = (
        ("▌" if row.selected else " ")
        + ("●" if row.unread else " ")
        + ("★" if row.starred else " ")
        + ("+" if row.attachment else " ")
    )
    cells: list[tuple[str, Style | None]] = [
        (_fit(marks, MARK_WIDTH), mark),
        (_fit(clean_line(row.who) or "…", who_width), strong),
        (" ", None),
        (
            _fit(
                clean_line(row.subject) or "(no subject)",
                subject_width - (len(label_text) + 1 if label_text else 0) - (cell_len(seen) + 1 if seen else 0),
            ),
            strong,
        ),
    ]
    if seen:
        cells += [(" ", None), (seen, dim)]
    if label_text:
        cells += [(" ", None), (_fit(label_text, len(label_text)), mark)]
    cells += [
        (" ", None),
        (_fit(count, COUNT_WIDTH, right=True), dim),
        (" ", None),
        (_fit(when, TIME_WIDTH, right=True), dim),
    ]
    # The cursor's background must sit under every cell, so it goes into the row's base style.
    row_base = base + cursor if cursor is not None else base
    segments = [Segment(text, row_base + style if style else row_base) for text, style in cells if text]
    strip = Strip(segments).simplify()  # (fewer segments: fewer bytes a row)
    if strip.cell_length > width:  # cut as rich cuts: a zero-width character just past the last cell stays
        return Strip(Segment.adjust_line_length(list(strip), width, row_base), width)
    return strip.crop_extend(0, width, row_base)


def seen_words(name: str, age: str, room: int) -> str:
    """"seen by Ada 3m" in what ``room`` leaves the subject; narrower, "seen 3m"; narrower still, nothing."""
    if not name:
        return ""
    for words in (f"seen by {name} {age}", f"seen {age}"):
        if room - cell_len(words) - 1 >= SUBJECT_ROOM:
            return words
    return ""


def _fit(text: str, width: int, *, right: bool = False) -> str:
    """``text`` in ``width`` cells as rich's ``Text.truncate`` with an ellipsis fits it: cut to one cell less and
    "…" added when too long, padded with spaces (before it when ``right``) when too short."""
    length = cell_len(text)
    if length > width:
        return set_cell_size(text, width - 1) + "…"
    return " " * (width - length) + text if right else text + " " * (width - length)


def count_text(count: int) -> str:
    """A thread's message count in the four columns it has: ``(12)``, ``200``, ``12k``; nothing for one."""
    if count <= 1:
        return ""
    if count < 100:
        return f"({count})"
    return str(count) if count < 10_000 else f"{min(count // 1000, 999)}k"
