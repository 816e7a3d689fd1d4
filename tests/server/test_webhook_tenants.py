"""The deliverer against tenants that hurt it: hanging receivers, a cap on subscriptions, attempts that never end."""

from __future__ import annotations

import asyncio
import contextlib
import json
import queue
import random
import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from pigeon.models import WebhookStatus
from pigeon_service.app import ServerSettings, create_app
from pigeon_service.db import Database
from pigeon_service.demo_mail import populate
from pigeon_service.demo_traffic import live_traffic, new_message
from pigeon_service.run import start_in_thread
from pigeon_service.webhook_rows import MAX_ACTIVE_WEBHOOKS
from pigeon_service.webhooks import Deliverer, DeliveryPolicy


@pytest.fixture
def hanging_url() -> Iterator[str]:
    """A local socket that takes connections (into its backlog) and never answers them."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1024)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"


@pytest.fixture
def answering() -> Iterator[tuple[str, queue.Queue[dict[str, Any]]]]:
    """A receiver that answers 204 at once and hands on every event it gets."""
    events: queue.Queue[dict[str, Any]] = queue.Queue()

    async def receive(request: Request) -> Response:
        events.put(json.loads(await request.body()))
        return Response(status_code=204)

    with start_in_thread(Starlette(routes=[Route("/hook", receive, methods=["POST"])])) as receiver:
        yield f"{receiver.base_url}/hook", events


def accounts(db: Database) -> tuple[dict[str, str], dict[str, str]]:
    made = []
    for name, seed in (("alice", 1), ("bob", 2)):
        account = db.ensure_account(name)
        populate(db, account, threads=3, contacts=8, seed=seed)
        made.append({"id": account, "Authorization": f"Bearer {db.create_token(account)}"})
    return made[0], made[1]


async def subscribe(http: httpx.AsyncClient, account: dict[str, str], url: str) -> httpx.Response:
    auth = {"Authorization": account["Authorization"]}
    return await http.post("/v1/webhooks", json={"url": url, "events": ["message.created"]}, headers=auth)


async def test_many_hanging_receivers_of_one_account_never_delay_another_accounts_deliveries(
    hanging_url: str, answering: tuple[str, queue.Queue[dict[str, Any]]]
) -> None:
    """Alice subscribes 150 receivers that never answer (each attempt may hang 30 s); with live traffic for both,
    Bob's deliveries keep arriving, each within a wait far shorter than one of Alice's attempts."""
    db = Database(":memory:")
    alice, bob = accounts(db)
    settings = ServerSettings(
        allow_loopback_webhooks=True,
        max_webhooks_per_account=150,
        delivery=DeliveryPolicy(timeout=30.0, connect_timeout=30.0, first_delay=1.0),
        background=[live_traffic(0.5, seed=7)],
    )
    bob_url, bob_events = answering
    with start_in_thread(create_app(db, settings), db=db) as service:
        async with httpx.AsyncClient(base_url=service.base_url) as http:
            for n in range(150):
                assert (await subscribe(http, alice, f"{hanging_url}/hook/{n}")).status_code == 201
            assert (await subscribe(http, bob, bob_url)).status_code == 201
        for _ in range(3):
            event = await asyncio.to_thread(bob_events.get, timeout=10)  # bounded: a third of one hanging attempt
            assert event["type"] == "message.created"
        alice_states = db.rows(
            "SELECT d.state FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE w.account_id = ?",
            (alice["id"],),
        )
        assert len(alice_states) >= 150  # Alice's receivers were sent to all along, and answered none
        assert {row["state"] for row in alice_states} == {"pending"}
    db.close()


async def test_an_account_past_its_cap_of_active_subscriptions_is_refused_with_409() -> None:
    db = Database(":memory:")
    alice, bob = accounts(db)
    transport = httpx.ASGITransport(app=create_app(db, ServerSettings(deliver_webhooks=False)))
    async with httpx.AsyncClient(transport=transport, base_url="http://s.test") as http:
        made = [await subscribe(http, alice, f"https://hooks.example/{n}") for n in range(MAX_ACTIVE_WEBHOOKS)]
        assert {response.status_code for response in made} == {201}
        refused = await subscribe(http, alice, "https://hooks.example/one-more")
        assert refused.status_code == 409
        assert refused.headers["content-type"].startswith("application/problem+json")
        problem = refused.json()
        assert problem["status"] == 409
        assert f"{MAX_ACTIVE_WEBHOOKS} active webhook subscriptions" in problem["detail"]
        assert (await subscribe(http, bob, "https://hooks.example/bob")).status_code == 201  # a cap per account
        db.set_webhook_status(made[0].json()["id"], WebhookStatus.FAILED)  # a failed one no longer counts
        assert (await subscribe(http, alice, "https://hooks.example/again")).status_code == 201
        assert (await subscribe(http, alice, "https://hooks.example/past")).status_code == 409
    db.close()


@contextlib.asynccontextmanager
async def deliverer_to(url: str, policy: DeliveryPolicy) -> AsyncIterator[tuple[Database, Deliverer, str]]:
    """A deliverer with a real HTTP client, and one subscription of one account to ``url``."""
    db = Database(":memory:")
    alice, _bob = accounts(db)
    transport = httpx.ASGITransport(
        app=create_app(db, ServerSettings(deliver_webhooks=False, allow_private_webhooks=True))
    )
    async with httpx.AsyncClient(transport=transport, base_url="http://s.test") as http:
        assert (await subscribe(http, alice, url)).status_code == 201
    try:
        yield db, Deliverer(db, policy), alice["id"]
    finally:
        db.close()


async def test_a_failing_subscription_is_backed_off_whole_then_marked_failed(hanging_url: str) -> None:
    policy = DeliveryPolicy(timeout=0.3, connect_timeout=0.3, first_delay=3600.0, max_attempts=2, allow_private=True)
    async with deliverer_to(f"{hanging_url}/hook", policy) as (db, deliverer, account):
        rng = random.Random(4)
        new_message(db, None, account, rng, outbound=False)
        assert await deliverer.deliver_due() == 1
        [hook] = db.rows("SELECT id FROM webhooks WHERE account_id = ?", (account,))
        [first] = db.deliveries(hook["id"])
        assert (first["state"], first["attempts"]) == ("pending", 1)
        assert "no answer within 0.3 s" in first["last_error"]
        # Two more events: the subscription waits for its first delivery's retry, so nothing is tried now.
        new_message(db, None, account, rng, outbound=False)
        new_message(db, None, account, rng, outbound=False)
        assert await deliverer.deliver_due() == 0
        assert [d["attempts"] for d in db.deliveries(hook["id"])] == [1, 0, 0]
        # When the retry is due (asked for an hour ahead), it goes first, fails again, and the subscription fails.
        [retry] = db.due_deliveries("9999-12-31T00:00:00Z")[:1]
        assert retry.id == first["id"]
        assert not await deliverer.attempt(retry)
        subscription = db.get_webhook(hook["id"])
        assert subscription is not None
        assert subscription.status == WebhookStatus.FAILED
        assert db.due_deliveries("9999-12-31T00:00:00Z") == []


async def trickle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Answers a status line, then one header byte at a time, forever."""
    with contextlib.suppress(ConnectionError):
        writer.write(b"HTTP/1.1 200 OK\r\nx-slow: ")
        while True:
            writer.write(b"a")
            await writer.drain()
            await asyncio.sleep(0.05)


async def test_an_attempt_ends_at_its_total_time_even_when_the_receiver_keeps_sending() -> None:
    server = await asyncio.start_server(trickle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    policy = DeliveryPolicy(timeout=0.5, connect_timeout=0.5, first_delay=3600.0, allow_private=True)
    try:
        async with deliverer_to(f"http://127.0.0.1:{port}/hook", policy) as (db, deliverer, account):
            new_message(db, None, account, random.Random(5), outbound=False)
            async with asyncio.timeout(10):  # bounded: without a total time the attempt never ends
                assert await deliverer.deliver_due() == 1
            [delivery] = db.rows("SELECT state, last_error FROM deliveries")
            assert delivery["state"] == "pending"
            assert "no answer within 0.5 s" in delivery["last_error"]
    finally:
        server.close()
