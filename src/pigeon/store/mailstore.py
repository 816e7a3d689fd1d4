"""The local store: a cache of the service's mail plus Pigeon's own triage state, in SQLite.

One database per profile (``<data dir>/store/<profile>.sqlite3``). The service has no read, star or archive
operation, so that state lives here, next to a cache of inboxes, threads, messages and contacts, a full-text
index, and an undo stack. Store rows and wire models are separate: the cache keeps each resource's JSON as the
service sent it, and the columns the list and search need.

Triage rules, all relative to the thread's ``last_message_at``:

- *unread* until read up to the latest message (a new message makes it unread again);
- *done* leaves the inbox until a message newer than the moment it was done arrives;
- *snoozed* leaves the inbox until the snooze is due or a newer message arrives;
- *muted* leaves the inbox for good (new messages do not bring it back).
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pigeon import locations
from pigeon.store.search import SearchQuery, parse_query

if TYPE_CHECKING:  # the models load on first use: the list's rows are plain StoredThreads
    from pigeon.models import Contact, Inbox, Message, Thread

SCHEMA_VERSION = 1
UNDO_KEEP = 200

_SCHEMA_V1 = """
CREATE TABLE inboxes (
    id        TEXT PRIMARY KEY,
    position  INTEGER NOT NULL,
    data      TEXT NOT NULL
);
CREATE TABLE threads (
    id              TEXT PRIMARY KEY,
    inbox_id        TEXT,
    subject         TEXT NOT NULL DEFAULT '',
    who             TEXT NOT NULL DEFAULT '',
    last_message_at TEXT NOT NULL DEFAULT '',
    message_count   INTEGER NOT NULL DEFAULT 0,
    has_attachment  INTEGER NOT NULL DEFAULT 0,
    synced_upto     TEXT,
    synced_count    INTEGER,
    data            TEXT NOT NULL
);
CREATE INDEX threads_by_date ON threads (last_message_at DESC, id);
CREATE INDEX threads_by_inbox ON threads (inbox_id, last_message_at DESC);
CREATE TABLE messages (
    id         TEXT PRIMARY KEY,
    thread_id  TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    position   INTEGER NOT NULL,
    data       TEXT NOT NULL
);
CREATE INDEX messages_by_thread ON messages (thread_id, position);
CREATE TABLE contacts (
    id    TEXT PRIMARY KEY,
    name  TEXT NOT NULL DEFAULT '',
    data  TEXT NOT NULL
);
CREATE TABLE triage (
    thread_id      TEXT PRIMARY KEY,
    read_upto      TEXT,
    starred        INTEGER NOT NULL DEFAULT 0,
    done_upto      TEXT,
    snoozed_until  TEXT,
    snooze_upto    TEXT,
    muted          INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE labels (
    thread_id  TEXT NOT NULL,
    label      TEXT NOT NULL,
    PRIMARY KEY (thread_id, label)
);
CREATE INDEX labels_by_label ON labels (label);
CREATE TABLE undo (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    description TEXT NOT NULL,
    changes     TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
CREATE VIRTUAL TABLE search USING fts5(
    thread_id UNINDEXED, subject, sender, recipients, body, tokenize = 'unicode61 remove_diacritics 2'
);
"""

MIGRATIONS: list[str] = [_SCHEMA_V1]

VIEWS = ("inbox", "unread", "starred", "snoozed", "done", "all")
SORTS = {
    "date": "t.last_message_at DESC, t.id",
    "sender": "t.who COLLATE NOCASE, t.last_message_at DESC, t.id",  # t.id last: one order, so pages never overlap
    "subject": "t.subject COLLATE NOCASE, t.last_message_at DESC, t.id",
}

# Conditions over ``threads t LEFT JOIN triage tr``; :now is the current time.
UNREAD = "(tr.read_upto IS NULL OR t.last_message_at > tr.read_upto)"
DONE = "(tr.done_upto IS NOT NULL AND t.last_message_at <= tr.done_upto)"
SNOOZED = "(tr.snoozed_until IS NOT NULL AND tr.snoozed_until > :now AND t.last_message_at <= tr.snooze_upto)"
MUTED = "(COALESCE(tr.muted, 0) = 1)"
STARRED = "(COALESCE(tr.starred, 0) = 1)"
VIEW_CONDITIONS = {
    "inbox": f"NOT {DONE} AND NOT {SNOOZED} AND NOT {MUTED}",
    "unread": f"{UNREAD} AND NOT {MUTED}",
    "starred": STARRED,
    "snoozed": SNOOZED,
    "done": DONE,
    "all": "1",
}


class SchemaTooNew(Exception):
    """The store was written by a newer Pigeon."""


class UnknownThread(LookupError):
    """A thread id the store does not have."""


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _wire_time(value: datetime | None) -> str:
    return iso(value) if value else ""


@dataclass(frozen=True)
class StoredThread:
    """One row of a thread list, with its triage state."""

    id: str
    inbox_id: str | None
    subject: str
    who: str
    last_message_at: datetime | None
    message_count: int
    has_attachment: bool
    unread: bool
    starred: bool
    done: bool
    snoozed_until: datetime | None
    muted: bool
    labels: tuple[str, ...]


@dataclass(frozen=True)
class UndoStep:
    seq: int
    description: str


def store_path(profile: str) -> Path:
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in profile) or "default"
    return locations.data_dir() / "store" / f"{safe}.sqlite3"


class MailStore:
    """The local store. ``path`` may be ``":memory:"`` (``pigeon demo``, tests)."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._lock = threading.RLock()
        self._conn = self._connect()
        self._conn.execute("PRAGMA foreign_keys = ON")
        if self.path != ":memory:":
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA synchronous = NORMAL")
        self._migrate()
        # Counts for the sidebar take a while in a big mailbox (0.1 s at 100,000 threads): they read on a
        # connection of their own, so the list's reads on the UI's path never wait for them (WAL lets both read).
        self._counter: sqlite3.Connection | None = None
        self._counter_lock = threading.Lock()

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA busy_timeout = 5000")
        return conn

    @classmethod
    def for_profile(cls, profile: str) -> MailStore:
        return cls(store_path(profile))

    def close(self) -> None:
        with self._counter_lock:
            if self._counter is not None:
                self._counter.close()
        with self._lock:
            self._conn.close()

    # --- plumbing -------------------------------------------------------------------------------------------------

    def _migrate(self) -> None:
        with self._lock:
            version = self._conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise SchemaTooNew(
                    f"{self.path} has schema version {version}; this Pigeon knows up to {SCHEMA_VERSION}"
                )
            for target in range(version, SCHEMA_VERSION):
                self._conn.executescript(
                    f"BEGIN IMMEDIATE;\n{MIGRATIONS[target]}\nPRAGMA user_version = {target + 1};\nCOMMIT;"
                )

    @property
    def schema_version(self) -> int:
        with self._lock:
            return int(self._conn.execute("PRAGMA user_version").fetchone()[0])

    @contextlib.contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def _rows(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def _counted_rows(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[sqlite3.Row]:
        """``_rows`` on the counting connection (the one connection of a store in memory, which has no other)."""
        if self.path == ":memory:":
            return self._rows(sql, params)
        with self._counter_lock:
            if self._counter is None:
                self._counter = self._connect()
                self._counter.execute("PRAGMA query_only = ON")
            return self._counter.execute(sql, params).fetchall()

    # --- the cache of server data ------------------------------------------------------------------------

    def put_inboxes(self, inboxes: Sequence[Inbox]) -> None:
        with self._tx() as conn:
            conn.execute("DELETE FROM inboxes")
            conn.executemany(
                "INSERT INTO inboxes (id, position, data) VALUES (?, ?, ?)",
                [(i.id, n, json.dumps(i.to_wire())) for n, i in enumerate(inboxes)],
            )

    def inboxes(self) -> list[Inbox]:
        from pigeon.models import Inbox

        return [Inbox.model_validate_json(r["data"]) for r in self._rows("SELECT data FROM inboxes ORDER BY position")]

    def put_threads(self, threads: Sequence[Thread]) -> list[str]:
        """Store the service's thread list; returns the ids whose messages must be fetched (new or moved)."""
        changed: list[str] = []
        with self._tx() as conn:
            known = {
                r["id"]: (r["synced_upto"], r["synced_count"])
                for r in conn.execute("SELECT id, synced_upto, synced_count FROM threads")
            }
            for thread in threads:
                if not thread.id:
                    continue
                last = _wire_time(thread.last_message_at)
                count = thread.message_count or 0
                conn.execute(
                    "INSERT INTO threads (id, inbox_id, subject, last_message_at, message_count, data) "
                    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET inbox_id = excluded.inbox_id, "
                    "subject = excluded.subject, last_message_at = excluded.last_message_at, "
                    "message_count = excluded.message_count, data = excluded.data",
                    (thread.id, thread.inbox_id, thread.subject or "", last, count, json.dumps(thread.to_wire())),
                )
                if known.get(thread.id) != (last, count):
                    changed.append(thread.id)
        return changed

    def put_messages(self, thread_id: str, messages: Sequence[Message], *, who: str, recipients: str) -> None:
        """Store all messages of a thread (replacing what was there), index them, and mark the thread synced."""
        from pigeon.store.search import index_text

        with self._tx() as conn:
            row = conn.execute(
                "SELECT last_message_at, message_count FROM threads WHERE id = ?", (thread_id,)
            ).fetchone()
            if row is None:
                raise UnknownThread(thread_id)
            conn.execute("DELETE FROM messages WHERE thread_id = ?", (thread_id,))
            conn.executemany(
                "INSERT OR REPLACE INTO messages (id, thread_id, position, data) VALUES (?, ?, ?, ?)",
                [(m.id or f"{thread_id}:{n}", thread_id, n, json.dumps(m.to_wire())) for n, m in enumerate(messages)],
            )
            for message in messages:
                contact = message.sender.contact if message.sender else None
                if contact is not None and contact.id:
                    conn.execute(
                        "INSERT OR REPLACE INTO contacts (id, name, data) VALUES (?, ?, ?)",
                        (contact.id, contact.name, json.dumps(contact.to_wire())),
                    )
            attachment = any(b.filename for m in messages for b in m.content_blocks)
            conn.execute(
                "UPDATE threads SET who = ?, has_attachment = ?, synced_upto = ?, synced_count = ? WHERE id = ?",
                (who, int(attachment), row["last_message_at"], row["message_count"], thread_id),
            )
            subject = conn.execute("SELECT subject FROM threads WHERE id = ?", (thread_id,)).fetchone()["subject"]
            conn.execute("DELETE FROM search WHERE thread_id = ?", (thread_id,))
            conn.execute(
                "INSERT INTO search (thread_id, subject, sender, recipients, body) VALUES (?, ?, ?, ?, ?)",
                (thread_id, subject, who, recipients, index_text(messages)),
            )

    def put_many(self, items: Iterable[tuple[Thread, Sequence[Message], str, str]]) -> int:
        """Load many threads with their messages in one transaction (a direct fill: imports, benchmarks).

        Each item is ``(thread, messages, who, recipients)``; returns how many threads were stored.
        """
        from pigeon.store.search import index_text

        count = 0
        with self._tx() as conn:
            for thread, messages, who, recipients in items:
                if not thread.id:
                    continue
                last = _wire_time(thread.last_message_at)
                total = thread.message_count or len(messages)
                attachment = any(b.filename for m in messages for b in m.content_blocks)
                conn.execute(
                    "INSERT OR REPLACE INTO threads (id, inbox_id, subject, who, last_message_at, message_count, "
                    "has_attachment, synced_upto, synced_count, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        thread.id,
                        thread.inbox_id,
                        thread.subject or "",
                        who,
                        last,
                        total,
                        int(attachment),
                        last,
                        total,
                        json.dumps(thread.to_wire()),
                    ),
                )
                conn.executemany(
                    "INSERT OR REPLACE INTO messages (id, thread_id, position, data) VALUES (?, ?, ?, ?)",
                    [
                        (m.id or f"{thread.id}:{n}", thread.id, n, json.dumps(m.to_wire()))
                        for n, m in enumerate(messages)
                    ],
                )
                conn.execute(
                    "INSERT INTO search (thread_id, subject, sender, recipients, body) VALUES (?, ?, ?, ?, ?)",
                    (thread.id, thread.subject or "", who, recipients, index_text(messages)),
                )
                count += 1
        return count

    def messages(self, thread_id: str) -> list[Message]:
        from pigeon.models import Message

        rows = self._rows("SELECT data FROM messages WHERE thread_id = ? ORDER BY position", (thread_id,))
        return [Message.model_validate_json(r["data"]) for r in rows]

    def put_contact(self, contact: Contact) -> None:
        """Keep the latest version of a contact (after an edit)."""
        if not contact.id:
            return
        with self._tx() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO contacts (id, name, data) VALUES (?, ?, ?)",
                (contact.id, contact.name, json.dumps(contact.to_wire())),
            )

    def contacts(self) -> list[Contact]:
        from pigeon.models import Contact

        return [Contact.model_validate_json(r["data"]) for r in self._rows("SELECT data FROM contacts ORDER BY name")]

    def thread(self, thread_id: str) -> Thread | None:
        from pigeon.models import Thread

        rows = self._rows("SELECT data FROM threads WHERE id = ?", (thread_id,))
        return Thread.model_validate_json(rows[0]["data"]) if rows else None

    # --- lists ------------------------------------------------------------------------------------------------

    def _where(self, view: str, query: SearchQuery | None, inbox_id: str | None, now: datetime) -> tuple[str, dict]:
        if view.startswith("label:"):
            condition = "EXISTS (SELECT 1 FROM labels l WHERE l.thread_id = t.id AND l.label = :view_label)"
            params: dict[str, Any] = {"view_label": view.removeprefix("label:")}
        elif view in VIEW_CONDITIONS:
            condition, params = VIEW_CONDITIONS[view], {}
        else:
            raise ValueError(f"unknown view {view!r}; views are {', '.join(VIEWS)} and label:NAME")
        params["now"] = iso(now)
        parts = [condition]
        if inbox_id:
            parts.append("t.inbox_id = :inbox_id")
            params["inbox_id"] = inbox_id
        if query is not None:
            sql, more = query.sql()
            if sql:
                parts.append(sql)
                params |= more
        return " AND ".join(f"({p})" for p in parts), params

    def count(
        self,
        view: str = "inbox",
        query: str | SearchQuery | None = None,
        *,
        inbox_id: str | None = None,
        now: datetime | None = None,
        among: Sequence[str] | None = None,
    ) -> int:
        """How many threads a view holds (of ``among`` alone, if given: a lookup by id each)."""
        parsed = parse_query(query) if isinstance(query, str) else query
        where, params = self._where(view, parsed, inbox_id, now or datetime.now(UTC))
        if among is not None:
            names = [f":among{n}" for n in range(len(among))]
            where = f"t.id IN ({', '.join(names) or 'NULL'}) AND ({where})"
            params |= {name[1:]: thread_id for name, thread_id in zip(names, among, strict=True)}
        sql = f"SELECT COUNT(*) FROM threads t LEFT JOIN triage tr ON tr.thread_id = t.id WHERE {where}"
        return int(self._rows(sql, params)[0][0])

    def list(
        self,
        view: str = "inbox",
        query: str | SearchQuery | None = None,
        *,
        inbox_id: str | None = None,
        sort: str = "date",
        offset: int = 0,
        limit: int = 100,
        now: datetime | None = None,
    ) -> list[StoredThread]:
        """One page of a view, newest first (or by sender or subject)."""
        moment = now or datetime.now(UTC)
        parsed = parse_query(query) if isinstance(query, str) else query
        where, params = self._where(view, parsed, inbox_id, moment)
        order = SORTS.get(sort)
        if order is None:
            raise ValueError(f"unknown sort {sort!r}; sorts are {', '.join(SORTS)}")
        sql = (
            "SELECT t.*, tr.read_upto, tr.starred, tr.done_upto, tr.snoozed_until, tr.snooze_upto, tr.muted, "
            "(SELECT group_concat(label, char(31)) FROM labels l WHERE l.thread_id = t.id) AS label_list, "
            f"{UNREAD} AS is_unread, {DONE} AS is_done, {SNOOZED} AS is_snoozed "
            f"FROM threads t LEFT JOIN triage tr ON tr.thread_id = t.id WHERE {where} ORDER BY {order} "
            "LIMIT :limit OFFSET :offset"
        )
        rows = self._rows(sql, params | {"limit": limit, "offset": offset})
        return [self._stored(r) for r in rows]

    def position(
        self,
        thread_id: str,
        view: str = "inbox",
        query: str | SearchQuery | None = None,
        *,
        inbox_id: str | None = None,
        sort: str = "date",
        now: datetime | None = None,
    ) -> int | None:
        """Where thread ``thread_id`` is in a view as :meth:`list` orders it (0 is first), or None if it is not in
        it. Whether it is in the view is one lookup by id; only then is the view ranked."""
        parsed = parse_query(query) if isinstance(query, str) else query
        where, params = self._where(view, parsed, inbox_id, now or datetime.now(UTC))
        order = SORTS.get(sort)
        if order is None:
            raise ValueError(f"unknown sort {sort!r}; sorts are {', '.join(SORTS)}")
        params = params | {"thread_id": thread_id}
        joined = "FROM threads t LEFT JOIN triage tr ON tr.thread_id = t.id"
        if not self._rows(f"SELECT 1 {joined} WHERE t.id = :thread_id AND ({where})", params):
            return None
        ranked = f"SELECT t.id AS id, ROW_NUMBER() OVER (ORDER BY {order}) - 1 AS n {joined} WHERE {where}"
        rows = self._rows(f"SELECT n FROM ({ranked}) WHERE id = :thread_id", params)
        return int(rows[0][0]) if rows else None

    def _stored(self, row: sqlite3.Row) -> StoredThread:
        return StoredThread(
            id=row["id"],
            inbox_id=row["inbox_id"],
            subject=row["subject"],
            who=row["who"],
            last_message_at=datetime.fromisoformat(row["last_message_at"]) if row["last_message_at"] else None,
            message_count=row["message_count"],
            has_attachment=bool(row["has_attachment"]),
            unread=bool(row["is_unread"]),
            starred=bool(row["starred"]),
            done=bool(row["is_done"]),
            snoozed_until=datetime.fromisoformat(row["snoozed_until"]) if row["is_snoozed"] else None,
            muted=bool(row["muted"]),
            labels=tuple(sorted(row["label_list"].split("\x1f"))) if row["label_list"] else (),
        )

    def view_counts(self, now: datetime | None = None) -> dict[str, int]:
        """How many threads each view holds, labels included (``label:NAME``), read on the counting connection."""
        moment = now or datetime.now(UTC)
        counts: dict[str, int] = {}
        for view in VIEWS:
            where, params = self._where(view, None, None, moment)
            sql = f"SELECT COUNT(*) FROM threads t LEFT JOIN triage tr ON tr.thread_id = t.id WHERE {where}"
            counts[view] = int(self._counted_rows(sql, params)[0][0])
        for row in self._counted_rows("SELECT label, COUNT(*) AS n FROM labels GROUP BY label ORDER BY label"):
            counts[f"label:{row['label']}"] = row["n"]
        return counts

    def unread_by_inbox(self, now: datetime | None = None) -> dict[str, int]:
        """Unread threads per inbox (muted ones left out), read on the counting connection."""
        rows = self._counted_rows(
            f"SELECT t.inbox_id, COUNT(*) AS n FROM threads t LEFT JOIN triage tr ON tr.thread_id = t.id "
            f"WHERE {UNREAD} AND NOT {MUTED} GROUP BY t.inbox_id"
        )
        return {r["inbox_id"]: r["n"] for r in rows}

    # --- triage -------------------------------------------------------------------------------------------

    def _snapshot(self, conn: sqlite3.Connection, ids: Iterable[str]) -> list[dict[str, Any]]:
        snapshot = []
        for thread_id in ids:
            row = conn.execute("SELECT * FROM triage WHERE thread_id = ?", (thread_id,)).fetchone()
            labels = [r["label"] for r in conn.execute("SELECT label FROM labels WHERE thread_id = ?", (thread_id,))]
            snapshot.append({"thread_id": thread_id, "triage": dict(row) if row else None, "labels": labels})
        return snapshot

    def _change(self, ids: Sequence[str], description: str, apply: Any, *, record: bool = True) -> int:
        """Run ``apply(conn, thread_id, last_message_at)`` for each thread, recording one undo step (unless
        ``record`` is false: opening a thread marks it read without filling the undo stack)."""
        ids = list(dict.fromkeys(ids))
        with self._tx() as conn:
            known = {
                r["id"]: r["last_message_at"]
                for r in conn.execute(
                    f"SELECT id, last_message_at FROM threads WHERE id IN ({','.join('?' * len(ids))})", ids
                )
            }
            missing = [i for i in ids if i not in known]
            if missing:
                raise UnknownThread(", ".join(missing))
            before = self._snapshot(conn, ids)
            for thread_id in ids:
                conn.execute("INSERT OR IGNORE INTO triage (thread_id) VALUES (?)", (thread_id,))
                apply(conn, thread_id, known[thread_id])
            if not record:
                return len(ids)
            conn.execute(
                "INSERT INTO undo (description, changes, created_at) VALUES (?, ?, ?)",
                (description, json.dumps(before), iso(datetime.now(UTC))),
            )
            conn.execute(
                "DELETE FROM undo WHERE seq NOT IN (SELECT seq FROM undo ORDER BY seq DESC LIMIT ?)", (UNDO_KEEP,)
            )
        return len(ids)

    @staticmethod
    def _plural(count: int) -> str:
        return f"{count} thread{'s' if count != 1 else ''}"

    def mark_read(self, ids: Sequence[str], read: bool = True, *, record: bool = True) -> str:
        def apply(conn: sqlite3.Connection, thread_id: str, last: str) -> None:
            conn.execute("UPDATE triage SET read_upto = ? WHERE thread_id = ?", (last if read else None, thread_id))

        text = f"{'Read' if read else 'Unread'}: {self._plural(len(set(ids)))}"
        self._change(ids, text, apply, record=record)
        return text

    def star(self, ids: Sequence[str], on: bool = True) -> str:
        def apply(conn: sqlite3.Connection, thread_id: str, last: str) -> None:
            conn.execute("UPDATE triage SET starred = ? WHERE thread_id = ?", (int(on), thread_id))

        text = f"{'Starred' if on else 'Unstarred'}: {self._plural(len(set(ids)))}"
        self._change(ids, text, apply)
        return text

    def done(self, ids: Sequence[str], on: bool = True) -> str:
        def apply(conn: sqlite3.Connection, thread_id: str, last: str) -> None:
            conn.execute(
                "UPDATE triage SET done_upto = ?, snoozed_until = NULL, snooze_upto = NULL WHERE thread_id = ?",
                (last if on else None, thread_id),
            )

        text = f"{'Done' if on else 'Back in the inbox'}: {self._plural(len(set(ids)))}"
        self._change(ids, text, apply)
        return text

    def snooze(self, ids: Sequence[str], until: datetime) -> str:
        def apply(conn: sqlite3.Connection, thread_id: str, last: str) -> None:
            conn.execute(
                "UPDATE triage SET snoozed_until = ?, snooze_upto = ?, done_upto = NULL WHERE thread_id = ?",
                (iso(until), last, thread_id),
            )

        text = f"Snoozed until {until.astimezone(UTC):%a %d %b %H:%M} UTC: {self._plural(len(set(ids)))}"
        self._change(ids, text, apply)
        return text

    def mute(self, ids: Sequence[str], on: bool = True) -> str:
        def apply(conn: sqlite3.Connection, thread_id: str, last: str) -> None:
            conn.execute("UPDATE triage SET muted = ? WHERE thread_id = ?", (int(on), thread_id))

        text = f"{'Muted' if on else 'Unmuted'}: {self._plural(len(set(ids)))}"
        self._change(ids, text, apply)
        return text

    def label(self, ids: Sequence[str], label: str, on: bool = True) -> str:
        label = " ".join(label.split())
        if not label or len(label) > 60:
            raise ValueError("a label is 1 to 60 characters")

        def apply(conn: sqlite3.Connection, thread_id: str, last: str) -> None:
            if on:
                conn.execute("INSERT OR IGNORE INTO labels (thread_id, label) VALUES (?, ?)", (thread_id, label))
            else:
                conn.execute("DELETE FROM labels WHERE thread_id = ? AND label = ?", (thread_id, label))

        text = f"{'Labelled' if on else 'Unlabelled'} {label!r}: {self._plural(len(set(ids)))}"
        self._change(ids, text, apply)
        return text

    def undo_steps(self) -> list[UndoStep]:
        return [
            UndoStep(r["seq"], r["description"])
            for r in self._rows("SELECT seq, description FROM undo ORDER BY seq DESC")
        ]

    def undo_targets(self) -> list[str]:
        """The threads the next :meth:`undo` changes."""
        rows = self._rows("SELECT changes FROM undo ORDER BY seq DESC LIMIT 1")
        return [item["thread_id"] for item in json.loads(rows[0]["changes"])] if rows else []

    def undo(self) -> str | None:
        """Undo the last triage step; returns what was undone, or ``None`` when there is nothing to undo."""
        with self._tx() as conn:
            row = conn.execute("SELECT * FROM undo ORDER BY seq DESC LIMIT 1").fetchone()
            if row is None:
                return None
            for item in json.loads(row["changes"]):
                thread_id = item["thread_id"]
                conn.execute("DELETE FROM triage WHERE thread_id = ?", (thread_id,))
                if item["triage"] is not None:
                    columns = list(item["triage"])
                    conn.execute(
                        f"INSERT INTO triage ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                        [item["triage"][c] for c in columns],
                    )
                conn.execute("DELETE FROM labels WHERE thread_id = ?", (thread_id,))
                conn.executemany(
                    "INSERT INTO labels (thread_id, label) VALUES (?, ?)", [(thread_id, lab) for lab in item["labels"]]
                )
            conn.execute("DELETE FROM undo WHERE seq = ?", (row["seq"],))
        return str(row["description"])
