"""Connections the service holds: how many may be open, and how long a request's headers may take to arrive.

uvicorn answers 503 past ``limit_concurrency`` only once a request's headers are in, and puts no time limit on
headers at all, so a client sending one header byte every few seconds held its connection (and a file
descriptor) as long as it liked. :class:`GuardedHttp` is uvicorn's httptools protocol with two checks added:

- headers not all in within ``header_timeout`` of the first byte (or of the connection): a 408 and the connection
  closed;
- past ``max_connections``: room is made by closing the connection that has waited longest without a request in
  progress (sending headers, or idle between requests); when every one is serving a request, the new one gets a
  fixed 503 and is closed, without a log line per refusal.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

log = logging.getLogger("pigeon_service.connections")

REFUSED = b"HTTP/1.1 503 Service Unavailable\r\nretry-after: 1\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
TIMED_OUT = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
WARN_EVERY = 60.0


def _default_max_connections() -> int:
    """Half the process's file descriptors, at most 512: the rest stay for the database, webhook deliveries and
    the honest clients' next connections."""
    try:
        import resource
    except ImportError:  # not on POSIX
        return 512
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 512
    return max(16, min(512, soft // 2))


@dataclass(frozen=True)
class ConnectionLimits:
    """What the service holds open; tests shrink it."""

    max_connections: int = field(default_factory=_default_max_connections)
    header_timeout: float = 10.0
    keep_alive: int = 5
    """Seconds an idle connection is kept between requests (uvicorn's ``timeout_keep_alive``)."""


class GuardedHttp(HttpToolsProtocol):
    """uvicorn's httptools protocol, with a cap on open connections and a time limit on headers."""

    limits: ClassVar[ConnectionLimits] = ConnectionLimits()
    _warned_at: ClassVar[float] = -WARN_EVERY

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None
        self._waiting_since = 0.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._waiting_since = self.loop.time()
        if len(self.connections) > self.limits.max_connections and not self._make_room():
            transport.write(REFUSED)
            transport.close()
            return
        self._start_header_timer()

    def data_received(self, data: bytes) -> None:
        if self._header_timer is None and self._idle():
            self._start_header_timer()  # the first bytes of the next request
        super().data_received(data)

    def on_headers_complete(self) -> None:
        self._stop_header_timer()
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._waiting_since = self.loop.time()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_header_timer()
        super().connection_lost(exc)

    def _idle(self) -> bool:
        """No request of this connection is being served (its headers may be arriving)."""
        return (self.cycle is None or self.cycle.response_complete) and not self.pipeline

    def _start_header_timer(self) -> None:
        self._header_timer = self.loop.call_later(self.limits.header_timeout, self._headers_too_slow)

    def _stop_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            self.transport.write(TIMED_OUT)
            self.transport.close()

    def _make_room(self) -> bool:
        """Close the connection idle the longest to make room for this one; False when none is idle."""
        self._warn()
        open_ones = [c for c in self.connections if not c.transport.is_closing()]
        if len(open_ones) <= self.limits.max_connections:
            return True  # others are closing already
        idle = [c for c in open_ones if c is not self and isinstance(c, GuardedHttp) and c._idle()]
        if not idle:
            return False
        min(idle, key=lambda c: c._waiting_since).transport.close()
        return True

    def _warn(self) -> None:
        now = time.monotonic()
        if now - GuardedHttp._warned_at >= WARN_EVERY:
            GuardedHttp._warned_at = now
            log.warning(
                "%d connections open, the most this service holds: closing idle ones, refusing the rest",
                self.limits.max_connections,
            )


def guarded_http(limits: ConnectionLimits) -> type[GuardedHttp]:
    """The protocol class for uvicorn's ``http`` setting, holding to ``limits``."""
    return type("GuardedHttp", (GuardedHttp,), {"limits": limits})
