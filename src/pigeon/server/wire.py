"""The hot paths' answers written straight from rows: list threads and list messages, serialised once.

:mod:`.rows` turns a row into its wire model (used where a model is worked with: a contact being patched, a
webhook payload); building a pydantic model per message and dumping it again cost about half of a list-messages
request's CPU (cProfile, 1,000 requests of 3 messages each). Here a row becomes the dict its model would dump
(the same fields, in the same order, an absent value left out, never sent as null), and the page one
``json.dumps``. ``tests/test_server_wire.py`` holds the two ways equal on demo mail, the hostile kind included.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _pruned(value: Any) -> Any:
    """``value`` without nulls in its objects (the spec's types have none); lists keep their items."""
    if isinstance(value, dict):
        return {key: _pruned(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_pruned(item) for item in value]
    return value


def _json(text: str | None) -> Any:
    return None if text is None else _pruned(json.loads(text))


def _set(target: dict[str, Any], **fields: Any) -> dict[str, Any]:
    target.update((key, value) for key, value in fields.items() if value is not None)
    return target


def contact_wire(row: sqlite3.Row) -> dict[str, Any]:
    return _set(
        {},
        id=row["id"],
        created_at=row["created_at"],
        account_id=row["account_id"],
        first_name=row["first_name"],
        last_name=row["last_name"],
        display_name=row["display_name"],
        company=row["company"],
        title=row["title"],
        emails=_json(row["emails"]) or [],
        phones=_json(row["phones"]) or [],
        social_profiles=_json(row["social_profiles"]) or [],
        tags=_json(row["tags"]) or [],
        metadata=_json(row["metadata"]),
        updated_at=row["updated_at"],
        last_contacted_at=row["last_contacted_at"],
    )


def thread_wire(row: sqlite3.Row) -> dict[str, Any]:
    return _set(
        {},
        id=row["id"],
        inbox_id=row["inbox_id"],
        status=row["status"],
        created_at=row["created_at"],
        subject=row["subject"],
        participants=_json(row["participants"]) or [],
        last_message_at=row["last_message_at"],
        message_count=row["message_count"],
        metadata=_json(row["metadata"]),
        updated_at=row["updated_at"],
    )


def message_wire(row: sqlite3.Row, contacts: dict[str, dict[str, Any]]) -> dict[str, Any]:
    contact_id = row["sender_contact_id"]
    sender = _set({}, contact_id=contact_id, contact=contacts.get(contact_id or ""), raw_address=row["sender_address"])
    return _set(
        {},
        id=row["id"],
        thread_id=row["thread_id"],
        inbox_id=row["inbox_id"],
        direction=row["direction"],
        status=row["status"],
        created_at=row["created_at"],
        parent_id=row["parent_id"],
        subject=row["subject"],
        sender=sender,
        recipients=_json(row["recipients"]) or [],
        content_blocks=_json(row["content_blocks"]) or [],
        metadata=_json(row["metadata"]),
        updated_at=row["updated_at"],
        sent_at=row["sent_at"],
        received_at=row["received_at"],
    )


def page(kind: str, items: list[dict[str, Any]], token: str) -> str:
    """A list answer's body: ``{kind: [...], "next_page_token": token}``."""
    return _dumps({kind: items, "next_page_token": token})
