"""Live updates in the core: one webhook subscription kept per profile across runs, replaced when it went silent,
and how new mail comes, said with its reason."""

from __future__ import annotations

import asyncio
import io
import json
import random
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from pigeon.api import PigeonClient
from pigeon.cli import main
from pigeon.config import load_config
from pigeon.core.live import (
    DELIVERY_MARGIN,
    KeyringVault,
    Live,
    MemoryVault,
    Mode,
    plan,
    vault_name,
)
from pigeon.core.mail import MailCore
from pigeon.models import WebhookStatus
from pigeon.models.events import WebhookEvent
from pigeon.store.mailstore import MailStore
from pigeon.store.sync import sync
from pigeon_service.app import ServerSettings, create_app
from pigeon_service.db import Database
from pigeon_service.demo_mail import populate
from pigeon_service.demo_traffic import live_traffic, new_message
from pigeon_service.run import ServiceThread, start_in_thread
from pigeon_service.webhooks import DeliveryPolicy

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
        self.events: list[WebhookEvent] = []
        self.arrived = asyncio.Event()

    def __call__(self, event: WebhookEvent) -> None:
        self.events.append(event)
        self.arrived.set()

    async def first(self, seconds: float = 15.0) -> WebhookEvent:
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
        assert (await heard.first()).type == "message.created"
        assert second.receiver.accepted == 1
        await second.stop()


async def test_a_taken_kept_port_is_said_and_mail_is_checked_without_a_new_subscription(
    loopback: LoopbackService, caplog: pytest.LogCaptureFixture
) -> None:
    """Another program on the kept subscription's port gets its deliveries: no second subscription for it to take
    the same way; mail is checked this run, the reason is said in a line (``pigeon status`` says the same), and a
    later run with the port free uses the kept subscription again."""
    caplog.set_level("INFO", logger="pigeon.core.live")
    vault = MemoryVault()
    async with PigeonClient(loopback.service.base_url, loopback.token) as client:
        live = Live(vault, NAME)
        await live.start(client, lambda _data: None)
        assert live.receiver is not None
        port = live.receiver.port
        await live.stop()
        kept = vault.kept[NAME]
        with socket.socket() as squatter:
            squatter.bind(("127.0.0.1", port))
            squatter.listen()
            again = Live(vault, NAME)
            mode = await again.start(client, lambda _data: None)
            assert not mode.webhooks
            assert mode.warn
            assert mode.why == (
                f"another program holds port {port} on this machine, where the kept webhook subscription delivers"
            )
            assert mode.status(60) == "checking every 60 s (webhook port taken)"
            assert mode.words(60) == f"a check every 60 s; no webhooks: {mode.why}"
            assert again.receiver is None
            assert [r.getMessage() for r in caplog.records if r.name == "pigeon.core.live"] == [
                f"no webhooks: {mode.why}"
            ]
            assert len(loopback.subscriptions()) == 1  # nothing subscribed anew
            assert vault.kept[NAME] == kept
            said = plan(True, "http://127.0.0.1:8025", vault, NAME)  # what ``pigeon status`` says meanwhile
            assert said.words(60) == mode.words(60)
        assert plan(True, "http://127.0.0.1:8025", vault, NAME).webhooks
        later = Live(vault, NAME)
        mode = await later.start(client, lambda _data: None)
        assert mode.webhooks
        assert "kept" in mode.why
        assert later.receiver is not None
        assert later.receiver.port == port
        await later.stop()
    assert len(loopback.subscriptions()) == 1


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


def test_the_plan_says_why_webhooks_cannot_work(plain_file_keyring: Any) -> None:
    near, vault = "http://127.0.0.1:8025", MemoryVault()
    assert plan(True, near, vault).webhooks
    remote = plan(True, "https://mail.example.com", vault)
    assert not remote.webhooks
    assert "not on this machine" in remote.why
    assert remote.words(60).startswith("a check every 60 s")
    no_keyring = plan(True, near, KeyringVault())  # a keyring that would write plain files keeps no secret
    assert not no_keyring.webhooks
    assert "keyring" in no_keyring.why
    off = plan(False, near, vault)
    assert off.status(30) == "checking every 30 s (live off)"


@pytest.mark.parametrize("token_in_environment", [False, True])
@pytest.mark.parametrize("base_url", ["http://127.0.0.1:8025", "https://mail.example.com"])
async def test_pigeon_status_and_the_app_say_the_same_of_how_mail_comes(
    plain_file_keyring: Any, monkeypatch: pytest.MonkeyPatch, token_in_environment: bool, base_url: str
) -> None:
    """No keyring to keep a subscription in: the app polls, wherever its token came from, and says so as status
    does (the app once went live with a subscription nothing kept when the token came from PIGEON_TOKEN)."""
    if token_in_environment:
        monkeypatch.setenv("PIGEON_TOKEN", "a-token")
    out = io.StringIO()
    # (status runs its own event loop to check the service: off this one)
    assert await asyncio.to_thread(main, ["status", "--json", "--base-url", base_url], out) == 0
    said = json.loads(out.getvalue())["new_mail"]
    # The app as ``pigeon`` makes it: the token kept in the keyring only when it did not come from the environment.
    core = MailCore(
        load_config(base_url=base_url), MailStore(":memory:"), token="a-token", remember_token=not token_in_environment
    )
    try:
        mode = await core.start_live(lambda _data: None)
    finally:
        await core.close()
    assert not mode.webhooks
    assert mode.words(core.poll_interval) == said


def test_an_event_is_read_for_its_ids_only_whole_or_thin() -> None:
    thin = {"id": "msg_1", "thread_id": "thr_1", "status": "MESSAGE_STATUS_RECEIVED"}
    whole = thin | {"subject": "Hello", "content_blocks": [{"sequence": "not a number"}], "recipients": 5}
    for message in (thin, whole):
        event = WebhookEvent.read({"type": "message.created", "data": {"message": message}})
        assert event == WebhookEvent(type="message.created", message_id="msg_1", thread_id="thr_1")
    updated = WebhookEvent.read({"type": "message.updated", "data": {"message": {"thread_id": "thr_1"}}})
    assert updated == WebhookEvent(type="message.updated", message_id="", thread_id="thr_1")
    for message in ({"id": "msg_1"}, {"id": "msg_1", "thread_id": 7}, {"thread_id": ""}, {"thread_id": "t" * 201}):
        event = WebhookEvent.read({"type": "message.created", "data": {"message": message}})
        assert event is not None
        assert event.thread_id == ""  # an event all the same (a delivery came), naming no thread to read again
    assert WebhookEvent.read({"type": "message.created", "data": "thr_1"}) == WebhookEvent(type="message.created")
    for not_an_event in ({"data": {"message": thin}}, {"type": 7, "data": {}}, ["message.created"], "x", None):
        assert WebhookEvent.read(not_an_event) is None


def test_an_event_naming_no_thread_names_none_to_read_again() -> None:
    live = Live(MemoryVault(), "p")
    live.name_thread(WebhookEvent(type="message.created", message_id="msg_1"))
    live.name_thread(WebhookEvent(type="message.created", thread_id="thr_1"))
    assert live.named == {"thr_1"}


def test_pigeon_status_says_when_another_program_holds_the_kept_port() -> None:
    base_url = "http://127.0.0.1:8025"
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        kept = {"id": "wh_kept", "port": port, "path": "/pigeon/kept", "secret": "whsec_" + "a" * 44}
        KeyringVault().save(vault_name("default", base_url), json.dumps(kept))
        out = io.StringIO()
        assert main(["status", "--json", "--base-url", base_url], out) == 0
    said = json.loads(out.getvalue())["new_mail"]
    assert said == (
        f"a check every 60 s; no webhooks: another program holds port {port} on this machine, where the kept "
        "webhook subscription delivers"
    )


# --- telling deliveries that stopped from deliveries that are late ------------------------------------------------

POLL = 60.0  # the simulated seconds between two checks for mail


class Clock:
    """A monotonic clock the test moves on: each check for mail is a simulated minute later."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def busy() -> Iterator[LoopbackService]:
    """A service on loopback with new mail every few hundredths of a second, and its deliveries quick to retry."""
    db = Database(":memory:")
    account = db.ensure_account("me")
    populate(db, account, threads=6, contacts=4, seed=5)
    settings = ServerSettings(
        allow_private_webhooks=True,
        delivery=DeliveryPolicy(first_delay=0.05, max_attempts=3),
        background=[live_traffic(0.03, seed=7)],
    )
    app = create_app(db, settings)
    service = start_in_thread(app, db=db)
    yield LoopbackService(service, db, account, db.create_token(account), app.state.deliverer)
    service.stop()
    db.close()


async def checks(
    live: Live, client: PigeonClient, store: MailStore, clock: Clock, heard: Heard, count: int
) -> list[Mode | None]:
    """``count`` checks for mail, each a simulated minute after the last and after a delivery arrived (the traffic
    goes on meanwhile, so a check also finds mail whose delivery is still on its way); what each check said."""
    said: list[Mode | None] = []
    for _ in range(count):
        heard.arrived.clear()
        async with asyncio.timeout(15):
            await heard.arrived.wait()
        report = await sync(client, store)
        said.append(await live.check(client, report.new_messages))
        clock.now += POLL
    return said


async def test_a_long_live_session_with_working_webhooks_never_subscribes_again(busy: LoopbackService) -> None:
    clock, heard, store = Clock(), Heard(), MailStore(":memory:")
    async with PigeonClient(busy.service.base_url, busy.token) as client:
        await sync(client, store)  # before listening: mail created until the subscription starts is never delivered
        live = Live(MemoryVault(), NAME, clock=clock)
        assert (await live.start(client, heard)).webhooks
        said = await checks(live, client, store, clock, heard, 20)  # twenty simulated minutes
        # A message the service announces with no event at all, while the others are delivered.
        thread = busy.db.random_rows("threads", busy.account, 1)[0]
        with busy.db.transaction() as conn:
            busy.db.insert_message(
                conn,
                busy.account,
                {
                    "thread_id": thread["id"],
                    "inbox_id": thread["inbox_id"],
                    "direction": "MESSAGE_DIRECTION_INBOUND",
                    "status": "MESSAGE_STATUS_RECEIVED",
                    "subject": "no event for this one",
                },
            )
        said += await checks(live, client, store, clock, heard, 10)
        await live.stop()
    store.close()
    assert said == [None] * 30
    assert live.renewed == 0
    assert len(busy.subscriptions()) == 1
    assert len(heard.events) > 30


async def test_a_subscription_that_really_stopped_is_replaced_exactly_once(loopback: LoopbackService) -> None:
    clock, heard, store, rng = Clock(), Heard(), MailStore(":memory:"), random.Random(3)
    async with PigeonClient(loopback.service.base_url, loopback.token) as client:
        await sync(client, store)
        live = Live(MemoryVault(), NAME, clock=clock)
        assert (await live.start(client, heard)).webhooks
        kept = live.vault.load(NAME)
        [hook] = loopback.subscriptions()
        loopback.db.set_webhook_status(hook["id"], WebhookStatus.FAILED)  # the service gives up on it
        said: list[Mode | None] = []
        while not said or said[-1] is None:  # each check finds mail that no delivery tells of
            clock.now += POLL
            new_message(loopback.db, loopback.deliverer, loopback.account, rng, outbound=False)
            report = await sync(client, store)
            said.append(await live.check(client, report.new_messages))
        # Replaced at the first check past the margin after the first unannounced mail: not before (a late delivery
        # is no stop), and not later.
        assert len(said) == int(DELIVERY_MARGIN / POLL) + 1
        renewed = said[-1]
        assert renewed is not None
        assert renewed.webhooks
        assert live.vault.load(NAME) != kept
        for _ in range(10):  # the new subscription delivers
            clock.now += POLL
            heard.arrived.clear()
            new_message(loopback.db, loopback.deliverer, loopback.account, rng, outbound=False)
            async with asyncio.timeout(15):
                await heard.arrived.wait()
            report = await sync(client, store)
            said.append(await live.check(client, report.new_messages))
        await live.stop()
    store.close()
    assert said[-10:] == [None] * 10
    assert live.renewed == 1
    assert sorted(h["status"] for h in loopback.subscriptions()) == ["active", "failed"]


async def test_a_replacement_that_never_delivers_ends_webhooks_instead_of_subscribing_again(
    loopback: LoopbackService,
) -> None:
    clock, store, rng = Clock(), MailStore(":memory:"), random.Random(4)
    async with PigeonClient(loopback.service.base_url, loopback.token) as client:
        await sync(client, store)
        live = Live(MemoryVault(), NAME, clock=clock)
        assert (await live.start(client, lambda _data: None)).webhooks
        modes = []
        for _ in range(3 * int(DELIVERY_MARGIN / POLL) + 3):
            for hook in loopback.subscriptions():  # the service can never deliver to this machine
                loopback.db.set_webhook_status(hook["id"], WebhookStatus.FAILED)
            clock.now += POLL
            new_message(loopback.db, loopback.deliverer, loopback.account, rng, outbound=False)
            report = await sync(client, store)
            mode = await live.check(client, report.new_messages)
            if mode is not None:
                modes.append(mode)
    store.close()
    assert [m.webhooks for m in modes] == [True, False]  # subscribed again once, then checks alone
    assert modes[1].status(60) == "checking every 60 s (webhooks stopped)"
    assert live.receiver is None
    assert len(loopback.subscriptions()) == 2
