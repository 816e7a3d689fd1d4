"""The thread list under live mail: rows arriving above the cursor never push its thread out of sight."""

from __future__ import annotations

import re

from textual.app import App, ComposeResult

from pigeon.core.listing import ThreadRow
from pigeon.tui.widgets.thread_list import ThreadList
from tests.tui.conftest import screen_text
from tests.tui.test_thread_list import NOW

SUBJECT = re.compile(r"Subject ([nt]\d{4})")


class Rows:
    """Threads in a fixed order, newest first, each showing its id in its subject."""

    def __init__(self, order: list[str]) -> None:
        self.order = order

    def __len__(self) -> int:
        return len(self.order)

    def row(self, index: int) -> ThreadRow:
        thread_id = self.order[index]
        return ThreadRow(id=thread_id, who=thread_id, subject=f"Subject {thread_id}", when=NOW, count=1)

    def locate(self, thread_id: str) -> int | None:
        return self.order.index(thread_id) if thread_id in self.order else None

    def arrived(self, step: int, *, new: bool) -> Rows:
        """The list after a sync: a new thread on top, or else the thread at the bottom moved there by new mail in
        it: either way one row more above every thread before it."""
        moved = f"n{step:04d}" if new else self.order[-1]
        return Rows([moved, *(t for t in self.order if t != moved)])


class ListApp(App[None]):
    CSS = "#threads { border: round $panel; scrollbar-size-vertical: 1; }"  # as the mail screen has it

    def compose(self) -> ComposeResult:
        yield ThreadList(id="threads", clock=lambda: NOW)


def shown(app: App[None]) -> list[str]:
    """The threads whose rows are on the screen, top to bottom."""
    return SUBJECT.findall(screen_text(app))


def current(threads: ThreadList) -> str | None:
    """The thread under the cursor."""
    return threads.current.id if threads.current is not None else None


async def test_a_scrolled_list_keeps_the_cursors_thread_on_its_line_as_mail_arrives_above() -> None:
    app = ListApp()
    async with app.run_test(size=(100, 24)) as pilot:
        threads = app.query_one(ThreadList)
        threads.focus()
        threads.set_source(Rows(["t0010", "t0150", "t0200"]), cursor=1)  # a short view (Starred), then back
        await pilot.pause()
        rows = Rows([f"t{n:04d}" for n in range(300)])
        threads.set_source(rows, keep="t0150")  # to the long one (Inbox), the thread far below its first screen
        await pilot.pause()
        assert current(threads) == "t0150"
        assert shown(app)[-1] == "t0150"  # scrolled to, on the last line
        await pilot.press(*"kkkkk")  # up into the middle of the screen: the view stays
        await pilot.pause()
        before = shown(app)
        assert before[-6] == "t0145"
        for step in range(8):
            rows = rows.arrived(step, new=step % 2 == 0)
            threads.set_source(rows, keep="t0145")
            await pilot.pause()
            assert current(threads) == "t0145"
            assert shown(app) == before, f"step {step}: the view moved under the cursor"  # same threads and lines
        await pilot.press("j")
        await pilot.pause()
        assert current(threads) == "t0146"
        assert shown(app) == before  # the next line, in view


async def test_a_list_at_its_top_shows_new_mail_and_keeps_the_cursors_thread_in_view() -> None:
    app = ListApp()
    async with app.run_test(size=(100, 24)) as pilot:
        threads = app.query_one(ThreadList)
        threads.focus()
        rows = Rows([f"t{n:04d}" for n in range(300)])
        threads.set_source(rows, cursor=3)
        await pilot.pause()
        height = threads.size.height
        for step in range(height + 5):  # until the cursor's thread has been pushed past the first screen
            rows = rows.arrived(step, new=False)  # new mail in threads listed already, as most of a session's is
            threads.set_source(rows, keep="t0003")
            await pilot.pause()
            now = shown(app)
            assert current(threads) == "t0003"
            assert len(now) == height  # every line of the list shows a row: none is covered
            assert "t0003" in now, f"step {step}: the cursor's thread is out of sight"
            # the view stays at the top, showing the new mail, until that would hide the cursor's thread: then
            # it holds the thread on its last line
            assert now[0] == rows.order[0] or now[-1] == "t0003", f"step {step}: {now[0]} on top"
        assert threads.cursor == height + 5 + 3
        await pilot.press("j")
        await pilot.pause()
        assert current(threads) == "t0004"
        assert shown(app)[-1] == "t0004"
