"""How many requests a client has in flight, and which waiting request goes first.

The number allowed adapts, as TCP's window does:

- it starts at ``START`` and, while answers come about as fast as the quickest seen lately, grows by one for each
  answer (doubling each round of answers) until the first cut, then by one a round, up to the ceiling;
- it is halved when the service says it is busy (429, 503) or a request times out, and cut by a fifth when answers
  come markedly slower than the quickest seen lately (latency rising: requests are queueing somewhere);
- it is cut at most once a round: the answers to requests sent before a cut only say the same thing again.

A request waiting for a slot goes by its :class:`Priority` (set with :func:`priority`): what the user waits for,
then lists, then a sync's background fetches; the user's may take one of ``RESERVE`` slots above the number
allowed, so that opening a thread never waits behind a sync. While the user waits for something (:meth:`held`),
no background request starts: the answers of those already sent would keep the event loop busy while the user's
own answer is read and drawn. While a request waits out a busy answer, none starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import math
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from enum import IntEnum

BUSY_STATUSES = frozenset({429, 503})
START = 16  # requests in flight before anything is known of the link
RESERVE = 2  # slots above the number allowed that only the user's requests may take
TOLERANCE = 2.0  # answers this many times slower than the quickest seen lately ...
SLACK = 0.02  # ... plus this, are a rising latency (a little queueing on loopback is not a sign)
RISE_CUT = 0.8
SMOOTHING = 1 / 8  # the weight of each answer in the recent latency (TCP's SRTT)
MEMORY = 30.0  # seconds a quickest answer is remembered for (two spans): a link that changed is learnt again


class Priority(IntEnum):
    """Which waiting request gets the next free slot: the lowest value first."""

    USER = 0  # what the user waits for: a thread opened
    LIST = 1  # lists, contacts, and anything not marked
    BACKGROUND = 2  # a sync's message fetches, which can wait


_priority: ContextVar[Priority] = ContextVar("pigeon_request_priority", default=Priority.LIST)


@contextlib.contextmanager
def priority(level: Priority) -> Iterator[None]:
    """Requests made inside (by this task, and by tasks it starts) wait for a slot with ``level``. (Set back by
    value, not by token: an async generator's end may run in another task's context.)"""
    before = _priority.get()
    _priority.set(level)
    try:
        yield
    finally:
        _priority.set(before)


@dataclass(frozen=True)
class BusyWait:
    """The client waits out a "busy" answer before it asks again: told to its ``on_busy`` hook, so that the
    CLI and the app can say so (the API layer prints nothing)."""

    status: int
    seconds: float
    until: datetime  # local time

    def __str__(self) -> str:
        return f"The service is busy ({self.status}); waiting {self.seconds:.0f} s, until {self.until:%H:%M:%S}…"


@dataclass(frozen=True)
class Ticket:
    """One request's slot: when it was sent, and the cuts made before it."""

    sent: float
    cuts: int


class Throttle:
    """Slots for requests in flight; ``async with throttle.slot() as ticket:`` around each request, then
    ``answered(status, ticket)`` or ``timed_out(ticket)``."""

    def __init__(self, bound: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.bound = max(1, bound)
        self.allowed: float = float(min(START, self.bound))
        self.in_flight = 0
        self.most_in_flight = 0
        self.busy_answers = 0
        self.why = "starting"
        """Why the number allowed is what it is, in a few words for a progress line."""
        self.growing_fast = True  # until the first cut (TCP's slow start)
        self._clock = clock
        self._cuts = 0
        self._recent: float | None = None  # smoothed latency of the answers since the last cut
        self._since_cut = 0
        self._quickest = (math.inf, math.inf)  # this span's and the last span's
        self._span_began = clock()
        self._full_at = -math.inf  # when the last request found every slot taken
        self._pauses = 0  # requests waiting out a "busy" answer; none starts meanwhile
        self._holds = 0  # the user waits for something: no background request starts meanwhile
        self._unheld = asyncio.Event()
        self._unheld.set()
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    # --- slots ---------------------------------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[Ticket]:
        level = _priority.get()
        if self._waiting or not self._room_for(level):
            await self._wait_turn(level)
        else:
            self._take()
        try:
            yield self.sent()
        finally:
            self.in_flight -= 1
            self._grant()

    def sent(self) -> Ticket:
        """The ticket of a request sent now (its slot taken)."""
        now = self._clock()
        if self.in_flight >= int(self.allowed):
            self._full_at = now
        return Ticket(now, self._cuts)

    def _room_for(self, level: Priority) -> bool:
        if self._pauses or (self._holds and level == Priority.BACKGROUND):
            return False
        return self.in_flight < int(self.allowed) + (RESERVE if level == Priority.USER else 0)

    def _take(self) -> None:
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)

    async def _wait_turn(self, level: Priority) -> None:
        self._full_at = self._clock()
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting, (level, next(self._order), turn))
        self._grant()  # (it may go at once: a user's request past a sync's waiting fetches)
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():  # given a slot, then cancelled before it could use it
                self.in_flight -= 1
                self._grant()
            raise

    def _grant(self) -> None:
        """Give free slots to the waiting requests, best priority first (then the order they came in)."""
        while self._waiting:
            level, _, turn = self._waiting[0]
            if turn.done():  # its task was cancelled
                heapq.heappop(self._waiting)
                continue
            if not self._room_for(Priority(level)):
                return
            heapq.heappop(self._waiting)
            self._take()
            turn.set_result(None)

    @contextlib.asynccontextmanager
    async def paused(self) -> AsyncIterator[None]:
        """While a request waits out a "busy" answer, no other request starts."""
        self._pauses += 1
        try:
            yield
        finally:
            self._pauses -= 1
            self._grant()

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """While the user waits for something (a thread opened), background requests wait: none starts."""
        self._holds += 1
        self._unheld.clear()
        try:
            yield
        finally:
            self._holds -= 1
            if not self._holds:
                self._unheld.set()
            self._grant()

    async def unheld(self) -> None:
        """Return once the user waits for nothing (:meth:`held`): where background work that is not a request
        (a sync writing what came) lets the user's go first."""
        await self._unheld.wait()

    # --- what the answers say ------------------------------------------------------------------------------------

    def answered(self, status: int, ticket: Ticket) -> None:
        """Count an answer: a "busy" one halves the number allowed; a quick one lets it grow, a slow one cuts it."""
        if status in BUSY_STATUSES:
            self.busy_answers += 1
            self._cut(ticket, 0.5, f"backing off: the service is busy ({status})")
        elif self._slower(self._clock() - ticket.sent, ticket):
            self._cut(ticket, RISE_CUT, "easing off: answers are slowing")
        elif self._full_at >= ticket.sent and ticket.cuts == self._cuts:  # (only a full throttle learns more)
            step = 1.0 if self.growing_fast else 1 / self.allowed
            self.allowed = min(float(self.bound), self.allowed + step)
            at_most = self.allowed >= self.bound
            self.why = f"at the most allowed ({self.bound})" if at_most else "growing: answers are quick"
        self._grant()

    def timed_out(self, ticket: Ticket) -> None:
        self._cut(ticket, 0.5, "backing off: a request timed out")
        self._grant()

    def _cut(self, ticket: Ticket, factor: float, why: str) -> None:
        if ticket.cuts < self._cuts:
            return  # sent before the last cut: its answer tells nothing that cut did not act on
        self._cuts += 1
        self.growing_fast = False
        self.allowed = max(1.0, self.allowed * factor)
        self.why = why
        self._recent, self._since_cut = None, 0

    def _slower(self, latency: float, ticket: Ticket) -> bool:
        """Learn an answer's latency; whether the answers to requests sent since the last cut come markedly
        slower than the quickest seen lately."""
        now = self._clock()
        if now - self._span_began > MEMORY:
            self._quickest, self._span_began = (math.inf, self._quickest[0]), now
        self._quickest = (min(self._quickest[0], latency), self._quickest[1])
        if ticket.cuts < self._cuts:
            return False  # queued before the last cut: it says nothing of the number allowed since
        self._recent = latency if self._recent is None else self._recent + SMOOTHING * (latency - self._recent)
        self._since_cut += 1
        if self._since_cut < max(4, int(self.allowed) // 2):
            return False  # too few answers since the last cut to judge by
        return self._recent > TOLERANCE * min(self._quickest) + SLACK
