"""A small webhook receiver for live updates: HTTP/1.1 on 127.0.0.1 (h11 over asyncio), Standard Webhooks checks.

It runs inside the caller's event loop (the app's), takes POSTs on one secret path, verifies every delivery's
signature and timestamp with the subscription's secret, and hands verified events to a callback. Anything else
gets an error status and changes nothing. Another local process cannot use up Pigeon's file descriptors: at most
``MAX_CONNECTIONS`` are open, a request's headers must come within ``HEADER_TIMEOUT`` and the whole of it within
``READ_TIMEOUT``; past the limit the oldest unfinished request is dropped for the newcomer (an honest delivery
arrives whole at once, so a crowd of half-sent ones cannot keep it out), and when none is unfinished the newcomer is
closed at once. No Textual here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import h11
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

log = logging.getLogger("pigeon.api.receiver")

MAX_BODY = 1024 * 1024
SEEN_KEPT = 10_000
READ_TIMEOUT = 10.0
HEADER_TIMEOUT = 5.0
MAX_CONNECTIONS = 32


class BadDelivery(Exception):
    """A delivery that is not signed with our secret, is too old or too new, or is not an event."""


def verify(secret: str, body: bytes, headers: dict[str, str]) -> dict[str, Any]:
    """The event of a delivery signed with ``secret`` (Standard Webhooks, 5 minutes of tolerance)."""
    try:
        event = Webhook(secret).verify(body, headers)
    except (WebhookVerificationError, ValueError, TypeError) as exc:  # malformed headers raise ValueError
        raise BadDelivery(str(exc) or type(exc).__name__) from None
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        raise BadDelivery("not an event object")
    return event


class WebhookReceiver:
    """Listens on ``host`` (a free port unless given) at a random path; call :meth:`start` then use :attr:`url`."""

    def __init__(
        self,
        on_event: Callable[[dict[str, Any]], None],
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
        self.dropped = 0
        self._seen: OrderedDict[str, None] = OrderedDict()  # delivery ids already handled, newest last
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()
        self._unfinished: OrderedDict[asyncio.StreamWriter, None] = OrderedDict()  # still reading, oldest first

    @property
    def connections(self) -> int:
        """How many connections are open now (at most ``MAX_CONNECTIONS``)."""
        return len(self._open)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}{self.path}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None

    def _make_room(self) -> bool:
        """Room for one more connection: the oldest unfinished request is dropped if all are taken; False when
        every open one is being answered."""
        if len(self._open) < MAX_CONNECTIONS:
            return True
        if not self._unfinished:
            return False
        oldest, _ = self._unfinished.popitem(last=False)
        self._open.discard(oldest)
        oldest.transport.abort()  # (its handler sees the connection gone and ends)
        self.dropped += 1
        return True

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not self._make_room():
            self.dropped += 1
            writer.transport.abort()  # closed at once, nothing read, nothing logged
            return
        self._open.add(writer)
        self._unfinished[writer] = None
        try:
            await self._answer(reader, writer)
        except Exception as exc:  # (a peer's fault ends its connection; never a traceback for it)
            log.debug("webhook connection ended: %s", type(exc).__name__)
        finally:
            self._open.discard(writer)
            self._unfinished.pop(writer, None)
            writer.close()

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connection = h11.Connection(h11.SERVER)
        try:
            async with asyncio.timeout(READ_TIMEOUT):  # not wait_for: it can swallow a cancellation on 3.11
                status = await self._handle(connection, reader)
        except (TimeoutError, h11.ProtocolError, OSError):
            status = 400
        self._unfinished.pop(writer, None)  # (answered now: no longer the one to drop)
        if writer.transport.is_closing():
            return
        try:
            writer.write(
                connection.send(
                    h11.Response(status_code=status, headers=[("content-length", "0"), ("connection", "close")])
                )
                or b""
            )
            writer.write(connection.send(h11.EndOfMessage()) or b"")
            async with asyncio.timeout(READ_TIMEOUT):  # (a peer that reads nothing cannot hold the answer)
                await writer.drain()
        except (h11.LocalProtocolError, OSError, TimeoutError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                async with asyncio.timeout(1.0):
                    await writer.wait_closed()

    async def _handle(self, connection: h11.Connection, reader: asyncio.StreamReader) -> int:
        request: h11.Request | None = None
        body = bytearray()
        headers_by = asyncio.get_running_loop().time() + HEADER_TIMEOUT
        while True:
            event = connection.next_event()
            if event is h11.NEED_DATA:
                async with asyncio.timeout_at(headers_by if request is None else None):
                    data = await reader.read(65536)
                connection.receive_data(data)
                if not data and request is None:
                    return 400
                continue
            if isinstance(event, h11.Request):
                request = event
            elif isinstance(event, h11.Data):
                body += event.data
                if len(body) > MAX_BODY:
                    return 413
            elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
                break
        if request is None:
            return 400
        if request.target.decode(errors="replace") != self.path:
            return 404
        if request.method != b"POST":
            return 405
        if self.secret is None:
            return 503
        headers = {name.decode().lower(): value.decode(errors="replace") for name, value in request.headers}
        try:
            delivered = verify(self.secret, bytes(body), headers)
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
            self.on_event(delivered)
        except Exception:  # the receiver must keep answering whatever the callback does
            log.exception("live update handler failed")
        return 204


def event_message(event: dict[str, Any]) -> dict[str, Any] | None:
    """The message an event is about, if it carries one."""
    data = event.get("data")
    message = data.get("message") if isinstance(data, dict) else None
    return message if isinstance(message, dict) else None
