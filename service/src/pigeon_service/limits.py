"""Limits the service holds every caller to: requests a minute (a token bucket per token), and the size of a body
and the time to send it."""

from __future__ import annotations

import asyncio
import threading
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pigeon_service.problems import Problem, problem_response

MAX_BODY_BYTES = 1024 * 1024
BODY_TIMEOUT = 30.0


class RateLimiter:
    """A token bucket per caller: ``per_minute`` requests a minute, in bursts of up to ``per_minute``."""

    def __init__(self, per_minute: int) -> None:
        self.rate = per_minute / 60.0
        self.capacity = float(per_minute)
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, key: str) -> float | None:
        """``None`` if the request may go ahead, else the seconds to wait."""
        now = time.monotonic()
        with self._lock:
            tokens, last = self._buckets.get(key, (self.capacity, now))
            tokens = min(self.capacity, tokens + (now - last) * self.rate)
            if tokens >= 1:
                self._buckets[key] = (tokens - 1, now)
                return None
            self._buckets[key] = (tokens, now)
            return (1 - tokens) / self.rate


class BodyLimit:
    """ASGI middleware: 413 for request bodies over ``limit`` bytes, whether announced or streamed, and 408 for a
    body not all sent within ``timeout`` seconds (a client trickling it would hold its connection for good).

    Bodies of POST, PUT and PATCH are read here first (at most ``limit`` bytes are held) and replayed to the app.
    """

    def __init__(self, app: ASGIApp, limit: int, timeout: float = BODY_TIMEOUT) -> None:
        self.app = app
        self.limit = limit
        self.timeout = timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in {"POST", "PUT", "PATCH"}:
            await self.app(scope, receive, send)
            return
        too_big = problem_response(
            Problem(title="Content Too Large", status=413, detail=f"The body is limited to {self.limit} bytes")
        )
        for name, value in scope.get("headers", []):
            if name == b"content-length" and value.isdigit() and int(value) > self.limit:
                await too_big(scope, receive, send)
                return
        chunks: list[bytes] = []
        size = 0
        try:
            async with asyncio.timeout(self.timeout):
                while True:
                    message = await receive()
                    if message["type"] != "http.request":  # the client went away
                        return
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > self.limit:
                        await too_big(scope, receive, send)
                        return
                    chunks.append(chunk)
                    if not message.get("more_body", False):
                        break
        except TimeoutError:
            too_slow = Problem(
                title="Request Timeout", status=408, detail=f"The body must arrive within {self.timeout:g} s"
            )
            await problem_response(too_slow, headers={"connection": "close"})(scope, receive, send)
            return
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
