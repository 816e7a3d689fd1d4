"""The local store: schema, sync of what changed, triage that persists and undoes, views, search."""

from __future__ import annotations

import asyncio
import gc
import os
import sqlite3
import threading
from collections.abc import AsyncIterator, Iterable
from datetime import datetime, timedelta
from pathlib import Path
from unittest.mock import patch

import httpx
import pytest

from pigeon.api import PigeonClient
from pigeon.models import Contact, Message, Sender, Thread
from pigeon.store.cache import Fetched
from pigeon.store.mailstore import (
    SCHEMA_VERSION,
    Change,
    MailStore,
    SchemaTooNew,
    StoredThread,
    UnknownThread,
    store_path,
)
from pigeon.store.search import QueryError, parse_query
from pigeon.store.sync import index_stored, sync
from tests.server.conftest import NOW, Service, first_thread, make_service

LATER = NOW + timedelta(days=1)


class Counting(httpx.AsyncBaseTransport):
    """The service in-process, counting the requests per path."""

    def __init__(self, service: Service) -> None:
        self.inner = httpx.ASGITransport(app=service.app)
        self.paths: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.paths.append(request.url.path)
        return await self.inner.handle_async_request(request)


@pytest.fixture
def service() -> Service:
    return make_service()


@pytest.fixture
def counting(service: Service) -> Counting:
    return Counting(service)


@pytest.fixture
async def client(service: Service, counting: Counting) -> AsyncIterator[PigeonClient]:
    async with PigeonClient(
        "http://s.test", service.alice.token, http_client=httpx.AsyncClient(transport=counting)
    ) as c:
        yield c


@pytest.fixture
async def store(tmp_path: Path, client: PigeonClient) -> MailStore:
    synced = MailStore(tmp_path / "store.sqlite3")
    await sync(client, synced)
    await index_stored(synced)
    return synced


def ids(threads: Iterable[StoredThread]) -> list[str]:
    return [t.id for t in threads]


def sent(thread: StoredThread) -> datetime:
    """When the thread's last message came (every thread of the demo has one)."""
    assert thread.last_message_at is not None
    return thread.last_message_at


# --- schema ------------------------------------------------------------------------------------------------------


async def test_a_message_on_its_way_is_read_again_until_its_status_is_final(
    tmp_path: Path, service: Service, client: PigeonClient
) -> None:
    thread_id = first_thread(service, service.alice)
    message_id = service.add_message(
        service.alice, thread_id, direction="MESSAGE_DIRECTION_OUTBOUND", status="MESSAGE_STATUS_PENDING"
    )
    store = MailStore(tmp_path / "store.sqlite3")
    await sync(client, store)

    def status() -> str:
        return next(str(m.status) for m in store.messages(thread_id) if m.id == message_id)

    assert status() == "MESSAGE_STATUS_PENDING"
    service.db.set_message_status(service.alice.id, message_id, "MESSAGE_STATUS_DELIVERED")
    report = await sync(client, store)
    assert thread_id in report.changed  # the thread list says nothing changed; the pending message did
    assert status() == "MESSAGE_STATUS_DELIVERED"
    assert thread_id not in (await sync(client, store)).changed  # final now: not read again


def test_a_version_1_store_reads_again_the_threads_it_kept_with_messages_on_their_way(tmp_path: Path) -> None:
    from pigeon.sqlite import Database
    from pigeon.store.schema import MIGRATIONS

    path = tmp_path / "v1.sqlite3"
    old = Database(path, MIGRATIONS[:1])
    with old.transaction() as conn:
        for thread_id, status, created in (
            ("t-pending", "MESSAGE_STATUS_PENDING", "2999-01-01T00:00:00Z"),
            ("t-done", "MESSAGE_STATUS_DELIVERED", "2999-01-01T00:00:00Z"),
            ("t-stale", "MESSAGE_STATUS_SENT", "2020-01-01T00:00:00Z"),  # long ago: taken as final
        ):
            conn.execute(
                "INSERT INTO threads (id, last_message_at, message_count, synced_upto, synced_count, data) "
                "VALUES (?, 'x', 1, 'x', 1, '{}')",
                (thread_id,),
            )
            conn.execute(
                "INSERT INTO messages (id, thread_id, position, data) VALUES (?, ?, 0, ?)",
                (thread_id + "-m", thread_id, f'{{"status": "{status}", "created_at": "{created}"}}'),
            )
    old.close()
    store = MailStore(path)
    counts = {row[0]: row[1] for row in store.rows("SELECT id, synced_count FROM threads")}
    assert counts == {"t-pending": -1, "t-done": 1, "t-stale": 1}


def test_a_long_thread_reads_back_whole_in_order_with_each_writer_held_once(tmp_path: Path) -> None:
    store = MailStore(tmp_path / "store.sqlite3")
    store.put_threads([Thread(id="t-long", subject="Long", message_count=1_200)])
    ada = [Contact(id="ada", first_name="Ada", updated_at=NOW + timedelta(days=n)) for n in range(2)]
    bob = Contact(id="bob", first_name="Bob", updated_at=NOW)
    writers = [ada[0], bob, ada[1]]  # two versions of Ada's contact: each kept as it was when she wrote
    messages = [
        Message(
            id=f"m{n:04d}",
            thread_id="t-long",
            created_at=NOW + timedelta(minutes=n),
            sender=Sender(contact_id=writers[n % 3].id, contact=writers[n % 3], raw_address="x@example.com"),
        )
        for n in range(1_200)  # more than one read's worth of rows
    ]
    store.put_messages("t-long", messages, who="Ada, Bob", recipients="")
    read = store.messages("t-long")
    assert [m.id for m in read] == [m.id for m in messages]
    assert [m.sender.contact for m in read if m.sender] == [m.sender.contact for m in messages if m.sender]
    held = {id(m.sender.contact) for m in read if m.sender and m.sender.contact}
    assert len(held) == 3  # one object per version of a writer's contact, not one per message


def test_a_new_store_is_created_at_the_current_version_and_an_old_one_migrates(tmp_path: Path) -> None:
    assert MailStore(tmp_path / "new.sqlite3").schema_version == SCHEMA_VERSION
    old = tmp_path / "old.sqlite3"
    sqlite3.connect(old).close()  # an empty database is version 0, the previous one
    assert MailStore(old).schema_version == SCHEMA_VERSION
    future = tmp_path / "future.sqlite3"
    raw = sqlite3.connect(future)
    raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    raw.close()
    with pytest.raises(SchemaTooNew):
        MailStore(future)


def test_one_store_per_profile_under_the_data_dir(isolated_environment: Path) -> None:
    assert store_path("work") == isolated_environment / "data" / "store" / "work.sqlite3"
    assert store_path("../evil").parent == isolated_environment / "data" / "store"


# --- sync -----------------------------------------------------------------------------------------------------


async def test_sync_fetches_only_threads_that_changed(
    tmp_path: Path, client: PigeonClient, counting: Counting, service: Service
) -> None:
    store = MailStore(tmp_path / "s.sqlite3")
    first = await sync(client, store)
    assert (first.threads, first.fetched) == (25, 25)
    assert counting.paths.count("/v1/messages") == 25
    assert store.count("all") == 25

    counting.paths.clear()
    second = await sync(client, store)
    assert second.fetched == 0
    assert counting.paths.count("/v1/messages") == 0

    target = store.list_threads("all", now=NOW)[10].id
    service.add_message(service.alice, target, subject="news")
    counting.paths.clear()
    third = await sync(client, store)
    assert third.fetched == 1
    assert counting.paths.count("/v1/messages") == 1
    assert store.list_threads("all", now=NOW)[0].id == target


async def test_cached_mail_stays_readable_without_the_service(tmp_path: Path, store: MailStore) -> None:
    store.close()
    offline = MailStore(tmp_path / "store.sqlite3")  # no client at all
    first = offline.list_threads("inbox", now=NOW)[0]
    assert first.subject
    assert offline.messages(first.id)
    assert offline.inboxes()
    assert offline.contacts()


# --- triage -----------------------------------------------------------------------------------------------


async def test_every_action_persists_across_a_restart(tmp_path: Path, store: MailStore) -> None:
    a, b, c, d, e = ids(store.list_threads("all", limit=5, now=NOW))
    store.mark_read([a])
    store.star([b])
    store.done([c])
    store.snooze([d], LATER)
    store.label([e, a], "work")
    store.mute([b])
    store.close()
    again = MailStore(tmp_path / "store.sqlite3")
    rows = {t.id: t for t in again.list_threads("all", now=NOW)}
    assert not rows[a].unread
    assert rows[b].starred
    assert rows[b].muted
    assert rows[c].done
    assert rows[d].snoozed_until is not None
    assert rows[e].labels == ("work",)
    inbox = ids(again.list_threads("inbox", now=NOW))
    assert a in inbox
    assert {b, c, d}.isdisjoint(inbox)
    assert set(ids(again.list_threads("label:work", now=NOW))) == {a, e}


async def test_done_and_snoozed_threads_come_back_on_a_new_message(store: MailStore) -> None:
    threads = store.list_threads("all", now=NOW)
    done, snoozed, muted = threads[3], threads[4], threads[5]
    store.done([done.id])
    store.snooze([snoozed.id], LATER)
    store.mute([muted.id])
    assert {done.id, snoozed.id, muted.id}.isdisjoint(ids(store.list_threads("inbox", now=NOW)))
    newer = []
    for kept in (store.thread(done.id), store.thread(snoozed.id), store.thread(muted.id)):
        assert kept is not None
        update = {"last_message_at": NOW + timedelta(minutes=5), "message_count": (kept.message_count or 0) + 1}
        newer.append(kept.model_copy(update=update))
    store.put_threads(newer)  # new mail arrived in all three
    inbox = ids(store.list_threads("inbox", now=NOW))
    assert done.id in inbox
    assert snoozed.id in inbox
    assert muted.id not in inbox  # muted stays out
    assert next(t for t in store.list_threads("all", now=NOW) if t.id == done.id).unread


async def test_snooze_wakes_when_due(store: MailStore) -> None:
    thread = store.list_threads("inbox", now=NOW)[0]
    store.snooze([thread.id], NOW + timedelta(hours=2))
    assert thread.id not in ids(store.list_threads("inbox", now=NOW + timedelta(hours=1)))
    assert thread.id in ids(store.list_threads("snoozed", now=NOW + timedelta(hours=1)))
    assert thread.id in ids(store.list_threads("inbox", now=NOW + timedelta(hours=3)))
    assert thread.id not in ids(store.list_threads("snoozed", now=NOW + timedelta(hours=3)))


async def test_bulk_actions_and_their_undo(store: MailStore) -> None:
    batch = ids(store.list_threads("inbox", limit=3, now=NOW))
    assert store.done(batch) == Change("done", 3, True)
    assert set(batch).isdisjoint(ids(store.list_threads("inbox", now=NOW)))
    assert store.undo() == Change("done", 3, True)
    assert set(batch) <= set(ids(store.list_threads("inbox", now=NOW)))
    assert store.undo() is None


def test_a_change_that_changes_nothing_says_so_and_is_no_undo_step(store: MailStore) -> None:
    thread = store.list_threads("inbox", limit=1, now=NOW)[0].id
    store.star([thread])
    steps = len(store.undo_steps())
    assert store.label([thread], "never-had", on=False) == Change("label", 0, False, "never-had")
    assert store.star([thread]) == Change("star", 0, True)
    assert len(store.undo_steps()) == steps
    assert store.undo() == Change("star", 1, True)  # undo takes back the last real change


@pytest.mark.parametrize("action", ["read", "unread", "star", "done", "snooze", "mute", "label", "unlabel"])
async def test_each_action_undoes_exactly(store: MailStore, action: str) -> None:
    thread = store.list_threads("inbox", limit=1, now=NOW)[0].id
    store.label([thread], "keep")
    store.mark_read([thread], read=action != "read")  # so that each action changes something
    before = next(t for t in store.list_threads("all", now=NOW) if t.id == thread)
    {
        "read": lambda: store.mark_read([thread], read=True),
        "unread": lambda: store.mark_read([thread], read=False),
        "star": lambda: store.star([thread]),
        "done": lambda: store.done([thread]),
        "snooze": lambda: store.snooze([thread], LATER),
        "mute": lambda: store.mute([thread]),
        "label": lambda: store.label([thread], "new"),
        "unlabel": lambda: store.label([thread], "keep", on=False),
    }[action]()
    assert store.undo() is not None
    assert next(t for t in store.list_threads("all", now=NOW) if t.id == thread) == before


async def test_undo_survives_a_restart_and_keeps_at_least_50_steps(tmp_path: Path, store: MailStore) -> None:
    threads = ids(store.list_threads("all", now=NOW))
    for n in range(60):
        store.star([threads[(n // 2) % len(threads)]], on=n % 2 == 0)  # star, then unstar: each a real change
    store.done(threads[:2])
    store.close()
    again = MailStore(tmp_path / "store.sqlite3")
    assert len(again.undo_steps()) >= 50
    assert again.undo() == Change("done", 2, True)
    assert set(threads[:2]) <= set(ids(again.list_threads("inbox", now=NOW)))


def test_unknown_threads_and_bad_labels_are_refused(tmp_path: Path) -> None:
    store = MailStore(tmp_path / "empty.sqlite3")
    with pytest.raises(UnknownThread):
        store.done(["nope"])
    assert store.undo_steps() == []
    with pytest.raises(ValueError, match="label"):
        store.label([], "   ")


# --- views and search ----------------------------------------------------------------------------------------


async def test_views_have_counts_and_inboxes_unread_counts(store: MailStore) -> None:
    threads = ids(store.list_threads("all", now=NOW))
    store.star(threads[:2])
    store.done(threads[2:5])
    store.label(threads[:3], "clients")
    store.mark_read(threads[5:8])
    counts = store.view_counts(now=NOW)
    assert counts["all"] == 25
    assert counts["starred"] == 2
    assert counts["done"] == 3
    assert counts["inbox"] == 22
    assert counts["label:clients"] == 3
    assert counts["unread"] == 22
    by_inbox = store.unread_by_inbox(now=NOW)
    assert sum(by_inbox.values()) == 22


async def test_the_views_are_counted_alike_where_sqlite_has_no_filter_clause(
    store: MailStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pigeon.store import views

    threads = ids(store.list_threads("all", now=NOW))
    store.star(threads[:2])
    store.done(threads[2:5])
    store.mute(threads[5:6])
    filtered = store.view_counts(now=NOW)
    monkeypatch.setattr(views, "FILTERS", False)
    assert store.view_counts(now=NOW) == filtered
    assert (filtered["starred"], filtered["done"], filtered["inbox"]) == (2, 3, 25 - 3 - 1)


async def test_a_count_among_some_threads_counts_those_in_the_view(store: MailStore) -> None:
    threads = ids(store.list_threads("all", now=NOW))
    store.done(threads[:2])
    assert store.count("inbox", among=threads[:5], now=NOW) == 3
    assert store.count("done", among=threads[:5], now=NOW) == 2
    assert store.count("inbox", among=[], now=NOW) == 0
    assert store.count("inbox", among=["no-such-thread"], now=NOW) == 0


async def test_the_inbox_and_its_lanes_count_as_their_lists_hold_in_every_triage_state(
    store: MailStore, tmp_path: Path
) -> None:
    """The inbox and its lanes are counted as the threads untriaged less those triaged out: the same as the
    threads their list holds, for each way a thread leaves the inbox or comes back to it."""
    from pigeon.store.predicates import INBOX_VIEWS

    threads = ids(store.list_threads("all", now=NOW))
    store.done(threads[0:3])
    store.snooze(threads[3:5], NOW + timedelta(days=1))  # not yet due
    store.snooze(threads[5:7], NOW - timedelta(days=1))  # due: back in the inbox
    store.mute(threads[7:9])
    store.star(threads[9:11])
    store.mark_read(threads[11:14])
    store.done(threads[14:16])
    with sqlite3.connect(tmp_path / "store.sqlite3") as conn:  # the sorting and a newer message, as a sync leaves them
        conn.execute("UPDATE triage SET done_upto = '2000-01-01T00:00:00Z' WHERE thread_id IN (?, ?)", threads[14:16])
        conn.execute("INSERT INTO triage (thread_id, snoozed_until) VALUES (?, 'garbage')", threads[16:17])  # damaged
        conn.executemany(
            "UPDATE threads SET lane = ?, last_by = ?, screen = ? WHERE id = ?",
            [
                (("people", "newsletters", "receipts")[n % 3], ("person", "me")[n % 2], (n >= 20) + (n >= 22), id_)
                for n, id_ in enumerate(threads)  # (the last five screened or kept out)
            ],
        )
    inbox_id = store.list_threads("all", now=NOW)[0].inbox_id
    counted = store.view_counts(NOW)
    for view in INBOX_VIEWS:
        held = store.view_ids(view, now=NOW)
        assert store.count(view, now=NOW) == len(held) == counted[view], view
        assert store.count(view, parse_query(""), now=NOW) == len(held), view
        in_inbox = store.view_ids(view, inbox_id=inbox_id, now=NOW)
        assert store.count(view, inbox_id=inbox_id, now=NOW) == len(in_inbox), view
    assert store.count("inbox", now=NOW) == 25 - 5 - 3 - 2 - 2 - 1  # screened or kept out, done, snoozed, muted


async def test_the_sidebars_counts_never_wait_for_the_lists_reads(store: MailStore) -> None:
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(1) as pool, store._lock:  # the list's connection is busy
        counts = pool.submit(store.view_counts, NOW).result(timeout=10)
        unread = pool.submit(store.unread_by_inbox, NOW).result(timeout=10)
    assert counts["all"] == 25
    assert sum(unread.values()) == 25


async def test_the_stores_connections_keep_small_page_caches(store: MailStore) -> None:
    from pigeon.store.views import COUNT_CACHE_KIB, LIST_CACHE_KIB

    store.view_counts(NOW)  # (the counting connection opens on first use)
    assert store._counter is not None
    assert store._counter.execute("PRAGMA cache_size").fetchone()[0] == -COUNT_CACHE_KIB
    assert store.rows("PRAGMA cache_size")[0][0] == -LIST_CACHE_KIB
    assert COUNT_CACHE_KIB < LIST_CACHE_KIB < 2000  # below SQLite's default of 2 MiB a connection


async def test_sorting_by_sender_and_subject(store: MailStore) -> None:
    by_subject = [t.subject.lower() for t in store.list_threads("all", sort="subject", now=NOW)]
    assert by_subject == sorted(by_subject)
    by_sender = [t.who.lower().removeprefix("you, ") for t in store.list_threads("all", sort="sender", now=NOW)]
    assert by_sender == sorted(by_sender)  # by the other party (see the test below)
    with pytest.raises(ValueError, match="sort"):
        store.list_threads("all", sort="size")


@pytest.mark.parametrize("sort", ["date", "sender", "subject"])
async def test_a_threads_position_is_where_the_list_puts_it(store: MailStore, sort: str) -> None:
    for view, query in [("all", None), ("inbox", None), ("all", "is:unread")]:
        listed = ids(store.list_threads(view, query, sort=sort, limit=1000, now=NOW))
        pages = [
            t
            for offset in range(0, len(listed), 4)
            for t in ids(store.list_threads(view, query, sort=sort, offset=offset, limit=4, now=NOW))
        ]
        assert pages == listed  # one order: pages neither overlap nor skip
        for index, thread_id in enumerate(listed):
            assert store.position(thread_id, view, query, sort=sort, now=NOW) == index
    gone = ids(store.list_threads("inbox", now=NOW))[3]
    store.done([gone])
    assert store.position(gone, "inbox", sort=sort, now=NOW) is None
    assert store.position("no-such-thread", "all", sort=sort, now=NOW) is None


async def test_each_search_operator(store: MailStore) -> None:
    everything = store.list_threads("all", now=NOW)
    sample = next(t for t in everything if t.who and " " in t.subject)
    word = sample.subject.split()[0]
    found = ids(store.list_threads("all", word, now=NOW))
    assert sample.id in found
    assert all(word.lower() in t.subject.lower() or t.id in found for t in store.list_threads("all", word, now=NOW))
    assert sample.id in ids(store.list_threads("all", f"subject:{word}", now=NOW))
    sender_word = sample.who.split(",")[0].split()[0]
    assert sample.id in ids(store.list_threads("all", f"from:{sender_word}", now=NOW))
    assert ids(store.list_threads("all", "to:you@pigeon.example", now=NOW))
    store.star([sample.id])
    assert ids(store.list_threads("all", "is:starred", now=NOW)) == [sample.id]
    store.mark_read([sample.id])
    assert sample.id not in ids(store.list_threads("all", "is:unread", now=NOW))
    assert sample.id in ids(store.list_threads("all", "is:read", now=NOW))
    store.done([sample.id])
    assert ids(store.list_threads("all", "is:done", now=NOW)) == [sample.id]
    with_files = store.list_threads("all", "has:attachment", now=NOW)
    assert with_files
    assert all(t.has_attachment for t in with_files)
    store.label([sample.id], "q4")
    assert ids(store.list_threads("all", "label:q4", now=NOW)) == [sample.id]
    cut = sorted(sent(t) for t in everything)[12]
    day = cut.date().isoformat()
    assert all(sent(t).date() < cut.date() for t in store.list_threads("all", f"before:{day}", now=NOW))
    assert all(sent(t).date() >= cut.date() for t in store.list_threads("all", f"after:{day}", now=NOW))
    assert ids(store.list_threads("all", f"is:starred label:q4 {word}", now=NOW)) == [sample.id]  # combined


async def test_body_text_is_searchable(store: MailStore) -> None:
    hits = store.list_threads("all", "milestone", now=NOW)  # a word of the demo bodies that no subject or sender has
    assert hits
    assert all("milestone" not in f"{t.subject} {t.who}".lower() for t in hits)
    assert all(
        any("milestone" in (b.content or "") for m in store.messages(t.id) for b in m.content_blocks) for t in hits
    )


@pytest.mark.parametrize(
    "query",
    [
        '"',
        '""',
        "*",
        "a*b",
        "NEAR(x y)",
        "-",
        "- - -",
        "AND OR NOT",
        "(",
        ")",
        ":",
        "'",
        "x:y",
        "^",
        "\\",
        "{}",
    ],
)
async def test_fts_syntax_in_a_query_never_raises(store: MailStore, query: str) -> None:
    store.list_threads("all", query, now=NOW)
    store.count("all", query, now=NOW)


@pytest.mark.parametrize(
    ("query", "complaint"), [("is:sleepy", "is:"), ("before:yesterday", "date"), ("has:kids", "has:")]
)
def test_bad_operator_values_are_clear_errors(query: str, complaint: str) -> None:
    with pytest.raises(QueryError, match=complaint):
        parse_query(query)


async def test_a_query_past_the_term_cap_is_a_clear_error_and_one_at_the_cap_runs(store: MailStore) -> None:
    from pigeon.store.search import MAX_TERMS

    past = " ".join(["in:all"] * 250)
    with pytest.raises(QueryError, match=rf"^a search takes at most {MAX_TERMS} words and operators, not 250$"):
        parse_query(past)
    with pytest.raises(QueryError):
        store.list_threads("all", past, now=NOW)
    at_cap = " ".join(["is:unread", "label:x", "in:inbox", "word"] * (MAX_TERMS // 4))
    assert store.list_threads("all", at_cap, now=NOW) == []
    assert store.count("all", at_cap, now=NOW) == 0


def test_a_query_past_the_length_cap_is_a_clear_error_before_it_is_read() -> None:
    from pigeon.store.search import MAX_QUERY_LENGTH

    assert parse_query("x" * MAX_QUERY_LENGTH).text == ["x" * MAX_QUERY_LENGTH]
    with pytest.raises(QueryError, match=r"^a search takes at most 2,000 characters, not 100,000$"):
        parse_query("pasted" + "x" * 99_994)


async def test_a_sync_that_fails_stops_fetching_the_other_threads(tmp_path: Path, service: Service) -> None:
    import asyncio

    from pigeon.api import ServerError

    held = asyncio.Event()  # the other threads' fetches wait here: without cancelling, they would wait for ever
    failed_once = False

    class Failing(httpx.AsyncBaseTransport):
        inner = httpx.ASGITransport(app=service.app)

        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            nonlocal failed_once
            if request.url.path == "/v1/messages":
                if not failed_once:
                    failed_once = True
                    return httpx.Response(500, json={"title": "Internal Server Error", "status": 500})
                await held.wait()
            return await self.inner.handle_async_request(request)

    reported: list[int] = []
    async with PigeonClient(
        "http://s.test", service.alice.token, http_client=httpx.AsyncClient(transport=Failing()), max_retries=0
    ) as client:
        with pytest.raises(ServerError):
            await sync(client, MailStore(tmp_path / "s.sqlite3"), on_progress=lambda done, total: reported.append(done))
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        left = [t for t in others if "fetch" in repr(t.get_coro()) or "write" in repr(t.get_coro())]
        assert not left  # none left behind to report or write
    assert reported == [0]  # the thread list arrived (0 done), and no fetch reported after the failure


async def test_records_that_cannot_be_read_are_left_out_and_named_while_the_rest_syncs(
    tmp_path: Path, service: Service
) -> None:
    import json as jsonlib

    bad_threads = [
        {"id": "t-date", "last_message_at": "10000-01-01T00:00:00Z", "message_count": 1},  # no such year
        {"id": "t-ahead", "created_at": "9999-12-31T23:59:59-05:00"},  # past year 9999 once in UTC
        {"id": "t-huge", "message_count": 10**30},  # more than JSON carries exactly, or SQLite holds
    ]
    inner = httpx.ASGITransport(app=service.app)

    async def poisoned(request: httpx.Request) -> httpx.Response:
        answer = await inner.handle_async_request(request)
        if request.url.path not in {"/v1/threads", "/v1/messages"}:
            return answer
        await answer.aread()
        body = jsonlib.loads(answer.content)
        if request.url.path == "/v1/threads":
            body["threads"] += bad_threads
        elif body["messages"]:
            body["messages"].append({"id": "m-bad", "created_at": "not a date"})
        return httpx.Response(200, json=body)

    store = MailStore(tmp_path / "s.sqlite3")
    async with PigeonClient(
        "http://s.test", service.alice.token, http_client=httpx.AsyncClient(transport=httpx.MockTransport(poisoned))
    ) as client:
        report = await sync(client, store)
    assert report.threads == 25  # every good thread synced
    assert store.count("all") == 25
    named = [note.record_id for note in report.skipped]
    assert {"t-date", "t-ahead", "t-huge"} <= set(named)
    assert named.count("m-bad") == 25  # one bad message in each thread, each left out on its own
    assert all(store.messages(t.id) for t in store.list_threads("all", limit=25, now=NOW))


def test_in_names_a_view_and_nothing_else() -> None:
    assert parse_query("in:Done invoice").views == ["done"]
    assert parse_query("invoice").searching
    assert not parse_query("  ").searching
    with pytest.raises(QueryError, match="in: takes one of inbox"):
        parse_query("in:nowhere")


async def test_sorting_by_sender_sorts_by_the_other_party_not_by_you(store: MailStore) -> None:
    first, second, third = ids(store.list_threads("all", limit=3, now=NOW))
    with store.transaction() as conn:
        for thread_id, who in ((first, "You, Zed"), (second, "Bob"), (third, "You, Aaron")):
            conn.execute("UPDATE threads SET who = ? WHERE id = ?", (who, thread_id))
    ordered = [t.id for t in store.list_threads("all", sort="sender", now=NOW) if t.id in {first, second, third}]
    assert ordered == [third, second, first]  # Aaron, Bob, Zed


async def test_rows_are_stored_before_any_message_and_requests_stay_within_the_bound(
    tmp_path: Path, service: Service
) -> None:
    """A service slow to give messages still yields rows: the threads are stored (and reported) before any message
    has come; at most the client's ``max_in_flight`` message requests are ever in flight."""
    held = asyncio.Event()
    in_flight = most = 0

    class Slow(httpx.AsyncBaseTransport):
        inner = httpx.ASGITransport(app=service.app)

        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            nonlocal in_flight, most
            if request.url.path != "/v1/messages":
                return await self.inner.handle_async_request(request)
            in_flight += 1
            most = max(most, in_flight)
            try:
                await held.wait()
                return await self.inner.handle_async_request(request)
            finally:
                in_flight -= 1

    store = MailStore(tmp_path / "s.sqlite3")
    reported: list[tuple[int, int, int]] = []  # (done, total, threads stored then)
    async with PigeonClient(
        "http://s.test",
        service.alice.token,
        http_client=httpx.AsyncClient(transport=Slow()),
        max_retries=0,
        max_in_flight=3,
    ) as client:
        syncing = asyncio.ensure_future(
            sync(
                client,
                store,
                on_progress=lambda done, total: reported.append((done, total, store.count("all", now=NOW))),
            )
        )
        for _ in range(500):  # the thread list is in (25 threads), no message has come
            await asyncio.sleep(0.01)
            if reported and in_flight == 3:
                break
        assert reported[0] == (0, 25, 25)
        assert store.messages(store.list_threads("all", limit=1, now=NOW)[0].id) == []
        held.set()
        report = await syncing
    assert most == 3
    assert report.fetched == 25
    assert reported[-1][:2] == (25, 25)


def _thread_by(sender: Contact, thread_id: str) -> tuple[Thread, list[Message]]:
    thread = Thread(id=thread_id, subject="s", message_count=1, last_message_at=NOW)
    message = Message(
        id=f"{thread_id}-m", thread_id=thread_id, sender=Sender(contact=sender, raw_address="a@x.example")
    )
    return thread, [message]


def test_a_senders_contact_is_written_once_while_it_stays_the_same(tmp_path: Path) -> None:
    store = MailStore(tmp_path / "store.sqlite3")
    ada = Contact(id="c1", display_name="Ada")
    written: list[str] = []
    store._conn.set_trace_callback(lambda sql: written.append(sql) if "INTO contacts" in sql else None)
    first, second = _thread_by(ada, "t1"), _thread_by(Contact(id="c1", display_name="Ada"), "t2")
    store.put_threads([first[0], second[0]])
    store.put_fetched([Fetched("t1", first[1], "Ada", "")], index=False)
    store.put_fetched([Fetched("t2", second[1], "Ada", "")], index=False)  # another message, the same contact
    assert len(written) == 1
    edited = Contact(id="c1", display_name="Ada Lovelace")
    store.put_contact(edited)  # an edit: kept as the latest version
    written.clear()
    store.put_fetched([Fetched("t1", first[1], "Ada", "")], index=False)  # a message with the older copy
    assert len(written) == 1  # it differs from what the store has: written, as before
    assert [c.display_name for c in store.contacts()] == ["Ada"]

    third = _thread_by(Contact(id="c2", display_name="Grace"), "t3")
    store.put_threads([third[0]])
    store._conn.set_trace_callback(None)

    def fail(*args: object) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    with patch.object(MailStore, "_index", fail), pytest.raises(sqlite3.OperationalError):
        store.put_fetched([Fetched("t3", third[1], "Grace", "")], index=True)  # rolled back
    assert [c.display_name for c in store.contacts()] == ["Ada"]
    store.put_fetched([Fetched("t3", third[1], "Grace", "")], index=True)  # not taken as written before
    assert sorted(c.display_name or "" for c in store.contacts()) == ["Ada", "Grace"]
    store.close()


def test_a_read_never_waits_for_a_write_under_way_and_a_writer_reads_its_own_writes(tmp_path: Path) -> None:
    """A sync writes in a thread of its own while the app reads the list and opens threads."""
    store = MailStore(tmp_path / "store.sqlite3")
    writing, finish = threading.Event(), threading.Event()
    seen_inside: list[int] = []

    def write() -> None:
        with store.transaction() as conn:
            conn.execute("INSERT INTO written_to (address) VALUES ('ada@example.org')")
            seen_inside.append(store.rows("SELECT count(*) FROM written_to")[0][0])  # (its own, not yet committed)
            writing.set()
            finish.wait(30)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        assert writing.wait(30)
        counted: list[int] = []
        reader = threading.Thread(target=lambda: counted.append(store.rows("SELECT count(*) FROM written_to")[0][0]))
        reader.start()
        reader.join(5)
        assert not reader.is_alive()  # read at once, before the write is committed (it waited for it before)
        assert counted == [0]
    finally:
        finish.set()
        writer.join(30)
    assert seen_inside == [1]
    assert store.rows("SELECT count(*) FROM written_to")[0][0] == 1
    store.close()


def test_the_connection_of_a_reading_thread_that_ended_is_closed(tmp_path: Path) -> None:
    """Threads come and go (a worker's thread ends); the files their reads held open do not pile up."""
    path = tmp_path / "store.sqlite3"
    store = MailStore(path)

    def held() -> int:  # this process's open files that are the database itself
        fds = Path("/proc/self/fd")
        return sum(1 for fd in fds.iterdir() if os.path.realpath(fd) == str(path.resolve()))

    def read_in_a_thread() -> None:
        reader = threading.Thread(target=lambda: store.rows("SELECT count(*) FROM threads"))
        reader.start()
        reader.join(30)

    before = held()
    for _ in range(8):
        read_in_a_thread()
    assert held() <= before + 2  # the last thread's, and one SQLite keeps to reuse (not one for each thread)
    store.close()
    assert held() == 0


def test_a_thread_whose_reading_connection_cannot_open_reads_through_the_writing_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder made read-only since the store opened: SQLite cannot open the file again, and mail stays readable."""
    import pigeon.sqlite

    store = MailStore(tmp_path / "store.sqlite3")
    store.rows("SELECT 1")  # (this thread's reading connection, opened while it could be)

    def refused(path: str, *, create: bool = True) -> sqlite3.Connection:
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(pigeon.sqlite, "connect", refused)
    counted: list[int] = []
    reader = threading.Thread(target=lambda: counted.append(store.rows("SELECT count(*) FROM threads")[0][0]))
    reader.start()
    reader.join(5)
    assert counted == [0]
    store.close()


LONG_READ = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000000) SELECT COUNT(*) FROM n"
"""A read that takes many seconds to run to its end."""


def test_a_read_whose_answer_became_moot_stops_and_a_write_beside_it_goes_on(tmp_path: Path) -> None:
    """A search overtaken by the next letter stops reading; the store's writes, on the shared connection, never do."""
    from pigeon.sqlite import Interrupted

    store = MailStore(tmp_path / "store.sqlite3")
    asked: list[int] = []

    def moot() -> bool:
        asked.append(1)
        if len(asked) == 2:  # (while the search reads, a sync writes)
            with store.transaction() as conn:
                conn.execute("INSERT INTO written_to (address) VALUES ('ada@example.org')")
        return len(asked) > 2

    with pytest.raises(Interrupted), store.unless(moot):
        store.rows(LONG_READ)
    assert len(asked) == 3  # stopped the first time it was asked after its answer became moot
    assert store.rows("SELECT count(*) FROM written_to")[0][0] == 1
    asked.clear()
    assert store.rows(LONG_READ.replace("100000000", "100000"))[0][0] == 100_000  # after the block, nothing asks
    assert asked == []
    store.close()


def test_closing_the_store_leaves_a_reading_threads_connection_to_that_thread(tmp_path: Path) -> None:
    """A connection closed under a read can crash the process (seen once: a sync's thread reading as the app
    quit). The store leaves a live thread's connection open, to close when that thread ends; the thread's next
    read fails cleanly."""
    path = tmp_path / "store.sqlite3"
    store = MailStore(path)
    opened, finish = threading.Event(), threading.Event()
    errors: list[str] = []

    def held() -> int:  # this process's open files that are the database itself
        return sum(1 for fd in Path("/proc/self/fd").iterdir() if os.path.realpath(fd) == str(path.resolve()))

    def read() -> None:
        store.rows("SELECT 1")
        opened.set()
        finish.wait(30)
        try:
            store.rows("SELECT 1")
        except sqlite3.ProgrammingError as exc:
            errors.append(str(exc))

    reader = threading.Thread(target=read)
    reader.start()
    assert opened.wait(30)
    store.close()
    assert held() >= 1  # the reading thread's, left to it (SQLite may hold a second descriptor of the file)
    finish.set()
    reader.join(30)
    gc.collect()
    assert held() == 0
    assert len(errors) == 1
    assert "closed" in errors[0]
