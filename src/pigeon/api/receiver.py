"""A small webhook receiver for live updates: HTTP/1.1 on 127.0.0.1 (h11 over asyncio), Standard Webhooks checks.

It runs inside the caller's event loop (the app's), takes POSTs on one secret path, verifies every delivery's
signature and timestamp with the subscription's secret, and hands verified events to a callback. Anything else
gets an error status and changes nothing. No Textual here.
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
        self._seen: OrderedDict[str, None] = OrderedDict()  # delivery ids already handled, newest last
        self._server: asyncio.Server | None = None

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

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connection = h11.Connection(h11.SERVER)
        try:
            async with asyncio.timeout(READ_TIMEOUT):  # not wait_for: it can swallow a cancellation on 3.11
                status = await self._handle(connection, reader)
        except (TimeoutError, h11.ProtocolError, ConnectionError):
            status = 400
        try:
            writer.write(
                connection.send(
                    h11.Response(status_code=status, headers=[("content-length", "0"), ("connection", "close")])
                )
                or b""
            )
            writer.write(connection.send(h11.EndOfMessage()) or b"")
            await writer.drain()
        except (h11.LocalProtocolError, ConnectionError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _handle(self, connection: h11.Connection, reader: asyncio.StreamReader) -> int:
        request: h11.Request | None = None
        body = bytearray()
        while True:
            event = connection.next_event()
            if event is h11.NEED_DATA:
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
