"""``KeepAliveTransport``: HTTP/1.1 with kept-alive connections, for ``PigeonClient`` and ``httpx.AsyncClient``.

Hand-written because it was measured (2,000-3,000 list-messages requests, 8 in flight, against ``pigeon serve``
on 127.0.0.1, on this project's 2-core machine; ``bench/loopback.py``):

- httpx's own transport (httpcore over anyio) cost 1.1-1.3 ms of CPU per request, most of it in its connection
  pool (every pooled socket probed with ``getpeername`` and ``poll`` before each request, anyio's typed
  attributes, sniffio), not in HTTP;
- h11 over asyncio streams with an ``httpx.Request`` per request cost 0.41 ms (h11's events and state machine,
  the stream reader, two ``asyncio.timeout`` scopes, httpx's URL parsing);
- this one, an ``asyncio.Protocol`` whose answers are parsed by httptools (llhttp, in C; uvicorn's parser, so
  already installed) and whose requests are written as bytes, costs 0.13 ms, ``json.loads`` included.

A first sync makes one request per thread, so this is most of its CPU.

:meth:`KeepAliveTransport.send` is what ``PigeonClient`` calls: a method, an origin, a target, headers and a body
in, an :class:`Answer` (status, headers, body) out. ``handle_async_request`` wraps it for ``httpx.AsyncClient``.

What it does: a pool of at most ``max_connections`` connections; an idle connection is reused unless the service
closed it (the event loop has already seen its end); a reused connection the service closed just before the
request is replaced once by a new one when the method is idempotent; a connection is dropped whenever an answer
did not end cleanly (a timeout, a cancellation, a parse error, ``Connection: close``). Timeouts are httpx's
(connect, read, write, pool) and failures raise httpx's exceptions, so ``PigeonClient`` handles both transports
alike. Bodies are read whole (the service answers small JSON documents), up to :data:`MAX_ANSWER_BYTES`: a longer
one raises :class:`AnswerTooLarge` as soon as its length is known, before more of it is read. HTTPS uses httpx's
SSL context. Not for HEAD (its answer's length names a body that never comes, and the parser is not told the
method): Pigeon sends none.
"""

from __future__ import annotations

import asyncio
import ssl
from dataclasses import dataclass
from typing import cast

import httptools
import httpx

IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
Origin = tuple[str, str, int]
Timeouts = dict[str, float | None]
_FORBIDDEN_IN_HEADERS = frozenset("\r\n\0")
_CLOSED = "the service closed the connection before answering"

MAX_ANSWER_BYTES = 64 * 1024 * 1024
"""The longest answer body Pigeon reads (the README's limits say it): far above any page the service sends, and
a bound on the memory a hostile or broken service can make Pigeon use."""


class AnswerTooLarge(Exception):
    """An answer whose body is longer than :data:`MAX_ANSWER_BYTES`: refused, and its connection dropped."""

    def __init__(self) -> None:
        super().__init__(f"the answer is larger than {MAX_ANSWER_BYTES // (1024 * 1024)} MiB")


@dataclass(slots=True)
class Answer:
    """An answer as it came: status, reason, headers (bytes, in order) and the body (not decoded)."""

    status_code: int
    reason: bytes
    headers: list[tuple[bytes, bytes]]
    content: bytes

    @property
    def is_success(self) -> bool:
        return 200 <= self.status_code < 300

    def header(self, name: str) -> str | None:
        wanted = name.lower().encode("ascii")
        for key, value in self.headers:
            if key.lower() == wanted:
                return value.decode("latin-1")
        return None

    def as_httpx(self, request: httpx.Request | None = None) -> httpx.Response:
        """The answer as an ``httpx.Response``, read (httpx undoes a ``Content-Encoding`` as it reads the body:
        ``httpx.DecodingError`` if it cannot)."""
        return httpx.Response(
            self.status_code,
            headers=self.headers,
            content=self.content,
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": self.reason},
            request=request,
        )


def origin_of(url: httpx.URL) -> Origin:
    return (url.scheme, url.host, url.port or (443 if url.scheme == "https" else 80))


def encode_request(method: str, origin: Origin, target: str, headers: list[tuple[str, str]], body: bytes) -> bytes:
    """The request's bytes: request line, ``Host``, the headers, ``Content-Length`` when there is a body (or the
    method carries one). A CR, LF or NUL in any of them is refused (it would end the header early)."""
    scheme, host, port = origin
    default = 443 if scheme == "https" else 80
    host_value = f"[{host}]" if ":" in host else host
    lines = [f"{method} {target} HTTP/1.1", "Host: " + (host_value if port == default else f"{host_value}:{port}")]
    lines += [f"{name}: {value}" for name, value in headers]
    if body or method in {"POST", "PUT", "PATCH"}:
        lines.append(f"Content-Length: {len(body)}")
    if any(not _FORBIDDEN_IN_HEADERS.isdisjoint(line) for line in lines):
        raise httpx.LocalProtocolError("a request header has a line break or NUL in it")
    return "\r\n".join(lines).encode("utf-8") + b"\r\n\r\n" + body


class _StaleConnection(Exception):
    """A reused connection ended before any byte of the answer: the service closed it while it was idle."""


class _Connection(asyncio.Protocol):
    """One HTTP/1.1 connection: one request at a time, its answer parsed as it arrives."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.reused = False
        self.lost = False
        self._waiter: asyncio.Future[Answer] | None = None
        self._drained: asyncio.Future[None] | None = None
        self._paused = False
        self._reset()

    def _reset(self) -> None:
        self._received = False
        self._head_done = False
        self._until_close = False  # an answer without a length: its body ends with the connection
        self._status = 0
        self._reason = b""
        self._headers: list[tuple[bytes, bytes]] = []
        self._body: list[bytes] = []
        self._head_size = 0
        self._size = 0

    def usable(self) -> bool:
        return not self.lost and self.transport is not None and not self.transport.is_closing()

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    # --- asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # (a cast, not an isinstance check: uvloop's TCP transport has every method of asyncio.Transport but is no
        # subclass of it, and an assertion failing here would leave the connection without its transport)
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        if self._waiter is None or self._waiter.done():
            self.lost = True  # bytes nobody asked for: the connection is in no known state
            self.close()
            return
        self._received = True
        if not self._head_done:  # (httptools holds a head until it ends: an endless one is bounded here)
            self._head_size += len(data)
            if self._head_size > MAX_ANSWER_BYTES:
                self._fail(AnswerTooLarge())
                return
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(httpx.RemoteProtocolError(f"the service's answer is not HTTP/1.1: {exc}"))

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        if self._drained is not None and not self._drained.done():
            self._drained.set_result(None)
        if self._waiter is None or self._waiter.done():
            return
        if self._head_done and self._until_close:
            self._complete()
        elif not self._received:
            self._fail(_StaleConnection() if self.reused else httpx.RemoteProtocolError(_CLOSED))
        else:
            self._fail(httpx.RemoteProtocolError("the service closed the connection before the answer ended"))

    def pause_writing(self) -> None:
        self._paused = True

    def resume_writing(self) -> None:
        self._paused = False
        if self._drained is not None and not self._drained.done():
            self._drained.set_result(None)

    # --- httptools' callbacks

    def on_status(self, reason: bytes) -> None:
        self._reason += reason

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers.append((name, value))

    def on_headers_complete(self) -> None:
        self._head_done = True
        self._status = self.parser.get_status_code()
        names = {name.lower() for name, _ in self._headers}
        self._until_close = b"content-length" not in names and b"transfer-encoding" not in names
        length = next((value for name, value in self._headers if name.lower() == b"content-length"), b"0")
        if int(length.strip() or b"0") > MAX_ANSWER_BYTES:  # (llhttp has checked it is a number)
            self._fail(AnswerTooLarge())

    def on_body(self, body: bytes) -> None:
        self._size += len(body)
        if self._size > MAX_ANSWER_BYTES:
            self._fail(AnswerTooLarge())  # (the rest of what arrived is not kept either)
        elif not self.lost:
            self._body.append(body)

    def on_message_complete(self) -> None:
        if 100 <= self._status < 200:  # an interim answer ("100 Continue"): the real one follows
            self._reset()
            self._received = True
            return
        if not self.parser.should_keep_alive():
            self.lost = True  # ("Connection: close"): not to be used again
        self._complete()

    # --- one exchange

    def _complete(self) -> None:
        assert self._waiter is not None
        if not self._waiter.done():
            self._waiter.set_result(Answer(self._status, self._reason, self._headers, b"".join(self._body)))

    def _fail(self, error: Exception) -> None:
        self.lost = True
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(error)
        self.close()

    def _time_out(self) -> None:
        self._fail(httpx.ReadTimeout("timed out"))

    async def exchange(self, raw: bytes, timeouts: Timeouts) -> Answer:
        assert self.transport is not None
        loop = asyncio.get_running_loop()
        self._reset()
        waiter: asyncio.Future[Answer] = loop.create_future()
        self._waiter = waiter
        self.transport.write(raw)
        if self._paused:  # the kernel's buffer is full: wait (at most the write timeout) until it takes more
            self._drained = loop.create_future()
            try:
                async with asyncio.timeout(timeouts.get("write")):
                    await self._drained
            except TimeoutError:
                raise httpx.WriteTimeout("timed out") from None
        read = timeouts.get("read")
        timer = loop.call_later(read, self._time_out) if read is not None else None
        try:
            return await waiter
        finally:
            if timer is not None:
                timer.cancel()
            self._waiter = None


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
        timeouts: Timeouts = request.extensions.get("timeout", {})
        headers = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in request.headers.raw]
        # (the body is sent whole, with its length: httpx's framing headers for it are replaced)
        framing = {"host", "content-length", "transfer-encoding"}
        headers = [(name, value) for name, value in headers if name.lower() not in framing]
        body = await request.aread()
        target = request.url.raw_path.decode("ascii")
        answer = await self.send(request.method, origin_of(request.url), target, headers, body, timeouts)
        return answer.as_httpx(request)

    async def send(
        self,
        method: str,
        origin: Origin,
        target: str,
        headers: list[tuple[str, str]],
        body: bytes = b"",
        timeouts: Timeouts | None = None,
    ) -> Answer:
        """Send one request on a kept-alive connection to ``origin`` and return its answer, read whole."""
        timeouts = timeouts or {}
        raw = encode_request(method, origin, target, headers, body)
        if self._slots.locked():
            try:
                async with asyncio.timeout(timeouts.get("pool")):
                    await self._slots.acquire()
            except TimeoutError:
                raise httpx.PoolTimeout("timed out") from None
        else:
            await self._slots.acquire()  # (free: no timeout scope to set up)
        try:
            connection = self._take(origin) or await self._connect(origin, timeouts)
            try:
                return await self._exchange(connection, raw, origin, timeouts)
            except _StaleConnection:
                if method not in IDEMPOTENT:
                    raise httpx.RemoteProtocolError(_CLOSED) from None
                return await self._exchange(await self._connect(origin, timeouts), raw, origin, timeouts)
        finally:
            self._slots.release()

    def _take(self, origin: Origin) -> _Connection | None:
        idle = self._idle.get(origin)
        while idle:
            connection = idle.pop()
            if connection.usable():
                connection.reused = True
                return connection
            connection.close()
        return None

    async def _connect(self, origin: Origin, timeouts: Timeouts) -> _Connection:
        scheme, host, port = origin
        context = None
        if scheme == "https":
            context = self._ssl = self._ssl or httpx.create_ssl_context()
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeouts.get("connect")):
                _, connection = await loop.create_connection(
                    _Connection, host, port, ssl=context, server_hostname=host if context else None
                )
        except TimeoutError:
            raise httpx.ConnectTimeout("timed out") from None
        except OSError as exc:
            raise httpx.ConnectError(str(exc) or type(exc).__name__) from None
        return connection

    async def _exchange(self, connection: _Connection, raw: bytes, origin: Origin, timeouts: Timeouts) -> Answer:
        try:
            answer = await connection.exchange(raw, timeouts)
        except OSError as exc:
            connection.close()
            raise httpx.WriteError(str(exc) or type(exc).__name__) from None
        except BaseException:
            connection.close()  # an answer that did not end cleanly leaves the connection in no known state
            raise
        if connection.usable() and not self._closed:
            self._idle.setdefault(origin, []).append(connection)
        else:
            connection.close()
        return answer
