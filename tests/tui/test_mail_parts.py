"""Parts of the mail screen, each alone: on a bare screen holding only the widgets it works on, with a fake core,
driven through the part's own interface (what the mail screen calls) and watched through what it says up."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable, Iterator
from types import SimpleNamespace
from typing import Any, cast

import pytest
from textual.app import App, ComposeResult
from textual.content import Content
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Static

from pigeon.core.actions import Action
from pigeon.core.errors import ConnectionFailed
from pigeon.core.listing import ThreadRow
from pigeon.core.live import Mode
from pigeon.core.mail import MailCore
from pigeon.models import Message, Thread
from pigeon.store.triage import Change
from pigeon.tui.screens.mail import live as live_part
from pigeon.tui.screens.mail.live import LivePart
from pigeon.tui.screens.mail.reading import ReaderPart, ThreadOpened
from pigeon.tui.screens.mail.threads import Changed
from pigeon.tui.screens.mail.triage import Triaged, TriagePart
from pigeon.tui.screens.modals import ConfirmScreen
from pigeon.tui.widgets.reader import Reader
from pigeon.tui.widgets.thread_list import ThreadList
from tests.tui.scenes import settle


class Host(Screen[None]):
    """A bare screen for one part: its widgets, and a record of what the part said up."""

    def __init__(self) -> None:
        super().__init__()
        self.said: list[str] = []
        self.modes: list[str] = []
        self.shown = 0
        self.changed: list[list[str]] = []
        self.opened: list[str] = []
        self.triaged: list[tuple[list[str], bool, bool, int]] = []
        self.after_frame: list[Callable[[], object]] = []

    def compose(self) -> ComposeResult:
        yield Static("", id="offline")
        yield ThreadList(id="threads")
        yield Reader(id="reader")

    # what live updates ask of the screen
    def show_threads(self) -> None:
        self.shown += 1

    def set_status(self, status: Content) -> None:
        self.said.append(status.plain)

    def show_live_mode(self, mode: str, *, redraw: bool = True) -> None:
        self.modes.append(mode)

    @property
    def status(self) -> str:
        return self.said[-1] if self.said else ""

    def threads_changed(self, ids: Iterable[str]) -> None:
        self.changed.append(list(ids))

    def words_indexed(self) -> None:
        pass

    # what the reader says up
    def on_thread_opened(self, event: ThreadOpened) -> None:
        self.opened.append(event.thread_id)

    # what triage says up
    def on_triaged(self, event: Triaged) -> None:
        self.triaged.append((event.ids, event.left, event.followed, event.at))

    def after_focus_frame(self, callback: Callable[[], object]) -> None:
        self.after_frame.append(callback)


class HostApp(App[None]):
    def get_default_screen(self) -> Screen[Any]:
        return Host()


# --- live updates ---------------------------------------------------------------------------------------------


class SyncingCore:
    """The little of the mail core live updates use: a sync that fails until told not to."""

    def __init__(self, poll_interval: float) -> None:
        self.poll_interval = poll_interval
        self.failing = True
        self.syncs = 0
        self.service_url = "http://service.test"
        self.indexing = False
        self.config = SimpleNamespace(ui=SimpleNamespace(notify_new_mail=True))

    async def sync(self, on_progress: Callable[[int, int], None] | None = None) -> object:
        self.syncs += 1
        if self.failing:
            raise ConnectionFailed("Cannot reach the service.")
        return SimpleNamespace(skipped=(), changed=("t1",), new_messages=())

    async def start_live(self, deliver: Callable[[dict[str, Any]], None]) -> Mode:
        return Mode(webhooks=False, why="not asked for")


class ProgressCore(SyncingCore):
    """A sync that reports its progress, with requests in flight."""

    def in_flight_words(self) -> str:
        return "12 in flight (growing: answers are quick)"

    async def sync(self, on_progress: Callable[[int, int], None] | None = None) -> object:
        assert on_progress is not None
        for done in (0, 3, 10):
            on_progress(done, 10)
        return SimpleNamespace(skipped=(), changed=(), new_messages=())


async def test_a_syncs_progress_says_the_requests_in_flight_and_why_until_the_last_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(live_part, "PROGRESS_INTERVAL", 0.0)  # every report shown
    core = ProgressCore(poll_interval=600.0)
    app = HostApp()
    async with app.run_test() as pilot:
        host = cast(Host, app.screen)
        live = LivePart(host, cast(MailCore, core), host)
        live.refresh()
        await settle(pilot, lambda: live.synced)
        said = [s for n, s in enumerate(host.said) if n == 0 or host.said[n - 1] != s]  # (drawn on a change)
        syncing = [s for s in said if s.startswith("Syncing")]
        assert syncing == [
            "Syncing 0 of 10…",
            "Syncing 3 of 10… 12 in flight (growing: answers are quick)",
            "Syncing 10 of 10…",
        ]


class CountingHost(Host):
    """A host whose list says its count each time it is shown, as the main screen's does."""

    def show_threads(self) -> None:
        super().show_threads()
        self.set_status(Content(f"{self.shown} threads"))


class CountingHostApp(App[None]):
    def get_default_screen(self) -> Screen[Any]:
        return CountingHost()


class HeldCore(ProgressCore):
    """A sync that reports the thread list, then a thread fetched, and waits until told to end."""

    def __init__(self, poll_interval: float) -> None:
        super().__init__(poll_interval)
        self.end = asyncio.Event()

    async def sync(self, on_progress: Callable[[int, int], None] | None = None) -> object:
        assert on_progress is not None
        on_progress(0, 10)
        on_progress(3, 10)
        await self.end.wait()
        return SimpleNamespace(skipped=(), changed=(), new_messages=())


async def shown_twice(pilot: Any, core: HeldCore) -> tuple[CountingHost, LivePart]:
    """``core``'s sync started on the counting host, until the list was shown twice: the rows, then again."""
    host = cast(CountingHost, pilot.app.screen)
    live = LivePart(host, cast(MailCore, core), host)
    live.refresh()
    for _ in range(500):  # (not settle: it waits for the held sync's worker)
        if host.shown == 2:
            break
        await pilot.pause(0.01)
    return host, live


async def test_the_list_shown_during_a_sync_keeps_saying_the_syncs_progress_not_its_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(live_part, "PROGRESS_INTERVAL", 0.0)
    monkeypatch.setattr(live_part, "PROGRESS_LIST_DELAY", 0.01)
    core = HeldCore(poll_interval=600.0)
    app = CountingHostApp()
    async with app.run_test() as pilot:
        host, live = await shown_twice(pilot, core)
        assert host.said[1:] == [
            "Syncing 0 of 10…",
            "1 threads",
            "Syncing 0 of 10…",  # said again after the list's count, in the same frame
            "Syncing 3 of 10… 12 in flight (growing: answers are quick)",
            "2 threads",
            "Syncing 3 of 10… 12 in flight (growing: answers are quick)",
        ]
        core.end.set()
        await settle(pilot, lambda: live.synced)
        assert host.said[-1] == "3 threads"  # the sync over: the count stays


class ListedLaterCore(HeldCore):
    """A sync whose thread list gains a page after a thread was fetched, and that waits until told to end."""

    async def sync(self, on_progress: Callable[[int, int], None] | None = None) -> object:
        assert on_progress is not None
        for done, total in ((0, 10), (3, 10), (3, 20), (5, 20)):
            on_progress(done, total)
        await self.end.wait()
        return SimpleNamespace(skipped=(), changed=(), new_messages=())


async def test_a_syncs_progress_says_more_threads_listed_only_once_the_list_shows_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(live_part, "PROGRESS_INTERVAL", 0.0)
    monkeypatch.setattr(live_part, "PROGRESS_LIST_DELAY", 0.01)
    core = ListedLaterCore(poll_interval=600.0)
    app = CountingHostApp()
    async with app.run_test() as pilot:
        host, live = await shown_twice(pilot, core)
        said = host.said[1:]
        shown_again = said.index("2 threads")
        assert not any("of 20" in line for line in said[:shown_again])  # not before the list shows them
        assert said[shown_again + 1] == "Syncing 5 of 20… 12 in flight (growing: answers are quick)"
        core.end.set()
        await settle(pilot, lambda: live.synced)


async def test_live_updates_check_again_soon_then_twice_as_late_up_to_a_limit_and_regularly_once_mail_comes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(live_part, "FIRST_RETRY", 50.0)  # (no timer comes due while the test runs)
    monkeypatch.setattr(live_part, "COUNT_DOWN_EVERY", 3600.0)  # (nor the countdown: it has a test of its own)
    core = SyncingCore(poll_interval=600.0)
    app = HostApp()
    async with app.run_test() as pilot:
        host = cast(Host, app.screen)
        live = LivePart(host, cast(MailCore, core), host)
        live.refresh()
        await settle(pilot, lambda: core.syncs == 1 and live.check_delay == 50.0)
        assert host.said == ["Checking for mail…", "Could not check for mail · again in 50 s · ctrl+r to retry now"]
        assert not live.synced
        delays = []
        for syncs in range(2, 8):
            live.load(timed=True)  # what the check's timer does
            await settle(pilot, lambda: core.syncs == syncs)  # noqa: B023 (awaited here, in this turn of the loop)
            delays.append(live.check_delay)
        assert delays == [100.0, 200.0, 400.0, 800.0, live_part.MAX_CHECK_DELAY, live_part.MAX_CHECK_DELAY]
        assert host.said[-2:] == [
            "Checking for mail…",
            "Could not check for mail · again in 15 min · ctrl+r to retry now",
        ]

        core.failing = False
        live.load(timed=True)
        await settle(pilot, lambda: live.synced)
        assert live.check_delay == 600.0  # back to the regular check
        # Until then the status line said when the next check was (not how mail comes), whatever redrew it.
        waits = ["50 s", "2 min", "4 min", "7 min", "14 min", "15 min", "15 min"]
        # (between the first sync and live updates started, the line says nothing of them)
        assert host.modes == [*(f"not checked · again in {wait}" for wait in waits), "", "checking every 600 s"]
        assert host.changed == [["t1"]]  # the reader is told which threads the sync changed
        assert host.shown >= 1  # and the list is shown as stored


class ModeHost(Host):
    """A host whose status line, drawn again, is its count with the live mode after it, as the mail screen's is."""

    def show_live_mode(self, mode: str, *, redraw: bool = True) -> None:
        super().show_live_mode(mode, redraw=redraw)
        if redraw:
            self.set_status(Content(f"3 threads · {mode}"))


class ModeHostApp(App[None]):
    def get_default_screen(self) -> Screen[Any]:
        return ModeHost()


async def failed_first_check(pilot: Pilot[None], core: SyncingCore) -> tuple[Host, LivePart]:
    """The app's first check failed (``FIRST_RETRY`` 4 s): the host, and its live part counting down from 4 s."""
    host = cast(Host, pilot.app.screen)
    live = LivePart(host, cast(MailCore, core), host)
    live.refresh()
    await settle(pilot, lambda: host.modes == ["not checked · again in 4 s"])
    return host, live


async def test_the_wait_for_the_next_check_counts_down_and_leaves_another_status_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(live_part, "FIRST_RETRY", 4.0)
    monkeypatch.setattr(live_part, "COUNT_DOWN_EVERY", 0.1)
    core = SyncingCore(poll_interval=600.0)
    app = ModeHostApp()
    async with app.run_test() as pilot:
        host, _ = await failed_first_check(pilot, core)
        assert host.status == "Could not check for mail · again in 4 s · ctrl+r to retry now"
        await settle(pilot, lambda: host.modes[-1] == "not checked · again in 3 s")
        assert host.status == "Could not check for mail · again in 3 s · ctrl+r to retry now"
        host.set_status(Content("3 threads · not checked · again in 3 s"))  # the count line, drawn again ...
        await settle(pilot, lambda: host.modes[-1] == "not checked · again in 2 s")
        assert host.status == "3 threads · not checked · again in 2 s"  # ... counts down too
        host.set_status(Content('from: needs a value, as in from:ada'))  # something else said meanwhile
        await settle(pilot, lambda: host.modes[-1] == "not checked · again in 1 s")
        assert host.status == "from: needs a value, as in from:ada"  # stays said
        assert core.syncs == 1


async def test_the_countdown_waits_while_the_lists_cursor_moves(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live_part, "FIRST_RETRY", 4.0)
    monkeypatch.setattr(live_part, "COUNT_DOWN_EVERY", 0.5)
    core = SyncingCore(poll_interval=600.0)
    app = HostApp()
    async with app.run_test() as pilot:
        host, live = await failed_first_check(pilot, core)
        moves = 0

        def move() -> None:
            nonlocal moves
            moves += 1
            live.cursor_moved()

        moving = host.set_interval(0.05, move)  # the cursor moved every 50 ms ...
        await settle(pilot, lambda: moves >= 30)  # ... for a second and a half
        assert host.modes == ["not checked · again in 4 s"]  # (without the moves it would have said 3 s)
        moving.stop()
        await settle(pilot, lambda: host.modes[-1] in ("not checked · again in 2 s", "not checked · again in 1 s"))


def test_the_wait_is_said_in_seconds_then_in_whole_minutes() -> None:
    assert [live_part.again_in(s) for s in (0.2, 4.01, 99, 99.5, 100, 121, 900)] == [
        "again in 1 s",
        "again in 5 s",
        "again in 99 s",
        "again in 2 min",
        "again in 2 min",
        "again in 3 min",
        "again in 15 min",
    ]


# --- the reader -----------------------------------------------------------------------------------------------


class Rows:
    """A thread list's rows, in memory."""

    def __init__(self, ids: list[str]) -> None:
        self.rows = [ThreadRow(id=i, who="Ann", subject=f"About {i}", when=None, count=2) for i in ids]

    def __len__(self) -> int:
        return len(self.rows)

    def row(self, index: int) -> ThreadRow:
        return self.rows[index]


def whole(thread_id: str) -> tuple[Thread, list[Message]]:
    thread = Thread(id=thread_id, subject=f"About {thread_id}", message_count=2)
    messages = [Message(id=f"{thread_id}-{n}", thread_id=thread_id, subject=f"About {thread_id}") for n in (1, 2)]
    return thread, messages


class StoredCore:
    """The little of the mail core the reader uses: threads in the store, whole."""

    def __init__(self, ids: list[str], after_triage: str = "next") -> None:
        self.threads = {i: whole(i) for i in ids}
        self.contacts: dict[str, object] = {}
        self.config = SimpleNamespace(ui=SimpleNamespace(after_triage=after_triage))
        self.read_ahead_ids: list[str] = []
        self.read: list[tuple[str, bool]] = []  # each thread read, and whether the user waited for it meanwhile
        self.waiting = 0  # opens the sync waits for

    @contextlib.contextmanager
    def foreground(self) -> Iterator[None]:
        self.waiting += 1
        try:
            yield
        finally:
            self.waiting -= 1

    async def stored_thread(self, thread_id: str) -> tuple[Thread, list[Message]]:
        self.read.append((thread_id, self.waiting > 0))
        thread, messages = self.threads[thread_id]
        return thread, list(messages)

    def unreadable_in(self, thread_id: str) -> list[object]:
        return []

    async def last_read(self, thread: Thread) -> None:
        return None  # never read: the reader opens at the first message

    def keep(self, thread_id: str, messages: list[Message]) -> None:
        pass

    async def read_ahead(self, thread_id: str) -> None:
        self.read_ahead_ids.append(thread_id)


async def reader_scene(pilot: Any, ids: list[str], after_triage: str = "next") -> tuple[Host, ReaderPart, StoredCore]:
    host = cast(Host, pilot.app.screen)
    core = StoredCore(ids, after_triage)
    host.query_one(ThreadList).set_source(Rows(ids), cursor=0)
    await pilot.pause()
    return host, ReaderPart(host, cast(MailCore, core), host.after_focus_frame), core


async def test_opening_a_previewed_thread_moves_the_focus_marks_it_read_and_reads_its_neighbours() -> None:
    app = HostApp()
    async with app.run_test() as pilot:
        host, part, core = await reader_scene(pilot, ["t0", "t1", "t2"])
        reader, threads = host.query_one(Reader), host.query_one(ThreadList)
        threads.cursor = 1
        thread, messages = whole("t1")
        reader.show(thread, messages, {})  # the preview has laid it out
        part.open("t1")
        assert host.focused is reader  # at once: nothing is read again
        assert part.open_id == "t1"
        assert len(host.after_frame) == 1  # the neighbours are read once the focus move's frame is out
        host.after_frame.pop()()
        await settle(pilot, lambda: host.opened == ["t1"] and len(core.read_ahead_ids) == 2)
        assert core.read_ahead_ids == ["t2", "t0"]


async def test_an_opened_thread_is_read_while_the_sync_waits_and_a_preview_lets_it_go_on() -> None:
    app = HostApp()
    async with app.run_test() as pilot:
        host, part, core = await reader_scene(pilot, ["t0", "t1"])
        part.preview("t0")  # the cursor rests on it
        await settle(pilot, lambda: core.read == [("t0", False)])
        host.query_one(ThreadList).cursor = 1
        part.open("t1")  # Enter: the user waits for it
        await settle(pilot, lambda: host.opened == ["t1"])
        assert core.read == [("t0", False), ("t1", True)]
        assert core.waiting == 0  # and the sync goes on once it is drawn
        part.open("t0")
        part.load("t1", mark_read=False)  # the open under way replaced (a sync changed the thread shown)
        await settle(pilot, lambda: core.read[-1] == ("t1", False))  # (and the workers done: settle waits for them)
        assert core.waiting == 0


async def test_a_sync_that_changed_the_thread_being_opened_still_opens_it() -> None:
    """The sync's reload of the thread replaces the open under way (one worker group): it does what the open was
    to do, moving to the reader and marking the thread read."""
    app = HostApp()
    async with app.run_test() as pilot:
        host, part, _ = await reader_scene(pilot, ["t0", "t1"])
        reader = host.query_one(Reader)
        thread, messages = whole("t1")
        reader.show(thread, messages[:1], {}, progress="Loading messages… 1 of 2")  # a preview still loading
        part.open("t1")
        part.reload(["t0", "t1"])  # the first sync ends meanwhile, having changed every thread
        await settle(pilot, lambda: host.opened == ["t1"])
        assert host.focused is reader
        assert [m.id for m in reader.messages] == ["t1-1", "t1-2"]


@pytest.mark.parametrize(("after_triage", "opens"), [("next", "t2"), ("previous", "t0"), ("list", None)])
async def test_when_the_open_thread_leaves_the_list_the_reader_follows_as_configured(
    after_triage: str, opens: str | None
) -> None:
    app = HostApp()
    async with app.run_test() as pilot:
        host, part, _ = await reader_scene(pilot, ["t0", "t1", "t2"], after_triage)
        reader, threads = host.query_one(Reader), host.query_one(ThreadList)
        threads.cursor = 1
        part.open("t1")
        await settle(pilot, lambda: host.opened == ["t1"])
        threads.set_source(Rows(["t0", "t2"]), cursor=1)  # e: t1 left the view
        part.follow(1)
        if opens is None:
            await settle(pilot, lambda: host.focused is threads)
            assert reader.thread is None
        else:
            await settle(pilot, lambda: host.opened == ["t1", opens])
            assert reader.thread is not None
            assert reader.thread.id == opens
            assert host.focused is reader


# --- triage ---------------------------------------------------------------------------------------------------


class ApplyingCore:
    """The little of the mail core triage uses: a change applied, and recorded."""

    def __init__(self) -> None:
        self.applied: list[tuple[str | None, list[str], dict[str, Any]]] = []

    def apply(self, action: Action, ids: list[str], **how: Any) -> Change:
        self.applied.append((action.op, list(ids), how))
        return Change(action.op or "", len(ids), how.get("on", True))


async def leaving(
    targets: list[str] | Callable[[], list[str]], change: Callable[[list[str]], Any], *, watch: str | None = None
) -> Changed:
    """The list's change, as if every thread changed left the view (the cursor was on the second row)."""
    ids = targets() if callable(targets) else targets
    return Changed(change(ids), left=len(ids), watched_left=watch in ids, at=1)


async def test_a_bulk_triage_asks_first_then_changes_the_threads_and_says_which_left() -> None:
    app = HostApp()
    async with app.run_test() as pilot:
        host = cast(Host, app.screen)
        core = ApplyingCore()
        part = TriagePart(host, cast(MailCore, core), leaving)
        many = [f"t{n}" for n in range(60)]
        part.act("done", many, turns_on=True, watch=None)
        await settle(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert core.applied == []  # nothing changes before the answer
        await pilot.press("y")
        await settle(pilot, lambda: bool(host.triaged))
        assert core.applied == [("done", many, {"on": True})]
        assert host.triaged == [(many, True, False, 1)]


async def test_marking_many_read_does_not_ask_and_the_reader_is_told_to_follow_its_thread() -> None:
    app = HostApp()
    async with app.run_test() as pilot:
        host = cast(Host, app.screen)
        core = ApplyingCore()
        part = TriagePart(host, cast(MailCore, core), leaving)
        many = [f"t{n}" for n in range(60)]
        part.act("read", many, turns_on=False, watch="t7")
        await settle(pilot, lambda: bool(host.triaged))
        assert app.screen is host  # no question
        assert core.applied == [("read", many, {"on": True})]  # (marking read is never a toggle)
        assert host.triaged == [(many, True, True, 1)]

