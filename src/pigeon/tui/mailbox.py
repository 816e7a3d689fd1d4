"""What the app holds in memory for its screens: inboxes, the service's thread list, loaded messages, and the
contacts met in them. Triage state and the list's rows live in the local store (:mod:`pigeon.store`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pigeon.models import Contact, Inbox, Message, Thread

ALL_INBOXES = "*"


@dataclass
class Mailbox:
    inboxes: list[Inbox] = field(default_factory=list)
    threads: list[Thread] = field(default_factory=list)
    messages: dict[str, list[Message]] = field(default_factory=dict)
    contacts: dict[str, Contact] = field(default_factory=dict)

    def set_threads(self, threads: list[Thread]) -> None:
        self.threads = threads

    def thread(self, thread_id: str) -> Thread | None:
        return next((t for t in self.threads if t.id == thread_id), None)

    def learn(self, messages: Iterable[Message]) -> None:
        """Remember the contacts that messages carry (without replacing one the app already knows)."""
        for message in messages:
            contact = message.sender.contact if message.sender else None
            if contact is not None and contact.id and contact.id not in self.contacts:
                self.contacts[contact.id] = contact
