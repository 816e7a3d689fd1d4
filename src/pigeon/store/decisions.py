"""The decisions on senders, and what they make of each thread, inside the store's write transactions: a thread
sorted as its messages are stored (:func:`attend`), the decisions a contact carries read from it (:func:`heed`), and
every thread's ``lane`` and ``screen`` worked out from its sort and the decisions (:func:`settle`).

A decision is kept by key (an address, or ``@domain``), with its screen and its lane apart, each with where it came
from (``local``: made here; ``contact``: read from the contact). Which wins, for a thread: its address's decision,
then its domain's; then, for the screen, that the user wrote to the sender, then that the sender's mail was there
when screening began (``let_in_at_start``). A lane a rule put one thread in (``triage.lane``) comes before them all.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal

from pigeon.store.lanes import LANES, PEOPLE, domain_of, sort_thread

if TYPE_CHECKING:
    from pigeon.models import Contact, Message

SCREEN_KEY = "pigeon.screener"
"""A contact's metadata key for the Screener's decision on its addresses: ``"in"`` or ``"out"``."""
DOMAIN_KEY = "pigeon.screener_domain"
"""A contact's metadata key for decisions on whole domains: an object of domain to ``"in"`` or ``"out"``."""
LANE_KEY = "pigeon.lane"
"""A contact's metadata key for the lane its addresses' mail goes to (one of ``LANES``)."""

Screen = Literal["in", "out"]
WAITS, KEPT_OUT = 1, 2
SCREENS = ("in", "out")

def _settling(sender: str, domain: str, sorted_lane: str) -> str:
    """The SET of a thread's lane and screen, given SQL for its sender, its sender's domain and its sorted lane."""

    def decided(what: str) -> str:
        return (
            f"COALESCE((SELECT NULLIF({what}, '') FROM senders WHERE key = {sender}), "
            f"(SELECT NULLIF({what}, '') FROM senders WHERE key = '@' || {domain}))"
        )

    return f"""
    lane = COALESCE(
        (SELECT NULLIF(lane, '') FROM triage WHERE thread_id = threads.id), {decided("lane")}, {sorted_lane}, ''
    ),
    screen = CASE WHEN {sender} = '' THEN 0 ELSE CASE {decided("screen")}
        WHEN 'out' THEN {KEPT_OUT}
        WHEN 'in' THEN 0
        ELSE CASE
            WHEN EXISTS (SELECT 1 FROM written_to WHERE address = {sender}) THEN 0
            WHEN EXISTS (SELECT 1 FROM let_in_at_start WHERE address = {sender}) THEN 0
            WHEN (SELECT since IS NULL OR off FROM screening) THEN 0
            ELSE {WAITS} END
        END END
"""


_SETTLE = "UPDATE threads SET " + _settling(
    "threads.sender", "threads.sender_domain", "(SELECT lane FROM lanes WHERE thread_id = threads.id)"
)
_SORTED = (  # a thread just sorted: its sender and lane given, settled in the same write
    "UPDATE threads SET {also}sender = :sender, sender_domain = :domain, last_by = :last_by, sorted = 1, "
    + _settling(":sender", ":domain", ":lane")
    + " WHERE rowid = :rowid"
)


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")  # (the store's spelling: see cache.iso)


def settle(conn: sqlite3.Connection, where: str, params: Sequence[object] | dict[str, object] = ()) -> None:
    """Work out the lane and screen of the threads ``where`` picks (a condition over ``threads``)."""
    conn.execute(f"{_SETTLE} WHERE {where}", params)


def settle_keys(conn: sqlite3.Connection, keys: Iterable[str]) -> None:
    """Settle the threads of each key's sender (an address) or domain (``@domain``)."""
    for key in dict.fromkeys(keys):
        if key.startswith("@"):
            settle(conn, "sender_domain = ?", (key[1:],))
        else:
            settle(conn, "sender = ?", (key,))


def key_of(address: str, *, domain: bool) -> str:
    """The decisions' key: the address, or ``@domain``."""
    return "@" + domain_of(address) if domain else address.lower()


def own_addresses(conn: sqlite3.Connection) -> frozenset[str]:
    """The user's addresses: the inboxes'."""
    rows = conn.execute("SELECT lower(json_extract(data, '$.email')) FROM inboxes").fetchall()
    return frozenset(r[0] for r in rows if r[0])


def record(
    conn: sqlite3.Connection, key: str, what: str, value: str, *, source: str, contact_id: str, now: str
) -> None:
    """Keep one decision (``what``: ``screen`` or ``lane``) on a key, the other left as it was."""
    assert what in ("screen", "lane")  # (column names from here alone)
    conn.execute(
        f"INSERT INTO senders (key, {what}, {what}_from, contact_id, decided_at) VALUES (?, ?, ?, ?, ?) "
        f"ON CONFLICT(key) DO UPDATE SET {what} = excluded.{what}, {what}_from = excluded.{what}_from, "
        "contact_id = excluded.contact_id, decided_at = excluded.decided_at",
        (key, value, source, contact_id, now),
    )


def attend(
    conn: sqlite3.Connection,
    rowid: int,
    thread_id: str,
    messages: Sequence[Message],
    own: frozenset[str],
    also: Mapping[str, object] | None = None,
) -> None:
    """Sort a thread whose messages were just stored, and settle it, setting the columns ``also`` names in the same
    write. Anyone the user wrote to in it is let in, and their other threads not in People are sorted again later
    (``sorted = 0``: a signal they lacked)."""

    def written(address: str) -> bool:
        return conn.execute("SELECT 1 FROM written_to WHERE address = ?", (address,)).fetchone() is not None

    found = sort_thread(messages, own, written_to=written)
    signals = json.dumps([[s.lane, s.weight, s.said] for s in found.signals])
    conn.execute(
        "INSERT OR REPLACE INTO lanes (thread_id, lane, signals) VALUES (?, ?, ?)", (thread_id, found.lane, signals)
    )
    fresh = [a for a in found.written_to if a and not written(a)]
    conn.executemany("INSERT OR IGNORE INTO written_to (address) VALUES (?)", [(a,) for a in fresh])
    sender = {"sender": found.sender, "domain": domain_of(found.sender), "last_by": found.last_by}
    columns = "".join(f"{name} = :{name}, " for name in also or {})  # (names from the store's code alone)
    conn.execute(_SORTED.replace("{also}", columns, 1), {**(also or {}), **sender, "lane": found.lane, "rowid": rowid})
    if fresh:  # (by the sender's index: ``+screen`` keeps the planner off the Screener's, which may be long)
        among = (json.dumps(fresh), rowid)
        settle(conn, f"+screen = {WAITS} AND sender IN (SELECT value FROM json_each(?)) AND rowid != ?", among)
        conn.execute(
            "UPDATE threads SET sorted = 0 WHERE sender IN (SELECT value FROM json_each(?)) AND rowid != ? "
            f"AND EXISTS (SELECT 1 FROM lanes WHERE thread_id = threads.id AND lane != '{PEOPLE}')",
            among,
        )


def fresher(conn: sqlite3.Connection, contacts: Sequence[Contact]) -> list[Contact]:
    """Of contacts that came with mail, those no older than the store's own copy: a fetch begun before a decision
    was written to a contact, and stored after, carries the contact as it was, and must not undo it."""
    kept = {
        r[0]: r[1]
        for r in conn.execute(
            "SELECT id, json_extract(data, '$.updated_at') FROM contacts WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps([c.id for c in contacts]),),
        )
    }
    newer = []
    for contact in contacts:
        stored = _moment(kept.get(contact.id))
        if stored is None or contact.updated_at is None or contact.updated_at >= stored:
            newer.append(contact)
    return newer


def _moment(text: object) -> datetime | None:
    try:
        moment = datetime.fromisoformat(str(text)) if text else None
    except ValueError:
        return None
    return moment if moment is None or moment.tzinfo else moment.replace(tzinfo=UTC)


def heed(conn: sqlite3.Connection, contacts: Iterable[Contact], now: str) -> None:
    """Take the decisions that contacts carry in their metadata (made on any machine), in place of what the same
    contacts said before; a decision made here, or from another source, is left as it is."""
    for contact in contacts:
        if not contact.id:
            continue
        said = _said(contact)
        had = conn.execute("SELECT key FROM senders WHERE contact_id = ?", (contact.id,)).fetchall()
        if not said and not had:
            continue
        for what in ("screen", "lane"):
            conn.execute(
                f"UPDATE senders SET {what} = '', {what}_from = '' WHERE contact_id = ? AND {what}_from = 'contact'",
                (contact.id,),
            )
        for key, what, value in said:
            record(conn, key, what, value, source="contact", contact_id=contact.id, now=now)
        conn.execute("DELETE FROM senders WHERE contact_id = ? AND screen = '' AND lane = ''", (contact.id,))
        settle_keys(conn, [*(r[0] for r in had), *(key for key, _, _ in said)])


def _said(contact: Contact) -> list[tuple[str, str, str]]:
    """The decisions a contact's metadata holds, as (key, ``screen`` or ``lane``, value); odd values ignored."""
    meta = contact.metadata or {}
    screen, lane, domains = meta.get(SCREEN_KEY), meta.get(LANE_KEY), meta.get(DOMAIN_KEY)
    said: list[tuple[str, str, str]] = []
    for address in {e.email.strip().lower() for e in contact.emails if e.email}:
        if screen in SCREENS:
            said.append((address, "screen", str(screen)))
        if lane in LANES:
            said.append((address, "lane", str(lane)))
    if isinstance(domains, dict):
        said += [
            ("@" + domain.strip().lower(), "screen", value)
            for domain, value in domains.items()
            if isinstance(domain, str) and domain.strip() and value in SCREENS
        ]
    return said
