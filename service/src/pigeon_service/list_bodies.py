"""The hot paths' answers written straight from rows: list threads and list messages, serialised once.

:mod:`.rows` turns a row into its wire model (used where a model is worked with: a contact being patched, a
webhook payload); building a pydantic model per message and dumping it again cost about half of a list-messages
request's CPU. Here a row becomes the JSON text its model would dump (the same fields, in the same order, an absent
value left out, never sent as null). A column that holds JSON
(recipients, content blocks, metadata...) goes into the answer as it is stored, unparsed, unless it has a null to
leave out: parsing, pruning and encoding each column again was half of a page's time (docs/performance.md).
``tests/server/test_parallel.py`` holds the answers equal to the wire models on demo mail, the hostile kind included.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from typing import Any

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _pruned(value: Any) -> Any:
    """``value`` without nulls in its objects (the spec's types have none); lists keep their items."""
    if isinstance(value, dict):
        return {key: _pruned(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_pruned(item) for item in value]
    return value


def _json(text: str | None, empty: str | None = None) -> str | None:
    """A stored JSON column as answer text. As stored when it is an array or object with no ``null`` token in it;
    otherwise parsed and written again without its nulls. ``empty``: the text of a column without a value, or with
    an empty (or other false) one."""
    if text is None:
        return empty
    if "null" in text or text[:1] not in ("[", "{"):  # (a null maybe only inside a string: then written the same)
        value = _pruned(json.loads(text))
        if not value and empty is not None:
            return empty
        return None if value is None else _dumps(value)
    if empty is not None and text in ("[]", "{}"):
        return empty
    return text


def _object(fields: Iterable[tuple[str, str | None]]) -> str:
    """A JSON object from ``(key, JSON text)`` pairs, those without a value left out."""
    return "{" + ",".join(f'"{key}":{text}' for key, text in fields if text is not None) + "}"


def _scalar(value: object) -> str | None:
    return None if value is None else _dumps(value)


def contact_text(row: sqlite3.Row) -> str:
    return _object(
        (
            ("id", _scalar(row["id"])),
            ("created_at", _scalar(row["created_at"])),
            ("account_id", _scalar(row["account_id"])),
            ("first_name", _scalar(row["first_name"])),
            ("last_name", _scalar(row["last_name"])),
            ("display_name", _scalar(row["display_name"])),
            ("company", _scalar(row["company"])),
            ("title", _scalar(row["title"])),
            ("emails", _json(row["emails"], "[]")),
            ("phones", _json(row["phones"], "[]")),
            ("social_profiles", _json(row["social_profiles"], "[]")),
            ("tags", _json(row["tags"], "[]")),
            ("metadata", _json(row["metadata"])),
            ("updated_at", _scalar(row["updated_at"])),
            ("last_contacted_at", _scalar(row["last_contacted_at"])),
        )
    )


def thread_text(row: sqlite3.Row) -> str:
    return _object(
        (
            ("id", _scalar(row["id"])),
            ("inbox_id", _scalar(row["inbox_id"])),
            ("status", _scalar(row["status"])),
            ("created_at", _scalar(row["created_at"])),
            ("subject", _scalar(row["subject"])),
            ("participants", _json(row["participants"], "[]")),
            ("last_message_at", _scalar(row["last_message_at"])),
            ("message_count", _scalar(row["message_count"])),
            ("metadata", _json(row["metadata"])),
            ("updated_at", _scalar(row["updated_at"])),
        )
    )


def message_text(row: sqlite3.Row, contacts: dict[str, str]) -> str:
    """A message; ``contacts``: the text of each sender's contact by id."""
    contact_id = row["sender_contact_id"]
    sender = _object(
        (
            ("contact_id", _scalar(contact_id)),
            ("contact", contacts.get(contact_id or "")),
            ("raw_address", _scalar(row["sender_address"])),
        )
    )
    return _object(
        (
            ("id", _scalar(row["id"])),
            ("thread_id", _scalar(row["thread_id"])),
            ("inbox_id", _scalar(row["inbox_id"])),
            ("direction", _scalar(row["direction"])),
            ("status", _scalar(row["status"])),
            ("created_at", _scalar(row["created_at"])),
            ("parent_id", _scalar(row["parent_id"])),
            ("subject", _scalar(row["subject"])),
            ("sender", sender),
            ("recipients", _json(row["recipients"], "[]")),
            ("content_blocks", _json(row["content_blocks"], "[]")),
            ("metadata", _json(row["metadata"])),
            ("updated_at", _scalar(row["updated_at"])),
            ("sent_at", _scalar(row["sent_at"])),
            ("received_at", _scalar(row["received_at"])),
        )
    )


def page(kind: str, items: list[str], token: str) -> str:
    """A list answer's body, ``{kind: [...], "next_page_token": token}``, from its items' JSON text."""
    return f'{{"{kind}":[{",".join(items)}],"next_page_token":{_dumps(token)}}}'
