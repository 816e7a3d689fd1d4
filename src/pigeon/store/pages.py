"""A long thread read a page at a time: its outline (each message's key, parent, sender, direction, time, and how
many attachments and HTML blocks it has), kept in a table of its own and read without the messages, and its
messages by key, a page at once. A thread's outline is written with its messages when it is long; one stored
before outlines were gets it the first time it is read whole (:meth:`PagedStore.fill_outline`)."""

from __future__ import annotations

import functools
import json
import logging
import sqlite3
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from pigeon.sqlite import Database

if TYPE_CHECKING:
    from pigeon.models import Message

log = logging.getLogger("pigeon.store")

OUTLINED = 500
"""Threads of more messages than this keep an outline, and are read a page at a time."""


class Outline(NamedTuple):
    """What a thread's shape and its numbering need of one message, without the message: its ``id`` (the stored
    row's key), ``parent_id``, ``sender_id`` (a contact id), ``direction``, ``created_at``, and how many
    ``attachments`` and ``html`` blocks."""

    id: str
    parent_id: str | None
    sender_id: str | None
    direction: str
    created_at: datetime | None
    attachments: int
    html: int


def outline(conn: sqlite3.Connection, thread_id: str, keyed: Sequence[tuple[str, Message]]) -> None:
    """Write the outline of a thread just stored (its rows' keys and messages, in order): none if it is short."""
    conn.execute("DELETE FROM outlines WHERE thread_id = ?", (thread_id,))
    if len(keyed) <= OUTLINED:
        return
    columns: dict[str, list[object]] = {name: [] for name in _COLUMNS}
    for key, message in keyed:
        blocks, direction = message.content_blocks, message.direction
        columns["id"].append(key)
        columns["parent"].append(message.parent_id)
        sender, contact = message.sender, message.sender.contact if message.sender else None
        columns["sender"].append((sender.contact_id or (contact.id if contact else None)) if sender else None)
        columns["direction"].append(str(getattr(direction, "value", direction) or ""))
        columns["at"].append(message.created_at.isoformat() if message.created_at else None)
        columns["attachments"].append(sum(1 for block in blocks if block.attached))
        columns["html"].append(sum(1 for block in blocks if not block.attached and block.base_mime == "text/html"))
    conn.execute("INSERT INTO outlines (thread_id, data) VALUES (?, ?)", (thread_id, json.dumps(columns)))


_COLUMNS = ("id", "parent", "sender", "direction", "at", "attachments", "html")


@functools.cache
def _reader() -> Callable[[str], list[list[Any]]]:
    """What reads a stored outline into its columns, each one's type checked (the models load on first use)."""
    from pydantic import BaseModel

    from pigeon.models.resources import UTCDateTime

    class Columns(BaseModel):
        id: list[str]
        parent: list[str | None]
        sender: list[str | None]
        direction: list[str]
        at: list[UTCDateTime | None]
        attachments: list[int]
        html: list[int]

    def read(text: str) -> list[list[Any]]:
        columns = Columns.model_validate_json(text)
        return [getattr(columns, name) for name in _COLUMNS]

    return read


class PagedStore(Database):
    """The store's side of reading a long thread a page at a time."""

    def outline(self, thread_id: str) -> list[Outline] | None:
        """The thread's messages in their stored order, outlined; None if it has no outline (or a damaged one):
        then it is read whole."""
        from pydantic import ValidationError

        row = self.row("SELECT data FROM outlines WHERE thread_id = ?", (thread_id,))
        if row is None:
            return None
        try:
            lists = _reader()(row[0])  # (every column's type checked at once, its times made UTC)
        except (ValidationError, ValueError, TypeError):
            log.warning("the stored outline of a thread could not be read: it is read whole")
            return None
        rows = self.row("SELECT count(*) FROM messages WHERE thread_id = ?", (thread_id,))
        if any(len(column) != len(lists[0]) for column in lists) or rows is None or rows[0] != len(lists[0]):
            log.warning("the stored outline of a thread does not match its messages: it is read whole")
            return None
        return list(map(Outline, *lists))

    def page(self, thread_id: str, keys: Sequence[str]) -> dict[str, str]:
        """The stored JSON of the messages of ``thread_id`` with these ``keys`` (rows gone since are left out)."""
        marks = ", ".join("?" * len(keys))
        rows = self.rows(f"SELECT id, thread_id, data FROM messages WHERE id IN ({marks})", tuple(keys))
        return {str(key): data for key, owner, data in rows if owner == thread_id}

    def fill_outline(self, thread_id: str, keyed: Sequence[tuple[str, Message]]) -> None:
        """Outline a long thread stored before outlines were, from its rows' keys and messages as read whole (a
        sync that stored it meanwhile wrote its own)."""
        with self._lock, self.transaction() as conn:
            if conn.execute("SELECT 1 FROM outlines WHERE thread_id = ?", (thread_id,)).fetchone() is None:
                outline(conn, thread_id, keyed)
