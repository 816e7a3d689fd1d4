"""The virtual thread list: cost follows the screen, not the mailbox."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.strip import Strip

from pigeon.core.listing import ThreadRow
from pigeon.sanitize import clean_line
from pigeon.tui.widgets.thread_list import ThreadList
from pigeon.tui.widgets.thread_row import (
    COUNT_WIDTH,
    MARK_WIDTH,
    NARROW_WHO_WIDTH,
    TIME_WIDTH,
    WHO_WIDTH,
    WIDE_ROW,
    Age,
    count_text,
    seen_words,
)
from tests.tui.conftest import current_id
from tests.tui.test_key_path import until

NOW = datetime(2026, 11, 1, tzinfo=UTC)
SURROGATES: list[Literal["Cs"]] = ["Cs"]  # (text without unpaired surrogates, as decoded mail has)


class CountingSource:
    """100,000 rows that count how many of them were asked for."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.asked: set[int] = set()

    def __len__(self) -> int:
        return self.size

    def row(self, index: int) -> ThreadRow:
        if not 0 <= index < self.size:
            raise IndexError(index)
        self.asked.add(index)
        return ThreadRow(
            id=f"t{index}",
            who=f"Sender {index}",
            subject=f"Subject {index}",
            when=NOW - timedelta(minutes=index),
            count=1,
        )


class ListApp(App[None]):
    def compose(self) -> ComposeResult:
        yield ThreadList(id="threads", clock=lambda: NOW)


async def test_a_huge_list_renders_only_what_is_on_screen() -> None:
    app = ListApp()
    async with app.run_test(size=(100, 30)) as pilot:
        threads = app.query_one(ThreadList)
        source = CountingSource(100_000)
        threads.set_source(source)
        threads.focus()
        await pilot.pause()
        assert threads.virtual_size.height == 100_000
        first_screen = len(source.asked)
        assert 0 < first_screen <= 2 * threads.size.height
        await pilot.press("G")
        await pilot.pause()
        assert threads.cursor == 99_999
        assert current_id(threads) == "t99999"
        assert 99_999 in source.asked
        assert len(source.asked) <= 5 * threads.size.height  # the last screen, not the 100k rows between
        await pilot.press("g", "g")
        assert threads.cursor == 0
        await pilot.press("pagedown")
        assert threads.cursor == threads.size.height - 1


async def test_the_cursor_stays_on_the_same_thread_when_the_list_changes() -> None:
    app = ListApp()
    async with app.run_test(size=(100, 30)) as pilot:
        threads = app.query_one(ThreadList)
        threads.set_source(CountingSource(50))
        threads.cursor = 10
        await pilot.pause()
        threads.set_source(CountingSource(60), keep="t10")
        assert threads.cursor == 10
        threads.set_source(CountingSource(5), keep="t10")  # gone: clamp to the list
        assert threads.cursor == 4


class CountingList(ThreadList):
    """Counts the lines Textual asks it to draw, and the rows it builds (a cached row is not built again)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.drawn: list[int] = []
        self.built: list[str] = []  # for a frame
        self.prepared: list[str] = []  # ahead, while the cursor rests
        self._preparing_now = False

    def render_line(self, y: int) -> Strip:
        self.drawn.append(y)
        return super().render_line(y)

    def _render_row(self, row: ThreadRow, age: Age, width: int, cursor: Style | None) -> Strip:
        (self.prepared if self._preparing_now else self.built).append(row.id)
        return super()._render_row(row, age, width, cursor)

    def _prepare_beside(self) -> None:
        self._preparing_now = True
        try:
            super()._prepare_beside()
        finally:
            self._preparing_now = False


class CountingListApp(App[None]):
    """A counting list, and a second list to move focus to."""

    CSS = """
    ThreadList > .thread-list--cursor { background: blue; }
    ThreadList > .thread-list--cursor-focused { background: red; }
    """

    def compose(self) -> ComposeResult:
        yield CountingList(id="threads", clock=lambda: NOW)
        yield ThreadList(id="other", clock=lambda: NOW)


async def focused_list(pilot: Pilot[None]) -> CountingList:
    """The counting list on 1,000 rows, focused and drawn."""
    threads = pilot.app.query_one(CountingList)
    threads.set_source(CountingSource(1000))
    threads.focus()
    await pilot.pause()
    return threads


async def test_a_cursor_move_draws_the_two_rows_that_changed_and_no_others() -> None:
    app = CountingListApp()
    async with app.run_test(size=(100, 30)) as pilot:
        threads = await focused_list(pilot)
        assert len(threads.drawn) >= threads.size.height  # the first paint draws every line
        threads.drawn.clear()
        await pilot.press("j")
        await pilot.pause()
        assert threads.cursor == 1
        assert sorted(set(threads.drawn)) == [0, 1]
        threads.drawn.clear()
        await pilot.press("G")  # a move that scrolls draws the whole list again
        await pilot.pause()
        assert len(set(threads.drawn)) == threads.size.height


@pytest.mark.fast_path  # (on Textual's stock path a focus move repaints the whole pane)
async def test_moving_focus_builds_the_cursor_row_again_and_no_other() -> None:
    app = CountingListApp()
    async with app.run_test(size=(100, 30)) as pilot:
        threads = await focused_list(pilot)
        await until(pilot, lambda: "t0" in threads.prepared)  # (the resting cursor's row: the next test)
        threads._cache.clear()  # no row drawn before: what the focus move draws is built here
        threads.built.clear()
        app.query_one("#other", ThreadList).focus()  # the cursor's colour changes with focus, nothing else
        await pilot.pause()
        assert threads.built == ["t0"]


async def test_the_first_move_from_a_resting_cursor_builds_no_row() -> None:
    app = CountingListApp()
    async with app.run_test(size=(100, 30)) as pilot:
        threads = await focused_list(pilot)  # (the cursor's row was first drawn under the cursor)
        await until(pilot, lambda: "t0" in threads.prepared)
        threads.built.clear()
        threads.drawn.clear()
        await pilot.press("j")
        await pilot.pause()
        assert threads.cursor == 1
        assert sorted(set(threads.drawn)) == [0, 1]  # the row it left and the row it reached, drawn anew,
        assert threads.built == []  # both from rows drawn ahead


async def test_a_resting_cursors_row_is_drawn_ahead_as_it_looks_with_the_focus_moved() -> None:
    app = CountingListApp()
    async with app.run_test(size=(100, 30)) as pilot:
        threads = await focused_list(pilot)
        await until(pilot, lambda: "t0" in threads.prepared)
        threads.built.clear()
        threads.drawn.clear()
        app.query_one("#other", ThreadList).focus()  # opening a thread moves the focus this way
        await until(pilot, lambda: not threads.has_focus and 0 in threads.drawn)
        await pilot.pause()
        threads.focus()  # and going back, this way
        await until(pilot, lambda: threads.has_focus)
        await pilot.pause()
        assert threads.drawn.count(0) == 2  # the cursor's row was drawn anew each time,
        assert threads.built == []  # from the rows drawn ahead


async def test_the_rows_beside_a_resting_cursor_are_drawn_ahead_as_they_look_under_it() -> None:
    app = CountingListApp()
    async with app.run_test(size=(100, 30)) as pilot:
        threads = await focused_list(pilot)
        await pilot.press("j")
        await until(pilot, lambda: "t2" in threads.prepared)
        threads.built.clear()
        await pilot.press("j")  # its row under the cursor is drawn already
        await pilot.pause()
        assert threads.cursor == 2
        assert "t2" not in threads.built
        assert 2 in threads.drawn


class StarredSource(CountingSource):
    """A CountingSource in which some rows are starred and some rows are gone (as after a triage action)."""

    def __init__(self, size: int, *, starred: frozenset[int] = frozenset(), gone: frozenset[int] = frozenset()):
        super().__init__(size - len(gone))
        self.starred, self.gone = starred, sorted(gone)

    def row(self, index: int) -> ThreadRow:
        for missing in self.gone:  # the rows after a gone one move up
            if index >= missing:
                index += 1
        row = super().row(index)
        return ThreadRow(**{**row.__dict__, "starred": index in self.starred})


async def test_a_new_source_builds_only_the_rows_whose_data_changed() -> None:
    app = CountingListApp()
    async with app.run_test(size=(100, 30)) as pilot:
        threads = app.query_one(CountingList)
        threads.set_source(StarredSource(1000))
        threads.focus()
        await pilot.pause()
        threads.built.clear()
        threads.set_source(StarredSource(1000, starred=frozenset({3})), keep="t0")  # a star on the fourth row
        await pilot.pause()
        assert threads.built == ["t3"]
        threads.built.clear()
        threads.cursor = 2
        await until(pilot, lambda: "t3" in threads.prepared)  # t3 under the cursor, drawn ahead while it rests
        threads.built.clear()
        # t2 is done: it leaves, the rows below move up a line (drawn from the cache), the cursor stays at the
        # same place, now on t3 (drawn ahead), and one new row comes in at the bottom
        threads.set_source(StarredSource(1000, starred=frozenset({3}), gone=frozenset({2})), keep="t2")
        await pilot.pause()
        assert threads.cursor == 2
        assert current_id(threads) == "t3"
        assert threads.built == [f"t{threads.size.height}"]


async def test_keeping_the_cursor_on_a_thread_reads_the_rows_near_it_not_the_list() -> None:
    app = ListApp()
    async with app.run_test(size=(100, 30)):
        threads = app.query_one(ThreadList)
        threads.set_source(CountingSource(100_000))
        threads.cursor = 5000
        moved = CountingSource(100_000)
        threads.set_source(moved, keep="t4997")  # three new threads came in above it, say
        assert threads.cursor == 4997
        gone = CountingSource(100_000)
        threads.set_source(gone, keep="t999999")  # not in the list (done): the cursor stays where it is
        assert threads.cursor == 4997
        # Asked: the rows within 50 of the cursor (the search for the thread), and the rows on screen (compared
        # with those shown before, so that only changed lines are drawn again): none further away.
        on_screen = set(range(int(threads.scroll_offset.y), int(threads.scroll_offset.y) + threads.size.height))
        assert gone.asked <= set(range(4997 - 50, 4997 + 51)) | on_screen


class LocatingSource(CountingSource):
    """A source that can say where a thread is without its rows (as the store's source does)."""

    def locate(self, thread_id: str) -> int | None:
        index = int(thread_id.removeprefix("t"))
        return index if 0 <= index < self.size else None


async def test_a_thread_far_from_the_cursor_is_found_by_asking_the_source() -> None:
    app = ListApp()
    async with app.run_test(size=(100, 30)):
        threads = app.query_one(ThreadList)
        threads.set_source(LocatingSource(100_000))
        threads.cursor = 10
        resorted = LocatingSource(100_000)
        threads.set_source(resorted, keep="t70000")
        assert threads.cursor == 70_000
        assert len(resorted.asked) <= 2 * 50 + 1


class ChangedSource(CountingSource):
    """The same rows as :class:`CountingSource`, one of them read (as after opening it)."""

    def __init__(self, size: int, read: int) -> None:
        super().__init__(size)
        self.read = read

    def row(self, index: int) -> ThreadRow:
        row = super().row(index)
        return ThreadRow(row.id, row.who, row.subject, row.when, row.count, unread=index != self.read)


async def test_a_new_list_with_one_changed_row_draws_that_line_alone() -> None:
    app = CountingListApp()
    async with app.run_test(size=(100, 30)) as pilot:
        threads = app.query_one(CountingList)
        threads.set_source(ChangedSource(1000, read=-1))
        await pilot.pause()
        threads.drawn.clear()
        threads.set_source(ChangedSource(1000, read=3))  # the store's new list after thread 3 was marked read
        await pilot.pause()
        assert sorted(set(threads.drawn)) == [3]
        threads.drawn.clear()
        threads.set_source(ChangedSource(1000, read=3))  # nothing changed: nothing drawn
        await pilot.pause()
        assert threads.drawn == []
        threads.set_source(ChangedSource(900, read=3))  # fewer threads: the scrollbar changes, all is drawn
        await pilot.pause()
        assert len(set(threads.drawn)) == threads.size.height


async def test_a_row_whose_age_changed_is_drawn_again(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [NOW]
    app = ListApp()
    async with app.run_test(size=(100, 30)) as pilot:
        threads = app.query_one(ThreadList)
        threads._clock = lambda: now[0]
        threads.set_source(CountingSource(10))
        await pilot.pause()
        assert "now" in threads.render_line(0).text
        drawn: list[int] = []
        original = threads.render_line

        def counted(y: int) -> Strip:
            drawn.append(y)
            return original(y)

        monkeypatch.setattr(threads, "render_line", counted)
        now[0] = NOW + timedelta(hours=2)
        threads._now_at = None  # (the age is read once a second: this test does not wait a second)
        threads.set_source(CountingSource(10))  # the same rows, two hours on: every age on screen changed
        await pilot.pause()
        assert sorted(set(drawn)) == list(range(10))


def drawn_as_rich_lays_it_out(
    threads: ThreadList, row: ThreadRow, age: Age, width: int, cursor: Style | None
) -> Strip:
    """A row as rich's ``Text`` lays it out (how rows were drawn before they were built as segments): the
    reference the list's own drawing is held to."""
    base = threads.rich_style
    dim = threads.get_component_rich_style("thread-list--dim", partial=True)
    unread = threads.get_component_rich_style("thread-list--unread", partial=True)
    strong = unread if row.unread else Style()
    # the marks in the accent, but on the cursor's row in the row's own colour (the accent is faint on its tint)
    mark = threads.get_component_rich_style("thread-list--mark", partial=True) if cursor is None else strong
    tags = ([row.where] if row.where else []) + [f"#{label}" for label in row.labels]
    label_text = clean_line(" ".join(tags), limit=24)
    who_width = WHO_WIDTH if width >= WIDE_ROW else NARROW_WHO_WIDTH
    subject_width = max(width - MARK_WIDTH - who_width - COUNT_WIDTH - TIME_WIDTH - 3, 4)
    when, seen_by, seen_at = age
    seen = seen_words(seen_by, seen_at, subject_width - (len(label_text) + 1 if label_text else 0))

    def cell(text: str, cell_width: int, style: Style, *, right: bool = False) -> Text:
        value = Text(text, style=style, no_wrap=True, end="")
        value.truncate(cell_width, overflow="ellipsis", pad=not right)
        if right:
            value.pad_left(cell_width - value.cell_len)
        return value

    marks = "".join(
        sign if on else " "
        for sign, on in (("▌", row.selected), ("●", row.unread), ("★", row.starred), ("+", row.attachment))
    )
    line = Text.assemble(
        cell(marks, MARK_WIDTH, mark),
        cell(clean_line(row.who) or "…", who_width, strong),
        " ",
        cell(
            clean_line(row.subject) or "(no subject)",
            subject_width - (len(label_text) + 1 if label_text else 0) - (len(seen) + 1 if seen else 0),
            strong,
        ),
        *((" ", cell(seen, len(seen), dim)) if seen else ()),
        *((" ", cell(label_text, len(label_text), mark)) if label_text else ()),
        " ",
        cell(count_text(row.count), COUNT_WIDTH, dim, right=True),
        " ",
        cell(when, TIME_WIDTH, dim, right=True),
        no_wrap=True,
        end="",
    )
    line.truncate(width, pad=True)
    row_base = base + cursor if cursor is not None else base
    segments = [
        Segment(text, row_base + style if style else row_base) for text, style, _ in line.render(threads.app.console)
    ]
    return Strip(segments).crop_extend(0, width, row_base)


def styled_cells(strip: Strip) -> list[tuple[str, Style | None]]:
    return [(char, style) for text, style, _ in strip for char in text]


async def test_a_row_is_drawn_cell_for_cell_as_rich_text_would_draw_it() -> None:
    app = CountingListApp()
    async with app.run_test(size=(100, 30)) as pilot:
        threads = await focused_list(pilot)
        words = st.text(st.characters(codec="utf-8", exclude_categories=SURROGATES), max_size=40) | st.sampled_from(
            ["", "Ünïcødé", "日本語の件名です日本語の件名です", "emoji 🎉🎉🎉 party", "a" * 60, "tab\there", "x\u200by"]
        )
        cursor_looks = [None, threads._cursor_style(True), threads._cursor_style(False)]

        @settings(max_examples=300, deadline=None)
        @given(
            who=words,
            subject=words,
            labels=st.lists(words, max_size=3).map(tuple),
            where=st.sampled_from(["", "done", "snoozed"]),
            count=st.integers(0, 12_000),
            flags=st.tuples(st.booleans(), st.booleans(), st.booleans(), st.booleans()),
            when=st.sampled_from(["", "9:30", "Fri", "12 Nov", "2024"]),
            seen=st.sampled_from([("", ""), ("Ada", "3m"), ("Kelly +2", "Nov 3")]),
            width=st.integers(1, 160),
            look=st.sampled_from(range(3)),
        )
        def same(
            who: str,
            subject: str,
            labels: tuple[str, ...],
            where: str,
            count: int,
            flags: tuple[bool, bool, bool, bool],
            when: str,
            seen: tuple[str, str],
            width: int,
            look: int,
        ) -> None:
            unread, attachment, starred, selected = flags
            row = ThreadRow(
                id="t", who=who, subject=subject, when=NOW, count=count, unread=unread, attachment=attachment,
                starred=starred, selected=selected, labels=labels, where=where,
            )  # fmt: skip
            ours = threads._render_row(row, (when, *seen), width, cursor_looks[look])
            assert styled_cells(ours) == styled_cells(
                drawn_as_rich_lays_it_out(threads, row, (when, *seen), width, cursor_looks[look])
            )
            assert ours.cell_length == width

        same()


@pytest.mark.parametrize(
    ("count", "shown"), [(0, ""), (1, ""), (2, "(2)"), (99, "(99)"), (100, "100"), (9999, "9999"), (12_000, "12k")]
)
def test_a_thread_count_fits_its_four_columns(count: int, shown: str) -> None:
    assert count_text(count) == shown
    assert len(shown) <= COUNT_WIDTH


def test_a_row_is_drawn_in_as_few_segments_as_it_has_styles() -> None:
    """Each segment costs its style's bytes at the terminal: cells of one look (the gap, the count and the time of a
    row without a dim look of its own) go out as one."""
    from pigeon.tui.widgets.thread_row import draw_row

    base = Style(color="white", bgcolor="black")
    row = ThreadRow(id="t1", who="Ada", subject="Hello", when=NOW, count=3, unread=True)
    strip = draw_row(row, ("Fri", "", ""), 100, None, (base, Style(), Style(bold=True), Style(color="yellow")))
    segments = list(strip)
    assert "".join(s.text for s in segments).rstrip().endswith("(3)    Fri")
    assert all(a.style != b.style for a, b in itertools.pairwise(segments))
