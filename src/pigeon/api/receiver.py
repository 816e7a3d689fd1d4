"""A small webhook receiver for live updates: aiohttp's HTTP server on 127.0.0.1, Standard Webhooks checks.

It runs inside the caller's event loop (the app's), takes POSTs on one secret path, verifies every delivery's
signature and timestamp with the subscription's secret, reads its event once into a
:class:`~pigeon.models.events.WebhookEvent` and hands that to a callback. Anything else gets an error status and
changes nothing. Another local process cannot use up Pigeon's file descriptors: at most ``MAX_CONNECTIONS`` are open,
a request's headers must come within ``HEADER_TIMEOUT`` and its body within ``READ_TIMEOUT``, a body is at most
``MAX_BODY``, and each connection carries one request. Past the limit the oldest unfinished request is dropped for
the newcomer (an honest delivery arrives whole at once, so a crowd of half-sent ones cannot keep it out), and when
none is unfinished the newcomer is closed at once. No Textual here.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import secrets
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from pigeon.models.events import WebhookEvent

if TYPE_CHECKING:
    from aiohttp import web
    from aiohttp.web_protocol import RequestHandler

log = logging.getLogger("pigeon.api.receiver")

MAX_BODY = 1024 * 1024
SEEN_KEPT = 10_000
READ_TIMEOUT = 10.0
HEADER_TIMEOUT = 5.0
MAX_CONNECTIONS = 32
SHUTDOWN_TIMEOUT = 1.0  # seconds a request being answered may take to end when the receiver stops
NO_HEADERS = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


class BadDelivery(Exception):
    """A delivery that is not signed with our secret, is too old or too new, or is not an event."""


def verify(secret: str, body: bytes, headers: dict[str, str]) -> WebhookEvent:
    """The event of a delivery signed with ``secret`` (Standard Webhooks, 5 minutes of tolerance)."""
    try:
        data = Webhook(secret).verify(body, headers)
    except (WebhookVerificationError, ValueError, TypeError) as exc:  # malformed headers raise ValueError
        raise BadDelivery(str(exc) or type(exc).__name__) from None
    event = WebhookEvent.read(data)
    if event is None:
        raise BadDelivery("not an event object")
    return event


class _Doors:
    """The receiver's connections: how many are open, which have not yet sent a whole request (oldest first), and
    the timer that closes each one whose headers are late."""

    def __init__(self) -> None:
        self.open: dict[asyncio.Transport, None] = {}
        self.unfinished: OrderedDict[asyncio.Transport, asyncio.TimerHandle | None] = OrderedDict()
        self.dropped = 0

    def admit(self, transport: asyncio.Transport) -> bool:
        """Room for one more connection: the oldest unfinished request is dropped if all are taken; False when
        every open one is being answered."""
        if len(self.open) >= MAX_CONNECTIONS:
            if not self.unfinished:
                self.dropped += 1
                transport.abort()  # closed at once, nothing read, nothing logged
                return False
            oldest, timer = self.unfinished.popitem(last=False)
            if timer is not None:
                timer.cancel()
            self.open.pop(oldest, None)
            oldest.abort()
            self.dropped += 1
        self.open[transport] = None
        late = asyncio.get_running_loop().call_later(HEADER_TIMEOUT, self._headers_late, transport)
        self.unfinished[transport] = late
        return True

    def _headers_late(self, transport: asyncio.Transport) -> None:
        if transport in self.unfinished and self.unfinished[transport] is not None:
            self.unfinished[transport] = None
            if not transport.is_closing():
                transport.write(NO_HEADERS)
                transport.close()

    def headers_in(self, transport: asyncio.Transport) -> None:
        """The request's headers are in: no longer timed by the header timer (its body is, by the handler)."""
        timer = self.unfinished.get(transport)
        if timer is not None:
            timer.cancel()
            self.unfinished[transport] = None

    def finished(self, transport: asyncio.Transport) -> None:
        """The request is whole (or refused): it is being answered, no longer the one to drop."""
        timer = self.unfinished.pop(transport, None)
        if timer is not None:
            timer.cancel()

    def closed(self, transport: asyncio.Transport) -> None:
        self.finished(transport)
        self.open.pop(transport, None)


def _bounded_server(handle: Callable[[web.BaseRequest], Awaitable[web.StreamResponse]], doors: _Doors) -> web.Server:
    """aiohttp's low-level server, telling ``doors`` of each connection made and lost so that they stay bounded."""
    from aiohttp import web

    transports: dict[RequestHandler, asyncio.Transport] = {}

    class BoundedServer(web.Server):
        def connection_made(self, handler: RequestHandler, transport: asyncio.Transport) -> None:
            if doors.admit(transport):
                transports[handler] = transport
                super().connection_made(handler, transport)

        def connection_lost(self, handler: RequestHandler, exc: BaseException | None = None) -> None:
            transport = transports.pop(handler, None)
            if transport is not None:
                doors.closed(transport)
            super().connection_lost(handler, exc)

    return BoundedServer(handle, access_log=None)


class WebhookReceiver:
    """Listens on ``host`` (a free port unless given) at a random path; call :meth:`start` then use :attr:`url`."""

    def __init__(
        self,
        on_event: Callable[[WebhookEvent], None],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        path: str | None = None,
    ) -> None:
        self.on_event = on_event
        self.host = host
        self.port = port
        self.path = path or "/pigeon/" + secrets.token_urlsafe(16)
        self.secret: str | None = None
        self.accepted = 0
        self.rejected = 0
        self.replayed = 0
        self._seen: OrderedDict[str, None] = OrderedDict()  # delivery ids already handled, newest last
        self._doors = _Doors()
        self._runner: web.ServerRunner | None = None

    @property
    def connections(self) -> int:
        """How many connections are open now (at most ``MAX_CONNECTIONS``)."""
        return len(self._doors.open)

    @property
    def dropped(self) -> int:
        """Connections closed to make room, or refused for want of it."""
        return self._doors.dropped

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}{self.path}"

    async def start(self) -> None:
        # aiohttp's server loads in a thread (the app's screen keeps answering keys meanwhile), then is at hand here.
        await asyncio.to_thread(importlib.import_module, "aiohttp.web")
        from aiohttp import web

        runner = web.ServerRunner(
            _bounded_server(self._handle, self._doors), handle_signals=False, shutdown_timeout=SHUTDOWN_TIMEOUT
        )
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port)
        try:
            await site.start()
        except OSError:
            await runner.cleanup()
            raise
        self._runner = runner
        self.port = int(runner.addresses[0][1])

    async def stop(self) -> None:
        if self._runner is not None:
            runner, self._runner = self._runner, None
            with contextlib.suppress(Exception):
                await runner.cleanup()

    async def _handle(self, request: web.BaseRequest) -> web.StreamResponse:
        from aiohttp import web

        transport = request.transport
        if transport is not None:
            self._doors.headers_in(transport)
        try:
            async with asyncio.timeout(READ_TIMEOUT):  # (the body's time; the headers had theirs)
                status = await self._answer(request)
        except (TimeoutError, OSError, ValueError) as exc:
            log.debug("webhook request ended: %s", type(exc).__name__)
            status = 400
        finally:
            if transport is not None:
                self._doors.finished(transport)
        response = web.Response(status=status)
        response.force_close()  # one request a connection
        return response

    async def _answer(self, request: web.BaseRequest) -> int:
        if request.raw_path != self.path:
            return 404
        if request.method != "POST":
            return 405
        if self.secret is None:
            return 503
        if (request.content_length or 0) > MAX_BODY:
            return 413
        body = bytearray()
        async for chunk in request.content.iter_any():
            body += chunk
            if len(body) > MAX_BODY:
                return 413
        headers = {name.lower(): value for name, value in request.headers.items()}
        try:
            event = verify(self.secret, bytes(body), headers)
        except BadDelivery as exc:
            self.rejected += 1
            log.info("rejected a webhook delivery: %s", exc)
            return 401
        delivery = headers.get("webhook-id", "")
        if delivery in self._seen:  # a replay (or a retry of what was handled): acknowledged, never handled twice
            self.replayed += 1
            return 204
        self._seen[delivery] = None
        while len(self._seen) > SEEN_KEPT:  # older ones are outside the signature's time tolerance anyway
            self._seen.popitem(last=False)
        self.accepted += 1
        try:
            self.on_event(event)
        except Exception:  # the receiver must keep answering whatever the callback does
            log.exception("live update handler failed")
        return 204
