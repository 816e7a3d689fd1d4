"""Which thread a message belongs to: its id is the store's key for it, so a copy of the same id that comes in
another thread (or twice in one) is left out of that thread and named there, never put in place of the first."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pigeon.models import Message, Unreadable


def own_ids(
    conn: sqlite3.Connection, thread_id: str, messages: Sequence[Message], unreadable: Sequence[Unreadable]
) -> tuple[list[Message], list[Unreadable], list[Unreadable]]:
    """A thread's messages without those whose id another thread holds or an earlier message of its own has (a
    message id is the store's key: one copy must not replace the other), and every unreadable message of the
    thread, those left out here included, each with its place among the messages kept; and those left out here."""
    from pigeon.models import refused

    owners = dict(
        conn.execute(
            "SELECT id, thread_id FROM messages WHERE id IN (SELECT value FROM json_each(?)) AND thread_id != ?",
            (json.dumps([m.id for m in messages if m.id]), thread_id),
        ).fetchall()
    )
    kept: list[Message] = []
    dropped: list[int] = []  # the places (among the messages read) of those left out
    notes: list[Unreadable] = []
    seen: set[str] = set()
    for place, message in enumerate(messages):
        owner = owners.get(message.id) if message.id else None
        if owner is None and not (message.id and message.id in seen):
            seen.add(message.id or "")
            kept.append(message)
            continue
        why = f"already belongs to thread {owner}" if owner else "repeats an earlier message of this thread"
        notes.append(refused("message", message.to_wire(), "id", why, thread_id=thread_id, before=len(kept)))
        dropped.append(place)
    if not dropped:
        return list(messages), list(unreadable), []
    moved = [replace(u, before=u.before - sum(d < u.before for d in dropped)) for u in unreadable]
    return kept, sorted([*moved, *notes], key=lambda u: u.before), notes
