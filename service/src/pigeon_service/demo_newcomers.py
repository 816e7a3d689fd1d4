"""First-time senders for the demo's live traffic: a newsletter, a receipt, an alert and a person, each a new
thread from an address the demo mailbox never had, with a contact of its own (so letting one in or keeping one out
is written to that contact). Pigeon's Screener holds them until the user decides."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from pigeon.models import ContentType, EmailType, EventKind, Message, MessageDirection, MessageStatus, RecipientType
from pigeon_service.db import Database, iso
from pigeon_service.demo_conversation import message_id_metadata
from pigeon_service.rows import new_id
from pigeon_service.webhooks import Deliverer, emit

NEWCOMERS: tuple[dict[str, str], ...] = (
    {
        "first": "Tidepool",
        "last": "Weekly",
        "address": "hello@tidepool.example",
        "subject": "Tidepool Weekly #1: welcome aboard",
        "mime": "text/html",
        "body": "<h1>Welcome to Tidepool Weekly</h1><p>Every Friday: five links worth your time.</p><ul>"
        '<li><a href="https://tidepool.example/1">Tide tables, explained</a></li>'
        '<li><a href="https://tidepool.example/2">Why kelp forests matter</a></li>'
        '<li><a href="https://tidepool.example/3">A week on the shore</a></li>'
        '<li><a href="https://tidepool.example/4">Reader photos</a></li>'
        '<li><a href="https://tidepool.example/5">Events near you</a></li></ul>'
        '<p><a href="https://tidepool.example/unsubscribe">Unsubscribe</a></p>',
    },
    {
        "first": "Maya",
        "last": "Lindqvist",
        "address": "maya.lindqvist@northwind.example",
        "subject": "Hello from Northwind",
        "mime": "text/plain",
        "body": "Hi,\n\nWe met briefly at the Harbor offsite. Would you have twenty minutes next week to talk about "
        "the Atlas integration? I think our teams could help each other.\n\nBest,\nMaya",
    },
    {
        "first": "Lantern",
        "last": "Books",
        "address": "orders@lanternbooks.example",
        "subject": "Your receipt from Lantern Books",
        "mime": "text/plain",
        "body": "Thank you for your order #40317.\n\n1 x The Shape of Tides   $24.00\nShipping               $4.50\n"
        "Order total            $28.50\n\nYour receipt is attached to your account page.",
    },
    {
        "first": "Statuspage",
        "last": "",
        "address": "no-reply@status.example",
        "subject": "Alert: elevated error rate on api.status.example",
        "mime": "text/plain",
        "body": "An alert fired at 09:12 UTC: the error rate of api.status.example rose above 2%.\n\n"
        "You receive this notification because you follow this status page.",
    },
)


def newcomer_thread(
    db: Database,
    deliverer: Deliverer | None,
    account_id: str,
    spec: Mapping[str, str],
    *,
    contact: bool = True,
    at: datetime | None = None,
) -> Message | None:
    """A new thread from a first-time sender (``spec``: as in ``NEWCOMERS``), sent ``at`` (now), with a new contact
    for them (unless not ``contact``) and its ``message.created`` event; ``None`` for an account with no inbox."""
    inboxes = db.list_inboxes(account_id)
    if not inboxes:
        return None
    inbox, now = inboxes[0], iso(at or datetime.now(UTC))
    message_id = new_id()
    with db.transaction() as conn:
        person = {
            "first_name": spec["first"],
            "last_name": spec["last"],
            "display_name": f"{spec['first']} {spec['last']}".strip(),
            "emails": [{"type": EmailType.WORK.value, "email": spec["address"]}],
        }
        contact_id = db.insert_contact(conn, account_id, person) if contact else None
        thread: dict[str, Any] = {
            "inbox_id": inbox.id,
            "subject": spec["subject"],
            "created_at": now,
            "participants": [{"contact_id": contact_id, "role": "MEMBER", "last_read_at": None}] if contact else [],
        }
        thread_id = db.insert_thread(conn, account_id, thread)
        db.insert_message(
            conn,
            account_id,
            {
                "id": message_id,
                "thread_id": thread_id,
                "inbox_id": inbox.id,
                "direction": MessageDirection.INBOUND.value,
                "status": MessageStatus.RECEIVED.value,
                "subject": spec["subject"],
                "sender_contact_id": contact_id,
                "sender_address": spec["address"],
                "recipients": [{"raw_address": inbox.email, "type": RecipientType.TO.value}],
                "content_blocks": [
                    {"type": ContentType.TEXT.value, "mime_type": spec["mime"], "content": spec["body"], "sequence": 0}
                ],
                "metadata": message_id_metadata(message_id, spec["address"]),
                "created_at": now,
                "received_at": now,
            },
        )
    message = db.get_message(account_id, message_id)
    if message is not None:
        emit(db, deliverer, account_id, EventKind.MESSAGE_CREATED.value, message)
    return message
