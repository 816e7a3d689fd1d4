"""Quotes in the reader: folded to one line, or shown with every wrapped piece of a long line under its marks."""

from __future__ import annotations

from pigeon.models import ContentBlock, Message, Thread
from pigeon.tui.widgets.thread_view import ThreadView

LONG = "Legal signed off on the new terms this morning, so that blocker is gone and we can ship it next week."


def view_of(body: str) -> ThreadView:
    block = ContentBlock(type="CONTENT_TYPE_TEXT", mime_type="text/plain", content=body)
    return ThreadView(Thread(id="t1", subject="Terms"), [Message(id="m1", thread_id="t1", content_blocks=[block])], {})


def laid_out(body: str, *, show_quotes: bool, width: int = 50) -> list[str]:
    piece = view_of(body).piece(0, width, folded=False, current=False, show_quotes=show_quotes)
    return [row.strip() for row in piece.plain]


def test_a_long_quoted_line_wraps_under_its_quote_marks() -> None:
    rows = laid_out(f"Sounds good.\n\nOn Mon, Ann wrote:\n> {LONG}\n> > {LONG}\n>> {LONG}", show_quotes=True)
    quoted = rows[rows.index("On Mon, Ann wrote:") + 1 :]
    assert len(quoted) >= 9  # each of the three lines wrapped
    assert all(row.startswith(">") for row in quoted), quoted
    assert sum(row.startswith("> > ") for row in quoted) >= 3
    assert sum(row.startswith(">> ") for row in quoted) >= 3
    assert " ".join(row.lstrip("> ") for row in quoted[:3]) == LONG  # the words, in order, none lost


def test_quotes_fold_to_one_line_until_shown() -> None:
    rows = laid_out(f"Sounds good.\n\n> {LONG}\n> {LONG}", show_quotes=False)
    assert "┄ 2 quoted lines (t to show) ┄" in rows
    assert not any(row.startswith(">") for row in rows)



def test_every_row_fits_the_width_however_deep_the_quote_or_narrow_the_pane() -> None:
    deep = "> " * 8 + LONG
    marks_only = ">" * 70
    for width in (14, 24, 50):
        view = view_of(f"Hi.\n\n{deep}\n{marks_only}\n> {LONG}")
        piece = view.piece(0, width, folded=False, current=False, show_quotes=True)
        too_wide = [row.plain for row in piece.rows if row.cell_length > width]
        assert not too_wide, (width, too_wide)
        assert "".join(piece.plain).count(">") >= 70 + 8 + 1  # (nothing cut off)
