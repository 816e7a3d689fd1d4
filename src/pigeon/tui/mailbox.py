"""What the app knows of the account right now: inboxes, threads, loaded messages and the contacts seen in them.

The API has no list-contacts operation; contacts are learnt from ``sender.contact`` as messages load. Read state is
kept for the session only (the local store makes it last).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from pigeon.models import Contact, Inbox, Message, ParticipantRole, Thread
from pigeon.tui.render import is_attachment, sender_name
from pigeon.tui.widgets.thread_list import ThreadRow

ALL_INBOXES = "*"


@dataclass
class ThreadSummary:
    """What the first page of a thread's messages told us."""

    who: str
    attachment: bool


@dataclass
class Mailbox:
    inboxes: list[Inbox] = field(default_factory=list)
    threads: list[Thread] = field(default_factory=list)
    messages: dict[str, list[Message]] = field(default_factory=dict)
    contacts: dict[str, Contact] = field(default_factory=dict)
    summaries: dict[str, ThreadSummary] = field(default_factory=dict)
    read: dict[str, datetime | None] = field(default_factory=dict)
    """Threads opened this session, with the ``last_message_at`` they had when opened."""

    def set_threads(self, threads: list[Thread]) -> None:
        self.threads = threads

    def thread(self, thread_id: str) -> Thread | None:
        return next((t for t in self.threads if t.id == thread_id), None)

    def threads_in(self, inbox_id: str) -> list[Thread]:
        if inbox_id == ALL_INBOXES:
            return self.threads
        return [t for t in self.threads if t.inbox_id == inbox_id]

    def learn(self, messages: Iterable[Message]) -> None:
        """Remember the contacts that messages carry."""
        for message in messages:
            contact = message.sender.contact if message.sender else None
            if contact is not None and contact.id:
                self.contacts[contact.id] = contact

    def set_messages(self, thread_id: str, messages: list[Message]) -> None:
        self.messages[thread_id] = messages
        self.learn(messages)
        self.summaries[thread_id] = self._summarise(messages)

    def _summarise(self, messages: list[Message]) -> ThreadSummary:
        names: list[str] = []
        for message in reversed(messages):  # latest sender first
            name = sender_name(message, self.contacts)
            if name not in names:
                names.append(name)
        who = ", ".join(n.split()[0] if len(names) > 1 else n for n in names[:3]) if names else ""
        attachment = any(is_attachment(b) for m in messages for b in m.content_blocks)
        return ThreadSummary(who=who, attachment=attachment)

    def is_unread(self, thread: Thread) -> bool:
        if thread.id in self.read:
            opened_at = self.read[thread.id]
            return bool(thread.last_message_at and opened_at and thread.last_message_at > opened_at)
        owner = next((p for p in thread.participants if p.role == ParticipantRole.OWNER), None)
        if owner is None or owner.last_read_at is None:
            return True
        return bool(thread.last_message_at and thread.last_message_at > owner.last_read_at)

    def mark_read(self, thread: Thread) -> None:
        if thread.id:
            self.read[thread.id] = thread.last_message_at

    def unread_count(self, inbox_id: str) -> int:
        return sum(1 for t in self.threads_in(inbox_id) if self.is_unread(t))

    def row(self, thread: Thread) -> ThreadRow:
        summary = self.summaries.get(thread.id or "")
        who = summary.who if summary else self._participant_names(thread)
        return ThreadRow(
            id=thread.id or "",
            who=who,
            subject=thread.subject or "",
            when=thread.last_message_at,
            count=thread.message_count or 0,
            unread=self.is_unread(thread),
            attachment=bool(summary and summary.attachment),
        )

    def _participant_names(self, thread: Thread) -> str:
        names = [
            self.contacts[p.contact_id].name
            for p in thread.participants
            if p.role != ParticipantRole.OWNER and p.contact_id in self.contacts
        ]
        return ", ".join(names[:3])
