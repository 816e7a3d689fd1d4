"""Faults said once, and nothing vanishes: a record the models cannot read is named once (until it changes), a
message that cannot be read keeps its place, and what the spec's types allow is kept as it came."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from pigeon.api import PigeonClient
from pigeon.cli import main
from pigeon.store.mailstore import MailStore
from pigeon.store.sync import sync
from tests.server.conftest import Service, make_service

THREAD = "7d0c4a5e-8d3b-4a53-9d55-1f6d2e0b9a11"
BASE = "https://mail.example.com"
ODD_BLOCK = {"type": "CONTENT_TYPE_ATTACHMENT", "filename": "odd.bin", "sequence": -5, "size": -1, "content": ""}


@pytest.fixture
def service() -> Iterator[Service]:
    made = make_service()
    yield made
    made.db.close()


class Poisoned:
    """The reference service, with a thread the models cannot read added to the thread list and a message they
    cannot read put second in the newest thread (whose last message moves at every sync, so each sync fetches it);
    the first message of that thread gets an attachment of sequence -5 and size -1 and a status no one named."""

    def __init__(self, service: Service) -> None:
        self.inner = httpx.ASGITransport(app=service.app)
        self.bad_thread: dict[str, Any] = {"id": "t-bad", "last_message_at": "not a date"}
        self.bad_message: dict[str, Any] = {"id": "m-bad", "status": 7}  # a number where the spec says a string
        self.target = ""
        self.syncs = 0
        self.fetched = 0  # requests for the target thread's messages

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        answer = await self.inner.handle_async_request(request)
        if request.url.path not in {"/v1/threads", "/v1/messages"}:
            return answer
        await answer.aread()
        body = json.loads(answer.content)
        if request.url.path == "/v1/threads":
            self.syncs += 1
            newest = body["threads"][0]
            self.target = self.target or newest["id"]
            for thread in body["threads"]:
                if thread["id"] == self.target:  # moved a little at every sync: fetched again
                    moment = datetime.fromisoformat(thread["last_message_at"]) + timedelta(microseconds=self.syncs)
                    thread["last_message_at"] = moment.isoformat()
                    thread["message_count"] += 1  # the unreadable message counts
            body["threads"].append(self.bad_thread)
        elif request.url.params.get("thread_id") == self.target:
            self.fetched += 1
            body["messages"][0]["content_blocks"].append(ODD_BLOCK)
            body["messages"][0]["status"] = "MESSAGE_STATUS_EXPLODED"  # open: kept and shown as it is
            body["messages"].insert(1, self.bad_message)
        return httpx.Response(200, json=body)

    def client(self, service: Service) -> PigeonClient:
        http = httpx.AsyncClient(transport=httpx.MockTransport(self))
        return PigeonClient("http://s.test", service.alice.token, http_client=http, max_retries=0)


async def test_an_unreadable_thread_and_message_are_reported_once_and_again_when_they_change(
    tmp_path: Path, service: Service
) -> None:
    poisoned = Poisoned(service)
    store = MailStore(tmp_path / "s.sqlite3")
    reported: list[list[str]] = []
    async with poisoned.client(service) as client:
        for _ in range(3):
            report = await sync(client, store)
            assert poisoned.target in report.changed  # the thread with the bad message was read again each time
            reported.append(sorted(note.record_id for note in report.skipped))
        assert reported == [["m-bad", "t-bad"], [], []]

        poisoned.bad_thread = {**poisoned.bad_thread, "subject": "changed"}
        poisoned.bad_message = {**poisoned.bad_message, "status": 8}
        report = await sync(client, store)
        assert sorted(note.record_id for note in report.skipped) == ["m-bad", "t-bad"]
        for _ in range(2):
            assert (await sync(client, store)).skipped == ()

    [place] = store.unreadable_in(poisoned.target)
    assert (place.record_id, place.before) == ("m-bad", 1)  # second in its thread: one readable message before it
    assert "status" in place.why


async def test_a_message_fixed_at_the_service_leaves_no_place_behind(tmp_path: Path, service: Service) -> None:
    poisoned = Poisoned(service)
    store = MailStore(tmp_path / "s.sqlite3")
    async with poisoned.client(service) as client:
        await sync(client, store)
        assert store.unreadable_in(poisoned.target)
        poisoned.bad_message = {"id": "m-bad", "subject": "readable now"}
        report = await sync(client, store)
    assert report.skipped == ()
    assert store.unreadable_in(poisoned.target) == []
    assert "m-bad" in [m.id for m in store.messages(poisoned.target)]


async def test_a_block_with_a_negative_sequence_and_size_keeps_its_message_and_contact(
    tmp_path: Path, service: Service
) -> None:
    inner = httpx.ASGITransport(app=service.app)
    odd = {"type": "CONTENT_TYPE_ATTACHMENT", "filename": "odd.bin", "sequence": -5, "size": -1, "content": ""}
    contact = {"id": "c-odd", "display_name": "Odd Sender"}
    target = ""

    async def handler(request: httpx.Request) -> httpx.Response:
        nonlocal target
        answer = await inner.handle_async_request(request)
        if request.url.path != "/v1/messages":
            return answer
        await answer.aread()
        body = json.loads(answer.content)
        target = target or request.url.params["thread_id"]
        if request.url.params["thread_id"] == target:
            first = body["messages"][0]
            first["content_blocks"].append(odd)
            first["sender"] = {"contact_id": "c-odd", "contact": contact, "raw_address": "odd@example.com"}
        return httpx.Response(200, json=body)

    store = MailStore(tmp_path / "s.sqlite3")
    http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    async with PigeonClient("http://s.test", service.alice.token, http_client=http, max_retries=0) as client:
        report = await sync(client, store)
    assert report.skipped == ()
    first = store.messages(target)[0]
    from pigeon.core.attachments import sequence_of

    blocks = sorted(first.content_blocks, key=sequence_of)
    assert (blocks[0].filename, blocks[0].sequence, blocks[0].size) == ("odd.bin", -5, -1)  # first by sequence
    assert "Odd Sender" in [c.name for c in store.contacts()]


# --- the command line -------------------------------------------------------------------------------------------


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.MockRouter]:
    monkeypatch.setenv("PIGEON_TOKEN", "tok_faults")
    monkeypatch.setenv("PIGEON_BASE_URL", BASE)
    with respx.mock(base_url=BASE, assert_all_called=False, using="pigeon") as router:
        yield router


@pytest.mark.parametrize("every", [False, True])
def test_messages_list_says_on_stderr_which_message_could_not_be_read(
    api: respx.MockRouter, capsys: pytest.CaptureFixture[str], every: bool
) -> None:
    messages = [
        {"id": "m1", "subject": "First", "status": "MESSAGE_STATUS_EXPLODED"},  # an open enum: kept as it is
        {"id": "m-bad", "created_at": "not a date \x1b]2;pwned\x07"},
        {"id": "m3", "subject": "Third"},
    ]
    api.get("/v1/messages").respond(json={"messages": messages, "next_page_token": ""})
    out = io.StringIO()
    argv = ["messages", "list", "--thread", THREAD, *(["--all"] if every else [])]
    assert main(argv, out=out) == 0
    listed = out.getvalue()
    assert "First" in listed
    assert "Third" in listed
    err = capsys.readouterr().err
    assert err.startswith("pigeon: 1 message could not be read: m-bad: created_at")
    assert err.count("\n") == 1
    assert "\x1b" not in err
    assert "\x07" not in err
    out = io.StringIO()
    assert main([*argv, "--json"], out=out) == 0
    assert json.loads(out.getvalue())["messages"][0]["status"] == "MESSAGE_STATUS_EXPLODED"


def test_the_sync_warning_is_one_short_cleaned_line() -> None:
    from pigeon.core.unreadable import skipped_words
    from pigeon.models import Unreadable

    uuid = "fc286e97-a02a-4240-ae41-bc7847b963b4"
    notes = [Unreadable("thread", uuid, "created_at: \x1b]2;pwned\x07not a date", "f1")] * 2
    short = skipped_words(notes)
    assert short == "Left out 2 unreadable threads: fc286e97-a0… …"
    assert len(short) <= 46  # one line of a notification on a 100-column terminal
    detailed = skipped_words(notes[:1], why=True)
    assert "\n" not in detailed
    assert "\x1b" not in detailed
    assert detailed.endswith("(created_at: not a date)")
