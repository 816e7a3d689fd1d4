"""How many requests a client has in flight: at most a bound, fewer while the service says it is busy.

Additive increase, multiplicative decrease, as TCP does with its window: a 429 or 503 halves the number of
requests allowed in flight (never below one) and holds every new request until the busy one's wait
(``Retry-After``, or the backoff) is over; each answer that is not a "busy" adds ``1 / allowed``, so the count
grows back by one for each full round of answers, up to the bound.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime

BUSY_STATUSES = frozenset({429, 503})


@dataclass(frozen=True)
class BusyWait:
    """The client waits out a "busy" answer before it asks again: told to its ``on_busy`` hook, so that the
    CLI and the app can say so (the API layer prints nothing)."""

    status: int
    seconds: float
    until: datetime  # local time

    def __str__(self) -> str:
        return f"The service is busy ({self.status}); waiting {self.seconds:.0f} s, until {self.until:%H:%M:%S}…"


class Throttle:
    """Slots for requests in flight; ``async with throttle.slot():`` around each request."""

    def __init__(self, bound: int) -> None:
        self.bound = max(1, bound)
        self.allowed: float = float(self.bound)
        self.in_flight = 0
        self.most_in_flight = 0
        self.busy_answers = 0
        self._pauses = 0  # requests waiting out a "busy" answer; none starts meanwhile
        self._changed = asyncio.Condition()

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        async with self._changed:
            await self._changed.wait_for(lambda: not self._pauses and self.in_flight < int(self.allowed))
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            yield
        finally:
            async with self._changed:
                self.in_flight -= 1
                self._changed.notify_all()

    def answered(self, status: int) -> None:
        """Count an answer: a "busy" one halves what is allowed, any other lets it grow back."""
        if status in BUSY_STATUSES:
            self.busy_answers += 1
            self.allowed = max(1.0, self.allowed / 2)
        else:
            self.allowed = min(float(self.bound), self.allowed + 1 / self.allowed)

    @contextlib.asynccontextmanager
    async def paused(self) -> AsyncIterator[None]:
        """While a request waits out a "busy" answer, no other request starts."""
        async with self._changed:
            self._pauses += 1
        try:
            yield
        finally:
            async with self._changed:
                self._pauses -= 1
                self._changed.notify_all()
