"""What needs the user, kept beside each thread: its sender and lane, whether it waits in the Screener or was kept
out, and who wrote last, as columns the views test (worked out in :mod:`~pigeon.store.decisions`); the decisions
made here, screening's start, threads an older Pigeon stored sorted, and why a thread is where it is.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from pigeon.sqlite import Database
from pigeon.store.decisions import (
    DOMAIN_KEY,
    KEPT_OUT,
    LANE_KEY,
    SCREEN_KEY,
    WAITS,
    Screen,
    attend,
    iso,
    key_of,
    own_addresses,
    record,
    settle,
    settle_keys,
)
from pigeon.store.lanes import LANES, Signal
from pigeon.store.readable import readable

if TYPE_CHECKING:
    from pigeon.models import Contact

__all__ = ["DOMAIN_KEY", "KEPT_OUT", "LANE_KEY", "SCREEN_KEY", "WAITS", "Decision", "Screen", "ScreeningStore", "Why"]
__all__ += ["key_of"]


@dataclass(frozen=True)
class Decision:
    """A decision on a sender's mail by ``key`` (an address or ``@domain``): let in or kept out (``screen``) and
    where that came from (``screen_from``: ``local`` made here, ``contact`` read from the contact), and the
    ``lane`` it goes to (``lane_from`` likewise)."""

    key: str
    screen: str
    screen_from: str
    lane: str
    lane_from: str


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
    let_in_at_start: bool
    screening: bool
    rule: str = ""
    """The rule that last changed the thread."""
    rule_lane: str = ""
    """The lane a rule put the thread in, and which rule (``lane_rule``)."""
    lane_rule: str = ""
    last_by: str = ""
    """Who wrote the thread's last message: ``me``, ``person``, ``automated`` (Owed and Waiting go by it)."""


class ScreeningStore(Database):
    """The decisions and the sorting of threads, on the store's connection."""

    def decide(
        self, key: str, *, now: datetime, screen: Screen | None = None, lane: str | None = None, contact_id: str = ""
    ) -> int:
        """Record a decision on a sender (``key``: an address or ``@domain``; from their contact if
        ``contact_id``, else made here), and settle their threads; returns how many threads they have."""
        if lane is not None and lane not in LANES:
            raise ValueError(f"unknown lane {lane!r}; lanes are {', '.join(LANES)}")
        source = "contact" if contact_id else "local"
        with self.transaction() as conn:
            for what, value in (("screen", screen), ("lane", lane)):
                if value is not None:
                    record(conn, key, what, value, source=source, contact_id=contact_id, now=iso(now))
            picks = ("sender_domain = ?", key[1:]) if key.startswith("@") else ("sender = ?", key)
            if lane is not None:  # (the user's lane for the sender wins over a rule's for one of their threads)
                theirs = f"SELECT id FROM threads WHERE {picks[0]}"
                conn.execute(f"UPDATE triage SET lane = '', lane_rule = '' WHERE thread_id IN ({theirs})", (picks[1],))
            settle_keys(conn, [key])
            return int(conn.execute(f"SELECT COUNT(*) FROM threads WHERE {picks[0]}", (picks[1],)).fetchone()[0])

    def sort_pending(self, limit: int = 200) -> int:
        """Sort up to ``limit`` threads not sorted yet (stored by an older Pigeon, or lacking a signal learnt
        since); one transaction; returns how many."""
        from pigeon.models import Message

        with self.transaction() as conn:
            pending = conn.execute("SELECT rowid, id FROM threads WHERE sorted = 0 LIMIT ?", (limit,)).fetchall()
            own = own_addresses(conn)
            for row in pending:
                texts = conn.execute("SELECT data FROM messages WHERE thread_id = ? ORDER BY position", (row["id"],))
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
            conn.execute("INSERT OR IGNORE INTO let_in_at_start SELECT DISTINCT sender FROM threads WHERE sender != ''")
            conn.execute("UPDATE screening SET since = ?", (iso(now),))
            settle(conn, "sender != ''")
        return True

    def screening_begun(self) -> bool:
        """Whether screening has begun: a whole sync has been (a first sync's mail is all new)."""
        row = next(iter(self.rows("SELECT since FROM screening")), None)
        return row is not None and row[0] is not None

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
        query = "SELECT sender, sender_domain, lane, screen, last_by FROM threads WHERE id = ?"
        row = next(iter(self.rows(query, (thread_id,))), None)
        if row is None:
            return None
        sender = row["sender"]
        found = next(iter(self.rows("SELECT lane, signals FROM lanes WHERE thread_id = ?", (thread_id,))), None)
        signals = tuple(Signal(str(s[0]), int(s[1]), str(s[2])) for s in json.loads(found["signals"])) if found else ()
        keys = [sender, "@" + row["sender_domain"]] if sender else []
        decisions = tuple(
            Decision(r["key"], r["screen"], r["screen_from"], r["lane"], r["lane_from"])
            for key in keys
            for r in self.rows("SELECT * FROM senders WHERE key = ?", (key,))
        )
        state = next(iter(self.rows("SELECT since IS NOT NULL AND NOT off AS on_ FROM screening")), None)
        rule_rows = self.rows("SELECT rule, lane, lane_rule FROM triage WHERE thread_id = ?", (thread_id,))
        ruled = rule_rows[0] if rule_rows else None
        return Why(
            sender=sender,
            lane=row["lane"],
            found_lane=found["lane"] if found else "",
            signals=signals,
            screen=int(row["screen"]),
            decisions=decisions,
            written_to=bool(sender) and bool(self.rows("SELECT 1 FROM written_to WHERE address = ?", (sender,))),
            let_in_at_start=bool(sender)
            and bool(self.rows("SELECT 1 FROM let_in_at_start WHERE address = ?", (sender,))),
            screening=bool(state and state[0]),
            rule=ruled["rule"] if ruled else "",
            rule_lane=ruled["lane"] if ruled else "",
            lane_rule=ruled["lane_rule"] if ruled else "",
            last_by=str(row["last_by"] or ""),
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
