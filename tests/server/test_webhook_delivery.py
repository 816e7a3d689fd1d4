"""Webhook delivery against hostile receivers and DNS: each subscription on its own, the checked address pinned."""

from __future__ import annotations

import asyncio
import random
import socket
from typing import Any

import httpx
import pytest

from pigeon_service.app import ServerSettings
from pigeon_service.demo_traffic import new_message
from pigeon_service.webhooks import Deliverer, DeliveryPolicy
from tests.server.conftest import Account, Service, make_service


async def subscribe(service: Service, account: Account, url: str) -> dict[str, Any]:
    transport = httpx.ASGITransport(app=service.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://s.test") as http:
        response = await http.post(
            "/v1/webhooks", json={"url": url, "events": ["message.created"]}, headers=account.headers
        )
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


async def test_a_hanging_receiver_holds_back_no_other_subscription() -> None:
    service = make_service(ServerSettings(deliver_webhooks=False, allow_private_webhooks=True))
    await subscribe(service, service.alice, "http://hangs.test/in")
    await subscribe(service, service.bob, "http://answers.test/in")
    never = asyncio.Event()
    hanging: list[httpx.Request] = []
    answered: list[httpx.Request] = []
    arrived = asyncio.Condition()

    async def receive(request: httpx.Request) -> httpx.Response:
        if request.url.host == "hangs.test":
            hanging.append(request)
            await never.wait()
        async with arrived:
            answered.append(request)
            arrived.notify_all()
        return httpx.Response(204)

    policy = DeliveryPolicy(first_delay=0.0, timeout=600.0, allow_private=True)
    http = httpx.AsyncClient(transport=httpx.MockTransport(receive))
    deliverer = Deliverer(service.db, policy, http_client=http)
    runner = asyncio.create_task(deliverer.run())
    rng = random.Random(3)

    async def answered_count(n: int) -> None:
        async with arrived:
            await asyncio.wait_for(arrived.wait_for(lambda: len(answered) >= n), 10)

    try:
        await asyncio.sleep(0)
        new_message(service.db, deliverer, service.alice.id, rng, outbound=False)
        new_message(service.db, deliverer, service.bob.id, rng, outbound=False)
        await answered_count(1)
        assert len(hanging) == 1
        # The first receiver still hangs; the other subscription's next delivery goes out all the same.
        new_message(service.db, deliverer, service.bob.id, rng, outbound=False)
        await answered_count(2)
        assert len(hanging) == 1
        assert not never.is_set()
        assert {r.url.host for r in answered} == {"answers.test"}
    finally:
        runner.cancel()
        with pytest.raises(asyncio.CancelledError):
            await runner
        await http.aclose()
        service.db.close()


async def test_a_delivery_connects_to_the_address_it_checked(service: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rebinding DNS answers a public address to the checks, then loopback: only one look-up is made per check,
    and the request goes to the address that was checked, with the name kept for Host and TLS."""
    lookups: list[str] = []

    async def rebinding(host: str, *args: object, **kwargs: object) -> list[Any]:
        lookups.append(host)
        address = "93.184.216.34" if len(lookups) <= 2 else "127.0.0.1"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, 0))]

    monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo", rebinding)
    created = await subscribe(service, service.alice, "https://rebind.example:8443/hook")
    assert lookups == ["rebind.example"]
    received: list[httpx.Request] = []

    def receive(request: httpx.Request) -> httpx.Response:
        received.append(request)
        return httpx.Response(204)

    policy = DeliveryPolicy(first_delay=0.0, allow_private=False)
    deliverer = Deliverer(service.db, policy, http_client=httpx.AsyncClient(transport=httpx.MockTransport(receive)))
    new_message(service.db, deliverer, service.alice.id, random.Random(1), outbound=False)
    assert await deliverer.deliver_due() == 1
    assert lookups == ["rebind.example", "rebind.example"]
    [request] = received
    assert (request.url.host, request.url.port, request.url.path) == ("93.184.216.34", 8443, "/hook")
    assert request.headers["host"] == "rebind.example:8443"
    assert request.extensions["sni_hostname"] == "rebind.example"
    [delivery] = service.db.deliveries(created["id"])
    assert delivery["state"] == "delivered"

    # The third look-up answers loopback: that attempt is refused, nothing is sent.
    new_message(service.db, deliverer, service.alice.id, random.Random(2), outbound=False)
    await deliverer.deliver_due()
    assert len(received) == 1
    assert "refused" in service.db.deliveries(created["id"])[-1]["last_error"]
