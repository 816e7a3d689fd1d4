"""Live updates in the core: one webhook subscription kept per profile across runs, replaced when it went silent,
and how new mail comes, said with its reason."""

from __future__ import annotations

import asyncio
import random
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from pigeon.api import PigeonClient
from pigeon.core.live import Live, MemoryVault, plan
from pigeon.models import WebhookStatus
from pigeon.server.app import ServerSettings, create_app
from pigeon.server.db import Database
from pigeon.server.demo import populate
from pigeon.server.live import new_message
from pigeon.server.run import ServiceThread, start_in_thread
from pigeon.server.webhooks import DeliveryPolicy

NAME = "default webhook http://127.0.0.1"


@dataclass
class LoopbackService:
    service: ServiceThread
    db: Database
    account: str
    token: str
    deliverer: Any

    def subscriptions(self) -> list[Any]:
        return self.db.rows("SELECT id, status FROM webhooks WHERE account_id = ?", (self.account,))


@pytest.fixture
def loopback() -> Iterator[LoopbackService]:
    db = Database(":memory:")
    account = db.ensure_account("me")
    populate(db, account, threads=4, contacts=4, seed=4)
    settings = ServerSettings(allow_private_webhooks=True, delivery=DeliveryPolicy(first_delay=0.05, max_attempts=2))
    app = create_app(db, settings)
    service = start_in_thread(app, db=db)
    yield LoopbackService(service, db, account, db.create_token(account), app.state.deliverer)
    service.stop()
    db.close()


class Heard:
    """The events a receiver handed on, and a way to await the next."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.arrived = asyncio.Event()

    def __call__(self, data: dict[str, Any]) -> None:
        self.events.append(data)
        self.arrived.set()

    async def first(self, seconds: float = 15.0) -> dict[str, Any]:
        async with asyncio.timeout(seconds):
            await self.arrived.wait()
        return self.events[0]


async def test_one_subscription_is_kept_across_runs_and_its_deliveries_reach_the_next_run(
    loopback: LoopbackService,
) -> None:
    vault = MemoryVault()
    heard = Heard()
    async with PigeonClient(loopback.service.base_url, loopback.token) as client:
        first = Live(vault, NAME)
        mode = await first.start(client, heard)
        assert mode.webhooks
        assert "new subscription" in mode.why
        assert first.receiver is not None
        port = first.receiver.port
        await first.stop()
        assert len(loopback.subscriptions()) == 1
        assert loopback.token not in vault.kept[NAME]

        second = Live(vault, NAME)
        mode = await second.start(client, heard)
        assert mode.webhooks
        assert "kept" in mode.why
        assert second.receiver is not None
        assert second.receiver.port == port
        assert len(loopback.subscriptions()) == 1  # nothing new subscribed
        new_message(loopback.db, loopback.deliverer, loopback.account, random.Random(1), outbound=False)
        assert (await heard.first())["type"] == "message.created"
        assert second.receiver.accepted == 1
        await second.stop()


async def test_a_subscription_that_went_silent_is_replaced(loopback: LoopbackService) -> None:
    vault = MemoryVault()
    async with PigeonClient(loopback.service.base_url, loopback.token) as client:
        live = Live(vault, NAME)
        assert (await live.start(client, lambda _data: None)).webhooks
        kept = vault.kept[NAME]
        assert not await live.check(client, [])  # nothing changed: nothing to tell
        [hook] = loopback.subscriptions()
        loopback.db.set_webhook_status(hook["id"], WebhookStatus.FAILED)  # the service gave up while we were away
        assert await live.check(client, ["thread-nobody-announced"])
        assert live.renewed == 1
        assert vault.kept[NAME] != kept
        assert sorted(h["status"] for h in loopback.subscriptions()) == ["active", "failed"]
        await live.stop()


async def test_a_taken_port_means_a_new_subscription(loopback: LoopbackService) -> None:
    vault = MemoryVault()
    async with PigeonClient(loopback.service.base_url, loopback.token) as client:
        live = Live(vault, NAME)
        await live.start(client, lambda _data: None)
        assert live.receiver is not None
        port = live.receiver.port
        await live.stop()
        with socket.socket() as squatter:
            squatter.bind(("127.0.0.1", port))
            squatter.listen()
            again = Live(vault, NAME)
            mode = await again.start(client, lambda _data: None)
            assert mode.webhooks
            assert "new subscription" in mode.why
            assert len(loopback.subscriptions()) == 2
            await again.stop()


async def test_a_refused_subscription_says_why() -> None:
    db = Database(":memory:")
    account = db.ensure_account("me")
    service = start_in_thread(create_app(db, ServerSettings(allow_private_webhooks=False)), db=db)
    try:
        async with PigeonClient(service.base_url, db.create_token(account)) as client:
            mode = await Live(MemoryVault(), NAME).start(client, lambda _data: None)
    finally:
        service.stop()
        db.close()
    assert not mode.webhooks
    assert "refused" in mode.why
    assert mode.status(60) == "checking every 60 s (webhook refused)"


def test_the_plan_says_why_webhooks_cannot_work() -> None:
    assert plan(True, "http://127.0.0.1:8025", can_keep=True) is None
    remote = plan(True, "https://mail.example.com", can_keep=True)
    assert remote is not None
    assert "not on this machine" in remote.why
    assert remote.words(60).startswith("a check every 60 s")
    no_keyring = plan(True, "http://127.0.0.1:8025", can_keep=False)
    assert no_keyring is not None
    assert "keyring" in no_keyring.why
    off = plan(False, "http://127.0.0.1:8025", can_keep=True)
    assert off is not None
    assert off.status(30) == "checking every 30 s (live off)"
