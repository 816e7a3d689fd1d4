"""The app on a live reference service with webhooks: a long session never subscribes again, a subscription the
service gave up on is replaced once, and a kept subscription whose port another program holds is said. The
subscription's clock is the test's: each sync is a simulated minute."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from pigeon.config import load_config
from pigeon.core.live import vault_name
from pigeon.models import WebhookStatus
from pigeon.tui.app import PigeonApp, make_app
from pigeon.tui.screens.mail import MainScreen
from pigeon_service.app import ServerSettings, create_app
from pigeon_service.db import Database, iso
from pigeon_service.demo_mail import populate
from pigeon_service.demo_traffic import live_traffic
from pigeon_service.run import ServiceThread, start_in_thread
from pigeon_service.webhooks import DeliveryPolicy
from tests.tui.conftest import SIZE, Notes, frozen_clock, loaded, on_screen, settle

MINUTE = 60.0


@dataclass
class Live:
    service: ServiceThread
    db: Database
    account: str
    token: str

    def statuses(self) -> list[str]:
        rows = self.db.rows("SELECT status FROM webhooks WHERE account_id = ?", (self.account,))
        return sorted(r["status"] for r in rows)


@pytest.fixture
def live() -> Iterator[Live]:
    db = Database(":memory:")
    account = db.ensure_account("demo")
    populate(db, account, threads=15, contacts=15, seed=11)
    still_on_its_way(db, account)
    settings = ServerSettings(
        allow_private_webhooks=True,
        delivery=DeliveryPolicy(first_delay=0.05, max_attempts=3),
        background=[live_traffic(1.0, seed=5)],
    )
    service = start_in_thread(create_app(db, settings), db=db)
    yield Live(service, db, account, db.create_token(account))
    service.stop()
    db.close()


def still_on_its_way(db: Database, account: str) -> None:
    """A sent message never reported delivered (the demo's mail has such): its thread is read again at every sync,
    and no event ever tells of that."""
    thread = db.random_rows("threads", account, 1)[0]
    with db.transaction() as conn:
        db.insert_message(
            conn,
            account,
            {
                "thread_id": thread["id"],
                "inbox_id": thread["inbox_id"],
                "direction": "MESSAGE_DIRECTION_OUTBOUND",
                "status": "MESSAGE_STATUS_SENT",
                "subject": "on its way",
                "created_at": iso(datetime.now(UTC)),
            },
        )


class Minutes:
    """The subscription's clock: a minute later after every sync the app makes; counts them."""

    def __init__(self, app: PigeonApp) -> None:
        self.now = 0.0
        self.syncs = 0
        app.core.live.clock = lambda: self.now
        real = app.core.sync

        async def sync(*args: Any, **kwargs: Any) -> Any:
            try:
                return await real(*args, **kwargs)
            finally:
                self.syncs += 1
                self.now += MINUTE

        app.core.sync = sync  # type: ignore[method-assign]


def live_app(live: Live) -> PigeonApp:
    config = load_config(base_url=live.service.base_url)
    return make_app(
        config,
        token=live.token,
        live=True,
        clock=frozen_clock,
        remember_token=False,
        save_settings=False,
        poll_interval=0.2,  # with webhooks, a check every second besides the syncs deliveries start
    )


async def test_a_long_live_session_subscribes_once_and_never_again(live: Live) -> None:
    app = live_app(live)
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        await loaded(pilot, app)
        screen = on_screen(app, MainScreen)
        await settle(pilot, app, lambda: screen.live_mode == "live")
        minutes = Minutes(app)
        await settle(pilot, app, lambda: minutes.syncs >= 20, within=120)  # twenty simulated minutes of mail
        assert app.core.live.renewed == 0
        assert "subscribed again" not in notes.text
        assert "New mail" in notes.text
        assert screen.live_mode == "live"
    assert live.statuses() == ["active"]


async def test_a_subscription_the_service_gave_up_on_is_replaced_once(live: Live) -> None:
    app = live_app(live)
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        await loaded(pilot, app)
        screen = on_screen(app, MainScreen)
        await settle(pilot, app, lambda: screen.live_mode == "live")
        minutes = Minutes(app)
        [hook] = live.db.rows("SELECT id FROM webhooks WHERE account_id = ?", (live.account,))
        live.db.set_webhook_status(hook["id"], WebhookStatus.FAILED)
        await settle(pilot, app, lambda: "subscribed again" in notes.text, within=120)
        receiver = app.core.live.receiver
        assert receiver is not None
        delivered, replaced_at = receiver.accepted, minutes.syncs
        await settle(
            pilot, app, lambda: minutes.syncs >= replaced_at + 15 and receiver.accepted > delivered, within=120
        )
        assert app.core.live.renewed == 1
        assert notes.text.count("subscribed again") == 1
        assert screen.live_mode == "live"
    assert live.statuses() == ["active", "failed"]


async def test_a_taken_kept_port_is_said_in_one_line_and_mail_is_checked_instead(live: Live) -> None:
    """Another program holds the port the kept subscription delivers to: the app says so once, in one line, checks
    for mail instead, and subscribes nothing new for that program to take the same way."""
    app = live_app(live)
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        kept = {"id": "wh_kept", "port": port, "path": "/pigeon/kept", "secret": "whsec_" + "a" * 44}
        app.core.live.vault.save(vault_name("default", live.service.base_url), json.dumps(kept))
        notes = Notes()
        async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
            await loaded(pilot, app)
            screen = on_screen(app, MainScreen)
            await settle(pilot, app, lambda: "webhook port taken" in screen.live_mode)
            await settle(pilot, app, lambda: "No live updates" in notes.text)
            said = [n.message for n in notes if "No live updates" in n.message]
            assert said == [
                f"No live updates: another program holds port {port} on this machine, where the kept webhook "
                "subscription delivers. Checking for mail every 0.2 s."
            ]
            # (a check every 0.2 s: while one runs, the status says its progress; between two, the mode)
            await settle(pilot, app, lambda: "webhook port taken" in screen.status)
            assert app.core.live.receiver is None
    assert live.statuses() == []
