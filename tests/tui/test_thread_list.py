"""The virtual thread list: cost follows the screen, not the mailbox."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from textual.app import App, ComposeResult

from pigeon.tui.widgets.thread_list import ThreadList, ThreadRow

NOW = datetime(2026, 11, 1, tzinfo=UTC)


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
        assert threads.current.id == "t99999"  # type: ignore[union-attr]
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

    def __init__(self, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(**kwargs)
        self.drawn: list[int] = []
        self.built: list[str] = []

    def render_line(self, y: int):  # type: ignore[no-untyped-def]
        self.drawn.append(y)
        return super().render_line(y)

    def _render_row(self, row, width, cursor):  # type: ignore[no-untyped-def]
        self.built.append(row.id)
        return super()._render_row(row, width, cursor)


class CountingListApp(App[None]):
    """A counting list, and a second list to move focus to."""

    CSS = """
    ThreadList > .thread-list--cursor { background: blue; }
    ThreadList:focus > .thread-list--cursor { background: red; }
    """

    def compose(self) -> ComposeResult:
        yield CountingList(id="threads", clock=lambda: NOW)
        yield ThreadList(id="other", clock=lambda: NOW)


async def test_a_cursor_move_draws_the_two_rows_that_changed_and_no_others() -> None:
    app = CountingListApp()
    async with app.run_test(size=(100, 30)) as pilot:
        threads = app.query_one(CountingList)
        threads.set_source(CountingSource(1000))
        threads.focus()
        await pilot.pause()
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


async def test_moving_focus_builds_the_cursor_row_again_and_no_other() -> None:
    app = CountingListApp()
    async with app.run_test(size=(100, 30)) as pilot:
        threads = app.query_one(CountingList)
        threads.set_source(CountingSource(1000))
        threads.focus()
        await pilot.pause()
        threads.built.clear()
        app.query_one("#other", ThreadList).focus()  # the cursor's colour changes with focus, nothing else
        await pilot.pause()
        assert threads.built == ["t0"]
