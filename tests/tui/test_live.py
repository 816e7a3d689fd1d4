"""Live updates: the webhook receiver, the app following a --live service, forged deliveries, and polling."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from standardwebhooks.webhooks import Webhook
from textual.content import Content

from pigeon.api.receiver import BadDelivery, WebhookReceiver, verify
from pigeon.config import load_config
from pigeon.core.live import is_loopback
from pigeon.models.events import WebhookEvent
from pigeon.tui.app import make_app
from pigeon.tui.messages import LiveEvent
from pigeon.tui.screens.mail import MainScreen
from pigeon.tui.widgets.reader import Reader
from pigeon_service.app import ServerSettings, create_app
from pigeon_service.db import Database
from pigeon_service.demo_mail import populate
from pigeon_service.demo_traffic import live_traffic
from pigeon_service.run import ServiceThread, start_in_thread
from pigeon_service.webhooks import DeliveryPolicy
from tests.server.conftest import Service, first_thread
from tests.tui.conftest import SIZE, Notes, frozen_clock, loaded, on_screen, pigeon_for, settle, stored_threads

SECRET = "whsec_" + base64.b64encode(b"s" * 32).decode()
EVENT = {
    "id": "evt_1",
    "type": "message.created",
    "created_at": "2026-01-01T00:00:00Z",
    "data": {"message": {"id": "m"}},
}


def live_event(data: dict[str, Any]) -> LiveEvent:
    """The message the app gets for a delivered event ``data`` (as the wire has it)."""
    return LiveEvent(WebhookEvent.model_validate(data))


def signed(payload: object, *, secret: str = SECRET, at: datetime | None = None) -> tuple[bytes, dict[str, str]]:
    body = json.dumps(payload)
    moment = at or datetime.now(UTC)
    headers = {
        "webhook-id": "msg_1",
        "webhook-timestamp": str(int(moment.timestamp())),
        "webhook-signature": Webhook(secret).sign("msg_1", moment, body),
        "content-type": "application/json",
    }
    return body.encode(), headers


# --- the receiver ---------------------------------------------------------------------------------------------


def test_verify_accepts_only_fresh_deliveries_signed_with_the_secret() -> None:
    body, headers = signed(EVENT)
    assert verify(SECRET, body, headers).type == "message.created"
    other = "whsec_" + base64.b64encode(b"o" * 32).decode()
    for bad_body, bad_headers in (
        signed(EVENT, secret=other),
        signed(EVENT, at=datetime.now(UTC) - timedelta(minutes=10)),
        (body + b" ", headers),
        (body, headers | {"webhook-signature": "garbage-without-comma"}),
        (body, {k: v for k, v in headers.items() if k != "webhook-signature"}),
        signed(["not", "an", "event"]),
    ):
        with pytest.raises(BadDelivery):
            verify(SECRET, bad_body, bad_headers)


async def test_the_receiver_hands_on_verified_events_and_refuses_the_rest() -> None:
    received: list[WebhookEvent] = []
    receiver = WebhookReceiver(received.append)
    await receiver.start()
    receiver.secret = SECRET
    try:
        async with httpx.AsyncClient() as http:
            body, headers = signed(EVENT)
            assert (await http.post(receiver.url, content=body, headers=headers)).status_code == 204
            forged, forged_headers = signed(EVENT, secret="whsec_" + base64.b64encode(b"x" * 32).decode())
            assert (await http.post(receiver.url, content=forged, headers=forged_headers)).status_code == 401
            stale, stale_headers = signed(EVENT, at=datetime.now(UTC) - timedelta(hours=1))
            assert (await http.post(receiver.url, content=stale, headers=stale_headers)).status_code == 401
            base = receiver.url.rsplit("/", 1)[0]
            assert (await http.post(base + "/guess", content=body, headers=headers)).status_code == 404
            assert (await http.get(receiver.url)).status_code == 405
            huge = b"x" * (1024 * 1024 + 10)
            assert (await http.post(receiver.url, content=huge, headers=headers)).status_code == 413
    finally:
        await receiver.stop()
    assert received == [WebhookEvent.model_validate(EVENT)]
    assert (receiver.accepted, receiver.rejected) == (1, 2)
    assert receiver.url.startswith("http://127.0.0.1:")


# --- the app following a live service --------------------------------------------------------------------------


@pytest.fixture
def live_service() -> Iterator[tuple[ServiceThread, str]]:
    db = Database(":memory:")
    account = db.ensure_account("demo")
    populate(db, account, threads=15, contacts=15, seed=9)
    token = db.create_token(account)
    settings = ServerSettings(
        allow_private_webhooks=True,
        delivery=DeliveryPolicy(first_delay=0.05, max_attempts=3),
        background=[live_traffic(0.3, seed=2)],
    )
    service = start_in_thread(create_app(db, settings), db=db)
    yield service, token
    service.stop()
    db.close()


async def test_new_mail_from_a_live_service_appears_with_a_notification(
    live_service: tuple[ServiceThread, str],
) -> None:
    service, token = live_service
    config = load_config(base_url=service.base_url)
    app = make_app(config, token=token, live=True, clock=frozen_clock, remember_token=False, save_settings=False)
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        await loaded(pilot, app)
        screen = on_screen(app, MainScreen)
        await settle(pilot, app, lambda: screen.live_mode == "live")
        before = sum(t.message_count for t in stored_threads(app))
        await settle(pilot, app, lambda: sum(t.message_count for t in stored_threads(app)) > before, within=60)
        await settle(pilot, app, lambda: "New mail" in notes.text, within=60)
        assert "live" in screen.status
        receiver = app.core.live.receiver
        assert receiver is not None
        assert receiver.accepted > 0
        assert receiver.rejected == 0


async def test_a_forged_or_stale_delivery_changes_nothing(service: Service) -> None:
    app = pigeon_for(service, live=True)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await settle(pilot, app)  # the first sync done, so only a delivery let through could change the store
        screen = on_screen(app, MainScreen)
        # The in-process service is not on loopback, so the app polls; start a receiver to attack directly.
        handed_on: list[WebhookEvent] = []

        def hand_on(webhook: WebhookEvent) -> None:
            handed_on.append(webhook)
            screen.post_message(LiveEvent(webhook))

        receiver = WebhookReceiver(hand_on)
        await receiver.start()
        receiver.secret = SECRET
        threads_before = stored_threads(app)
        # New mail waits at the service: a delivery let through would start the sync that stores it.
        target = threads_before[0].id
        arrived = service.add_message(service.alice, target, subject="x")
        created = {**EVENT, "data": {"message": {"id": arrived, "thread_id": target, "subject": "x"}}}
        try:
            async with httpx.AsyncClient() as http:
                forged, headers = signed(created, secret="whsec_" + base64.b64encode(b"f" * 32).decode())
                assert (await http.post(receiver.url, content=forged, headers=headers)).status_code == 401
                stale, headers = signed(created, at=datetime.now(UTC) - timedelta(minutes=30))
                assert (await http.post(receiver.url, content=stale, headers=headers)).status_code == 401
        finally:
            await receiver.stop()
        await settle(pilot, app)
        assert handed_on == []
        assert stored_threads(app) == threads_before


@pytest.mark.parametrize("shape", ["thin", "whole"])
async def test_a_status_event_whole_or_thin_shows_the_changed_message_after_its_sync(
    service: Service, shape: str
) -> None:
    """An event is a reason to sync, never the mail itself: the thread it names is read again (a status change
    moves neither its count nor its last time), and the open reader shows the message as the service has it."""
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await pilot.press("enter")
        reader = app.screen.query_one(Reader)
        await settle(pilot, app, lambda: app.focused is reader and bool(reader.messages))
        target = reader.messages[-1]
        assert target.id
        assert target.thread_id
        with service.db.transaction() as conn:  # the message turns out to be one of ours that could not be sent
            conn.execute(
                "UPDATE messages SET direction = 'MESSAGE_DIRECTION_OUTBOUND', status = 'MESSAGE_STATUS_FAILED' "
                "WHERE id = ?",
                (target.id,),
            )
        changed = service.db.get_message(service.alice.id, target.id)
        assert changed is not None
        whole = changed.model_dump(mode="json", exclude_none=True)
        thin = {key: whole[key] for key in ("id", "thread_id", "inbox_id", "direction", "status", "created_at")}
        syncs = Syncs(app)
        screen = on_screen(app, MainScreen)
        screen.post_message(
            live_event({"type": "message.failed", "data": {"message": whole if shape == "whole" else thin}})
        )
        await settle(pilot, app, lambda: "[FAILED]" in reader.text)
        assert syncs.ended >= 1
        stored = app.core.store.messages(target.thread_id)
        assert [m.status for m in stored if m.id == target.id] == ["MESSAGE_STATUS_FAILED"]


async def test_an_event_about_a_message_the_service_does_not_hold_changes_nothing(service: Service) -> None:
    """What an event says of a message is never shown: only what the sync it starts finds at the service."""
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await pilot.press("enter")
        reader = app.screen.query_one(Reader)
        await settle(pilot, app, lambda: app.focused is reader and bool(reader.messages))
        target = reader.messages[-1]
        claimed = target.model_copy(
            update={"direction": "MESSAGE_DIRECTION_OUTBOUND", "status": "MESSAGE_STATUS_FAILED"}
        )
        syncs = Syncs(app)
        screen = on_screen(app, MainScreen)
        screen.post_message(
            live_event({"type": "message.failed", "data": {"message": claimed.model_dump(mode="json")}})
        )
        await settle(pilot, app, lambda: syncs.ended >= 1)
        assert "[FAILED]" not in reader.text
        assert [m.status for m in reader.messages if m.id == target.id] == [target.status]


async def test_mail_is_checked_by_default_when_the_service_cannot_reach_pigeon(service: Service) -> None:
    app = pigeon_for(service, poll_interval=0.2)  # the profile's defaults: nothing about live updates configured
    async with app.run_test(size=SIZE) as pilot:
        threads = await loaded(pilot, app)
        screen = on_screen(app, MainScreen)
        await settle(pilot, app, lambda: screen.live_mode.startswith("checking every"))
        assert "checking every" in screen.status
        newest = stored_threads(app)[-1]
        service.add_message(service.alice, newest.id or "", subject="arrived while polling")
        await settle(pilot, app, lambda: threads.source.row(0).id == newest.id, within=60)


def test_webhooks_are_used_only_for_a_service_on_this_machine() -> None:
    assert is_loopback("http://127.0.0.1:8025")
    assert is_loopback("http://localhost:8025")
    assert not is_loopback("https://mail.example.com")
    assert not is_loopback("http://service.test")


async def test_a_replayed_delivery_is_acknowledged_but_never_handled_twice() -> None:
    received: list[WebhookEvent] = []
    receiver = WebhookReceiver(received.append)
    await receiver.start()
    receiver.secret = SECRET
    try:
        async with httpx.AsyncClient() as http:
            body, headers = signed(EVENT)  # one delivery, fresh and rightly signed...
            for _ in range(3):  # ...sent three times by someone who captured it
                assert (await http.post(receiver.url, content=body, headers=headers)).status_code == 204
    finally:
        await receiver.stop()
    assert received == [WebhookEvent.model_validate(EVENT)]
    assert (receiver.accepted, receiver.replayed) == (1, 2)


async def test_checks_wait_longer_while_the_service_fails_and_recover_after(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pigeon.api import ConnectionFailed

    app = pigeon_for(service, poll_interval=0.2)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        screen = on_screen(app, MainScreen)
        await settle(pilot, app, lambda: screen.live_mode.startswith("checking every"))
        real_sync = app.core.sync

        async def failing(*args: Any, **kwargs: Any) -> Any:
            raise ConnectionFailed("the network is down")

        monkeypatch.setattr(app.core, "sync", failing)
        await settle(pilot, app, lambda: screen.check_delay >= 0.8, within=30)  # 0.2 -> 0.4 -> 0.8
        assert screen.offline
        monkeypatch.setattr(app.core, "sync", real_sync)
        await settle(pilot, app, lambda: screen.check_delay == 0.2 and not screen.offline, within=30)


async def test_a_delivered_status_reaches_an_open_reader_by_the_regular_check(service: Service) -> None:
    """No webhooks here: the check for mail reads again every thread with a message still on its way."""
    thread_id = first_thread(service, service.alice)
    message_id = service.add_message(
        service.alice,
        thread_id,
        direction="MESSAGE_DIRECTION_OUTBOUND",
        status="MESSAGE_STATUS_PENDING",
    )
    app = pigeon_for(service, poll_interval=0.2)
    async with app.run_test(size=SIZE) as pilot:
        threads = await loaded(pilot, app)
        threads.cursor = next(i for i in range(len(threads.source)) if threads.source.row(i).id == thread_id)
        await pilot.press("enter")
        reader = app.screen.query_one(Reader)

        def shown() -> str:
            return next((str(m.status) for m in reader.messages if m.id == message_id), "")

        await settle(pilot, app, lambda: shown() == "MESSAGE_STATUS_PENDING")
        assert "[sending…]" in reader.text
        assert service.db.set_message_status(service.alice.id, message_id, "MESSAGE_STATUS_SENT") is not None
        await settle(pilot, app, lambda: shown() == "MESSAGE_STATUS_SENT", within=30)
        service.db.set_message_status(service.alice.id, message_id, "MESSAGE_STATUS_DELIVERED")
        await settle(pilot, app, lambda: shown() == "MESSAGE_STATUS_DELIVERED", within=30)
        assert "[sending…]" not in reader.text
        stored = app.core.store.messages(thread_id)
        assert [m.status for m in stored if m.id == message_id] == ["MESSAGE_STATUS_DELIVERED"]


def arrive(service: Service, app: Any, count: int, *, sender: str = "news@example.com") -> list[dict[str, Any]]:
    """New mail at the service, in threads the app has stored: its ``message.created`` events."""
    events = []
    for number, thread in enumerate(stored_threads(app)[:count]):
        message_id = service.add_message(
            service.alice, thread.id or "", subject=f"arrival {number}", sender_address=sender
        )
        message = service.db.get_message(service.alice.id, message_id)
        assert message is not None
        events.append({"type": "message.created", "data": {"message": message.model_dump(mode="json")}})
    assert len(events) == count
    return events


class Syncs:
    """Counts the app's syncs that ended (so a test can await the one an event started)."""

    def __init__(self, app: Any) -> None:
        self.ended = 0
        real = app.core.sync

        async def counted(*args: Any, **kwargs: Any) -> Any:
            try:
                return await real(*args, **kwargs)
            finally:
                self.ended += 1

        app.core.sync = counted


async def test_new_mail_arriving_together_makes_one_note_held_while_a_dialog_is_open(service: Service) -> None:
    from pigeon.tui.screens.modals import ConfirmScreen

    app = pigeon_for(service)
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        await loaded(pilot, app)
        screen = on_screen(app, MainScreen)
        for data in arrive(service, app, 3, sender="ann@example.com"):
            screen.post_message(live_event(data))
        await settle(pilot, app, lambda: "New mail" in notes.text)
        assert [n.message for n in notes if n.title == "New mail"] == ["3 new messages, from ann@example.com"]
        notes.clear()

        app.push_screen(ConfirmScreen(Content("Really?")))
        await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
        syncs = Syncs(app)
        for data in arrive(service, app, 2):
            screen.post_message(live_event(data))
        await settle(
            pilot, app, lambda: syncs.ended >= 1 and not screen.live.note_due and bool(screen.live.unannounced)
        )
        assert "New mail" not in notes.text  # the moment for the note has passed: held, since a question is open
        await pilot.press("n")
        await settle(pilot, app, lambda: "New mail" in notes.text)
        assert "2 new messages" in notes.text


async def test_new_mail_told_by_thin_events_is_synced_listed_and_announced(service: Service) -> None:
    """The reference service's events name a message and carry none of it: the sync they start brings the mail."""
    app = pigeon_for(service)
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        threads = await loaded(pilot, app)
        screen = on_screen(app, MainScreen)
        named = [event["data"]["message"] for event in arrive(service, app, 2, sender="thin@example.com")]
        for message in named:
            thin = {key: message[key] for key in ("id", "thread_id", "inbox_id", "direction", "status", "created_at")}
            screen.post_message(live_event({"type": "message.created", "data": {"message": thin}}))
        await settle(pilot, app, lambda: "New mail" in notes.text)
        assert [n.message for n in notes if n.title == "New mail"] == ["2 new messages, from thin@example.com"]
        for message in named:
            assert message["id"] in {m.id for m in app.core.store.messages(message["thread_id"])}
        assert threads.source.row(0).id in {message["thread_id"] for message in named}


async def test_a_delivery_signed_again_and_again_makes_one_note_of_one_message(service: Service) -> None:
    app = pigeon_for(service)
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        await loaded(pilot, app)
        screen = on_screen(app, MainScreen)
        [event] = arrive(service, app, 1, sender="once@example.com")
        for _ in range(5):  # the same event, delivered five times (each a fresh signature: not a replay)
            screen.post_message(live_event(dict(event)))
        await settle(pilot, app, lambda: "New mail" in notes.text)
        syncs = Syncs(app)
        for _ in range(5):  # and again, after its mail is stored
            screen.post_message(live_event(dict(event)))
        await settle(pilot, app, lambda: syncs.ended >= 1 and not screen.live.note_due)
        assert [n.message for n in notes if n.title == "New mail"] == ["once@example.com: arrival 0"]


async def test_a_delivery_about_mail_the_sync_does_not_store_makes_no_note(service: Service) -> None:
    app = pigeon_for(service)
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        await loaded(pilot, app)
        screen = on_screen(app, MainScreen)
        bobs_thread = service.db.list_threads(service.bob.id, page_size=1, page_token=None)[0][0]
        bobs = service.db.get_message(service.bob.id, service.add_message(service.bob, bobs_thread.id or ""))
        assert bobs is not None
        syncs = Syncs(app)
        screen.post_message(live_event({"type": "message.created", "data": {"message": bobs.model_dump(mode="json")}}))
        await settle(pilot, app, lambda: syncs.ended >= 1)
        assert bobs_thread.id not in {t.id for t in stored_threads(app)}
        assert not screen.live.unannounced
        assert not screen.live.note_due  # no note is on its way
        assert "New mail" not in notes.text


async def test_new_mail_notes_can_be_turned_off(service: Service, isolated_environment: Path) -> None:
    path = isolated_environment / "config" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("[ui]\nnotify_new_mail = false\n")
    app = pigeon_for(service, config=load_config(base_url="http://service.test"))
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        await loaded(pilot, app)
        screen = on_screen(app, MainScreen)
        syncs = Syncs(app)
        events = arrive(service, app, 2)
        for data in events:
            screen.post_message(live_event(data))
        await settle(pilot, app, lambda: syncs.ended >= 1)
        message = events[0]["data"]["message"]
        assert message["id"] in {m.id for m in app.core.store.messages(message["thread_id"])}  # stored, unannounced
        assert not screen.live.unannounced
        assert not screen.live.note_due
        assert "New mail" not in notes.text
