"""A view longer than a page: shown from its first page at once, counted in a worker after, the cursor kept."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator

import pytest
from textual.pilot import Pilot

from pigeon.core.listing import PAGE, Listing
from pigeon.store.mailstore import MailStore
from pigeon.tui.app import PigeonApp
from pigeon.tui.widgets.reader import Reader
from pigeon.tui.widgets.thread_list import ThreadList
from pigeon_service.app import ServerSettings, create_app
from pigeon_service.db import Database
from pigeon_service.demo_mail import populate
from tests.server.conftest import NOW, Account, Service
from tests.tui.conftest import SIZE, FirstReadHeld, Notes, current_id, pigeon_for, screen_text, settle

THREADS = PAGE + 60


@pytest.fixture(scope="module")
def big() -> Iterator[Service]:
    db = Database(":memory:")
    alice, bob = db.ensure_account("alice"), db.ensure_account("bob")
    populate(db, alice, threads=THREADS, contacts=30, seed=3, now=NOW, conversation=0)
    app = create_app(db, ServerSettings(deliver_webhooks=False))
    yield Service(db, app, Account(alice, db.create_token(alice)), Account(bob, db.create_token(bob)))
    db.close()


def made(store: MailStore, view: str, *, counted: bool) -> Listing:
    return Listing(store, view=view, query=None, inbox_id=None, sort="date", now=NOW, counted=counted)


async def until(pilot: Pilot[None], holds: Callable[[], bool]) -> None:
    """Let the screen catch up until ``holds()``, without waiting for the workers (one is held on purpose)."""
    for _ in range(1000):
        if holds():
            return
        await pilot.pause(0.01)
    raise AssertionError("never came to hold")


async def synced(pilot: Pilot[None], app: PigeonApp) -> ThreadList:
    """Synced, and the search index filled after it: filling it shows the list again (the threads it sorted anew),
    which in the middle of a test's keys would replace the list a test watches with a fresh first page."""
    screen = app.screen
    await settle(pilot, app, lambda: getattr(screen, "synced", False))
    await app.core.indexed()
    await settle(pilot, app)
    return screen.query_one(ThreadList)


async def test_a_big_view_shows_its_first_page_then_its_count(big: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    app = pigeon_for(big)
    async with app.run_test(size=SIZE) as pilot:
        threads = await synced(pilot, app)
        store = app.core.store
        assert store.count("all", now=NOW) == THREADS
        first = made(store, "all", counted=False)
        assert (len(first), first.exact) == (PAGE, False)
        whole = first.count()
        assert (len(whole), whole.exact) == (THREADS, True)
        assert [whole.row(n).id for n in range(PAGE)] == [first.row(n).id for n in range(PAGE)]
        assert whole.row(THREADS - 1).id == made(store, "all", counted=True).row(THREADS - 1).id
        assert made(store, "starred", counted=False).exact  # (a view shorter than a page is counted by its page)
        gate, asked = threading.Event(), threading.Event()
        count = Listing.count

        def held(listing: Listing) -> Listing:
            asked.set()
            gate.wait(10)
            return count(listing)

        monkeypatch.setattr(Listing, "count", held)
        await pilot.press("6")  # All mail: the first page at once
        await until(pilot, lambda: "Threads · All" in screen_text(app) and asked.is_set())
        assert len(threads.source) == PAGE
        assert f"{PAGE}+ threads" in screen_text(app)
        await pilot.press("j", "j", "j")
        kept = threads.current
        assert kept is not None
        gate.set()
        await settle(pilot, app, lambda: len(threads.source) == THREADS)
        assert threads.current == kept  # the cursor stayed where it was
        assert f"{THREADS} threads" in screen_text(app)
        await pilot.press("G")
        await settle(pilot, app, lambda: threads.cursor == THREADS - 1)
        await pilot.press("home")
        await settle(pilot, app, lambda: threads.cursor == 0)
        gate.clear()
        asked.clear()
        await pilot.press("6")  # the same list shown again (as a sync does): counted at once, its length kept
        await pilot.pause()
        assert len(threads.source) == THREADS
        assert not asked.is_set()
        gate.set()


async def test_a_thread_kept_beyond_the_first_page_is_found_once_counted(big: Service) -> None:
    app = pigeon_for(big)
    async with app.run_test(size=SIZE) as pilot:
        threads = await synced(pilot, app)
        await pilot.press("6")
        await settle(pilot, app, lambda: len(threads.source) == THREADS)
        by_sender = [t.id for t in app.core.store.list_threads("all", sort="sender", limit=THREADS, now=NOW)]
        shown = [threads.source.row(n).id for n in range(20)]
        far = next(n for n, thread_id in enumerate(shown) if by_sender.index(thread_id) >= PAGE)
        for _ in range(far):
            await pilot.press("j")
        kept = current_id(threads)
        await pilot.press("o")  # by sender: the thread is beyond the new list's first page
        await settle(pilot, app, lambda: len(threads.source) == THREADS)
        assert current_id(threads) == kept
        assert threads.cursor == by_sender.index(kept)


async def test_the_end_of_a_first_page_becomes_the_end_of_the_list(
    big: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = pigeon_for(big)
    async with app.run_test(size=SIZE) as pilot:
        threads = await synced(pilot, app)
        gate = threading.Event()
        count = Listing.count
        monkeypatch.setattr(Listing, "count", lambda listing: (gate.wait(10), count(listing))[1])
        await pilot.press("6")
        await until(pilot, lambda: "Threads · All" in screen_text(app) and len(threads.source) == PAGE)
        await pilot.press("G")  # before the count: the end of what is shown
        await until(pilot, lambda: threads.cursor == PAGE - 1)
        gate.set()
        await settle(pilot, app, lambda: len(threads.source) == THREADS)
        assert threads.cursor == THREADS - 1


async def test_a_word_search_begun_before_the_count_is_shown(big: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    app = pigeon_for(big)
    async with app.run_test(size=SIZE) as pilot:
        threads = await synced(pilot, app)
        word = app.core.store.list_threads("all", limit=1, now=NOW)[0].subject.split()[0]
        matching = app.core.store.count("all", word, now=NOW)
        assert 0 < matching < THREADS
        gate = threading.Event()
        count = Listing.count
        monkeypatch.setattr(Listing, "count", lambda listing: (gate.wait(10), count(listing))[1])
        await pilot.press("6")
        await until(pilot, lambda: "Threads · All" in screen_text(app) and len(threads.source) == PAGE)
        await pilot.press("slash", *word)  # the search starts while the All list waits for its count
        gate.set()
        await settle(pilot, app, lambda: "Threads · Search" in screen_text(app))
        await settle(pilot, app, lambda: len(threads.source) == matching)


def held_count(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Counting a list waits until the returned gate is set."""
    gate = threading.Event()
    count = Listing.count
    monkeypatch.setattr(Listing, "count", lambda listing: (gate.wait(10), count(listing))[1])
    return gate


async def first_page_held(
    pilot: Pilot[None], app: PigeonApp, monkeypatch: pytest.MonkeyPatch, keys: str = "6", title: str = "All"
) -> tuple[ThreadList, threading.Event]:
    """Once synced, ``keys`` show the view ``title`` with its count held: the list, and the gate that lets it go."""
    threads = await synced(pilot, app)
    gate = held_count(monkeypatch)
    await pilot.press(*keys)
    await until(pilot, lambda: f"Threads · {title}" in screen_text(app) and len(threads.source) == PAGE)
    return threads, gate


async def to_page_end(pilot: Pilot[None], threads: ThreadList) -> str:
    """Walk the cursor page by page to the first page's last row (not G): the thread it is on."""
    while threads.cursor < PAGE - 1:
        await pilot.press("pagedown")
    return current_id(threads)


async def test_a_cursor_walked_to_a_first_pages_end_stays_on_its_thread_once_counted(
    big: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = pigeon_for(big)
    async with app.run_test(size=SIZE) as pilot:
        threads, gate = await first_page_held(pilot, app, monkeypatch)
        walked_to = await to_page_end(pilot, threads)
        gate.set()
        await settle(pilot, app, lambda: len(threads.source) == THREADS)
        assert (threads.cursor, current_id(threads)) == (PAGE - 1, walked_to)


async def test_g_then_a_step_back_before_the_count_is_not_sent_to_the_end(
    big: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = pigeon_for(big)
    async with app.run_test(size=SIZE) as pilot:
        threads, gate = await first_page_held(pilot, app, monkeypatch)
        await pilot.press("G", "k")
        await until(pilot, lambda: threads.cursor == PAGE - 2)
        gate.set()
        await settle(pilot, app, lambda: len(threads.source) == THREADS)
        assert threads.cursor == PAGE - 2


async def test_shift_j_at_a_first_pages_end_opens_the_next_thread_once_counted(
    big: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    app, notes = pigeon_for(big), Notes()
    async with app.run_test(size=SIZE, message_hook=notes) as pilot:
        threads, gate = await first_page_held(pilot, app, monkeypatch)
        beyond = made(app.core.store, "all", counted=True).row(PAGE).id
        await to_page_end(pilot, threads)
        assert threads.source.row(PAGE - 1).unread
        reader = app.screen.query_one(Reader)
        await pilot.press("enter")
        await until(pilot, lambda: app.focused is reader and bool(reader.messages))
        await pilot.press("J")  # the list's end is not known yet: J waits for the count
        await until(pilot, lambda: not threads.source.row(PAGE - 1).unread)  # marked read: the list shown again
        gate.set()
        await settle(pilot, app, lambda: reader.thread is not None and reader.thread.id == beyond)
        assert current_id(threads) == beyond
        assert "No more threads" not in notes.text


async def test_a_thread_done_at_a_first_pages_end_is_followed_by_the_next_once_counted(
    big: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = pigeon_for(big)
    async with app.run_test(size=SIZE) as pilot:
        threads, gate = await first_page_held(pilot, app, monkeypatch, "61", "Inbox")  # the Inbox anew
        inbox = made(app.core.store, "inbox", counted=True)
        assert len(inbox) > PAGE + 1
        after = inbox.row(PAGE).id  # the thread after the one that will be done
        done = await to_page_end(pilot, threads)
        reader = app.screen.query_one(Reader)
        await pilot.press("enter")
        await until(pilot, lambda: app.focused is reader and reader.thread is not None and reader.thread.id == done)
        await pilot.press("e")  # it leaves the Inbox from the page's last row: the next is beyond the page
        await until(pilot, lambda: len(threads.source) == PAGE - 1)
        gate.set()
        await settle(pilot, app, lambda: reader.thread is not None and reader.thread.id == after)
        assert app.focused is reader


async def test_g_waiting_for_a_count_does_not_follow_into_another_view(
    big: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = pigeon_for(big)
    async with app.run_test(size=SIZE) as pilot:
        threads, gate = await first_page_held(pilot, app, monkeypatch)
        await pilot.press("G", "1")  # the Inbox, shown counted at once (its cursor kept near the page's end)
        await until(pilot, lambda: "Threads · Inbox" in screen_text(app))
        gate.set()
        await settle(pilot, app)
        assert len(threads.source) > PAGE
        assert threads.cursor < PAGE  # where the thread was kept, not the Inbox's end


async def test_a_list_left_while_being_counted_stops_its_count(big: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    """A count under way in a thread of its own is stopped when another list is shown: views switched in a row
    at a million messages would otherwise leave their counts reading side by side."""
    app = pigeon_for(big)
    async with app.run_test(size=SIZE) as pilot:
        await synced(pilot, app)
        held = FirstReadHeld(app.core.store, Listing.count)  # the first count: a read of many seconds
        monkeypatch.setattr(Listing, "count", lambda listing: held(listing))
        await pilot.press("6")  # All mail: its first page, then its count
        await asyncio.wait_for(held.reading.wait(), 15)
        await pilot.press("1")  # the Inbox, before All mail was counted
        await until(pilot, lambda: len(held.said) > 1)
        assert held.said == ["reading", "SQLITE_INTERRUPT"]
        await settle(pilot, app, lambda: f"{THREADS} threads" in screen_text(app))  # the Inbox counted
