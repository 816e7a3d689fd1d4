"""A long thread read a page at a time: its outline (each message's id, parent, direction, time, and how many
attachments and HTML blocks it has), read from columns without its JSON, and its messages by id, a page at once.
The outline's columns are written with each message; a thread stored before they were gets them the first time
it is read whole (:meth:`PagedStore.fill_outline`)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

from pigeon.sqlite import Database

if TYPE_CHECKING:
    from pigeon.models import Message

log = logging.getLogger("pigeon.store")

OutlineColumns = tuple[str | None, str | None, str, str | None, int, int]
"""A message's outline as stored: parent id, sender's contact id, direction, time (ISO), attachments, HTML
blocks."""


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


def outline_columns(message: Message) -> OutlineColumns:
    """The outline columns of ``message``, written beside its JSON."""
    blocks = message.content_blocks
    direction = message.direction
    return (
        message.parent_id,
        message.sender.contact_id if message.sender else None,
        str(getattr(direction, "value", direction) or ""),
        message.created_at.isoformat() if message.created_at else None,
        sum(1 for block in blocks if block.attached),
        sum(1 for block in blocks if not block.attached and block.base_mime == "text/html"),
    )


class PagedStore(Database):
    """The store's side of reading a long thread a page at a time."""

    def outline(self, thread_id: str) -> list[Outline] | None:
        """The thread's messages in their stored order, outlined; None if a row has no outline yet (or a damaged
        one): then the thread is read whole."""
        rows = self.rows(
            "SELECT id, parent_id, sender_id, direction, created_at, attachments, html FROM messages "
            "WHERE thread_id = ? ORDER BY position",
            (thread_id,),
        )
        outline: list[Outline] = []
        try:
            for key, parent, sender, direction, created, attachments, html in rows:
                if direction is None or not isinstance(attachments, int) or not isinstance(html, int):
                    return None
                if not all(isinstance(text, str | None) for text in (parent, sender, created)):
                    return None
                when = datetime.fromisoformat(created) if created else None
                if when is not None and when.tzinfo is None:
                    return None
                outline.append(Outline(str(key), parent, sender, str(direction), when, attachments, html))
        except (TypeError, ValueError):
            log.warning("a stored outline of thread %s could not be read: it is read whole", thread_id)
            return None
        return outline

    def page(self, thread_id: str, keys: Sequence[str]) -> dict[str, str]:
        """The stored JSON of the messages of ``thread_id`` with these ``keys`` (rows gone since are left out)."""
        marks = ", ".join("?" * len(keys))
        rows = self.rows(
            f"SELECT id, data FROM messages WHERE thread_id = ? AND id IN ({marks})",
            (thread_id, *keys),
        )
        return {str(key): data for key, data in rows}

    def fill_outline(self, thread_id: str, keyed: Sequence[tuple[str, Message]]) -> None:
        """Write the outline of a thread stored before outlines were (its rows' keys and their messages)."""
        with self._lock, self.transaction() as conn:
            conn.executemany(
                "UPDATE messages SET parent_id = ?, sender_id = ?, direction = ?, created_at = ?, attachments = ?, "
                "html = ? "
                "WHERE thread_id = ? AND id = ? AND direction IS NULL",
                [(*outline_columns(message), thread_id, key) for key, message in keyed],
            )
