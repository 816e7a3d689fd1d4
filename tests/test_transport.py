"""``KeepAliveTransport`` against a scripted HTTP/1.1 server on 127.0.0.1: connections kept alive and bounded, one
the server closed replaced, failures as httpx's exceptions (so ``PigeonClient`` reports them as it always did)."""

from __future__ import annotations

import asyncio
import collections
import gzip
import json
from collections.abc import AsyncIterator, Awaitable, Callable

import httpx
import pytest

from pigeon.api import PigeonClient
from pigeon.api.errors import ConnectionFailed, MalformedResponse, Timeout
from pigeon.api.transport import MAX_ANSWER_BYTES, KeepAliveTransport

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


async def get(transport: KeepAliveTransport, url: str, **kwargs: object) -> httpx.Response:
    request = httpx.Request("GET", url, **kwargs)  # type: ignore[arg-type]
    response = await transport.handle_async_request(request)
    await response.aread()
    return response


async def test_requests_share_a_kept_alive_connection(serve: Callable[[Script], Awaitable[Server]]) -> None:
    server = await serve(ok)
    transport = KeepAliveTransport(max_connections=4)
    for _ in range(3):
        response = await get(transport, server.url + "/v1/threads")
        assert response.json() == {"ok": True}
    await transport.aclose()
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
    transport = KeepAliveTransport(max_connections=2)
    requests = [asyncio.create_task(get(transport, server.url + f"/{n}")) for n in range(6)]
    await both_in_use.wait()  # the other four wait for a connection
    gate.set()
    await asyncio.gather(*requests)
    await transport.aclose()
    assert server.most_open == 2
    assert server.connections == 2
    assert len(server.requests) == 6


async def test_a_connection_the_service_closed_while_idle_is_replaced(
    serve: Callable[[Script], Awaitable[Server]],
) -> None:
    async def once(served: Served) -> bytes:
        return answer(headers={"X-Connection": str(served.connection)})

    async def close_after_first(served: Served) -> bytes | None:
        return None if served.nth > 1 else await once(served)  # the second request on a connection: closed unread

    server = await serve(close_after_first)
    transport = KeepAliveTransport()
    first = await get(transport, server.url + "/a")
    second = await get(transport, server.url + "/b")  # sent on the kept connection, closed, sent again on a new one
    await transport.aclose()
    assert (first.headers["x-connection"], second.headers["x-connection"]) == ("1", "2")
    assert [r.target for r in server.requests] == ["/a", "/b", "/b"]


async def test_a_post_is_not_sent_twice_when_its_connection_closes(
    serve: Callable[[Script], Awaitable[Server]],
) -> None:
    async def close_after_first(served: Served) -> bytes | None:
        return None if served.nth > 1 else answer()

    server = await serve(close_after_first)
    transport = KeepAliveTransport()
    await get(transport, server.url + "/a")
    with pytest.raises(httpx.RemoteProtocolError):
        await transport.handle_async_request(httpx.Request("POST", server.url + "/v1/webhooks", json={"url": "x"}))
    await transport.aclose()
    assert [r.method for r in server.requests] == ["GET", "POST"]


async def test_an_answer_cut_short_drops_its_connection(serve: Callable[[Script], Awaitable[Server]]) -> None:
    async def cut(served: Served) -> bytes:
        if served.target == "/cut":
            return answer(body=b'{"long": "answer"}')[:-5]  # fewer bytes than announced, and no more
        return answer()

    server = await serve(cut)
    transport = KeepAliveTransport()
    with pytest.raises(httpx.ReadTimeout):
        await get(transport, server.url + "/cut", extensions={"timeout": {"read": 0.2}})
    await asyncio.wait_for(server.ended[1].wait(), 10)  # closed by the client, not left open
    response = await get(transport, server.url + "/next")
    await transport.aclose()
    assert response.status_code == 200
    assert server.requests[-1].connection == 2


async def test_a_cancelled_request_leaves_no_connection_behind(serve: Callable[[Script], Awaitable[Server]]) -> None:
    arrived = asyncio.Event()

    async def never(served: Served) -> bytes | None:
        if served.target == "/slow":
            arrived.set()
            await asyncio.Event().wait()
        return answer()

    server = await serve(never)
    transport = KeepAliveTransport()
    task = asyncio.create_task(get(transport, server.url + "/slow"))
    await arrived.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await get(transport, server.url + "/after")
    await transport.aclose()
    assert server.requests[-1].connection == 2  # not the one whose answer never came


async def test_a_compressed_answer_is_decoded(serve: Callable[[Script], Awaitable[Server]]) -> None:
    async def zipped(_: Served) -> bytes:
        return answer(body=gzip.compress(b'{"threads": []}'), headers={"Content-Encoding": "gzip"})

    server = await serve(zipped)
    transport = KeepAliveTransport()
    response = await get(transport, server.url + "/v1/threads")
    await transport.aclose()
    assert response.json() == {"threads": []}


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
        with pytest.raises(MalformedResponse) as caught:
            await client.threads.list()
        await ended.wait()
    assert str(caught.value) == TOO_LARGE
    assert sent < MAX_ANSWER_BYTES + 32 * len(chunk)


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
    port = listening.sockets[0].getsockname()[1]
    transport = KeepAliveTransport()
    try:
        response = await get(transport, f"http://127.0.0.1:{port}/v1/threads")
    finally:
        await transport.aclose()
        listening.close()
    assert response.json() == {"threads": []}


async def test_a_streamed_body_is_sent_whole_with_its_length(serve: Callable[[Script], Awaitable[Server]]) -> None:
    server = await serve(ok)
    transport = KeepAliveTransport()

    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"url": '
        yield b'"https://h.example/"}'

    request = httpx.Request("POST", server.url + "/v1/webhooks", content=chunks())
    assert request.headers["transfer-encoding"] == "chunked"  # (what httpx says of a body it streams)
    response = await transport.handle_async_request(request)
    await transport.aclose()
    assert response.status_code == 200
    sent = server.requests[0]
    assert "transfer-encoding" not in sent.headers
    assert sent.body == b'{"url": "https://h.example/"}'


async def test_failures_are_httpx_exceptions(serve: Callable[[Script], Awaitable[Server]]) -> None:
    async def silent(_: Served) -> bytes | None:
        await asyncio.Event().wait()
        return None

    server = await serve(silent)
    transport = KeepAliveTransport()
    with pytest.raises(httpx.ReadTimeout):
        await get(transport, server.url + "/", extensions={"timeout": {"read": 0.05}})
    with pytest.raises(httpx.ConnectError):
        await get(transport, "http://127.0.0.1:1/")  # (port 1: nothing listens)
    await transport.aclose()


async def test_the_client_sends_straight_to_the_transport(serve: Callable[[Script], Awaitable[Server]]) -> None:
    async def threads(_: Served) -> bytes:
        return answer(body=json.dumps({"threads": []}).encode())

    server = await serve(threads)
    async with PigeonClient(server.url, TOKEN) as client:
        assert isinstance(client._direct, KeepAliveTransport)
        assert await client.threads.list() == []
        assert await client.threads.list() == []
    assert server.connections == 1
    sent = server.requests[0]
    assert sent.headers["authorization"] == "Bearer " + TOKEN
    assert TOKEN not in sent.target
    assert sent.headers["host"] == f"127.0.0.1:{server.port}"


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


def test_the_client_works_on_uvloop_s_event_loop() -> None:
    """uvloop's transports are not subclasses of asyncio's; a program may run the client on its loop."""
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


def test_a_proxy_in_the_environment_goes_through_httpx(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.example:3128")
    proxied = PigeonClient("http://mail.example", TOKEN)
    assert proxied._direct is None  # httpx's client, which uses the proxy
    assert isinstance(proxied._http, httpx.AsyncClient)
    monkeypatch.setenv("NO_PROXY", "mail.example")
    direct = PigeonClient("http://mail.example", TOKEN)
    assert direct._direct is not None
    assert direct._http is None  # no httpx client (its SSL context and httpcore) is made for nothing


async def test_the_client_closes_the_httpx_client_it_made_and_not_one_it_was_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.example:3128")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    async with PigeonClient("http://mail.example", TOKEN) as made:
        own = made._http
    assert own is not None
    assert own.is_closed
    given = httpx.AsyncClient()
    async with PigeonClient("http://mail.example", TOKEN, http_client=given):
        pass
    assert not given.is_closed
    await given.aclose()
