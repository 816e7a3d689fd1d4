"""Requests in flight: within the bound, more while answers are quick, fewer after the service says it is busy or
slows down, none started during a busy wait; the user's requests first."""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta

import httpx
import pytest

from pigeon.api import PigeonClient
from pigeon.api.throttle import START, BusyWait, Throttle

THREAD = "7d0c4a5e-8d3b-4a53-9d55-1f6d2e0b9a11"


class Service:
    """A fake service that holds each request until released, counting those in flight; it can answer 429."""

    def __init__(self) -> None:
        self.in_flight = 0
        self.most = 0
        self.started: list[tuple[int, bool]] = []  # (in flight when it started, whether a wait was under way)
        self.asked: list[str] = []  # the thread of each request, in the order they reached the service
        self.busy_next = 0
        self.waiting = False
        self.release = asyncio.Event()
        self.changed = asyncio.Condition()

    async def until(self, condition: Callable[[], bool]) -> None:
        async with self.changed:
            await self.changed.wait_for(condition)

    async def tell(self) -> None:
        async with self.changed:
            self.changed.notify_all()

    async def handle(self, request: httpx.Request) -> httpx.Response:
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        self.started.append((self.in_flight, self.waiting))
        self.asked.append(request.url.params["thread_id"])
        await self.tell()
        try:
            await self.release.wait()
            if self.busy_next:
                self.busy_next -= 1
                return httpx.Response(429, headers={"Retry-After": "1"}, json={"title": "Too Many Requests"})
            return httpx.Response(200, json={"messages": [], "next_page_token": ""})
        finally:
            self.in_flight -= 1


async def settle() -> None:
    """Let every task that can run, run (a request that could start would reach the service)."""
    for _ in range(50):
        await asyncio.sleep(0)


def client_for(service: Service, sleep: Callable[[float], Awaitable[None]], max_in_flight: int = 4) -> PigeonClient:
    http = httpx.AsyncClient(transport=httpx.MockTransport(service.handle))
    return PigeonClient("http://s.test", "t", http_client=http, max_in_flight=max_in_flight, sleep=sleep)


async def no_wait(_seconds: float) -> None:
    return None


async def test_requests_in_flight_stay_within_the_bound() -> None:
    service = Service()

    async def no_wait(_seconds: float) -> None:
        return None

    async with client_for(service, no_wait) as client:
        asks = [asyncio.create_task(client.messages.list(THREAD)) for _ in range(20)]
        await service.until(lambda: service.in_flight == 4)  # the first four reach the service; the rest wait
        await settle()
        assert service.in_flight == 4
        service.release.set()
        await asyncio.gather(*asks)
    assert service.most == 4
    assert client.throttle.in_flight == 0


async def test_a_busy_answer_halves_the_requests_in_flight_and_holds_new_ones_during_its_wait() -> None:
    service = Service()
    waited: list[float] = []
    resume = asyncio.Event()

    async def held_wait(seconds: float) -> None:  # the Retry-After wait, held until the test lets it end
        waited.append(seconds)
        service.waiting = True
        await service.tell()
        await resume.wait()
        service.waiting = False

    async with client_for(service, held_wait) as client:
        service.busy_next = 1
        service.release.set()
        first = asyncio.create_task(client.messages.list(THREAD))
        await service.until(lambda: bool(waited))
        assert waited == [1.0]  # the service's Retry-After
        assert client.throttle.allowed == 2  # 4 halved
        others = [asyncio.create_task(client.messages.list(THREAD)) for _ in range(6)]
        await settle()
        assert len(service.started) == 1  # nothing started while the busy answer's wait was under way
        service.release.clear()
        resume.set()
        await service.until(lambda: service.in_flight == 2)
        await settle()
        assert service.in_flight == 2  # half the bound once the wait is over
        service.release.set()
        await asyncio.gather(first, *others)
    assert not any(during_wait for _, during_wait in service.started)
    assert client.throttle.busy_answers == 1


USER, LISTED, SYNCED = (f"7d0c4a5e-8d3b-4a53-9d55-1f6d2e0b9a{n}" for n in (21, 22, 23))


async def test_the_users_request_goes_first_even_with_every_slot_taken_and_lists_go_before_a_syncs_fetches() -> None:
    service = Service()
    async with client_for(service, no_wait, max_in_flight=2) as client:
        with client.background():  # a sync's fetches: two in flight, five waiting
            fetches = [asyncio.create_task(client.messages.list(SYNCED)) for _ in range(7)]
        await service.until(lambda: service.in_flight == 2)
        listing = asyncio.create_task(client.messages.list(LISTED))  # (not marked: as a list's next page)
        await settle()
        assert service.asked == [SYNCED, SYNCED]
        with client.for_the_user():
            opening = asyncio.create_task(client.messages.list(USER))
        await service.until(lambda: service.in_flight == 3)  # at once, above the number allowed
        assert service.asked == [SYNCED, SYNCED, USER]
        service.release.set()
        await asyncio.gather(opening, listing, *fetches)
    assert service.asked == [SYNCED, SYNCED, USER, LISTED, *[SYNCED] * 5]
    assert service.most == 3


async def test_while_the_user_waits_no_background_request_starts_and_the_writer_waits_too() -> None:
    service = Service()
    async with client_for(service, no_wait, max_in_flight=4) as client:
        with client.throttle.held():  # the user opened a thread
            with client.background():  # a sync's fetches, with free slots
                fetches = [asyncio.create_task(client.messages.list(SYNCED)) for _ in range(3)]
            listing = asyncio.create_task(client.messages.list(LISTED))
            unheld = asyncio.create_task(client.throttle.unheld())
            await settle()
            assert service.asked == [LISTED]  # the list went; the fetches wait
            assert not unheld.done()
        await asyncio.wait_for(service.until(lambda: service.in_flight == 4), 10)  # the wait over: the fetches go
        assert service.asked == [LISTED, SYNCED, SYNCED, SYNCED]
        await unheld
        service.release.set()
        await asyncio.gather(listing, *fetches)


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def answer_round(throttle: Throttle, clock: Clock, status: int, latency: float) -> int:
    """Send as many requests as allowed (the slots full), then answer them all after ``latency``; how many went."""
    tickets = []
    count = int(throttle.allowed)
    for _ in range(count):
        throttle.in_flight += 1  # (what ``slot`` counts; sent here without an event loop)
        tickets.append(throttle.sent())
    clock.now += latency
    for ticket in tickets:
        throttle.in_flight -= 1
        throttle.answered(status, ticket)
    return count


def test_quick_answers_double_the_requests_allowed_each_round_then_stop_at_the_bound() -> None:
    clock = Clock()
    throttle = Throttle(128, clock=clock)
    sizes = [answer_round(throttle, clock, 200, 0.08) for _ in range(5)]
    assert sizes == [16, 32, 64, 128, 128]  # slow start, up to the ceiling and no further
    assert throttle.why == "at the most allowed (128)"


def test_answers_to_a_half_empty_throttle_do_not_grow_it() -> None:
    clock = Clock()
    throttle = Throttle(128, clock=clock)
    for _ in range(50):  # one request at a time: nothing says more would be carried
        throttle.in_flight = 1
        ticket = throttle.sent()
        clock.now += 0.08
        throttle.in_flight = 0
        throttle.answered(200, ticket)
    assert throttle.allowed == 16


def test_a_busy_service_halves_the_requests_allowed_once_a_round_and_they_grow_back_one_a_round() -> None:
    clock = Clock()
    throttle = Throttle(64, clock=clock)
    answer_round(throttle, clock, 200, 0.08)
    answer_round(throttle, clock, 200, 0.08)
    assert throttle.allowed == 64
    answer_round(throttle, clock, 429, 0.08)  # 64 busy answers, to requests sent together
    assert throttle.allowed == 32  # halved once, not 64 times
    assert throttle.busy_answers == 64
    assert throttle.why == "backing off: the service is busy (429)"
    answer_round(throttle, clock, 503, 0.08)  # still busy after the cut: halved again
    assert throttle.allowed == 16
    for _ in range(4):
        answer_round(throttle, clock, 200, 0.08)
    assert throttle.allowed == pytest.approx(20, abs=0.3)  # after a cut: one more a round (additive increase)
    for _ in range(20):
        answer_round(throttle, clock, 429, 0.08)
    assert throttle.allowed == 1  # never below one


def test_rising_latency_cuts_the_requests_allowed_by_a_fifth() -> None:
    clock = Clock()
    throttle = Throttle(256, clock=clock)
    answer_round(throttle, clock, 200, 0.08)  # 16 quick answers: the quickest is 80 ms
    answer_round(throttle, clock, 200, 0.09)
    assert throttle.allowed == 64
    answer_round(throttle, clock, 200, 0.4)  # five times slower: queued somewhere
    assert 64 * 0.8 <= throttle.allowed < 64  # cut by a fifth, once (the first two or three answers still grew it)
    assert throttle.why == "easing off: answers are slowing"
    assert not throttle.growing_fast


def test_a_few_milliseconds_more_on_a_quick_link_are_not_a_rising_latency() -> None:
    clock = Clock()
    throttle = Throttle(128, clock=clock)
    answer_round(throttle, clock, 200, 0.002)
    sizes = [answer_round(throttle, clock, 200, 0.015) for _ in range(3)]  # 7x slower, but 15 ms
    assert sizes == [32, 64, 128]


def test_a_timeout_halves_the_requests_allowed() -> None:
    clock = Clock()
    throttle = Throttle(64, clock=clock)
    answer_round(throttle, clock, 200, 0.08)
    ticket = throttle.sent()
    throttle.timed_out(ticket)
    assert throttle.allowed == 16
    assert throttle.why == "backing off: a request timed out"


def test_the_quickest_answer_is_forgotten_after_a_while_so_a_slower_link_is_learnt_again() -> None:
    clock = Clock()
    throttle = Throttle(64, clock=clock)
    answer_round(throttle, clock, 200, 0.01)  # a quick link
    clock.now += 70  # later, a link ten times slower
    for _ in range(12):
        answer_round(throttle, clock, 200, 0.3)
        clock.now += 10
    assert throttle.allowed > 8  # cut while the quick answer was remembered, grown back since
    assert throttle.why != "easing off: answers are slowing"


async def test_a_busy_wait_is_told_once_for_the_requests_answered_busy_together() -> None:
    service = Service()
    waited: list[float] = []
    told: list[BusyWait] = []

    async def no_wait(seconds: float) -> None:
        waited.append(seconds)

    async with client_for(service, no_wait) as client:
        client.on_busy = told.append
        service.busy_next = 4
        asks = [asyncio.create_task(client.messages.list(THREAD)) for _ in range(4)]
        await service.until(lambda: service.in_flight == 4)
        before = datetime.now().astimezone()
        service.release.set()
        await asyncio.gather(*asks)
    assert waited == [1.0] * 4  # each request waited out its busy answer ...
    assert len(told) == 1  # ... and the user is told once
    wait = told[0]
    assert (wait.status, wait.seconds) == (429, 1.0)
    assert before + timedelta(seconds=1) <= wait.until <= datetime.now().astimezone() + timedelta(seconds=1)
    assert str(wait) == f"The service is busy (429); waiting 1 s, until {wait.until:%H:%M:%S}…"


async def test_a_client_without_a_hook_waits_in_silence_as_before() -> None:
    service = Service()
    waited: list[float] = []

    async def no_wait(seconds: float) -> None:
        waited.append(seconds)

    async with client_for(service, no_wait) as client:
        service.busy_next = 1
        service.release.set()
        await client.messages.list(THREAD)
    assert waited == [1.0]


class LoadedService:
    """A service on a link with a round trip: it answers later the more requests it holds past its capacity, and
    429 past its limit. Time is the test's clock; :meth:`run` moves it to the next answer once every request that
    could start has reached the service."""

    def __init__(self, clock: Clock, *, capacity: int, limit: int, rtt: float = 0.08) -> None:
        self.clock, self.capacity, self.limit, self.rtt = clock, capacity, limit, rtt
        self.held: list[tuple[float, int, asyncio.Event]] = []
        self.order = 0
        self.busy: list[int] = []  # the number of each request answered 429

    async def handle(self, request: httpx.Request) -> httpx.Response:
        self.order += 1
        if len(self.held) >= self.limit:
            self.busy.append(self.order)
            return httpx.Response(429, headers={"Retry-After": "0"}, json={"title": "Too Many Requests"})
        due = self.clock.now + self.rtt + 0.01 * max(0, len(self.held) + 1 - self.capacity)
        answered = asyncio.Event()
        heapq.heappush(self.held, (due, self.order, answered))
        await answered.wait()
        return httpx.Response(200, json={"messages": [], "next_page_token": ""})

    async def run(self, asks: list[asyncio.Task[object]], throttle: Throttle) -> list[float]:
        """Answer until every ask is done; the number allowed after each answer."""
        allowed: list[float] = []
        while not all(ask.done() for ask in asks):
            await settle()
            if self.held:
                due, _, answered = heapq.heappop(self.held)
                self.clock.now = max(self.clock.now, due)
                answered.set()
                allowed.append(throttle.allowed)
        return allowed


async def test_the_requests_in_flight_grow_to_what_a_service_carries_and_back_off_past_it() -> None:
    clock = Clock()
    service = LoadedService(clock, capacity=24, limit=40)

    async def no_wait(_seconds: float) -> None:
        return None

    transport = httpx.MockTransport(service.handle)
    async with PigeonClient(
        "http://s.test", "t", http_client=httpx.AsyncClient(transport=transport), max_in_flight=128, sleep=no_wait
    ) as client:
        client.throttle = Throttle(128, clock=clock)
        with client.background():
            asks: list[asyncio.Task[object]] = [asyncio.create_task(client.messages.list(THREAD)) for _ in range(1500)]
        allowed = await service.run(asks, client.throttle)
    assert max(allowed) > 2 * START  # grown while answers were quick ...
    assert service.busy  # ... past the limit, early, and backed off
    assert max(service.busy) < 100
    settled = allowed[-1000:]
    assert max(settled) < service.limit  # kept below the limit since, by the latency rising past the capacity
    assert min(settled) >= 0.8 * service.capacity  # and not starved
    assert client.throttle.in_flight == 0
