"""A long conversation for tests: a 500-message thread with a reply tree (replies branching under earlier ones, a
few whose parent the thread does not hold), of which the first ones were read before (the owner's
``last_read_at``). Usable by store-level and TUI tests: :func:`add_conversation` puts it into a reference service."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from pigeon_service.db import iso
from tests.server.conftest import NOW

if TYPE_CHECKING:
    from tests.server.conftest import Account, Service

SIZE = 500
READ = 300
"""Messages read before (the oldest ones)."""
SUBJECT = "The long conversation"


@dataclass(frozen=True)
class Conversation:
    thread_id: str
    ids: list[str]
    """In time order."""
    parents: dict[str, str | None]
    read_at: datetime

    def tree(self) -> list[tuple[str, int]]:
        """The ids in tree order with their depths: replies after what they answer, oldest first."""
        known = set(self.ids)
        children: dict[str, list[str]] = {}
        for message_id in self.ids:
            parent = self.parents[message_id]
            if parent in known:
                children.setdefault(parent, []).append(message_id)
        out: list[tuple[str, int]] = []

        def walk(message_id: str, depth: int) -> None:
            out.append((message_id, depth))
            for reply in children.get(message_id, []):
                walk(reply, depth + 1)

        for message_id in self.ids:
            if self.parents[message_id] not in known:
                walk(message_id, 0)
        return out

    def first_unread(self) -> str:
        """The first message (in tree order) newer than the read mark."""
        new = set(self.ids[READ:])
        return next(message_id for message_id, _ in self.tree() if message_id in new)


def parent_of(number: int) -> str | None:
    """The reply tree: each message answers one of the earlier ones, so branches grow long and wide; every 97th
    answers a message the thread does not hold."""
    if number == 0:
        return None
    if number % 97 == 0:
        return "not-in-this-thread"
    return f"m{(number - 1) // 2 if number % 3 else number - 1:03d}"


def add_conversation(service: Service, account: Account | None = None, size: int = SIZE) -> Conversation:
    """Add the conversation to the service's account (alice), its newest message at ``NOW`` (first in the list)."""
    db, owner = service.db, (account or service.alice).id
    inbox = db.list_inboxes(owner)[0]
    times = [NOW - timedelta(minutes=size - n) for n in range(1, size + 1)]
    read_at = times[READ - 1]
    ids = [f"m{n:03d}" for n in range(size)]
    parents = {ids[n]: parent_of(n) for n in range(size)}
    with db.transaction() as conn:
        thread_id = db.insert_thread(
            conn,
            owner,
            {
                "inbox_id": inbox.id,
                "subject": SUBJECT,
                "created_at": iso(times[0]),
                "participants": [{"contact_id": None, "role": "OWNER", "last_read_at": iso(read_at)}],
            },
        )
        for n, message_id in enumerate(ids):
            db.insert_message(
                conn,
                owner,
                {
                    "id": message_id,
                    "thread_id": thread_id,
                    "inbox_id": inbox.id,
                    "direction": "MESSAGE_DIRECTION_INBOUND",
                    "status": "MESSAGE_STATUS_RECEIVED",
                    "parent_id": parents[message_id],
                    "subject": f"Re: {SUBJECT}",
                    "sender_address": f"writer{n % 7}@example.com",
                    "content_blocks": [
                        {
                            "type": "CONTENT_TYPE_TEXT",
                            "mime_type": "text/plain",
                            "content": f"Message {message_id} says word{n} here.\nA second line of {message_id}.",
                            "sequence": 0,
                        }
                    ],
                    "created_at": iso(times[n]),
                    "received_at": iso(times[n]),
                },
            )
    return Conversation(thread_id, ids, parents, read_at)
