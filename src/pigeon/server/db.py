"""Storage of the reference service: SQLite through the standard library.

One connection guarded by a lock (SQLite serialises writers anyway; the reference service favours simplicity),
WAL mode for files, foreign keys on, and a schema versioned with ``PRAGMA user_version``. Every query that reads
or changes account data takes the account id, so one account can never see or touch another's rows.

Date-times are stored as fixed-width ISO 8601 UTC strings (``2026-01-31T09:15:00.000000Z``), so text order is time
order and keyset cursors compare correctly.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import json
import secrets
import sqlite3
import threading
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pigeon.models import (
    Contact,
    ContactEmail,
    ContactPhone,
    ContactSocialProfile,
    ContentBlock,
    CreateInbox,
    CreateWebhook,
    Inbox,
    InboxStatus,
    Message,
    Participant,
    Recipient,
    Sender,
    Thread,
    UpdateContact,
    WebhookStatus,
    WebhookSubscription,
)

SCHEMA_VERSION = 1

_SCHEMA_V1 = """
CREATE TABLE accounts (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    created_at  TEXT NOT NULL
);
CREATE TABLE tokens (
    hash        TEXT PRIMARY KEY,               -- sha256 of the token; the token itself is never stored
    account_id  TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    created_at  TEXT NOT NULL
);
CREATE TABLE inboxes (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    type         TEXT NOT NULL,
    status       TEXT NOT NULL,
    email        TEXT NOT NULL,
    display_name TEXT,
    metadata     TEXT,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    UNIQUE (account_id, email)
);
CREATE TABLE contacts (
    id                TEXT PRIMARY KEY,
    account_id        TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    first_name        TEXT,
    last_name         TEXT,
    display_name      TEXT,
    company           TEXT,
    title             TEXT,
    emails            TEXT NOT NULL DEFAULT '[]',
    phones            TEXT NOT NULL DEFAULT '[]',
    social_profiles   TEXT NOT NULL DEFAULT '[]',
    tags              TEXT NOT NULL DEFAULT '[]',
    metadata          TEXT,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL,
    last_contacted_at TEXT
);
CREATE INDEX contacts_by_account ON contacts (account_id);
CREATE TABLE threads (
    id              TEXT PRIMARY KEY,
    account_id      TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    inbox_id        TEXT NOT NULL REFERENCES inboxes(id) ON DELETE CASCADE,
    status          TEXT NOT NULL,
    subject         TEXT,
    participants    TEXT NOT NULL DEFAULT '[]',
    last_message_at TEXT NOT NULL,
    message_count   INTEGER NOT NULL DEFAULT 0,
    metadata        TEXT,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);
CREATE INDEX threads_by_activity ON threads (account_id, last_message_at DESC, id DESC);
CREATE TABLE messages (
    seq                INTEGER PRIMARY KEY AUTOINCREMENT,   -- arrival order; the tie-breaker of the cursor
    id                 TEXT NOT NULL UNIQUE,
    account_id         TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    thread_id          TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    inbox_id           TEXT NOT NULL REFERENCES inboxes(id) ON DELETE CASCADE,
    direction          TEXT NOT NULL,
    status             TEXT NOT NULL,
    parent_id          TEXT,
    subject            TEXT,
    sender_contact_id  TEXT REFERENCES contacts(id) ON DELETE SET NULL,
    sender_address     TEXT,
    recipients         TEXT NOT NULL DEFAULT '[]',
    content_blocks     TEXT NOT NULL DEFAULT '[]',
    metadata           TEXT,
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL,
    sent_at            TEXT,
    received_at        TEXT
);
CREATE INDEX messages_in_thread ON messages (thread_id, created_at, seq);
CREATE TABLE webhooks (
    id          TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    url         TEXT NOT NULL,
    events      TEXT NOT NULL,
    status      TEXT NOT NULL,
    description TEXT,
    secret      TEXT NOT NULL,               -- needed in clear to sign; never returned after creation
    metadata    TEXT,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX webhooks_by_account ON webhooks (account_id, status);
CREATE TABLE deliveries (
    id              TEXT PRIMARY KEY,        -- the webhook-id header: the same on every retry
    webhook_id      TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    payload         TEXT NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    state           TEXT NOT NULL,           -- pending, delivered, failed
    last_status     INTEGER,
    last_error      TEXT,
    created_at      TEXT NOT NULL
);
CREATE INDEX deliveries_due ON deliveries (state, next_attempt_at);
"""

MIGRATIONS: list[str] = [_SCHEMA_V1]
"""``MIGRATIONS[n]`` takes a database from version ``n`` to ``n + 1``."""


class SchemaTooNew(Exception):
    """The database was written by a newer Pigeon."""


class InvalidCursor(ValueError):
    """A page token that this service did not give out for this list."""


# --- time and JSON ------------------------------------------------------------------------------------------


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def now_iso() -> str:
    return iso(datetime.now(UTC))


def _parse_time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _dump(value: Any) -> str | None:
    return None if value is None else json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _load(value: str | None, default: Any = None) -> Any:
    return default if value is None else json.loads(value)


def new_id() -> str:
    return str(uuid.uuid4())


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


# --- cursors ------------------------------------------------------------------------------------------------


def encode_cursor(kind: str, scope: str, *keys: Any) -> str:
    raw = json.dumps([kind, scope, *keys], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(token: str, kind: str, scope: str, arity: int) -> list[Any]:
    """The keys of a cursor made by :func:`encode_cursor` for the same list; :class:`InvalidCursor` otherwise."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        value = json.loads(raw)
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise InvalidCursor("page_token is not a token this service gave out") from None
    if not (isinstance(value, list) and len(value) == arity + 2 and value[0] == kind):
        raise InvalidCursor("page_token is not a token this service gave out")
    if value[1] != scope:
        raise InvalidCursor("page_token belongs to another list")
    return value[2:]


# --- the database -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DeliveryRow:
    id: str
    webhook_id: str
    url: str
    secret: str
    payload: str
    attempts: int


class Database:
    """The service's SQLite database. ``path`` may be ``":memory:"`` (tests, the demo)."""

    def __init__(self, path: str | Path = ":memory:") -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).expanduser().parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._conn.row_factory = sqlite3.Row
        self._conn.execute("PRAGMA foreign_keys = ON")
        self._conn.execute("PRAGMA busy_timeout = 5000")
        if self.path != ":memory:":
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA synchronous = NORMAL")
        self._migrate()

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def _row(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Row | None:
        with self._lock:
            return self._conn.execute(sql, params).fetchone()

    def _migrate(self) -> None:
        with self._lock:
            version = self._conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise SchemaTooNew(
                    f"{self.path} has schema version {version}; this Pigeon knows up to {SCHEMA_VERSION}"
                )
            for target in range(version, SCHEMA_VERSION):
                # One script per step, committed with its version number or not at all.
                self._conn.executescript(
                    f"BEGIN IMMEDIATE;\n{MIGRATIONS[target]}\nPRAGMA user_version = {target + 1};\nCOMMIT;"
                )

    @property
    def schema_version(self) -> int:
        row = self._row("PRAGMA user_version")
        assert row is not None
        return int(row[0])

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
        return [str(r["id"]) for r in self._rows("SELECT id FROM accounts ORDER BY created_at")]

    def create_token(self, account_id: str) -> str:
        """A new random token for the account; only its hash is kept."""
        token = "pgn_" + secrets.token_urlsafe(32)
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO tokens (hash, account_id, created_at) VALUES (?, ?, ?)",
                (hash_token(token), account_id, now_iso()),
            )
        return token

    def account_for_token(self, token: str) -> str | None:
        row = self._row("SELECT account_id FROM tokens WHERE hash = ?", (hash_token(token),))
        return str(row["account_id"]) if row else None

    def has_mail(self, account_id: str) -> bool:
        return self._row("SELECT 1 FROM threads WHERE account_id = ? LIMIT 1", (account_id,)) is not None

    # --- inboxes ----------------------------------------------------------------------------------------------

    def list_inboxes(self, account_id: str) -> list[Inbox]:
        rows = self._rows("SELECT * FROM inboxes WHERE account_id = ? ORDER BY created_at, id", (account_id,))
        return [_inbox(r) for r in rows]

    def inbox_email_taken(self, account_id: str, email: str) -> bool:
        row = self._row("SELECT 1 FROM inboxes WHERE account_id = ? AND lower(email) = lower(?)", (account_id, email))
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
                    _dump(body.metadata),
                    stamp,
                    stamp,
                ),
            )
            row = conn.execute("SELECT * FROM inboxes WHERE id = ?", (inbox_id,)).fetchone()
        return _inbox(row)

    # --- threads ----------------------------------------------------------------------------------------------

    def list_threads(self, account_id: str, *, page_size: int, page_token: str | None) -> tuple[list[Thread], str]:
        """Threads by latest activity, newest first; the token is ``""`` on the last page."""
        sql = "SELECT * FROM threads WHERE account_id = ?"
        params: list[Any] = [account_id]
        if page_token:
            last_at, last_id = decode_cursor(page_token, "threads", account_id, 2)
            sql += " AND (last_message_at < ? OR (last_message_at = ? AND id < ?))"
            params += [last_at, last_at, last_id]
        sql += " ORDER BY last_message_at DESC, id DESC LIMIT ?"
        rows = self._rows(sql, [*params, page_size + 1])
        more = len(rows) > page_size
        rows = rows[:page_size]
        token = encode_cursor("threads", account_id, rows[-1]["last_message_at"], rows[-1]["id"]) if more else ""
        return [_thread(r) for r in rows], token

    def thread_exists(self, account_id: str, thread_id: str) -> bool:
        row = self._row("SELECT 1 FROM threads WHERE id = ? AND account_id = ?", (thread_id, account_id))
        return row is not None

    # --- messages ---------------------------------------------------------------------------------------------

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
        sql = "SELECT * FROM messages WHERE thread_id = ? AND account_id = ?"
        params: list[Any] = [thread_id, account_id]
        if message_ids is not None:
            sql += f" AND id IN ({','.join('?' * len(message_ids))})"
            params += list(message_ids)
        if page_token:
            last_at, last_seq = decode_cursor(page_token, "messages", thread_id, 2)
            sql += " AND (created_at > ? OR (created_at = ? AND seq > ?))"
            params += [last_at, last_at, last_seq]
        sql += " ORDER BY created_at, seq LIMIT ?"
        rows = self._rows(sql, [*params, page_size + 1])
        more = len(rows) > page_size
        rows = rows[:page_size]
        token = encode_cursor("messages", thread_id, rows[-1]["created_at"], rows[-1]["seq"]) if more else ""
        contacts = self._contacts_by_id(account_id, {r["sender_contact_id"] for r in rows if r["sender_contact_id"]})
        return [_message(r, contacts) for r in rows], token

    def get_message(self, account_id: str, message_id: str) -> Message | None:
        row = self._row("SELECT * FROM messages WHERE id = ? AND account_id = ?", (message_id, account_id))
        if row is None:
            return None
        contacts = self._contacts_by_id(account_id, {row["sender_contact_id"]} - {None})
        return _message(row, contacts)

    # --- contacts ---------------------------------------------------------------------------------------------

    def _contacts_by_id(self, account_id: str, ids: Iterable[str]) -> dict[str, Contact]:
        wanted = list(ids)
        if not wanted:
            return {}
        rows = self._rows(
            f"SELECT * FROM contacts WHERE account_id = ? AND id IN ({','.join('?' * len(wanted))})",  # noqa: S608
            [account_id, *wanted],
        )
        return {str(r["id"]): _contact(r) for r in rows}

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
                    old = {(e.get("type"), e.get(value_key)): e.get("id") for e in _load(row[name], [])}
                    changes[name] = _dump(
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
                changes["metadata"] = _dump(body.metadata)
            if changes:
                changes["updated_at"] = now_iso()
                assignments = ", ".join(f"{column} = ?" for column in changes)
                conn.execute(
                    f"UPDATE contacts SET {assignments} WHERE id = ? AND account_id = ?",  # noqa: S608  (column names are ours)
                    [*changes.values(), contact_id, account_id],
                )
            updated = conn.execute("SELECT * FROM contacts WHERE id = ?", (contact_id,)).fetchone()
        return _contact(updated)

    # --- webhooks ---------------------------------------------------------------------------------------------

    def create_webhook(self, account_id: str, body: CreateWebhook, *, secret: str) -> WebhookSubscription:
        stamp = now_iso()
        webhook_id = new_id()
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO webhooks (id, account_id, url, events, status, description, secret, metadata, "
                "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    webhook_id,
                    account_id,
                    body.url,
                    _dump([e.value for e in body.events]),
                    WebhookStatus.ACTIVE.value,
                    body.description,
                    secret,
                    _dump(body.metadata),
                    stamp,
                    stamp,
                ),
            )
            row = conn.execute("SELECT * FROM webhooks WHERE id = ?", (webhook_id,)).fetchone()
        return _webhook(row)

    def get_webhook(self, webhook_id: str) -> WebhookSubscription | None:
        row = self._row("SELECT * FROM webhooks WHERE id = ?", (webhook_id,))
        return _webhook(row) if row else None

    def set_webhook_status(self, webhook_id: str, status: WebhookStatus) -> None:
        with self.transaction() as conn:
            conn.execute(
                "UPDATE webhooks SET status = ?, updated_at = ? WHERE id = ?", (status.value, now_iso(), webhook_id)
            )

    def enqueue_event(self, account_id: str, kind: str, payload: str) -> int:
        """Queue a delivery of event ``kind`` (JSON text ``payload``) to every active subscription of the account
        that wants it; each delivery gets its own id (the ``webhook-id`` header). Returns how many were queued."""
        stamp = now_iso()
        with self.transaction() as conn:
            hooks = conn.execute(
                "SELECT id, events FROM webhooks WHERE account_id = ? AND status = ?",
                (account_id, WebhookStatus.ACTIVE.value),
            ).fetchall()
            queued = 0
            for hook in hooks:
                if kind not in _load(hook["events"], []):
                    continue
                delivery_id = "msg_" + uuid.uuid4().hex
                conn.execute(
                    "INSERT INTO deliveries (id, webhook_id, payload, next_attempt_at, state, created_at) "
                    "VALUES (?, ?, ?, ?, 'pending', ?)",
                    (delivery_id, hook["id"], payload, stamp, stamp),
                )
                queued += 1
        return queued

    def due_deliveries(self, now: str, limit: int = 50) -> list[DeliveryRow]:
        rows = self._rows(
            "SELECT d.id, d.webhook_id, d.payload, d.attempts, w.url, w.secret FROM deliveries d "
            "JOIN webhooks w ON w.id = d.webhook_id "
            "WHERE d.state = 'pending' AND d.next_attempt_at <= ? AND w.status = ? "
            "ORDER BY d.next_attempt_at LIMIT ?",
            (now, WebhookStatus.ACTIVE.value, limit),
        )
        return [
            DeliveryRow(r["id"], r["webhook_id"], r["url"], r["secret"], r["payload"], int(r["attempts"])) for r in rows
        ]

    def next_delivery_at(self) -> str | None:
        row = self._row(
            "SELECT MIN(d.next_attempt_at) AS at FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id "
            "WHERE d.state = 'pending' AND w.status = ?",
            (WebhookStatus.ACTIVE.value,),
        )
        return row["at"] if row and row["at"] else None

    def record_attempt(
        self, delivery_id: str, *, state: str, status: int | None, error: str | None, next_attempt_at: str | None
    ) -> None:
        with self.transaction() as conn:
            conn.execute(
                "UPDATE deliveries SET attempts = attempts + 1, state = ?, last_status = ?, last_error = ?, "
                "next_attempt_at = COALESCE(?, next_attempt_at) WHERE id = ?",
                (state, status, error, next_attempt_at, delivery_id),
            )

    def deliveries(self, webhook_id: str) -> list[dict[str, Any]]:
        """Every delivery of a subscription (for tests and operators)."""
        rows = self._rows("SELECT * FROM deliveries WHERE webhook_id = ? ORDER BY created_at", (webhook_id,))
        return [dict(r) for r in rows]

    # --- writing mail (demo data, live traffic, tests) -------------------------------------------------------------

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
                _dump(inbox.get("metadata")),
                stamp,
                stamp,
            ),
        )
        return inbox_id

    def insert_contact(self, conn: sqlite3.Connection, account_id: str, contact: dict[str, Any]) -> str:
        stamp = contact.get("created_at") or now_iso()
        contact_id = contact.get("id") or new_id()

        def with_ids(items: list[dict[str, Any]]) -> str | None:
            return _dump([{"id": item.get("id") or new_id(), **item} for item in items])

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
                _dump(contact.get("tags", [])),
                _dump(contact.get("metadata")),
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
                _dump(thread.get("participants", [])),
                stamp,
                _dump(thread.get("metadata")),
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
                _dump(message.get("recipients", [])),
                _dump(message.get("content_blocks", [])),
                _dump(message.get("metadata")),
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

    def set_message_status(self, account_id: str, message_id: str, status: str) -> Message | None:
        with self.transaction() as conn:
            conn.execute(
                "UPDATE messages SET status = ?, updated_at = ? WHERE id = ? AND account_id = ?",
                (status, now_iso(), message_id, account_id),
            )
        return self.get_message(account_id, message_id)

    def random_rows(self, table: str, account_id: str, count: int) -> list[sqlite3.Row]:
        """A few random rows of ``table`` (threads, contacts, inboxes) for live traffic."""
        assert table in {"threads", "contacts", "inboxes"}
        return self._rows(
            f"SELECT * FROM {table} WHERE account_id = ? ORDER BY random() LIMIT ?",  # noqa: S608
            (account_id, count),
        )

    def last_message(self, thread_id: str) -> sqlite3.Row | None:
        return self._row(
            "SELECT * FROM messages WHERE thread_id = ? ORDER BY created_at DESC, seq DESC LIMIT 1", (thread_id,)
        )


# --- rows to wire models ----------------------------------------------------------------------------------------


def _inbox(row: sqlite3.Row) -> Inbox:
    return Inbox(
        id=row["id"],
        account_id=row["account_id"],
        type=row["type"],
        status=row["status"],
        email=row["email"],
        display_name=row["display_name"],
        metadata=_load(row["metadata"]),
        created_at=_parse_time(row["created_at"]),
        updated_at=_parse_time(row["updated_at"]),
    )


def _contact(row: sqlite3.Row) -> Contact:
    return Contact(
        id=row["id"],
        created_at=_parse_time(row["created_at"]),
        account_id=row["account_id"],
        first_name=row["first_name"],
        last_name=row["last_name"],
        display_name=row["display_name"],
        company=row["company"],
        title=row["title"],
        emails=[ContactEmail(**e) for e in _load(row["emails"], [])],
        phones=[ContactPhone(**p) for p in _load(row["phones"], [])],
        social_profiles=[ContactSocialProfile(**s) for s in _load(row["social_profiles"], [])],
        tags=_load(row["tags"], []),
        metadata=_load(row["metadata"]),
        updated_at=_parse_time(row["updated_at"]),
        last_contacted_at=_parse_time(row["last_contacted_at"]),
    )


def _thread(row: sqlite3.Row) -> Thread:
    return Thread(
        id=row["id"],
        inbox_id=row["inbox_id"],
        status=row["status"],
        created_at=_parse_time(row["created_at"]),
        subject=row["subject"],
        participants=[Participant(**p) for p in _load(row["participants"], [])],
        last_message_at=_parse_time(row["last_message_at"]),
        message_count=row["message_count"],
        metadata=_load(row["metadata"]),
        updated_at=_parse_time(row["updated_at"]),
    )


def _message(row: sqlite3.Row, contacts: dict[str, Contact]) -> Message:
    contact_id = row["sender_contact_id"]
    return Message(
        id=row["id"],
        thread_id=row["thread_id"],
        inbox_id=row["inbox_id"],
        direction=row["direction"],
        status=row["status"],
        created_at=_parse_time(row["created_at"]),
        parent_id=row["parent_id"],
        subject=row["subject"],
        sender=Sender(contact_id=contact_id, contact=contacts.get(contact_id or ""), raw_address=row["sender_address"]),
        recipients=[Recipient(**r) for r in _load(row["recipients"], [])],
        content_blocks=[ContentBlock(**b) for b in _load(row["content_blocks"], [])],
        metadata=_load(row["metadata"]),
        updated_at=_parse_time(row["updated_at"]),
        sent_at=_parse_time(row["sent_at"]),
        received_at=_parse_time(row["received_at"]),
    )


def _webhook(row: sqlite3.Row) -> WebhookSubscription:
    return WebhookSubscription(
        id=row["id"],
        url=row["url"],
        events=_load(row["events"], []),
        status=row["status"],
        created_at=_parse_time(row["created_at"]),
        description=row["description"],
        metadata=_load(row["metadata"]),
        updated_at=_parse_time(row["updated_at"]),
    )
