"""What needs the user, kept beside each thread: its sender and lane, whether it waits in the Screener or was kept
out, and who wrote last; the decisions that settle these (by address or by ``@domain``: made here, read from the
sender's contact, or taken for the senders a profile had when screening began), and why a thread is where it is.

A thread is sorted when its messages are stored (:func:`attend`, in the same transaction). Its ``lane`` and
``screen`` columns follow from its sort and the decisions (:func:`settle`), so a decision changes one indexed set
of rows, and the views test columns alone.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal

from pigeon.sqlite import Database
from pigeon.store.lanes import LANES, Signal, domain_of, sort_thread
from pigeon.store.readable import readable

if TYPE_CHECKING:
    from pigeon.models import Contact, Message

SCREEN_KEY = "pigeon.screener"
"""A contact's metadata key for the Screener's decision on its addresses: ``"in"`` or ``"out"``."""
DOMAIN_KEY = "pigeon.screener_domain"
"""A contact's metadata key for the decision on its addresses' whole domains: ``"in"`` or ``"out"``."""
LANE_KEY = "pigeon.lane"
"""A contact's metadata key for the lane its mail goes to (one of ``LANES``)."""

Screen = Literal["in", "out"]
WAITS, KEPT_OUT = 1, 2

_DECIDED = "COALESCE((SELECT NULLIF({0}, '') FROM senders WHERE key = threads.sender), (SELECT NULLIF({0}, '') FROM "
_DECIDED += "senders WHERE key = '@' || substr(threads.sender, instr(threads.sender, '@') + 1)))"
_SETTLE = f"""
UPDATE threads SET
    lane = COALESCE({_DECIDED.format("lane")}, (SELECT lane FROM lanes WHERE thread_id = threads.id), ''),
    screen = CASE
        WHEN threads.sender = '' THEN 0
        WHEN {_DECIDED.format("screen")} = 'out' THEN {KEPT_OUT}
        WHEN {_DECIDED.format("screen")} = 'in' THEN 0
        WHEN EXISTS (SELECT 1 FROM written_to WHERE address = threads.sender) THEN 0
        WHEN (SELECT since IS NULL OR off FROM screening) THEN 0
        ELSE {WAITS} END
"""


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")  # (the store's spelling: see cache.iso)


def settle(conn: sqlite3.Connection, where: str, params: Sequence[object] | dict[str, object] = ()) -> None:
    """Work out the lane and screen of the threads ``where`` picks (a condition over ``threads``)."""
    conn.execute(f"{_SETTLE} WHERE {where}", params)


def key_of(address: str, *, domain: bool) -> str:
    """The decisions' key: the address, or ``@domain``."""
    return "@" + domain_of(address) if domain else address.lower()


def own_addresses(conn: sqlite3.Connection) -> frozenset[str]:
    """The user's addresses: the inboxes'."""
    rows = conn.execute("SELECT lower(json_extract(data, '$.email')) FROM inboxes").fetchall()
    return frozenset(r[0] for r in rows if r[0])


def attend(
    conn: sqlite3.Connection, rowid: int, thread_id: str, messages: Sequence[Message], own: frozenset[str]
) -> None:
    """Sort a thread whose messages were just stored, and settle it (and the waiting threads of anyone the user
    wrote to in it)."""

    def written(address: str) -> bool:
        return conn.execute("SELECT 1 FROM written_to WHERE address = ?", (address,)).fetchone() is not None

    found = sort_thread(messages, own, written_to=written)
    signals = json.dumps([[s.lane, s.weight, s.said] for s in found.signals])
    conn.execute(
        "INSERT OR REPLACE INTO lanes (thread_id, lane, signals) VALUES (?, ?, ?)", (thread_id, found.lane, signals)
    )
    conn.execute(
        "UPDATE threads SET sender = ?, last_by = ?, sorted = 1 WHERE rowid = ?", (found.sender, found.last_by, rowid)
    )
    fresh = [a for a in found.written_to if a and not written(a)]
    conn.executemany("INSERT OR IGNORE INTO written_to (address) VALUES (?)", [(a,) for a in fresh])
    settle(conn, "rowid = ?", (rowid,))
    if fresh:
        settle(conn, f"screen = {WAITS} AND sender IN (SELECT value FROM json_each(?))", (json.dumps(fresh),))


def heed(conn: sqlite3.Connection, contacts: Iterable[Contact], now: str) -> None:
    """Take the decisions that contacts carry in their metadata (made on any machine), in place of what the same
    contacts said before."""
    for contact in contacts:
        if not contact.id:
            continue
        meta = contact.metadata or {}
        addresses = [e.email.lower() for e in contact.emails if e.email]
        had = [
            r[0]
            for r in conn.execute("SELECT key FROM senders WHERE contact_id = ? AND source = 'contact'", (contact.id,))
        ]
        rows: dict[str, tuple[str, str]] = {}
        screen, domain_screen, lane = meta.get(SCREEN_KEY), meta.get(DOMAIN_KEY), meta.get(LANE_KEY)
        for address in addresses:
            said = (screen if screen in ("in", "out") else "", lane if lane in LANES else "")
            if any(said):
                rows[address] = said
            if domain_screen in ("in", "out") and domain_of(address):
                rows["@" + domain_of(address)] = (str(domain_screen), "")
        if not had and not rows:
            continue
        conn.execute("DELETE FROM senders WHERE contact_id = ? AND source = 'contact'", (contact.id,))
        conn.executemany(
            "INSERT OR REPLACE INTO senders (key, screen, lane, source, contact_id, decided_at) "
            "VALUES (?, ?, ?, 'contact', ?, ?)",
            [(key, s, ln, contact.id, now) for key, (s, ln) in rows.items()],
        )
        _settle_keys(conn, [*had, *rows])


def _settle_keys(conn: sqlite3.Connection, keys: Iterable[str]) -> None:
    for key in dict.fromkeys(keys):
        if key.startswith("@"):
            settle(conn, "sender LIKE ? ESCAPE '\\'", ("%" + _escaped(key),))
        else:
            settle(conn, "sender = ?", (key,))


def _escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


@dataclass(frozen=True)
class Decision:
    """A decision on a sender's mail: by ``key`` (an address or ``@domain``), let in or kept out (``screen``),
    or sent to a ``lane``; ``source``: ``local`` (made here), ``contact`` (read from the contact), ``existing``
    (a sender of the profile's mail when screening began)."""

    key: str
    screen: str
    lane: str
    source: str


@dataclass(frozen=True)
class Why:
    """Why a thread is where it is."""

    sender: str
    lane: str
    found_lane: str
    signals: tuple[Signal, ...]
    screen: int
    decisions: tuple[Decision, ...]
    written_to: bool
    screening: bool


class ScreeningStore(Database):
    """The decisions and the sorting of threads, on the store's connection."""

    def decide(
        self, key: str, *, now: datetime, screen: Screen | None = None, lane: str | None = None, contact_id: str = ""
    ) -> int:
        """Record a decision made here on a sender (``key``: an address or ``@domain``), and settle their threads;
        returns how many threads they have."""
        if lane is not None and lane not in LANES:
            raise ValueError(f"unknown lane {lane!r}; lanes are {', '.join(LANES)}")
        source = "contact" if contact_id else "local"
        with self.transaction() as conn:
            row = conn.execute("SELECT screen, lane FROM senders WHERE key = ?", (key,)).fetchone()
            conn.execute(
                "INSERT OR REPLACE INTO senders (key, screen, lane, source, contact_id, decided_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    key,
                    screen if screen is not None else (row["screen"] if row else ""),
                    lane if lane is not None else (row["lane"] if row else ""),
                    source,
                    contact_id,
                    _iso(now),
                ),
            )
            _settle_keys(conn, [key])
            return int(
                conn.execute("SELECT COUNT(*) FROM threads WHERE " + _picks(key), (_pattern(key),)).fetchone()[0]
            )

    def sort_pending(self, limit: int = 200) -> int:
        """Sort up to ``limit`` threads stored before threads were sorted (one transaction); returns how many."""
        from pigeon.models import Message

        with self.transaction() as conn:
            pending = conn.execute("SELECT rowid, id FROM threads WHERE sorted = 0 LIMIT ?", (limit,)).fetchall()
            own = own_addresses(conn)
            for row in pending:
                texts = conn.execute(
                    "SELECT data FROM messages WHERE thread_id = ? ORDER BY position LIMIT 200", (row["id"],)
                )
                attend(conn, row["rowid"], row["id"], list(readable(Message, (r[0] for r in texts))), own)
        return len(pending)

    def begin_screening(self, now: datetime) -> bool:
        """Start screening once the store's threads are sorted (the first time only): every sender of the mail it
        holds then is let in, so that only senders new after it wait. Returns whether it began now."""
        with self.transaction() as conn:
            state = conn.execute("SELECT since FROM screening").fetchone()
            if state is None or state["since"] is not None:
                return False
            if conn.execute("SELECT 1 FROM threads WHERE sorted = 0 LIMIT 1").fetchone():
                return False
            conn.execute(
                "INSERT OR IGNORE INTO senders (key, screen, source, decided_at) "
                "SELECT DISTINCT sender, 'in', 'existing', ? FROM threads WHERE sender != ''",
                (_iso(now),),
            )
            conn.execute("UPDATE screening SET since = ?", (_iso(now),))
            settle(conn, "sender != ''")
        return True

    def screening_on(self, on: bool) -> None:
        """Turn the Screener on or off (a setting); off, nothing waits in it."""
        with self.transaction() as conn:
            before = conn.execute("SELECT off FROM screening").fetchone()
            if before is not None and bool(before[0]) == (not on):
                return
            conn.execute("UPDATE screening SET off = ?", (int(not on),))
            settle(conn, "sender != ''")

    def why(self, thread_id: str) -> Why | None:
        """Why a thread is where it is (``None``: no such thread)."""
        row = next(iter(self.rows("SELECT sender, lane, screen FROM threads WHERE id = ?", (thread_id,))), None)
        if row is None:
            return None
        sender = row["sender"]
        found = next(iter(self.rows("SELECT lane, signals FROM lanes WHERE thread_id = ?", (thread_id,))), None)
        signals = tuple(Signal(str(s[0]), int(s[1]), str(s[2])) for s in json.loads(found["signals"])) if found else ()
        keys = [sender, "@" + domain_of(sender)] if sender else []
        decisions = tuple(
            Decision(r["key"], r["screen"], r["lane"], r["source"])
            for key in keys
            for r in self.rows("SELECT * FROM senders WHERE key = ?", (key,))
        )
        wrote = bool(sender) and bool(self.rows("SELECT 1 FROM written_to WHERE address = ?", (sender,)))
        state = next(iter(self.rows("SELECT since IS NOT NULL AND NOT off AS on_ FROM screening")), None)
        return Why(
            sender=sender,
            lane=row["lane"],
            found_lane=found["lane"] if found else "",
            signals=signals,
            screen=int(row["screen"]),
            decisions=decisions,
            written_to=wrote,
            screening=bool(state and state[0]),
        )

    def screens(self, thread_ids: Iterable[str]) -> dict[str, int]:
        """Each thread's screen (0 let in, 1 waiting, 2 kept out), of those the store has."""
        rows = self.rows(
            "SELECT id, screen FROM threads WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(thread_ids)),),
        )
        return {r[0]: int(r[1]) for r in rows}

    def contact_for(self, address: str) -> Contact | None:
        """The stored contact with this email (the one updated last, if several have it)."""
        from pigeon.models import Contact

        rows = self.rows(
            "SELECT data FROM contacts WHERE EXISTS (SELECT 1 FROM json_each(json_extract(data, '$.emails')) "
            "WHERE lower(json_extract(value, '$.email')) = ?) ORDER BY json_extract(data, '$.updated_at') DESC",
            (address.lower(),),
        )
        return next(readable(Contact, (r[0] for r in rows)), None)

    def not_last_by_me(self, ids: Sequence[str]) -> list[str]:
        """Of threads ``ids``, those whose last message the user did not write."""
        rows = self.rows(
            "SELECT id FROM threads WHERE id IN (SELECT value FROM json_each(?)) AND last_by != 'me'",
            (json.dumps(list(ids)),),
        )
        return [r[0] for r in rows]

    def sender_of(self, thread_id: str) -> str:
        rows = self.rows("SELECT sender FROM threads WHERE id = ?", (thread_id,))
        return str(rows[0][0]) if rows else ""


def _picks(key: str) -> str:
    return "sender LIKE ? ESCAPE '\\'" if key.startswith("@") else "sender = ?"


def _pattern(key: str) -> str:
    return "%" + _escaped(key) if key.startswith("@") else key
