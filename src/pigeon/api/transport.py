"""``KeepAliveTransport``: HTTP/1.1 with kept-alive connections, for ``httpx.AsyncClient``.

Hand-written because it was measured: httpx's own transport (httpcore over anyio) cost 1.1-1.3 ms of CPU per
request on this project's 2-core machine, most of it in the connection pool (every pooled connection's socket
probed with ``getpeername`` and ``poll`` before each request, anyio's typed attributes, sniffio) and not in HTTP;
this one, with the same parser httpcore uses (``h11``) over asyncio streams, costs 0.4 ms of CPU per request
through the same ``httpx.AsyncClient`` (2,000 list-messages requests, 8 in flight, against ``pigeon serve`` on
127.0.0.1; ``bench/loopback.py``). A first sync makes one request per thread, so this is most of its CPU.

What it does: a pool of at most ``max_connections`` connections; an idle connection is reused unless the service
closed it (the event loop has already seen its end); a reused connection the service closed just before the
request is replaced once by a new one when the method is idempotent; a connection is dropped whenever an answer
did not end cleanly (a timeout, a cancellation, ``Connection: close``). Timeouts are httpx's (connect, read, write,
pool) and failures raise httpx's exceptions, so ``PigeonClient`` handles both transports alike. Bodies are read
whole (the service answers small JSON documents). HTTPS uses httpx's SSL context.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import h11
import httpx

IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
READ_SIZE = 65536
Origin = tuple[str, str, int]


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.http = h11.Connection(h11.CLIENT)
        self.reused = False

    def usable(self) -> bool:
        return not (self.writer.is_closing() or self.reader.at_eof()) and self.http.our_state is h11.IDLE

    def close(self) -> None:
        self.writer.close()


class _StaleConnection(Exception):
    """A reused connection ended before any byte of the answer: the service closed it while it was idle."""


@contextmanager
def _mapped(timeout_error: type[httpx.TimeoutException], os_error: type[httpx.TransportError]) -> Iterator[None]:
    try:
        yield
    except TimeoutError:
        raise timeout_error("timed out") from None
    except h11.RemoteProtocolError as exc:
        raise httpx.RemoteProtocolError(str(exc)) from None
    except OSError as exc:
        raise os_error(str(exc) or type(exc).__name__) from None


class KeepAliveTransport(httpx.AsyncBaseTransport):
    def __init__(self, *, max_connections: int = 10, ssl_context: ssl.SSLContext | None = None) -> None:
        self._slots = asyncio.Semaphore(max_connections)
        self._idle: dict[Origin, list[_Connection]] = {}
        self._ssl = ssl_context
        self._closed = False

    async def aclose(self) -> None:
        self._closed = True
        for connections in self._idle.values():
            for connection in connections:
                connection.close()
        self._idle.clear()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        timeouts: dict[str, float | None] = request.extensions.get("timeout", {})
        origin = (
            request.url.scheme,
            request.url.host,
            request.url.port or (443 if request.url.scheme == "https" else 80),
        )
        body = await request.aread()
        with _mapped(httpx.PoolTimeout, httpx.ConnectError):
            async with asyncio.timeout(timeouts.get("pool")):
                await self._slots.acquire()
        try:
            connection = self._take(origin)
            try:
                connection = connection or await self._connect(origin, timeouts)
                return await self._exchange(connection, request, body, origin, timeouts)
            except _StaleConnection:
                if request.method not in IDEMPOTENT:
                    raise httpx.RemoteProtocolError("the service closed the connection before answering") from None
                return await self._exchange(await self._connect(origin, timeouts), request, body, origin, timeouts)
        finally:
            self._slots.release()

    def _take(self, origin: Origin) -> _Connection | None:
        idle = self._idle.get(origin, [])
        while idle:
            connection = idle.pop()
            if connection.usable():
                connection.reused = True
                return connection
            connection.close()
        return None

    async def _connect(self, origin: Origin, timeouts: dict[str, float | None]) -> _Connection:
        scheme, host, port = origin
        context = None
        if scheme == "https":
            context = self._ssl = self._ssl or httpx.create_ssl_context()
        with _mapped(httpx.ConnectTimeout, httpx.ConnectError):
            async with asyncio.timeout(timeouts.get("connect")):
                reader, writer = await asyncio.open_connection(
                    host, port, ssl=context, server_hostname=host if context else None, limit=READ_SIZE
                )
        return _Connection(reader, writer)

    async def _exchange(
        self, connection: _Connection, request: httpx.Request, body: bytes, origin: Origin, timeouts: dict[str, Any]
    ) -> httpx.Response:
        try:
            response = await self._send_and_read(connection, request, body, timeouts)
        except BaseException:
            connection.close()  # an answer that did not end cleanly leaves the connection in no known state
            raise
        if connection.http.our_state is h11.DONE and connection.http.their_state is h11.DONE and not self._closed:
            connection.http.start_next_cycle()
            self._idle.setdefault(origin, []).append(connection)
        else:
            connection.close()
        return response

    async def _send_and_read(
        self, connection: _Connection, request: httpx.Request, body: bytes, timeouts: dict[str, Any]
    ) -> httpx.Response:
        http = connection.http
        target = request.url.raw_path
        headers = request.headers.raw
        out = http.send(h11.Request(method=request.method, target=target, headers=headers)) or b""
        if body:
            out += http.send(h11.Data(data=body)) or b""
        out += http.send(h11.EndOfMessage()) or b""
        with _mapped(httpx.WriteTimeout, httpx.WriteError):
            connection.writer.write(out)
            async with asyncio.timeout(timeouts.get("write")):
                await connection.writer.drain()
        head: h11.Response | None = None
        chunks: list[bytes] = []
        received = False
        while True:
            with _mapped(httpx.ReadTimeout, httpx.ReadError):
                event = http.next_event()
                if event is h11.NEED_DATA:
                    async with asyncio.timeout(timeouts.get("read")):
                        data = await connection.reader.read(READ_SIZE)
                    if not data and not received and connection.reused:
                        raise _StaleConnection
                    received = True
                    http.receive_data(data)
                    continue
            if isinstance(event, h11.Response):
                head = event
            elif isinstance(event, h11.Data):
                chunks.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                break
            elif isinstance(event, h11.ConnectionClosed):
                raise httpx.RemoteProtocolError("the service closed the connection before the answer ended")
        assert head is not None  # (h11 yields a Response before any Data or EndOfMessage)
        return httpx.Response(
            head.status_code,
            headers=head.headers.raw_items(),
            stream=httpx.ByteStream(b"".join(chunks)),  # (read by httpx, which undoes a Content-Encoding)
            extensions={"http_version": b"HTTP/" + head.http_version, "reason_phrase": head.reason},
            request=request,
        )
