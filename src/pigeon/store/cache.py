"""The cache of the service's resources: inboxes, threads, messages and contacts, kept as the JSON the service
sent, with the columns the lists and search need and the full-text index beside them."""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, NamedTuple

from pigeon.sqlite import Database
from pigeon.store.decisions import attend, fresher, heed, own_addresses
from pigeon.store.owned import own_ids
from pigeon.store.pages import outline
from pigeon.store.readable import readable
from pigeon.store.search import index_text

if TYPE_CHECKING:  # the models load on first use: the list's rows are plain StoredThreads
    from pigeon.models import Contact, Inbox, Message, Thread, Unreadable


log = logging.getLogger("pigeon.store")


def one_contact_each(
    messages: Iterable[Message], shared: dict[tuple[str, object], Contact] | None = None
) -> Iterator[Message]:
    """The messages with each sender's contact one object, shared by the messages it wrote (the same version of
    the contact: id and update time); a long thread holds its writers once, not once a message. ``shared``: the
    contacts met so far, kept between calls (a thread read a page at a time)."""
    shared = {} if shared is None else shared
    for message in messages:
        contact = message.sender.contact if message.sender else None
        if message.sender is not None and contact is not None and contact.id:
            message.sender.contact = shared.setdefault((contact.id, contact.updated_at), contact)
        yield message


UNSETTLED = frozenset({"MESSAGE_STATUS_PENDING", "MESSAGE_STATUS_SENT"})
"""Statuses a message leaves later (the service sends, then delivers or fails it)."""
CONTACTS_KEPT = 1000
"""Contacts whose last written version the store remembers, so as not to write them again unchanged."""
SETTLING = timedelta(days=2)
"""How long a message may stay on its way before its status is taken as final (a service that never says
"delivered" must not have its thread read again at every sync for ever)."""


def unsettled(messages: Iterable[Message], now: datetime | None = None) -> bool:
    """Whether a status among ``messages`` may still change: on its way, and recent."""
    since = (now or datetime.now(UTC)) - SETTLING
    return any(
        str(getattr(m.status, "value", m.status)) in UNSETTLED and (m.created_at is None or m.created_at >= since)
        for m in messages
    )


class UnknownThread(LookupError):
    """A thread id the store does not have."""


class Fetched(NamedTuple):
    """A thread's messages as a sync fetched them, with the list's sender line and the recipients' addresses."""

    thread_id: str
    messages: Sequence[Message]
    who: str
    recipients: str
    unreadable: Sequence[Unreadable] = ()
    """The thread's messages that could not be read, with their places."""


def iso(moment: datetime) -> str:
    """The store's one spelling of a moment: fixed-width UTC, so text order is time order."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _wire_time(value: datetime | None) -> str:
    return iso(value) if value else ""


class CacheStore(Database):
    """What the service said, as of the last sync."""

    _kept_contacts: dict[str, Contact] | None = None  # see _kept

    def put_inboxes(self, inboxes: Sequence[Inbox]) -> None:
        with self.transaction() as conn:
            conn.execute("DELETE FROM inboxes")
            conn.executemany(
                "INSERT INTO inboxes (id, position, data) VALUES (?, ?, ?)",
                [(i.id, n, i.wire_json()) for n, i in enumerate(inboxes)],
            )

    def inboxes(self) -> list[Inbox]:
        from pigeon.models import Inbox

        return list(readable(Inbox, (r["data"] for r in self.rows("SELECT data FROM inboxes ORDER BY position"))))

    def put_threads(self, threads: Sequence[Thread]) -> list[str]:
        """Store the service's thread list; returns the ids whose messages must be fetched (new or moved)."""
        changed: list[str] = []
        with self.transaction() as conn:
            known = {  # (the page's threads only: reading every row for each page made a first sync quadratic)
                r["id"]: (r["synced_upto"], r["synced_count"])
                for r in conn.execute(
                    "SELECT id, synced_upto, synced_count FROM threads WHERE id IN (SELECT value FROM json_each(?))",
                    (json.dumps([t.id for t in threads if t.id]),),
                )
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
                    (thread.id, thread.inbox_id, thread.subject or "", last, count, thread.wire_json()),
                )
                if known.get(thread.id) != (last, count):
                    changed.append(thread.id)
        return changed

    def put_messages(
        self,
        thread_id: str,
        messages: Sequence[Message],
        *,
        who: str,
        recipients: str,
        unreadable: Sequence[Unreadable] = (),
    ) -> None:
        """Store all messages of a thread (replacing what was there), with the places of those that could not be
        read, index them, and mark the thread synced."""
        if not self.put_fetched([Fetched(thread_id, messages, who, recipients, unreadable)], index=True):
            raise UnknownThread(thread_id)

    def put_fetched(self, batch: Sequence[Fetched], *, index: bool, clashes: list[Unreadable] | None = None) -> int:
        """Store the messages of several threads in one transaction, each thread's replacing what was there, and
        mark them synced; their text goes into the full-text index now (``index``) or by :meth:`index_pending`
        later. A thread the store does not have is left out. A message whose id another thread holds (or an
        earlier message of its own) is left out and kept in its place as unreadable; those not met before are
        added to ``clashes``. Returns how many threads were stored."""
        stored = 0
        written: dict[str, Contact] = {}
        with self._lock:  # (the contacts kept follow the commits in their order)
            with self.transaction() as conn:
                own = own_addresses(conn)
                for fetched in batch:
                    stored += self._put_fetched(conn, fetched, own, index=index, written=written, clashes=clashes)
            self._kept(written)
        return stored

    def unmet(self, notes: Sequence[Unreadable]) -> list[Unreadable]:
        """Of records that could not be read, those the store does not hold already (to be reported)."""
        known = {
            r[0]
            for r in self.rows(
                "SELECT fingerprint FROM unreadable WHERE fingerprint IN (SELECT value FROM json_each(?))",
                (json.dumps([u.fingerprint for u in notes]),),
            )
        }
        return [u for u in notes if u.fingerprint not in known]

    def note_unreadable(self, listed: Sequence[Unreadable]) -> list[Unreadable]:
        """Keep the inboxes and threads a sync's lists could not read (in place of those of the last sync);
        returns those not met before, so that each is reported once until it changes."""
        with self._lock:
            fresh = self.unmet(listed)
            with self.transaction() as conn:
                conn.execute("DELETE FROM unreadable WHERE kind != 'message'")
                self._note(conn, listed)
        return fresh

    def unreadable_in(self, thread_id: str) -> list[Unreadable]:
        """The messages of a thread the last fetch could not read, in their order."""
        from pigeon.models import Unreadable

        rows = self.rows(
            "SELECT kind, record_id, why, fingerprint, thread_id, before FROM unreadable "
            "WHERE thread_id = ? AND kind = 'message' ORDER BY before, rowid",
            (thread_id,),
        )
        return [Unreadable(*r) for r in rows]

    @staticmethod
    def _note(conn: sqlite3.Connection, notes: Iterable[Unreadable]) -> None:
        conn.executemany(
            "INSERT OR REPLACE INTO unreadable (fingerprint, kind, thread_id, record_id, why, before) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [(u.fingerprint, u.kind, u.thread_id, u.record_id, u.why, u.before) for u in notes],
        )

    def _kept(self, written: dict[str, Contact]) -> dict[str, Contact]:
        """The contacts as this store last wrote them (a committed transaction's ``written`` added), at most
        ``CONTACTS_KEPT``: each message carries its sender's contact, so a first sync would write the same few
        contacts again for nearly every message."""
        kept = self._kept_contacts
        if kept is None or len(kept) + len(written) > CONTACTS_KEPT:
            kept = self._kept_contacts = {}
        kept.update(written)
        return kept

    def _contacts_to_write(self, messages: Sequence[Message], written: dict[str, Contact]) -> list[Contact]:
        """The senders' contacts that differ from what the store has (as far as it knows): each once."""
        kept = self._kept_contacts or {}
        found: list[Contact] = []
        for message in messages:
            contact = message.sender.contact if message.sender else None
            if contact is None or not contact.id:
                continue
            known = written.get(contact.id) or kept.get(contact.id)
            if known is not None and known == contact and known.model_fields_set == contact.model_fields_set:
                continue
            written[contact.id] = contact
            found.append(contact)
        return found

    def _put_fetched(
        self,
        conn: sqlite3.Connection,
        fetched: Fetched,
        own: frozenset[str],
        *,
        index: bool,
        written: dict[str, Contact],
        clashes: list[Unreadable] | None = None,
    ) -> int:
        thread_id = fetched.thread_id
        row = conn.execute(
            "SELECT rowid, subject, last_message_at, message_count FROM threads WHERE id = ?", (thread_id,)
        ).fetchone()
        if row is None:
            return 0
        messages, left_out, clashing = own_ids(conn, thread_id, fetched.messages, fetched.unreadable)
        if clashes is not None and clashing:
            met = {r[0] for r in conn.execute("SELECT fingerprint FROM unreadable WHERE thread_id = ?", (thread_id,))}
            clashes += [u for u in clashing if u.fingerprint not in met]
        conn.execute("DELETE FROM unreadable WHERE thread_id = ? AND kind = 'message'", (thread_id,))
        self._note(conn, left_out)
        conn.execute("DELETE FROM messages WHERE thread_id = ?", (thread_id,))
        conn.executemany(
            "INSERT OR REPLACE INTO messages (id, thread_id, position, data) VALUES (?, ?, ?, ?)",
            [(m.id or f"{thread_id}:{n}", thread_id, n, m.wire_json()) for n, m in enumerate(messages)],
        )
        outline(conn, thread_id, [(m.id or f"{thread_id}:{n}", m) for n, m in enumerate(messages)])
        contacts = self._contacts_to_write(messages, written)
        if contacts:  # (most threads bring none the store lacks)
            contacts = fresher(conn, contacts)
            conn.executemany(
                "INSERT OR REPLACE INTO contacts (id, name, data) VALUES (?, ?, ?)",
                [(c.id, c.name, c.wire_json()) for c in contacts],
            )
            heed(conn, contacts, iso(datetime.now(UTC)))
        attachment = any(b.filename for m in messages for b in m.content_blocks)
        synced_count = -1 if unsettled(messages) else row["message_count"]  # -1: the next sync reads it again
        synced = {
            "who": fetched.who,
            "has_attachment": int(attachment),
            "synced_upto": row["last_message_at"],
            "synced_count": synced_count,
            "indexed": int(index),
        }
        attend(conn, row["rowid"], thread_id, messages, own, synced)  # (sorted and marked synced in one write)
        conn.execute("DELETE FROM search WHERE rowid = ?", (row["rowid"],))
        if index:
            self._index(conn, row["rowid"], thread_id, row["subject"], fetched.who, fetched.recipients, messages)
        return 1

    @staticmethod
    def _index(
        conn: sqlite3.Connection,
        rowid: int,
        thread_id: str,
        subject: str,
        who: str,
        recipients: str,
        messages: Sequence[Message],
    ) -> None:
        # The senders as the list names them, and each other writer's full name and address (``from:ada@example.com``;
        # the user's own left out: ``from:`` is about who wrote to them).
        from pigeon.models import MessageDirection

        senders = dict.fromkeys(
            part
            for m in messages
            if m.sender is not None and m.direction != MessageDirection.OUTBOUND
            for part in ((m.sender.contact.name if m.sender.contact else ""), m.sender.raw_address or "")
            if part
        )
        conn.execute(
            "INSERT INTO search (rowid, thread_id, subject, sender, recipients, body) VALUES (?, ?, ?, ?, ?, ?)",
            (rowid, thread_id, subject, " ".join([who, *senders]), recipients, index_text(messages)),
        )

    def pending_index(self) -> int:
        """How many threads have messages whose text is not in the full-text index yet."""
        return int(self.rows("SELECT COUNT(*) FROM threads WHERE indexed = 0")[0][0])

    def index_pending(self, limit: int = 200) -> int:
        """Put the text of up to ``limit`` threads stored by a sync into the full-text index (one transaction);
        returns how many were indexed (0: none is left)."""
        from pigeon.models import Message

        with self.transaction() as conn:  # (read in it too: a sync storing a thread meanwhile waits, not lost)
            pending = conn.execute(
                "SELECT rowid, id, subject, who FROM threads WHERE indexed = 0 LIMIT ?", (limit,)
            ).fetchall()
            texts: dict[str, list[str]] = {}
            for r in conn.execute(
                "SELECT thread_id, data FROM messages WHERE thread_id IN (SELECT value FROM json_each(?)) "
                "ORDER BY thread_id, position",
                (json.dumps([p["id"] for p in pending]),),
            ):
                texts.setdefault(r["thread_id"], []).append(r["data"])
            for p in pending:
                messages = list(readable(Message, texts.get(p["id"], [])))
                recipients = " ".join(r.raw_address or "" for m in messages for r in m.recipients)
                conn.execute("DELETE FROM search WHERE rowid = ?", (p["rowid"],))
                self._index(conn, p["rowid"], p["id"], p["subject"], p["who"], recipients, messages)
                conn.execute("UPDATE threads SET indexed = 1 WHERE rowid = ?", (p["rowid"],))
        return len(pending)

    def put_many(self, items: Iterable[tuple[Thread, Sequence[Message], str, str]]) -> int:
        """Load many threads with their messages in one transaction (a direct fill: imports, benchmarks).

        Each item is ``(thread, messages, who, recipients)``; returns how many threads were stored.
        """
        count = 0
        written: dict[str, Contact] = {}
        with self._lock:
            with self.transaction() as conn:
                own = own_addresses(conn)
                for thread, messages, who, recipients in items:
                    if not thread.id:
                        continue
                    last = _wire_time(thread.last_message_at)
                    total = thread.message_count or len(messages)
                    conn.execute(
                        "INSERT INTO threads (id, inbox_id, subject, last_message_at, message_count, data) "
                        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET inbox_id = excluded.inbox_id, "
                        "subject = excluded.subject, last_message_at = excluded.last_message_at, "
                        "message_count = excluded.message_count, data = excluded.data",
                        (thread.id, thread.inbox_id, thread.subject or "", last, total, thread.wire_json()),
                    )
                    count += self._put_fetched(
                        conn, Fetched(thread.id, messages, who, recipients), own, index=True, written=written
                    )
            self._kept(written)
        return count

    def messages(self, thread_id: str) -> list[Message]:
        from pigeon.models import Message

        rows = self.each("SELECT data FROM messages WHERE thread_id = ? ORDER BY position", (thread_id,))
        return list(one_contact_each(readable(Message, (r["data"] for r in rows))))

    def keyed_messages(self, thread_id: str) -> list[tuple[str, Message]]:
        """The thread's messages in their stored order, each with its row's key (unreadable rows left out)."""
        from pigeon.models import Message

        rows = self.each("SELECT id, data FROM messages WHERE thread_id = ? ORDER BY position", (thread_id,))
        keyed = [(str(r["id"]), m) for r in rows for m in readable(Message, (r["data"],))]
        for _ in one_contact_each(m for _, m in keyed):  # (it shares the writers' contacts as it goes)
            pass
        return keyed

    def put_contact(self, contact: Contact) -> None:
        """Keep the latest version of a contact (after an edit), with the decisions it carries."""
        if not contact.id:
            return
        with self._lock:
            with self.transaction() as conn:
                conn.execute(
                    "INSERT OR REPLACE INTO contacts (id, name, data) VALUES (?, ?, ?)",
                    (contact.id, contact.name, contact.wire_json()),
                )
                heed(conn, [contact], iso(datetime.now(UTC)))
            self._kept({contact.id: contact})

    def contacts(self) -> list[Contact]:
        from pigeon.models import Contact

        return list(readable(Contact, (r["data"] for r in self.rows("SELECT data FROM contacts ORDER BY name"))))

    def thread(self, thread_id: str) -> Thread | None:
        from pigeon.models import Thread

        rows = self.rows("SELECT data FROM threads WHERE id = ?", (thread_id,))
        return next(readable(Thread, (r["data"] for r in rows)), None)
