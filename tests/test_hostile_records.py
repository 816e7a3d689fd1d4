"""One hostile record never breaks a sync: a number too long for Python, metadata nested past what the store
writes or reads, a thread id that cannot be asked about, a message id already in another thread. Each such record
is left out and named once; everything else syncs."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
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

BAD = "3e0f6a52-5d5b-4c1e-9b5e-4a2f0c6f1d77"
HUGE = "9" * 5000
BASE = "https://mail.example.com"


@pytest.fixture
def service() -> Iterator[Service]:
    made = make_service()
    yield made
    made.db.close()


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


class Hostile:
    """The reference service with one thread added to its list, its JSON text made by ``extra`` (raw, so that it
    can hold what Python's json would not write), and asked-for messages answered by ``messages`` when given."""

    def __init__(self, service: Service, extra: Callable[[], str]) -> None:
        self.inner = httpx.ASGITransport(app=service.app)
        self.extra = extra
        self.messages: Callable[[str, dict[str, Any]], dict[str, Any]] | None = None
        self.asked: list[str] = []  # the thread ids whose messages were asked for

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        answer = await self.inner.handle_async_request(request)
        if request.url.path == "/v1/messages":
            self.asked.append(request.url.params["thread_id"])
        if request.url.path not in {"/v1/threads", "/v1/messages"}:
            return answer
        await answer.aread()
        if request.url.path == "/v1/messages":
            if self.messages is None:
                return httpx.Response(200, content=answer.content)
            body = self.messages(request.url.params["thread_id"], json.loads(answer.content))
            return httpx.Response(200, json=body)
        text = answer.content.decode()
        head, sep, tail = text.partition('"threads":[')
        assert sep, text[:200]
        return httpx.Response(200, content=f"{head}{sep}{self.extra()},{tail}".encode())

    def client(self, service: Service) -> PigeonClient:
        http = httpx.AsyncClient(transport=httpx.MockTransport(self))
        return PigeonClient("http://s.test", service.alice.token, http_client=http, max_retries=0)


def stored(store: MailStore) -> set[str]:
    return {r["id"] for r in store.rows("SELECT id FROM threads")}


def thread_text(thread_id: str, metadata: str) -> str:
    return (
        f'{{"id": "{thread_id}", "subject": "odd", "last_message_at": "2026-11-25T10:00:00Z", '
        f'"message_count": 1, "metadata": {{"n": {metadata}}}}}'
    )


@pytest.mark.parametrize(
    ("metadata", "why"),
    [
        (HUGE, "metadata.n: a number of 5000 digits"),
        (nested(300), "metadata: nested"),  # past what pydantic writes
        (nested(230), "metadata: nested"),  # written, but past what pydantic reads back from the store
    ],
    ids=["long-number", "nested-300", "nested-230"],
)
async def test_a_thread_the_store_cannot_keep_is_named_once_and_the_rest_syncs(
    tmp_path: Path, service: Service, metadata: str, why: str
) -> None:
    hostile = Hostile(service, lambda: thread_text(BAD, metadata))
    store = MailStore(tmp_path / "s.sqlite3")
    async with hostile.client(service) as client:
        report = await sync(client, store)
        assert [(n.kind, n.record_id) for n in report.skipped] == [("thread", BAD)]
        assert report.skipped[0].why.startswith(why)
        assert report.threads == 25
        for _ in range(2):
            assert (await sync(client, store)).skipped == ()
    assert len(stored(store)) == 25
    assert BAD not in hostile.asked


async def test_a_thread_whose_id_is_not_a_uuid_is_named_once_and_never_asked_about(
    tmp_path: Path, service: Service
) -> None:
    hostile = Hostile(service, lambda: thread_text("not-a-uuid", "1"))
    store = MailStore(tmp_path / "s.sqlite3")
    async with hostile.client(service) as client:
        report = await sync(client, store)
        assert [(n.kind, n.record_id, n.why) for n in report.skipped] == [
            ("thread", "not-a-uuid", "id: must be a UUID")
        ]
        assert report.fetched == 25
        assert (await sync(client, store)).skipped == ()
    assert "not-a-uuid" not in hostile.asked
    assert store.thread("not-a-uuid") is None
    assert len(stored(store)) == 25


def test_threads_list_says_on_stderr_which_thread_it_left_out(
    service: Service, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile = Hostile(service, lambda: thread_text(BAD, nested(300)))
    monkeypatch.setenv("PIGEON_TOKEN", service.alice.token)
    monkeypatch.setenv("PIGEON_BASE_URL", BASE)
    with respx.mock(base_url=BASE, using="pigeon") as api:
        api.route().mock(side_effect=hostile)
        out = io.StringIO()
        assert main(["threads", "list"], out=out) == 0
    assert len(out.getvalue().splitlines()) == 1 + 25  # the heading and every readable thread
    err = capsys.readouterr().err
    assert err.startswith("pigeon: Left out 1 unreadable thread: 3e0f6a52-5d")
    assert "metadata: nested" in err
    assert err.count("\n") == 1


class Twin:
    """The reference service, where the newest message of one thread (``b``) comes with the id of the first
    message of another (``a``): the same id in two threads."""

    def __init__(self, service: Service) -> None:
        self.inner = httpx.ASGITransport(app=service.app)
        self.token = service.alice.token
        self.a = self.b = self.twin = ""

    async def _json(self, path: str, **params: str) -> Any:
        auth = {"Authorization": f"Bearer {self.token}"}
        request = httpx.Request("GET", f"http://s.test{path}", params=params, headers=auth)
        answer = await self.inner.handle_async_request(request)
        await answer.aread()
        return json.loads(answer.content)

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        if not self.a:
            threads = (await self._json("/v1/threads"))["threads"]
            self.a, self.b = threads[0]["id"], threads[1]["id"]
            self.twin = (await self._json("/v1/messages", thread_id=self.a))["messages"][0]["id"]
        answer = await self.inner.handle_async_request(request)
        if request.url.path != "/v1/messages" or request.url.params["thread_id"] != self.b:
            return answer
        await answer.aread()
        body = json.loads(answer.content)
        body["messages"][-1]["id"] = self.twin
        return httpx.Response(200, json=body)


async def test_a_message_id_in_two_threads_stays_in_one_and_has_its_place_named_in_the_other(
    tmp_path: Path, service: Service
) -> None:
    twin = Twin(service)
    store = MailStore(tmp_path / "s.sqlite3")
    http = httpx.AsyncClient(transport=httpx.MockTransport(twin))
    reports = []
    async with PigeonClient("http://s.test", service.alice.token, http_client=http, max_retries=0) as client:
        for _ in range(3):
            reports.append(await sync(client, store))
    holders = [r["thread_id"] for r in store.rows("SELECT thread_id FROM messages WHERE id = ?", (twin.twin,))]
    assert len(holders) == 1  # one copy is kept; the other never replaces it
    [other] = {twin.a, twin.b} - set(holders)
    [place] = store.unreadable_in(other)
    assert (place.record_id, place.why) == (twin.twin, f"id: already belongs to thread {holders[0]}")
    assert [(n.kind, n.record_id) for n in reports[0].skipped] == [("message", twin.twin)]
    assert [r.skipped for r in reports[1:]] == [(), ()]
    assert twin.twin not in [m.id for m in store.messages(other)]
    assert twin.twin in [m.id for m in store.messages(holders[0])]
    assert [m.id for m in reports[0].new_messages].count(twin.twin) == 1  # announced once: the copy kept


def test_pigeon_sync_of_every_hostile_thread_at_once_is_one_line_and_exit_0(
    service: Service, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = [
        thread_text(BAD, HUGE),
        thread_text("4f1a7b63-6e6c-4d2f-8c6f-5b3a1d7e2e88", nested(300)),
        thread_text("not-a-uuid", "1"),
    ]
    hostile = Hostile(service, lambda: ",".join(bad))
    monkeypatch.setenv("PIGEON_TOKEN", service.alice.token)
    monkeypatch.setenv("PIGEON_BASE_URL", BASE)
    with respx.mock(base_url=BASE, using="pigeon") as api:
        api.route().mock(side_effect=hostile)
        out = io.StringIO()
        assert main(["sync"], out=out) == 0
        assert out.getvalue().startswith("Synced 25 threads (25 changed, ")
        err = capsys.readouterr().err
        assert err.startswith("pigeon: Left out 3 unreadable threads: ")
        assert err.count("\n") == 1
        assert main(["sync"], out=io.StringIO()) == 0
        assert capsys.readouterr().err == ""  # said once
