"""Between the service's rows and the wire: times, JSON columns, ids, token hashes, page tokens (cursors), and each
row as its wire model."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import sqlite3
import uuid
from datetime import UTC, datetime
from typing import Any

from pigeon.models import (
    Contact,
    ContactEmail,
    ContactPhone,
    ContactSocialProfile,
    ContentBlock,
    Inbox,
    Message,
    Participant,
    Recipient,
    Sender,
    Thread,
    WebhookSubscription,
)

CURSOR_KEY_MAX = 200


class InvalidCursor(ValueError):
    """A page token that this service did not give out for this list."""


# --- time and JSON ------------------------------------------------------------------------------------------


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def now_iso() -> str:
    return iso(datetime.now(UTC))


def parse_time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def dump(value: Any) -> str | None:
    return None if value is None else json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def load(value: str | None, default: Any = None) -> Any:
    return default if value is None else json.loads(value)


def new_id() -> str:
    return str(uuid.uuid4())


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


# --- cursors ------------------------------------------------------------------------------------------------


def encode_cursor(kind: str, scope: str, *keys: Any) -> str:
    raw = json.dumps([kind, scope, *keys], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(token: str, kind: str, scope: str, arity: int) -> list[Any]:
    """The keys of a cursor made by :func:`encode_cursor` for the same list; :class:`InvalidCursor` otherwise."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        value = json.loads(raw)
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise InvalidCursor("page_token is not a token this service gave out") from None
    if not (isinstance(value, list) and len(value) == arity + 2 and value[0] == kind):
        raise InvalidCursor("page_token is not a token this service gave out")
    if value[1] != scope:
        raise InvalidCursor("page_token belongs to another list")
    keys = value[2:]
    if not all(_plain_key(key) for key in keys):  # only what encode_cursor wrote: short text, small whole numbers
        raise InvalidCursor("page_token is not a token this service gave out")
    return keys


def _plain_key(key: Any) -> bool:
    if isinstance(key, str):
        return len(key) <= CURSOR_KEY_MAX
    return isinstance(key, int) and not isinstance(key, bool) and 0 <= key < 2**62


# --- rows to wire models ----------------------------------------------------------------------------------------


def inbox_of(row: sqlite3.Row) -> Inbox:
    return Inbox(
        id=row["id"],
        account_id=row["account_id"],
        type=row["type"],
        status=row["status"],
        email=row["email"],
        display_name=row["display_name"],
        metadata=load(row["metadata"]),
        created_at=parse_time(row["created_at"]),
        updated_at=parse_time(row["updated_at"]),
    )


def contact_of(row: sqlite3.Row) -> Contact:
    return Contact(
        id=row["id"],
        created_at=parse_time(row["created_at"]),
        account_id=row["account_id"],
        first_name=row["first_name"],
        last_name=row["last_name"],
        display_name=row["display_name"],
        company=row["company"],
        title=row["title"],
        emails=[ContactEmail(**e) for e in load(row["emails"], [])],
        phones=[ContactPhone(**p) for p in load(row["phones"], [])],
        social_profiles=[ContactSocialProfile(**s) for s in load(row["social_profiles"], [])],
        tags=load(row["tags"], []),
        metadata=load(row["metadata"]),
        updated_at=parse_time(row["updated_at"]),
        last_contacted_at=parse_time(row["last_contacted_at"]),
    )


def thread_of(row: sqlite3.Row) -> Thread:
    return Thread(
        id=row["id"],
        inbox_id=row["inbox_id"],
        status=row["status"],
        created_at=parse_time(row["created_at"]),
        subject=row["subject"],
        participants=[Participant(**p) for p in load(row["participants"], [])],
        last_message_at=parse_time(row["last_message_at"]),
        message_count=row["message_count"],
        metadata=load(row["metadata"]),
        updated_at=parse_time(row["updated_at"]),
    )


def message_of(row: sqlite3.Row, contacts: dict[str, Contact]) -> Message:
    contact_id = row["sender_contact_id"]
    return Message(
        id=row["id"],
        thread_id=row["thread_id"],
        inbox_id=row["inbox_id"],
        direction=row["direction"],
        status=row["status"],
        created_at=parse_time(row["created_at"]),
        parent_id=row["parent_id"],
        subject=row["subject"],
        sender=Sender(contact_id=contact_id, contact=contacts.get(contact_id or ""), raw_address=row["sender_address"]),
        recipients=[Recipient(**r) for r in load(row["recipients"], [])],
        content_blocks=[ContentBlock(**b) for b in load(row["content_blocks"], [])],
        metadata=load(row["metadata"]),
        updated_at=parse_time(row["updated_at"]),
        sent_at=parse_time(row["sent_at"]),
        received_at=parse_time(row["received_at"]),
    )


def webhook_of(row: sqlite3.Row) -> WebhookSubscription:
    return WebhookSubscription(
        id=row["id"],
        url=row["url"],
        events=load(row["events"], []),
        status=row["status"],
        created_at=parse_time(row["created_at"]),
        description=row["description"],
        metadata=load(row["metadata"]),
        updated_at=parse_time(row["updated_at"]),
    )
