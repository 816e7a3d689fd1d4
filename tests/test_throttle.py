"""Requests in flight: within the bound, fewer after the service says it is busy, none started during its wait."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta

import httpx

from pigeon.api import PigeonClient
from pigeon.api.throttle import BusyWait, Throttle

THREAD = "7d0c4a5e-8d3b-4a53-9d55-1f6d2e0b9a11"


class Service:
    """A fake service that holds each request until released, counting those in flight; it can answer 429."""

    def __init__(self) -> None:
        self.in_flight = 0
        self.most = 0
        self.started: list[tuple[int, bool]] = []  # (in flight when it started, whether a wait was under way)
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


def client_for(service: Service, sleep: Callable[[float], Awaitable[None]]) -> PigeonClient:
    transport = httpx.MockTransport(service.handle)
    return PigeonClient(
        "http://s.test", "t", http_client=httpx.AsyncClient(transport=transport), max_in_flight=4, sleep=sleep
    )


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


def test_answers_let_the_count_grow_back_to_the_bound_and_no_further() -> None:
    throttle = Throttle(8)
    throttle.answered(429)
    throttle.answered(503)
    assert throttle.allowed == 2
    rounds = 0
    while throttle.allowed < 8:
        throttle.answered(200)
        rounds += 1
    assert 8 < rounds < 100  # about one more for each round of answers, not all at once
    for _ in range(100):
        throttle.answered(200)
    assert throttle.allowed == 8
    for _ in range(10):
        throttle.answered(429)
    assert throttle.allowed == 1  # never below one


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
