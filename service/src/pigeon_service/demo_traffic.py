"""Live traffic for the demo: a new message in a random thread every few seconds, with its events; in its first
ticks, every other one brings a thread from a first-time sender instead (:mod:`.demo_newcomers`).

Inbound messages arrive ``MESSAGE_STATUS_RECEIVED`` and emit ``message.created``. Outbound ones start
``MESSAGE_STATUS_PENDING`` (``message.created``), become ``SENT`` a moment later (``message.sent`` and
``message.updated``), then ``DELIVERED`` or, now and then, ``FAILED`` (``message.delivered`` or ``message.failed``,
and ``message.updated``). Most delivered ones are then read by their first recipient: the thread's participant gets
a ``last_read_at``, and the message a ``message.updated`` (the spec has no thread event).
"""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
from collections.abc import Callable, Coroutine
from datetime import UTC, datetime
from typing import Any

from pigeon.models import ContentType, EventKind, Message, MessageDirection, MessageStatus, RecipientType
from pigeon_service.db import Database, iso
from pigeon_service.demo_conversation import message_id_metadata
from pigeon_service.demo_newcomers import NEWCOMERS, newcomer_thread
from pigeon_service.rows import new_id
from pigeon_service.webhooks import Deliverer, emit

LINES = [
    "Just checking in on this. Any news?",
    "Thanks, that works for me.",
    "Can we move this to tomorrow afternoon?",
    "I've added my comments to the doc.",
    "Great news, the client signed!",
    "Looping in the rest of the team.",
    "Quick heads-up: the numbers changed slightly, see the attached summary.",
    "Sounds good. Let's ship it.",
]

Job = Callable[[Database, Deliverer], Coroutine[Any, Any, None]]
CANDIDATES = 8  # random threads looked at for a conversation to add a message to


def _address(db: Database, account_id: str, contact_id: str | None) -> str | None:
    contact = db.get_contact(account_id, contact_id) if contact_id else None
    if contact and contact.emails:
        return contact.emails[0].email
    return None


def _conversation(db: Database, account_id: str) -> sqlite3.Row | None:
    """A random thread that people write in, where the account has one: not a newsletter's nor a stranger's (their
    messages name no contact), which nobody answers."""
    threads = db.random_rows("threads", account_id, CANDIDATES)
    for thread in threads:
        last = db.last_message(thread["id"])
        if last is not None and (last["sender_contact_id"] or last["direction"] == MessageDirection.OUTBOUND.value):
            return thread
    return threads[0] if threads else None


def new_message(
    db: Database, deliverer: Deliverer | None, account_id: str, rng: random.Random, *, outbound: bool | None = None
) -> Message | None:
    """Add one message to a random conversation of the account and emit ``message.created``; ``None`` if no
    threads."""
    thread = _conversation(db, account_id)
    if thread is None:
        return None
    participants = json.loads(thread["participants"])
    owner = next((p["contact_id"] for p in participants if p.get("role") == "OWNER"), None)
    others = [p["contact_id"] for p in participants if p.get("role") != "OWNER"] or [None]
    other = rng.choice(others)
    if outbound is None:  # you write only where you take part (not yet to a first-time sender)
        outbound = owner is not None and rng.random() < 0.25
    inbox = next((i for i in db.list_inboxes(account_id) if i.id == thread["inbox_id"]), None)
    inbox_address = inbox.email if inbox else "you@pigeon.example"
    other_address = _address(db, account_id, other) or "someone@example.com"
    last = db.last_message(thread["id"])
    now = iso(datetime.now(UTC))
    sender, sender_address, to, to_address = (
        (owner, inbox_address, other, other_address) if outbound else (other, other_address, owner, inbox_address)
    )
    message_id = new_id()
    with db.transaction() as conn:
        db.insert_message(
            conn,
            account_id,
            {
                "id": message_id,
                "thread_id": thread["id"],
                "inbox_id": thread["inbox_id"],
                "direction": (MessageDirection.OUTBOUND if outbound else MessageDirection.INBOUND).value,
                "status": (MessageStatus.PENDING if outbound else MessageStatus.RECEIVED).value,
                "parent_id": last["id"] if last else None,
                "subject": "Re: " + (thread["subject"] or "").removeprefix("Re: "),
                "sender_contact_id": sender,
                "sender_address": sender_address,
                "recipients": [{"contact_id": to, "raw_address": to_address, "type": RecipientType.TO.value}],
                "content_blocks": [
                    {
                        "type": ContentType.TEXT.value,
                        "mime_type": "text/plain",
                        "content": rng.choice(LINES),
                        "sequence": 0,
                    }
                ],
                "metadata": message_id_metadata(message_id, sender_address),
                "created_at": now,
                "sent_at": None,
                "received_at": None if outbound else now,
            },
        )
    message = db.get_message(account_id, message_id)
    assert message is not None
    emit(db, deliverer, account_id, EventKind.MESSAGE_CREATED.value, message)
    return message


async def progress_outbound(
    db: Database, deliverer: Deliverer | None, account_id: str, message_id: str, rng: random.Random, step: float
) -> None:
    """Move an outbound message through SENT to DELIVERED or FAILED, emitting the events; most delivered ones are
    then read by their first recipient."""
    final = MessageStatus.FAILED if rng.random() < 0.1 else MessageStatus.DELIVERED
    message: Message | None = None
    for status, kind in (
        (MessageStatus.SENT, EventKind.MESSAGE_SENT),
        (final, EventKind.MESSAGE_FAILED if final is MessageStatus.FAILED else EventKind.MESSAGE_DELIVERED),
    ):
        await asyncio.sleep(step)
        message = db.set_message_status(account_id, message_id, status.value)
        if message is None:
            return
        emit(db, deliverer, account_id, kind.value, message)
        emit(db, deliverer, account_id, EventKind.MESSAGE_UPDATED.value, message)
    reader = next((r.contact_id for r in message.recipients if r.contact_id), None) if message else None
    if message and final is MessageStatus.DELIVERED and reader and message.thread_id and rng.random() < 0.7:
        await asyncio.sleep(step * 2)
        with db.transaction() as conn:
            db.read_by(conn, message.thread_id, reader, iso(datetime.now(UTC)))
        emit(db, deliverer, account_id, EventKind.MESSAGE_UPDATED.value, message)


def live_traffic(interval: float = 5.0, *, seed: int | None = None) -> Job:
    """A background job for :class:`~pigeon_service.app.ServerSettings`: new mail every ``interval`` seconds."""

    async def job(db: Database, deliverer: Deliverer) -> None:
        rng = random.Random(seed)  # noqa: S311  (demo traffic, not security)
        pending: set[asyncio.Task[None]] = set()
        tick = 0
        while True:
            await asyncio.sleep(interval * rng.uniform(0.7, 1.3))
            tick += 1
            for account_id in db.account_ids():
                newcomer = tick % 2 == 1 and tick // 2 < len(NEWCOMERS)
                if newcomer and newcomer_thread(db, deliverer, account_id, NEWCOMERS[tick // 2]) is not None:
                    continue
                message = new_message(db, deliverer, account_id, rng)
                if message is not None and message.direction == MessageDirection.OUTBOUND and message.id:
                    task = asyncio.create_task(
                        progress_outbound(db, deliverer, account_id, message.id, rng, step=max(interval / 4, 0.05))
                    )
                    pending.add(task)
                    task.add_done_callback(pending.discard)

    return job
