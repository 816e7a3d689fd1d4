"""A sync writes what it fetched in batches, one transaction each, and indexes the text after; a store from before
keeps its search."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from pigeon.api import PigeonClient
from pigeon.models import Message
from pigeon.sqlite import Database
from pigeon.store.account import OtherAccount
from pigeon.store.cache import Fetched
from pigeon.store.mailstore import SCHEMA_VERSION, MailStore
from pigeon.store.schema import MIGRATIONS
from pigeon.store.sync import index_stored, sync
from tests.server.conftest import NOW, Service, make_service


@pytest.fixture
def service() -> Service:
    return make_service()


def client_of(service: Service, transport: httpx.AsyncBaseTransport | None = None) -> PigeonClient:
    http = httpx.AsyncClient(transport=transport or httpx.ASGITransport(app=service.app))
    return PigeonClient("http://s.test", service.alice.token, http_client=http)


async def test_what_arrives_while_a_batch_is_written_goes_into_the_next_transaction(
    tmp_path: Path, service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pigeon.store.sync as sync_module

    summed = 0
    all_fetched = threading.Event()
    recipients_of = sync_module.recipients_of

    def counted(messages: list[Message]) -> str:  # the last step of a fetch before it queues its thread
        nonlocal summed
        summed += 1
        if summed == 25:
            all_fetched.set()  # (the thread is queued in the same step of the loop, before the writer resumes)
        return recipients_of(messages)

    monkeypatch.setattr(sync_module, "recipients_of", counted)
    store = MailStore(tmp_path / "s.sqlite3")
    batches: list[int] = []
    write = store.put_fetched

    def first_write_slow(batch: Sequence[Fetched], *, index: bool, **more: Any) -> int:
        if not batches:  # the first batch is written while all the other threads arrive
            assert all_fetched.wait(10)
        batches.append(len(batch))
        return write(batch, index=index, **more)

    monkeypatch.setattr(store, "put_fetched", first_write_slow)
    async with client_of(service) as client:
        report = await sync(client, store)
    assert len(batches) == 2  # what came while the first was written went into one more transaction
    assert sum(batches) == 25
    assert report.fetched == 25
    assert report.messages == sum(len(store.messages(t)) for t in report.changed)


def body_word(service: Service) -> str:
    """A word of some message's plain text that no subject, sender or recipient holds."""
    threads, _ = service.db.list_threads(service.alice.id, page_size=100, page_token=None)
    heads = " ".join((t.subject or "") for t in threads).lower()
    for thread in threads:
        assert thread.id is not None
        messages, _ = service.db.list_messages(
            service.alice.id, thread.id, message_ids=None, page_size=100, page_token=None
        )
        for message in messages:
            for block in message.content_blocks:
                if (block.mime_type or "text/plain").startswith("text/plain"):
                    for word in (block.content or "").split():
                        if word.isalpha() and len(word) > 7 and word.lower() not in heads:
                            return word
    raise AssertionError("no body word in the demo mail")


async def test_the_text_is_searchable_once_indexed_after_the_sync(tmp_path: Path, service: Service) -> None:
    store = MailStore(tmp_path / "s.sqlite3")
    word = body_word(service)
    async with client_of(service) as client:
        await sync(client, store)
    assert store.pending_index() == 25
    assert store.count("all", word, now=NOW) == 0  # rows and messages stored; the words not yet
    assert await index_stored(store) == 25
    assert store.pending_index() == 0
    assert store.count("all", word, now=NOW) >= 1
    assert await index_stored(store) == 0


async def test_a_sync_told_to_index_stores_the_text_with_the_messages(tmp_path: Path, service: Service) -> None:
    store = MailStore(tmp_path / "s.sqlite3")
    word = body_word(service)
    async with client_of(service) as client:
        await sync(client, store, index=True)
    assert store.pending_index() == 0
    assert store.count("all", word, now=NOW) >= 1
    assert store.rows("SELECT COUNT(*) FROM search")[0][0] == 25
    assert await index_stored(store) == 0  # nothing was left to read back


async def test_a_thread_synced_again_has_one_row_in_the_index(tmp_path: Path, service: Service) -> None:
    store = MailStore(tmp_path / "s.sqlite3")
    async with client_of(service) as client:
        await sync(client, store)
        await index_stored(store)
        thread = store.list_threads("all", limit=1, now=NOW)[0]
        service.add_message(service.alice, thread.id, content_blocks=[{"type": "TEXT", "content": "zanzibarish"}])
        await sync(client, store)
        await index_stored(store)
    assert store.count("all", "zanzibarish", now=NOW) == 1
    assert store.rows("SELECT COUNT(*) FROM search")[0][0] == 25


async def test_a_store_from_before_keeps_its_search_and_replaces_rows_in_place(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    old = Database(path, MIGRATIONS[:2])  # the store as version 2 wrote it: index rows with rowids of their own
    with old.transaction() as conn:
        for n, name in enumerate(("alpha", "bravo")):
            conn.execute(
                "INSERT INTO threads (id, subject, last_message_at, message_count, data) VALUES (?, ?, ?, 1, '{}')",
                (f"t{n}", f"{name} plans", f"2026-11-0{n + 1}T00:00:00.000000Z"),
            )
        conn.execute("INSERT INTO search (thread_id, subject, sender, recipients, body) VALUES ('x', '', '', '', '')")
        for n, name in enumerate(("alpha", "bravo")):
            conn.execute(
                "INSERT INTO search (thread_id, subject, sender, recipients, body) VALUES (?, ?, '', '', ?)",
                (f"t{n}", f"{name} plans", f"{name}body"),
            )
    old.close()
    store = MailStore(path)
    assert store.schema_version == SCHEMA_VERSION
    assert [t.id for t in store.list_threads("all", "bravobody", now=NOW)] == ["t1"]
    assert store.pending_index() == 0
    rows = {r["thread_id"]: r["rowid"] for r in store.rows("SELECT rowid, thread_id FROM search")}
    ids = {r["id"]: r["rowid"] for r in store.rows("SELECT rowid, id FROM threads")}
    assert rows == ids  # the orphan row is gone; each thread's row has its rowid
    store.put_messages("t1", [], who="", recipients="")
    assert store.list_threads("all", "bravobody", now=NOW) == []
    assert store.rows("SELECT COUNT(*) FROM search")[0][0] == 2
    store.close()
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


async def test_a_failed_write_ends_the_sync_with_its_error(
    tmp_path: Path, service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = MailStore(tmp_path / "s.sqlite3")

    def full_disk(batch: Sequence[Fetched], *, index: bool, **more: Any) -> int:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(store, "put_fetched", full_disk)
    async with client_of(service) as client:
        with pytest.raises(sqlite3.OperationalError, match="disk is full"):
            await asyncio.wait_for(sync(client, store), 30)
    assert store.count("all", now=NOW) == 25  # the rows stayed; their messages come with the next sync


def test_a_message_with_a_lone_surrogate_is_stored_and_read_back(tmp_path: Path) -> None:
    from pigeon.models import Thread

    store = MailStore(tmp_path / "s.sqlite3")
    thread = Thread.model_validate({"id": "t1", "inbox_id": "i1", "subject": "x", "last_message_at": NOW})
    store.put_threads([thread])
    hostile = Message.model_validate({"id": "m1", "thread_id": "t1", "subject": "a \ud800 b", "created_at": NOW})
    plain = Message.model_validate({"id": "m2", "thread_id": "t1", "subject": "plain", "created_at": NOW})
    store.put_messages("t1", [hostile, plain], who="", recipients="")
    assert [m.subject for m in store.messages("t1")] == ["a \ufffd b", "plain"]
    store.close()


class HeldMessages(httpx.AsyncBaseTransport):
    """The service, with the message requests it is asked recorded (``asked``, told to ``arrived``) and the first
    ``holding`` of them (all: None) held until ``held`` is set."""

    def __init__(self, service: Service, holding: int | None = None) -> None:
        self.inner = httpx.ASGITransport(app=service.app)
        self.holding = holding
        self.held = asyncio.Event()
        self.asked: list[str] = []  # the thread of each message request, in the order they reached the service
        self.arrived = asyncio.Condition()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/messages":
            self.asked.append(request.url.params["thread_id"])
            async with self.arrived:
                self.arrived.notify_all()
            if self.holding is None or len(self.asked) <= self.holding:
                await self.held.wait()
        return await self.inner.handle_async_request(request)


async def test_a_thread_opened_during_a_sync_is_asked_for_before_the_syncs_waiting_fetches(
    tmp_path: Path, service: Service
) -> None:
    """The sync's message fetches fill every slot and more wait; the thread the user opens reaches the service at
    once, ahead of them, and the sync still ends whole."""
    from pigeon.config import load_config
    from pigeon.core.mail import MailCore

    transport = HeldMessages(service, holding=2)  # the sync's first two fetches hold both slots
    held, asked, arrived = transport.held, transport.asked, transport.arrived
    http = httpx.AsyncClient(transport=transport)
    client = PigeonClient("http://s.test", service.alice.token, http_client=http, max_in_flight=2)
    store = MailStore(tmp_path / "s.sqlite3")
    core = MailCore(load_config(base_url="http://s.test"), store, client=client, save_settings=False)
    syncing = asyncio.ensure_future(core.sync())
    async with arrived:
        await arrived.wait_for(lambda: len(asked) == 2)
    listed = [row.id for row in store.list_threads("all", limit=25, now=NOW)]
    wanted = next(t for t in reversed(listed) if t not in asked)  # one the sync has not asked for yet

    async def open_it() -> list[list[Message]]:
        return [loaded async for loaded, more in core.fetch_thread(wanted) if not more]

    opened = await asyncio.wait_for(open_it(), 10)  # (behind the held fetches it would never come)
    assert asked[2] == wanted  # at once, ahead of the 23 waiting fetches
    assert opened[0]
    held.set()
    report = await syncing
    assert report.fetched == 25
    await core.close()


async def test_text_a_sync_left_unindexed_is_indexed_behind_with_no_service(tmp_path: Path, service: Service) -> None:
    from unittest.mock import patch

    from pigeon.config import load_config
    from pigeon.core.mail import MailCore

    path = tmp_path / "s.sqlite3"
    word = body_word(service)
    store = MailStore(path)
    async with client_of(service) as client:
        await sync(client, store)  # (the app ended before its index caught up)
    store.close()
    store = MailStore(path)
    asked: list[str] = []
    rows = store.rows

    def recorded(sql: str, params: Any = ()) -> list[sqlite3.Row]:
        asked.append(sql)
        return rows(sql, params)

    with patch.object(store, "rows", recorded):
        assert store.pending_index() == 25
    plan = store.rows("EXPLAIN QUERY PLAN " + asked[0])
    assert "threads_unindexed" in " ".join(str(row["detail"]) for row in plan)  # found without reading every thread
    core = MailCore(load_config(base_url="http://127.0.0.1:9"), store, token="t", save_settings=False)
    await core.index_behind()  # what the app does at its start: no sync can reach the service
    assert store.pending_index() == 0
    assert store.count("all", word, now=NOW) >= 1
    await core.close()


class ThreadsFirst(httpx.AsyncBaseTransport):
    """The service answers the inboxes only once it has answered the first page of threads: a sync that asked for
    them one after the other would never get its inboxes (and the test fails on the wait)."""

    def __init__(self, service: Service) -> None:
        self.inner = httpx.ASGITransport(app=service.app)
        self.threads_answered = asyncio.Event()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/inboxes":
            await asyncio.wait_for(self.threads_answered.wait(), 10)
        answer = await self.inner.handle_async_request(request)
        if request.url.path == "/v1/threads":
            self.threads_answered.set()
        return answer


async def test_the_first_page_of_threads_is_asked_beside_the_inboxes_and_kept_only_once_they_say_whose(
    tmp_path: Path, service: Service
) -> None:
    store = MailStore(tmp_path / "s.sqlite3")
    async with client_of(service, ThreadsFirst(service)) as alice:
        report = await sync(alice, store)
    assert report.threads == len(store.rows("SELECT id FROM threads")) > 0
    before = store.rows("SELECT id, data FROM threads")

    http = httpx.AsyncClient(transport=ThreadsFirst(service))
    async with PigeonClient("http://s.test", service.bob.token, http_client=http) as bob:
        with pytest.raises(OtherAccount):  # (bob's first page had arrived: it is not written)
            await sync(bob, store)
    assert store.rows("SELECT id, data FROM threads") == before


async def test_while_the_user_waits_the_sync_starts_no_fetch_and_writes_nothing(
    tmp_path: Path, service: Service
) -> None:
    """Opening a thread: the answers of the sync's fetches would keep the event loop busy (and its writes the disk)
    while the user's thread is read and drawn; they wait, and the sync ends whole after."""
    from pigeon.config import load_config
    from pigeon.core.mail import MailCore

    transport = HeldMessages(service)
    held, asked, arrived = transport.held, transport.asked, transport.arrived
    http = httpx.AsyncClient(transport=transport)
    client = PigeonClient("http://s.test", service.alice.token, http_client=http, max_in_flight=2)
    store = MailStore(tmp_path / "s.sqlite3")
    written = asyncio.Event()
    put_fetched = store.put_fetched
    loop = asyncio.get_running_loop()

    def told(*args: Any, **kwargs: Any) -> Any:
        loop.call_soon_threadsafe(written.set)
        return put_fetched(*args, **kwargs)

    store.put_fetched = told  # type: ignore[method-assign]
    waits = client.throttle.unheld
    writer_waits = asyncio.Event()

    async def told_to_wait() -> None:
        writer_waits.set()  # the writer has the two threads that came, and waits to store them
        await waits()

    client.throttle.unheld = told_to_wait  # type: ignore[method-assign]
    core = MailCore(load_config(base_url="http://s.test"), store, client=client, save_settings=False)
    syncing = asyncio.ensure_future(core.sync())
    async with arrived:
        await asyncio.wait_for(arrived.wait_for(lambda: len(asked) == 2), 10)  # both slots taken, 23 waiting
    with core.foreground():
        held.set()  # the two answers come while the user waits
        await asyncio.wait_for(writer_waits.wait(), 10)
        assert len(asked) == 2  # their slots are free, and no fetch took one
        assert not written.is_set()
        assert store.rows("SELECT count(*) FROM messages")[0][0] == 0
    report = await asyncio.wait_for(syncing, 30)
    assert report.fetched == 25
    assert store.rows("SELECT count(DISTINCT thread_id) FROM messages")[0][0] == 25
    await core.close()
