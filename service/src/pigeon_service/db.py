"""Storage of the reference service: SQLite through the standard library (:mod:`pigeon.sqlite`).

One connection guarded by a lock for writes (SQLite serialises writers anyway) and one a thread for reads (the
routes run in a thread pool, so requests read side by side), WAL mode for files, foreign keys on, and a schema
versioned with ``PRAGMA user_version`` (:mod:`.schema`). Every query that reads or changes account data takes the
account id, so one account can never see or touch another's rows. Webhook rows live in :mod:`.webhook_rows`, direct
writes of mail in :mod:`.seeding`, conversions in :mod:`.rows` (models) and :mod:`.list_bodies` (the lists' bodies).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from time import monotonic
from typing import Any

from pigeon.models import (
    Contact,
    CreateInbox,
    Inbox,
    Message,
    Thread,
    UpdateContact,
)
from pigeon.sqlite import SchemaTooNew
from pigeon_service import list_bodies, new_token
from pigeon_service.rows import (
    InvalidCursor,
    contact_of,
    decode_cursor,
    dump,
    encode_cursor,
    hash_token,
    inbox_of,
    iso,
    load,
    message_of,
    new_id,
    now_iso,
    thread_of,
)
from pigeon_service.schema import MIGRATIONS, SCHEMA_VERSION
from pigeon_service.seeding import MailWriter
from pigeon_service.webhook_rows import DeliveryRow, WebhookRows

__all__ = ["SCHEMA_VERSION", "Database", "DeliveryRow", "InvalidCursor", "SchemaTooNew", "hash_token", "iso", "now_iso"]


def _senders(rows: list[sqlite3.Row]) -> set[str]:
    return {r["sender_contact_id"] for r in rows if r["sender_contact_id"]}


TOKEN_MEMORY = 30.0
"""Seconds a token found stays known without a look-up (a token deleted from the database by hand stops working
after at most this long; the service itself never deletes one)."""


class Database(MailWriter, WebhookRows):
    """The service's SQLite database. ``path`` may be ``":memory:"`` (tests, the demo)."""

    def __init__(self, path: str | Path = ":memory:") -> None:
        super().__init__(path, MIGRATIONS, readers=True)  # requests run in a thread pool: reads side by side
        self._accounts_by_token: dict[str, tuple[str, float]] = {}  # token hash -> (account id, when looked up)

    # --- accounts and tokens -------------------------------------------------------------------------------

    def ensure_account(self, name: str) -> str:
        """The id of the account called ``name``, created if needed."""
        with self.transaction() as conn:
            row = conn.execute("SELECT id FROM accounts WHERE name = ?", (name,)).fetchone()
            if row:
                return str(row["id"])
            account_id = new_id()
            conn.execute("INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)", (account_id, name, now_iso()))
            return account_id

    def account_ids(self) -> list[str]:
        return [str(r["id"]) for r in self.rows("SELECT id FROM accounts ORDER BY created_at")]

    def create_token(self, account_id: str, token: str | None = None) -> str:
        """A new random token for the account (or ``token``, one the caller made: the demo's); only its hash is
        kept."""
        token = token or new_token()
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO tokens (hash, account_id, created_at) VALUES (?, ?, ?)",
                (hash_token(token), account_id, now_iso()),
            )
        return token

    def account_for_token(self, token: str) -> str | None:
        """The account a bearer token is for. A token found is remembered for ``TOKEN_MEMORY`` seconds: every
        request asks, on the event loop (a look-up there waited for the GIL behind the request threads); one never
        found is asked again each time."""
        digest = hash_token(token)
        known = self._accounts_by_token.get(digest)
        if known is not None and monotonic() - known[1] < TOKEN_MEMORY:
            return known[0]
        row = self.row("SELECT account_id FROM tokens WHERE hash = ?", (digest,))
        if row is None:
            self._accounts_by_token.pop(digest, None)
            return None
        self._accounts_by_token[digest] = (str(row["account_id"]), monotonic())
        return str(row["account_id"])

    def has_mail(self, account_id: str) -> bool:
        return self.row("SELECT 1 FROM threads WHERE account_id = ? LIMIT 1", (account_id,)) is not None

    # --- inboxes ----------------------------------------------------------------------------------------------

    def list_inboxes(self, account_id: str) -> list[Inbox]:
        rows = self.rows("SELECT * FROM inboxes WHERE account_id = ? ORDER BY created_at, id", (account_id,))
        return [inbox_of(r) for r in rows]

    def inbox_email_taken(self, account_id: str, email: str) -> bool:
        row = self.row("SELECT 1 FROM inboxes WHERE account_id = ? AND lower(email) = lower(?)", (account_id, email))
        return row is not None

    def create_inbox(self, account_id: str, body: CreateInbox, *, email: str, status: str) -> Inbox:
        stamp = now_iso()
        inbox_id = new_id()
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO inboxes (id, account_id, type, status, email, display_name, metadata, created_at, "
                "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    inbox_id,
                    account_id,
                    body.type.value,
                    status,
                    email,
                    body.display_name,
                    dump(body.metadata),
                    stamp,
                    stamp,
                ),
            )
            row = conn.execute("SELECT * FROM inboxes WHERE id = ?", (inbox_id,)).fetchone()
        return inbox_of(row)

    # --- threads ----------------------------------------------------------------------------------------------

    def _thread_rows(self, account_id: str, page_size: int, page_token: str | None) -> tuple[list[sqlite3.Row], str]:
        sql = "SELECT * FROM threads WHERE account_id = ?"
        params: list[Any] = [account_id]
        if page_token:
            last_at, last_id = decode_cursor(page_token, "threads", account_id, 2)
            sql += " AND (last_message_at < ? OR (last_message_at = ? AND id < ?))"
            params += [last_at, last_at, last_id]
        sql += " ORDER BY last_message_at DESC, id DESC"
        return self._page_rows(sql, params, page_size, ("threads", account_id), ("last_message_at", "id"))

    def _page_rows(
        self, sql: str, params: list[Any], page_size: int, scope: tuple[str, str], keys: tuple[str, str]
    ) -> tuple[list[sqlite3.Row], str]:
        """One page of an ordered query (one row more is read to know whether another page follows) and the next
        page's token: the last row's ``keys`` (``""`` on the last page)."""
        rows = self.rows(sql + " LIMIT ?", [*params, page_size + 1])
        more = len(rows) > page_size
        rows = rows[:page_size]
        return rows, encode_cursor(*scope, *(rows[-1][key] for key in keys)) if more else ""

    def list_threads(self, account_id: str, *, page_size: int, page_token: str | None) -> tuple[list[Thread], str]:
        """Threads by latest activity, newest first; the token is ``""`` on the last page."""
        rows, token = self._thread_rows(account_id, page_size, page_token)
        return [thread_of(r) for r in rows], token

    def list_threads_json(self, account_id: str, *, page_size: int, page_token: str | None) -> str:
        """:meth:`list_threads` as the answer's body, written straight from the rows (:mod:`.list_bodies`)."""
        rows, token = self._thread_rows(account_id, page_size, page_token)
        return list_bodies.page("threads", [list_bodies.thread_text(r) for r in rows], token)

    def thread_exists(self, account_id: str, thread_id: str) -> bool:
        row = self.row("SELECT 1 FROM threads WHERE id = ? AND account_id = ?", (thread_id, account_id))
        return row is not None

    # --- messages ---------------------------------------------------------------------------------------------

    def _message_rows(
        self,
        account_id: str,
        thread_id: str,
        message_ids: Sequence[str] | None,
        page_size: int,
        page_token: str | None,
    ) -> tuple[list[sqlite3.Row], str]:
        sql = "SELECT * FROM messages WHERE thread_id = ? AND account_id = ?"
        params: list[Any] = [thread_id, account_id]
        if message_ids is not None:
            sql += f" AND id IN ({','.join('?' * len(message_ids))})"
            params += list(message_ids)
        if page_token:
            last_at, last_seq = decode_cursor(page_token, "messages", thread_id, 2)
            sql += " AND (created_at > ? OR (created_at = ? AND seq > ?))"
            params += [last_at, last_at, last_seq]
        sql += " ORDER BY created_at, seq"
        return self._page_rows(sql, params, page_size, ("messages", thread_id), ("created_at", "seq"))

    def list_messages(
        self,
        account_id: str,
        thread_id: str,
        *,
        message_ids: Sequence[str] | None,
        page_size: int,
        page_token: str | None,
    ) -> tuple[list[Message], str]:
        """Messages of a thread, oldest first; the token is ``""`` on the last page.

        The cursor is the last message's ``(created_at, seq)``: a message that arrives during a walk sorts after
        every message already there, so a walk sees each message exactly once.
        """
        rows, token = self._message_rows(account_id, thread_id, message_ids, page_size, page_token)
        contacts = {str(r["id"]): contact_of(r) for r in self._contact_rows(account_id, _senders(rows))}
        return [message_of(r, contacts) for r in rows], token

    def list_messages_json(
        self,
        account_id: str,
        thread_id: str,
        *,
        message_ids: Sequence[str] | None,
        page_size: int,
        page_token: str | None,
    ) -> str | None:
        """:meth:`list_messages` as the answer's body, written straight from the rows (:mod:`.list_bodies`); ``None``
        if the account has no such thread (looked for only when the page is empty or its token invalid: a query less for
        nearly every page, each query a hand-over of the GIL with the service's event loop)."""
        try:
            rows, token = self._message_rows(account_id, thread_id, message_ids, page_size, page_token)
        except InvalidCursor:
            if not self.thread_exists(account_id, thread_id):
                return None
            raise
        if not rows and not self.thread_exists(account_id, thread_id):
            return None
        contacts = {str(r["id"]): list_bodies.contact_text(r) for r in self._contact_rows(account_id, _senders(rows))}
        return list_bodies.page("messages", [list_bodies.message_text(r, contacts) for r in rows], token)

    def get_message(self, account_id: str, message_id: str) -> Message | None:
        row = self.row("SELECT * FROM messages WHERE id = ? AND account_id = ?", (message_id, account_id))
        if row is None:
            return None
        contacts = self._contacts_by_id(account_id, {row["sender_contact_id"]} - {None})
        return message_of(row, contacts)

    # --- contacts ---------------------------------------------------------------------------------------------

    def _contact_rows(self, account_id: str, ids: Iterable[str]) -> list[sqlite3.Row]:
        wanted = list(ids)
        if not wanted:
            return []
        return self.rows(
            f"SELECT * FROM contacts WHERE account_id = ? AND id IN ({','.join('?' * len(wanted))})",  # noqa: S608
            [account_id, *wanted],
        )

    def _contacts_by_id(self, account_id: str, ids: Iterable[str]) -> dict[str, Contact]:
        return {str(r["id"]): contact_of(r) for r in self._contact_rows(account_id, ids)}

    def get_contact(self, account_id: str, contact_id: str) -> Contact | None:
        return self._contacts_by_id(account_id, [contact_id]).get(contact_id)

    def update_contact(self, account_id: str, contact_id: str, body: UpdateContact) -> Contact | None:
        """Apply a PATCH: only the fields sent change; arrays are replaced whole (entries that stay keep their id).

        ``display_name`` is derived from the first and last name when either changes.
        """
        with self.transaction() as conn:
            row = conn.execute(
                "SELECT * FROM contacts WHERE id = ? AND account_id = ?", (contact_id, account_id)
            ).fetchone()
            if row is None:
                return None
            changes: dict[str, Any] = {}
            sent = body.model_fields_set
            for name in ("first_name", "last_name"):
                if name in sent:
                    changes[name] = getattr(body, name)
            if {"first_name", "last_name"} & sent:
                first = changes.get("first_name", row["first_name"])
                last = changes.get("last_name", row["last_name"])
                changes["display_name"] = " ".join(p for p in (first, last) if p) or None
            for name, value_key in (("emails", "email"), ("phones", "phone"), ("social_profiles", "username")):
                if name in sent:
                    old = {(e.get("type"), e.get(value_key)): e.get("id") for e in load(row[name], [])}
                    changes[name] = dump(
                        [
                            {
                                "id": old.get((item.type.value, getattr(item, value_key))) or new_id(),
                                "type": item.type.value,
                                value_key: getattr(item, value_key),
                            }
                            for item in getattr(body, name)
                        ]
                    )
            if "metadata" in sent:
                changes["metadata"] = dump(body.metadata)
            if changes:
                changes["updated_at"] = now_iso()
                assignments = ", ".join(f"{column} = ?" for column in changes)
                conn.execute(
                    f"UPDATE contacts SET {assignments} WHERE id = ? AND account_id = ?",  # noqa: S608  (column names are ours)
                    [*changes.values(), contact_id, account_id],
                )
            updated = conn.execute("SELECT * FROM contacts WHERE id = ?", (contact_id,)).fetchone()
        return contact_of(updated)

    def set_message_status(self, account_id: str, message_id: str, status: str) -> Message | None:
        with self.transaction() as conn:
            conn.execute(
                "UPDATE messages SET status = ?, updated_at = ? WHERE id = ? AND account_id = ?",
                (status, now_iso(), message_id, account_id),
            )
        return self.get_message(account_id, message_id)
