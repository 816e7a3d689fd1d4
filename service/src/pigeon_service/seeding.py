"""Writing mail straight into the service's database: demo data, live traffic and tests (the API has no send)."""

from __future__ import annotations

import sqlite3
from typing import Any

from pigeon.models import InboxStatus
from pigeon.sqlite import Database as SQLite
from pigeon_service.rows import dump, new_id, now_iso


class MailWriter(SQLite):
    """Inserts of whole resources, by their wire fields."""

    def insert_inbox(self, conn: sqlite3.Connection, account_id: str, inbox: dict[str, Any]) -> str:
        stamp = inbox.get("created_at") or now_iso()
        inbox_id = inbox.get("id") or new_id()
        conn.execute(
            "INSERT INTO inboxes (id, account_id, type, status, email, display_name, metadata, created_at, "
            "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                inbox_id,
                account_id,
                inbox.get("type", "EMAIL_INBOX"),
                inbox.get("status", InboxStatus.ACTIVE.value),
                inbox["email"],
                inbox.get("display_name"),
                dump(inbox.get("metadata")),
                stamp,
                stamp,
            ),
        )
        return inbox_id

    def insert_contact(self, conn: sqlite3.Connection, account_id: str, contact: dict[str, Any]) -> str:
        stamp = contact.get("created_at") or now_iso()
        contact_id = contact.get("id") or new_id()

        def with_ids(items: list[dict[str, Any]]) -> str | None:
            return dump([{"id": item.get("id") or new_id(), **item} for item in items])

        conn.execute(
            "INSERT INTO contacts (id, account_id, first_name, last_name, display_name, company, title, emails, "
            "phones, social_profiles, tags, metadata, created_at, updated_at, last_contacted_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                contact_id,
                account_id,
                contact.get("first_name"),
                contact.get("last_name"),
                contact.get("display_name"),
                contact.get("company"),
                contact.get("title"),
                with_ids(contact.get("emails", [])),
                with_ids(contact.get("phones", [])),
                with_ids(contact.get("social_profiles", [])),
                dump(contact.get("tags", [])),
                dump(contact.get("metadata")),
                stamp,
                stamp,
                contact.get("last_contacted_at"),
            ),
        )
        return contact_id

    def insert_thread(self, conn: sqlite3.Connection, account_id: str, thread: dict[str, Any]) -> str:
        stamp = thread["created_at"]
        thread_id = thread.get("id") or new_id()
        conn.execute(
            "INSERT INTO threads (id, account_id, inbox_id, status, subject, participants, last_message_at, "
            "message_count, metadata, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)",
            (
                thread_id,
                account_id,
                thread["inbox_id"],
                thread.get("status", "OPEN"),
                thread.get("subject"),
                dump(thread.get("participants", [])),
                stamp,
                dump(thread.get("metadata")),
                stamp,
                stamp,
            ),
        )
        return thread_id

    def insert_message(self, conn: sqlite3.Connection, account_id: str, message: dict[str, Any]) -> str:
        """Add a message and bring its thread's ``last_message_at``, ``message_count`` and ``updated_at`` along."""
        message_id = message.get("id") or new_id()
        created = message.get("created_at") or now_iso()
        conn.execute(
            "INSERT INTO messages (id, account_id, thread_id, inbox_id, direction, status, parent_id, subject, "
            "sender_contact_id, sender_address, recipients, content_blocks, metadata, created_at, updated_at, "
            "sent_at, received_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                message_id,
                account_id,
                message["thread_id"],
                message["inbox_id"],
                message["direction"],
                message["status"],
                message.get("parent_id"),
                message.get("subject"),
                message.get("sender_contact_id"),
                message.get("sender_address"),
                dump(message.get("recipients", [])),
                dump(message.get("content_blocks", [])),
                dump(message.get("metadata")),
                created,
                created,
                message.get("sent_at"),
                message.get("received_at"),
            ),
        )
        conn.execute(
            "UPDATE threads SET message_count = message_count + 1, "
            "last_message_at = MAX(last_message_at, ?), updated_at = MAX(updated_at, ?) WHERE id = ?",
            (created, created, message["thread_id"]),
        )
        return message_id

    def read_by(self, conn: sqlite3.Connection, thread_id: str, contact_id: str, at: str) -> None:
        """Participant ``contact_id`` read thread ``thread_id`` at ``at`` (their ``last_read_at``; only the demo
        knows when others read: the service has no operation that says so)."""
        conn.execute(
            "UPDATE threads SET participants = (SELECT json_group_array(CASE WHEN json_extract(p.value, "
            "'$.contact_id') = :contact THEN json_set(p.value, '$.last_read_at', :at) ELSE json(p.value) END) "
            "FROM json_each(threads.participants) p), updated_at = MAX(updated_at, :at) WHERE id = :thread",
            {"contact": contact_id, "at": at, "thread": thread_id},
        )

    def random_rows(self, table: str, account_id: str, count: int) -> list[sqlite3.Row]:
        """A few random rows of ``table`` (threads, contacts, inboxes) for live traffic."""
        assert table in {"threads", "contacts", "inboxes"}
        return self.rows(
            f"SELECT * FROM {table} WHERE account_id = ? ORDER BY random() LIMIT ?",  # noqa: S608
            (account_id, count),
        )

    def last_message(self, thread_id: str) -> sqlite3.Row | None:
        return self.row(
            "SELECT * FROM messages WHERE thread_id = ? ORDER BY created_at DESC, seq DESC LIMIT 1", (thread_id,)
        )
