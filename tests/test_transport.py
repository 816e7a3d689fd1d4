"""The client's senders against a scripted HTTP/1.1 server on 127.0.0.1: connections kept alive and bounded, one the
server closed replaced, answers bounded, failures as one kind whichever library sent the request."""

from __future__ import annotations

import asyncio
import collections
import gzip
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import httpx
import pytest

from pigeon.api import PigeonClient
from pigeon.api.errors import ConnectionFailed, LinkFailure, MalformedResponse, Timeout
from pigeon.api.senders import MAX_ANSWER_BYTES, AiohttpSender, Answer, Timeouts

TOKEN = "s3cret-token-for-transport-tests"
Script = Callable[["Served"], Awaitable[bytes | None]]  # the answer's bytes; None: close without one


class Served:
    """One request as the scripted server read it."""

    def __init__(self, head: bytes, body: bytes, connection: int, nth: int) -> None:
        lines = head.decode("latin-1").split("\r\n")
        self.method, self.target, _ = lines[0].split(" ", 2)
        self.headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:] if line)}
        self.body = body
        self.connection = connection  # which connection (1, 2, ...) it came on
        self.nth = nth  # which request of that connection (1, 2, ...)


def answer(status: int = 200, body: bytes = b'{"ok": true}', headers: dict[str, str] | None = None) -> bytes:
    lines = [f"HTTP/1.1 {status} X", f"Content-Length: {len(body)}", "Content-Type: application/json"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


class Server:
    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[Served] = []
        self.connections = 0
        self.open = 0
        self.most_open = 0
        self.port = 0
        self.ended: collections.defaultdict[int, asyncio.Event] = collections.defaultdict(asyncio.Event)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.open += 1
        self.most_open = max(self.most_open, self.open)
        number, nth = self.connections, 0
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except asyncio.IncompleteReadError:
                    return
                nth += 1
                length = next(
                    (
                        int(line.split(b":")[1])
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length:")
                    ),
                    0,
                )
                served = Served(head[:-4], await reader.readexactly(length), number, nth)
                self.requests.append(served)
                reply = await self.script(served)
                if reply is None:
                    return
                writer.write(reply)
                await writer.drain()
        finally:
            self.open -= 1
            self.ended[number].set()
            writer.close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@pytest.fixture
async def serve() -> AsyncIterator[Callable[[Script], Awaitable[Server]]]:
    servers: list[asyncio.Server] = []

    async def start(script: Script) -> Server:
        server = Server(script)
        listening = await asyncio.start_server(server.handle, "127.0.0.1", 0)
        server.port = listening.sockets[0].getsockname()[1]
        servers.append(listening)
        return server

    yield start
    for listening in servers:
        listening.close()


async def ok(_: Served) -> bytes:
    return answer()


async def no_wait(_: float) -> None:
    return None


def sender(connections: int = 4, read: float | None = 10.0) -> AiohttpSender:
    return AiohttpSender(connections=connections, timeouts=Timeouts(connect=5.0, read=read))


async def get(through: AiohttpSender, url: str) -> Answer:
    return await through.send("GET", url, [("Accept", "application/json")], b"")


async def test_requests_share_a_kept_alive_connection(serve: Callable[[Script], Awaitable[Server]]) -> None:
    server = await serve(ok)
    through = sender()
    for _ in range(3):
        got = await get(through, server.url + "/v1/threads")
        assert json.loads(got.content) == {"ok": True}
    await through.aclose()
    assert server.connections == 1
    assert [r.nth for r in server.requests] == [1, 2, 3]


async def test_no_more_connections_than_the_bound(serve: Callable[[Script], Awaitable[Server]]) -> None:
    gate, both_in_use = asyncio.Event(), asyncio.Event()

    async def held(_: Served) -> bytes:
        if len(server.requests) == 2:
            both_in_use.set()
        await gate.wait()
        return answer()

    server = await serve(held)
    through = sender(connections=2)
    requests = [asyncio.create_task(get(through, server.url + f"/{n}")) for n in range(6)]
    await both_in_use.wait()  # the other four wait for a connection
    gate.set()
    await asyncio.gather(*requests)
    await through.aclose()
    assert server.most_open == 2
    assert server.connections == 2
    assert len(server.requests) == 6


async def test_a_get_whose_idle_connection_the_service_closed_is_answered_on_a_new_one(
    serve: Callable[[Script], Awaitable[Server]],
) -> None:
    async def close_after_first(served: Served) -> bytes | None:
        if served.nth > 1:
            return None  # the second request on a connection: closed unread
        return answer(body=json.dumps({"threads": [], "n": served.connection}).encode())

    server = await serve(close_after_first)
    async with PigeonClient(server.url, TOKEN, sleep=no_wait) as client:
        assert await client.threads.list() == []
        assert await client.threads.list() == []  # sent on the kept connection, closed, sent again on a new one
    assert [(r.connection, r.nth) for r in server.requests] == [(1, 1), (1, 2), (2, 1)]


async def test_a_post_is_not_sent_twice_when_its_connection_closes(
    serve: Callable[[Script], Awaitable[Server]],
) -> None:
    async def close_after_first(served: Served) -> bytes | None:
        return None if served.nth > 1 else answer(body=b'{"threads": []}')

    server = await serve(close_after_first)
    async with PigeonClient(server.url, TOKEN, sleep=no_wait) as client:
        await client.threads.list()
        with pytest.raises(ConnectionFailed):
            await client.webhooks.create(url="http://127.0.0.1:9/hook", events=["message.created"])
    assert [r.method for r in server.requests] == ["GET", "POST"]


async def test_an_answer_cut_short_drops_its_connection(serve: Callable[[Script], Awaitable[Server]]) -> None:
    async def cut(served: Served) -> bytes:
        if served.target == "/cut":
            return answer(body=b'{"long": "answer"}')[:-5]  # fewer bytes than announced, and no more
        return answer()

    server = await serve(cut)
    through = sender(read=0.2)
    with pytest.raises(LinkFailure) as caught:
        await get(through, server.url + "/cut")
    assert caught.value.timed_out
    await asyncio.wait_for(server.ended[1].wait(), 10)  # closed by the client, not left open
    got = await get(through, server.url + "/next")
    await through.aclose()
    assert got.status_code == 200
    assert server.requests[-1].connection == 2


async def test_a_cancelled_request_leaves_no_connection_behind(serve: Callable[[Script], Awaitable[Server]]) -> None:
    arrived = asyncio.Event()

    async def never(served: Served) -> bytes | None:
        if served.target == "/slow":
            arrived.set()
            await asyncio.Event().wait()
        return answer()

    server = await serve(never)
    through = sender()
    task = asyncio.create_task(get(through, server.url + "/slow"))
    await arrived.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await get(through, server.url + "/after")
    await through.aclose()
    assert server.requests[-1].connection == 2  # not the one whose answer never came


@pytest.mark.parametrize("status", [200, 500])
async def test_the_client_refuses_a_compressed_answer_unread_naming_its_encoding(
    serve: Callable[[Script], Awaitable[Server]], status: int
) -> None:
    async def zipped(_: Served) -> bytes:  # (a small bomb: a megabyte of spaces in a kilobyte)
        return answer(status, body=gzip.compress(b" " * 1_000_000), headers={"Content-Encoding": "gzip"})

    server = await serve(zipped)
    async with PigeonClient(server.url, TOKEN, max_retries=0) as client:
        with pytest.raises(MalformedResponse) as caught:
            await client.threads.list()
    assert str(caught.value) == (
        "GET /v1/threads: the answer is encoded as 'gzip', which Pigeon never asks for; not read"
    )


def _url(listening: asyncio.Server) -> str:
    return f"http://127.0.0.1:{listening.sockets[0].getsockname()[1]}"


TOO_LARGE = f"GET /v1/threads: the answer is larger than {MAX_ANSWER_BYTES // (1024 * 1024)} MiB; not read"


async def test_an_answer_whose_length_passes_the_cap_is_refused_before_its_body() -> None:
    dropped = asyncio.Event()

    async def announce_then_hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        head = f"HTTP/1.1 200 OK\r\nContent-Length: {MAX_ANSWER_BYTES + 1}\r\nContent-Type: application/json\r\n\r\n"
        writer.write(head.encode() + b'{"threads": [')
        await writer.drain()
        await reader.read()  # (the body never comes: this returns when the client drops the connection)
        dropped.set()
        writer.close()

    listening = await asyncio.start_server(announce_then_hold, "127.0.0.1", 0)
    async with listening, PigeonClient(_url(listening), TOKEN, timeout=10, max_retries=0) as client:
        with pytest.raises(MalformedResponse) as caught:
            await client.threads.list()
        await dropped.wait()
    assert str(caught.value) == TOO_LARGE


async def test_an_answer_growing_past_the_cap_is_refused_while_it_is_read() -> None:
    chunk = b" " * (1 << 20)
    sent = 0
    ended = asyncio.Event()

    async def endless(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal sent
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n")  # (no length: until close)
        try:
            while sent < 4 * MAX_ANSWER_BYTES:
                writer.write(chunk)
                await writer.drain()
                sent += len(chunk)
        except ConnectionError:
            pass
        finally:
            ended.set()
            writer.close()

    listening = await asyncio.start_server(endless, "127.0.0.1", 0)
    async with listening, PigeonClient(_url(listening), TOKEN, max_retries=0) as client:
        with pytest.raises(MalformedResponse) as caught:
            await client.threads.list()
        await ended.wait()
    assert str(caught.value) == TOO_LARGE
    assert sent < MAX_ANSWER_BYTES + 32 * len(chunk)  # (it stopped reading at the cap; the rest is socket buffers)


async def test_an_endless_head_is_refused_while_it_is_read() -> None:
    chunk = b"a" * (1 << 20)
    sent = 0
    ended = asyncio.Event()

    async def endless_header(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal sent
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nX-Padding: ")
        try:
            while sent < 4 * MAX_ANSWER_BYTES:
                writer.write(chunk)
                await writer.drain()
                sent += len(chunk)
        except ConnectionError:
            pass
        finally:
            ended.set()
            writer.close()

    listening = await asyncio.start_server(endless_header, "127.0.0.1", 0)
    async with listening, PigeonClient(_url(listening), TOKEN, max_retries=0) as client:
        with pytest.raises(ConnectionFailed, match=r"the service's answer is not HTTP/1\.1") as caught:
            await client.threads.list()
        await ended.wait()
    assert TOKEN not in str(caught.value)
    assert sent < 32 * len(chunk)  # (a header line is refused past a few KiB; the rest is socket buffers)


async def test_through_an_httpx_client_the_same_answers_are_refused() -> None:
    async def endless() -> AsyncIterator[bytes]:
        for _ in range(4 * MAX_ANSWER_BYTES // (1 << 20)):
            yield b" " * (1 << 20)

    async def zipped() -> AsyncIterator[bytes]:
        yield gzip.compress(b'{"inboxes": []}')

    def route(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/threads":
            return httpx.Response(200, content=endless())
        return httpx.Response(200, headers={"Content-Encoding": "gzip"}, content=zipped())

    http = httpx.AsyncClient(transport=httpx.MockTransport(route))
    async with http, PigeonClient("http://service.test", TOKEN, http_client=http, max_retries=0) as client:
        with pytest.raises(MalformedResponse) as too_large:
            await client.threads.list()
        with pytest.raises(MalformedResponse) as encoded:
            await client.inboxes.list()
    assert str(too_large.value) == TOO_LARGE
    assert "encoded as 'gzip'" in str(encoded.value)


async def test_an_answer_without_a_length_ends_with_its_connection() -> None:
    async def answer_then_close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{"threads": []}')
        await writer.drain()
        writer.close()  # (the end of the body)

    listening = await asyncio.start_server(answer_then_close, "127.0.0.1", 0)
    through = sender()
    try:
        got = await get(through, _url(listening) + "/v1/threads")
    finally:
        await through.aclose()
        listening.close()
    assert json.loads(got.content) == {"threads": []}


async def test_a_body_is_sent_whole_with_its_length(serve: Callable[[Script], Awaitable[Server]]) -> None:
    server = await serve(ok)
    through = sender()
    body = b'{"url": "https://h.example/"}'
    got = await through.send("POST", server.url + "/v1/webhooks", [("Content-Type", "application/json")], body)
    await through.aclose()
    assert got.status_code == 200
    sent = server.requests[0]
    assert "transfer-encoding" not in sent.headers
    assert sent.headers["content-length"] == str(len(body))
    assert sent.body == body


async def test_failures_are_link_failures_saying_whether_the_request_left(
    serve: Callable[[Script], Awaitable[Server]],
) -> None:
    async def silent(_: Served) -> bytes | None:
        await asyncio.Event().wait()
        return None

    server = await serve(silent)
    through = sender(read=0.05)
    with pytest.raises(LinkFailure) as late:
        await get(through, server.url + "/")
    with pytest.raises(LinkFailure) as refused:
        await get(through, "http://127.0.0.1:1/")  # (port 1: nothing listens)
    await through.aclose()
    assert (late.value.timed_out, late.value.never_sent) == (True, False)
    assert (refused.value.timed_out, refused.value.never_sent) == (False, True)


async def test_the_client_sends_the_token_only_in_its_header(serve: Callable[[Script], Awaitable[Server]]) -> None:
    async def threads(_: Served) -> bytes:
        return answer(body=json.dumps({"threads": []}).encode())

    server = await serve(threads)
    async with PigeonClient(server.url, TOKEN) as client:
        assert await client.threads.list() == []
        assert await client.threads.list() == []
    assert server.connections == 1
    sent = server.requests[0]
    assert sent.headers["authorization"] == "Bearer " + TOKEN
    assert TOKEN not in sent.target
    assert sent.headers["host"] == f"127.0.0.1:{server.port}"
    assert "accept-encoding" not in sent.headers  # (Pigeon asks for no encoding, and reads none)
    assert "cookie" not in sent.headers


async def test_the_client_reports_transport_failures_as_before(serve: Callable[[Script], Awaitable[Server]]) -> None:
    async def silent(_: Served) -> bytes | None:
        await asyncio.Event().wait()
        return None

    server = await serve(silent)
    async with PigeonClient(server.url, TOKEN, timeout=0.05, max_retries=0) as client:
        with pytest.raises(Timeout, match="timed out waiting for an answer"):
            await client.threads.list()
    async with PigeonClient("http://127.0.0.1:1", TOKEN, max_retries=0) as client:
        with pytest.raises(ConnectionFailed, match="is the service running") as caught:
            await client.threads.list()
    assert TOKEN not in str(caught.value)
    # In words a person reads: the system's reason, not the HTTP library's own notation ("ssl:default [...]").
    assert "Connection refused" in str(caught.value)
    assert "ssl:" not in str(caught.value)
    assert "Connect call failed" not in str(caught.value)


def test_the_client_works_on_uvloop_s_event_loop() -> None:
    """A program may run the client on uvloop's event loop."""
    uvloop = pytest.importorskip("uvloop")  # (a dependency of Pigeon's wherever uvloop builds: not on Windows)

    async def scenario() -> tuple[list[str | None], int]:
        async def threads(_: Served) -> bytes:
            return answer(body=json.dumps({"threads": [{"subject": "Hi"}]}).encode())

        server = Server(threads)
        listening = await asyncio.start_server(server.handle, "127.0.0.1", 0)
        server.port = listening.sockets[0].getsockname()[1]
        try:
            async with PigeonClient(server.url, TOKEN) as client:
                found = [t.subject for t in await client.threads.list()]
                found += [t.subject for t in await client.threads.list()]
        finally:
            listening.close()
        return found, server.connections

    found, connections = uvloop.run(scenario())
    assert found == ["Hi", "Hi"]
    assert connections == 1  # kept alive there too


async def test_a_proxy_in_the_environment_is_used(
    serve: Callable[[Script], Awaitable[Server]], monkeypatch: pytest.MonkeyPatch
) -> None:
    async def threads(_: Served) -> bytes:
        return answer(body=json.dumps({"threads": []}).encode())

    proxy = await serve(threads)
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    async with PigeonClient("http://mail.example", TOKEN, max_retries=0) as client:
        assert await client.threads.list() == []
    assert proxy.requests[0].target == "http://mail.example/v1/threads?page_size=500"  # (the whole URL)


async def test_the_client_leaves_an_httpx_client_it_was_given_open() -> None:
    given = httpx.AsyncClient(transport=httpx.MockTransport(lambda _: httpx.Response(200, json={"threads": []})))
    async with PigeonClient("http://mail.example", TOKEN, http_client=given) as client:
        assert await client.threads.list() == []
    assert not given.is_closed
    await given.aclose()


async def test_a_netrc_entry_for_the_service_changes_nothing(
    serve: Callable[[Script], Awaitable[Server]], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    async def threads(_: Served) -> bytes:
        return answer(body=json.dumps({"threads": []}).encode())

    server = await serve(threads)
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login someone password elsewhere\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    async with PigeonClient(server.url, TOKEN, max_retries=0) as client:
        assert await client.threads.list() == []
    assert server.requests[0].headers["authorization"] == "Bearer " + TOKEN
