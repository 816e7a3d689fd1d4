"""The service answers requests side by side, and its lists' bodies (written straight from rows) say what the
wire models say."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from pigeon.models import ListMessagesResponse, ListThreadsResponse
from pigeon.sqlite import Params
from pigeon_service.db import Database
from pigeon_service.demo_mail import populate
from tests.server.conftest import NOW, Account, Service, first_thread

HELD = 10.0  # seconds the held request waits at most: a service that cannot answer another meanwhile fails, not hangs


def test_list_bodies_from_rows_equal_the_wire_models(service: Service) -> None:
    # Demo mail with its hostile messages (control characters, bidi overrides, odd blocks), for both accounts.
    for account in (service.alice, service.bob):
        token: str | None = None
        pages = 0
        while token != "":
            fast = ListThreadsResponse.model_validate_json(
                service.db.list_threads_json(account.id, page_size=7, page_token=token)
            )
            threads, expected_token = service.db.list_threads(account.id, page_size=7, page_token=token)
            assert fast == ListThreadsResponse(threads=threads, next_page_token=expected_token)
            token = fast.next_page_token
            pages += 1
            for thread in threads:
                assert thread.id is not None
                body = service.db.list_messages_json(
                    account.id, thread.id, message_ids=None, page_size=2, page_token=None
                )
                assert body is not None
                messages, message_token = service.db.list_messages(
                    account.id, thread.id, message_ids=None, page_size=2, page_token=None
                )
                assert ListMessagesResponse.model_validate_json(body) == ListMessagesResponse(
                    messages=messages, next_page_token=message_token
                )
                assert "null" not in body.replace('"null"', "")  # an absent value is left out, never null
        assert pages > 1


async def test_a_slow_request_does_not_hold_up_another(
    service: Service, http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow_thread = first_thread(service, service.alice)
    other_thread = first_thread(service, service.bob)
    entered, release = threading.Event(), threading.Event()
    listing = service.db.list_messages_json

    def held_listing(account_id: str, thread_id: str, **kwargs: Any) -> str | None:
        if thread_id == slow_thread:
            entered.set()
            release.wait(HELD)  # a service answering one request at a time stays here the whole HELD
        return listing(account_id, thread_id, **kwargs)

    monkeypatch.setattr(service.db, "list_messages_json", held_listing)
    finished: list[str] = []

    async def ask(account: Account, thread_id: str) -> None:
        answer = await http.get("/v1/messages", params={"thread_id": thread_id}, headers=account.headers)
        assert answer.status_code == 200
        finished.append(thread_id)

    slow = asyncio.create_task(ask(service.alice, slow_thread))
    assert await asyncio.to_thread(entered.wait, HELD)
    await ask(service.bob, other_thread)  # answered while the first is still held
    assert finished == [other_thread]
    release.set()
    await slow
    assert finished == [other_thread, slow_thread]


def test_reads_go_on_while_a_write_is_open(tmp_path: Path) -> None:
    db = Database(tmp_path / "service.sqlite3")
    account = db.ensure_account("alice")
    populate(db, account, threads=3, contacts=20, seed=1, now=NOW, hostile=False)
    writing, done = threading.Event(), threading.Event()

    def writer() -> None:
        with db.transaction() as conn:  # holds the write lock until the reader has read
            conn.execute("UPDATE threads SET subject = 'changed' WHERE account_id = ?", (account,))
            writing.set()
            done.wait(HELD)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        assert writing.wait(HELD)
        read: list[int] = []
        reader = threading.Thread(
            target=lambda: read.append(len(db.list_threads_json(account, page_size=10, page_token=None)))
        )
        reader.start()
        reader.join(HELD / 2)
        assert read, "a read waited for the open write"
        subjects = {t.subject for t in db.list_threads(account, page_size=10, page_token=None)[0]}
        assert "changed" not in subjects  # the read saw what was committed, not the open write
    finally:
        done.set()
        thread.join()
    assert {t.subject for t in db.list_threads(account, page_size=10, page_token=None)[0]} == {"changed"}
    db.close()


def test_a_memory_database_still_reads_through_its_one_connection() -> None:
    db = Database(":memory:")  # (a memory database lives in one connection: a second would be another, empty database)
    account = db.ensure_account("alice")
    populate(db, account, threads=2, contacts=20, seed=1, now=NOW, hostile=False)
    found = []
    worker = threading.Thread(target=lambda: found.append(db.list_threads(account, page_size=5, page_token=None)))
    worker.start()
    worker.join()
    assert len(found[0][0]) == 2
    db.close()


def test_a_token_found_is_remembered_one_not_found_is_asked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    import pigeon_service.db as db_module

    db = Database()
    account = db.ensure_account("alice")
    token = db.create_token(account)
    looked_up: list[str] = []
    row = db.row

    def counted(sql: str, params: Params = ()) -> sqlite3.Row | None:
        looked_up.append(sql)
        return row(sql, params)

    monkeypatch.setattr(db, "row", counted)
    clock = [1000.0]
    monkeypatch.setattr(db_module, "monotonic", lambda: clock[0])
    assert db.account_for_token(token) == account
    assert db.account_for_token(token) == account
    assert len(looked_up) == 1  # the second request did not ask the database
    assert db.account_for_token("not-a-token") is None
    assert db.account_for_token("not-a-token") is None
    assert len(looked_up) == 3  # (a token created later must work at once)
    clock[0] += db_module.TOKEN_MEMORY + 1
    assert db.account_for_token(token) == account
    assert len(looked_up) == 4  # asked again once the memory is old
