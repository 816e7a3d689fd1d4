"""What needs the user: letting a new sender in or keeping them out (the Screener), teaching a sender's lane, and
why a thread is where it is. A decision goes into the sender's contact on the service (a documented metadata key,
so that every machine on the account heeds it at its next sync); a sender without a contact, or a service that
cannot be reached, keeps it in the local store, and the caller is told so. No Textual here."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from pigeon.api import PigeonError
from pigeon.store.lanes import LANES, domain_of
from pigeon.store.screening import DOMAIN_KEY, KEPT_OUT, LANE_KEY, SCREEN_KEY, WAITS, Decision, Screen, Why, key_of

Screening = Screen
"""A Screener decision: ``"in"`` or ``"out"``."""
__all__ = ["LANES", "LANE_NAMES", "NOT_STORED", "YOURS", "Attention", "NoSender", "Ruling", "Screening"]

if TYPE_CHECKING:
    from pigeon.api.client import PigeonClient
    from pigeon.core.rules import Rules
    from pigeon.models import Contact
    from pigeon.store.mailstore import MailStore
    from pigeon.store.sync import SyncReport

LANE_NAMES = {
    "people": "People",
    "newsletters": "Newsletters",
    "notifications": "Notifications",
    "receipts": "Receipts",
}
NOT_STORED = "This thread is not in the store."
YOURS = "Only you wrote in this thread: it is yours, in no lane and never screened."
"""The two answers of :meth:`Attention.why` that name no sender (nothing to let in, keep out or teach)."""
REFETCHED = 10
"""Threads waiting in the Screener fetched again at each sync, the next ten each time: their messages carry the
senders' contacts as they are now, with any decision made on another machine."""


class Attends(Protocol):
    """What this reads of the mail core."""

    store: MailStore
    clock: Callable[[], datetime]
    rules: Rules

    async def connect(self) -> PigeonClient: ...

    def contact_changed(self, contact: Contact) -> None: ...


class NoSender(LookupError):
    """A thread with no sender to decide on: only the user wrote in it."""


@dataclass(frozen=True)
class Ruling:
    """A decision on a sender (``key``: an address or ``@domain``), written to their ``contact`` on the service
    (else ``why`` it was not), to be applied to the store: :meth:`apply`, in a thread."""

    store: MailStore
    now: datetime
    key: str
    screen: Screen | None
    lane: str | None
    contact: Contact | None = None
    why: str = ""

    def apply(self) -> int:
        """Move the sender's threads where the decision puts them; returns how many threads they have."""
        if self.contact is not None:
            self.store.put_contact(self.contact)  # (its metadata is the decision, read as any sync reads it)
        contact_id = self.contact.id or "" if self.contact is not None else ""
        return self.store.decide(self.key, now=self.now, screen=self.screen, lane=self.lane, contact_id=contact_id)

    def words(self, threads: int) -> str:
        """The decision as one line: what was done, to how many threads, and where it is kept when not on the
        contact (untrusted text inside: clean it to show it)."""
        whom = f"everyone at {self.key[1:]}" if self.key.startswith("@") else self.key
        done = {"in": "Let in", "out": "Kept out"}.get(self.screen or "", f"To {LANE_NAMES.get(self.lane or '', '')}")
        line = f"{done}: {whom} ({threads} thread{'s' if threads != 1 else ''})"
        return line if self.contact is not None else f"{line}. Kept on this machine only: {self.why}."


class Attention:
    """The Screener's and the lanes' decisions, and the reasons behind a thread's place (``core.attention``)."""

    def __init__(self, core: Attends, *, screening: bool = True) -> None:
        self.core = core
        self.screening = screening
        self._synced = False
        self._turn = 0  # where the next sync's look at the Screener starts
        self.moved = False  # the last sorting after a sync may have moved threads between views

    async def screen(self, thread_id: str, screen: Screen, *, domain: bool = False) -> Ruling:
        """Let the sender of a thread in, or keep them out, by their address or their whole domain: written to
        their contact now; :meth:`Ruling.apply` moves their threads."""
        key, sender = await self._target(thread_id, domain)
        return await self._rule(key, sender, screen, None)

    async def screen_all(self, ids: Sequence[str], screen: Screen, *, domain: bool = False) -> list[Ruling]:
        """:meth:`screen` for the senders of several threads, one decision (one update of a contact) a sender;
        threads only the user wrote in are passed over (:class:`NoSender` when every one is)."""
        rulings: dict[str, Ruling] = {}
        last: NoSender | None = None
        for thread_id in ids:
            try:
                key, sender = await self._target(thread_id, domain)
            except NoSender as exc:
                last = exc
                continue
            if key not in rulings:
                rulings[key] = await self._rule(key, sender, screen, None)
        if not rulings and last is not None:
            raise last
        return list(rulings.values())

    async def teach(self, thread_id: str, lane: str) -> Ruling:
        """Send the mail of a thread's sender to ``lane`` from now on (this thread too)."""
        if lane not in LANES:
            raise ValueError(f"unknown lane {lane!r}; lanes are {', '.join(LANES)}")
        key, sender = await self._target(thread_id, domain=False)
        return await self._rule(key, sender, None, lane)

    async def _target(self, thread_id: str, domain: bool) -> tuple[str, str]:
        sender = await asyncio.to_thread(self.core.store.sender_of, thread_id)
        if not sender:
            raise NoSender("Only you wrote in this thread: there is no sender to decide on.")
        if domain and not domain_of(sender):
            raise NoSender(f"{sender} has no domain.")
        return key_of(sender, domain=domain), sender

    async def _rule(self, key: str, address: str, screen: Screen | None, lane: str | None) -> Ruling:
        contact = await asyncio.to_thread(self.core.store.contact_for, address)
        ruling = Ruling(self.core.store, self.core.clock(), key, screen, lane)
        if contact is None or not contact.id:
            return replace(ruling, why="the service has no contact for this sender")
        from pigeon.models import UpdateContact

        meta = dict(contact.metadata or {})  # (as this machine last saw it: the service offers no compare-and-set)
        if lane is not None:
            meta[LANE_KEY] = lane
        elif key.startswith("@"):  # one domain's decision, the contact's others kept
            domains = meta.get(DOMAIN_KEY)
            meta[DOMAIN_KEY] = {**(domains if isinstance(domains, dict) else {}), key[1:]: screen}
        else:
            meta[SCREEN_KEY] = screen
        try:
            client = await self.core.connect()
            updated = await client.contacts.update(contact.id, UpdateContact(metadata=meta))
        except PigeonError as exc:
            return replace(ruling, why=f"the contact could not be updated ({exc})")
        except ValueError as exc:  # (its metadata as stored is more than the service takes back)
            return replace(ruling, why=f"the contact's metadata cannot be sent back ({str(exc).splitlines()[0]})")
        self.core.contact_changed(updated)
        return replace(ruling, contact=updated)

    async def why(self, thread_id: str) -> list[str]:
        """Why a thread is where it is, a line a reason (untrusted text inside: clean it to show it)."""
        return (await self.explained(thread_id))[0]

    async def explained(self, thread_id: str) -> tuple[list[str], list[str]]:
        """Why a thread is where it is (as :meth:`why`) and what can move it, from one reading of the store: ``lane``
        (another lane), and the Screener's ``in`` or ``out`` where it would change something."""
        found = await asyncio.to_thread(self.core.store.why, thread_id)
        if found is None:
            return [NOT_STORED], []
        if not found.sender:
            return [YOURS], []
        if found.screen == KEPT_OUT:
            moves = ["lane", "in"]
        else:
            moves = ["lane", "in", "out"] if found.screen == WAITS else ["lane", "out"]
        return self._reasons(found), moves

    def _reasons(self, found: Why) -> list[str]:
        lines: list[str] = []
        decisions = {d.key: d for d in found.decisions}
        by_address, by_domain = decisions.get(found.sender), decisions.get("@" + domain_of(found.sender))
        if found.screen == KEPT_OUT:
            lines.append(f"Kept out: {_decided_by(by_address, by_domain, 'screen', found.sender)}.")
        elif found.screen == WAITS:
            lines.append(
                f"In the Screener: {found.sender} is new to you: not let in yet, and you have not written to them."
            )
        elif _decided(by_address, by_domain, "screen"):
            lines.append(f"In the Inbox: {_decided_by(by_address, by_domain, 'screen', found.sender)}.")
        elif found.written_to:
            lines.append(f"In the Inbox: you have written to {found.sender}.")
        elif found.screening and found.let_in_at_start:
            lines.append(f"In the Inbox: {found.sender} wrote the mail you had when the Screener started.")
        else:
            lines.append("In the Inbox: the Screener is off." if not self.screening else "In the Inbox.")
        lane = LANE_NAMES.get(found.lane, found.lane or "none yet")
        if found.rule_lane:
            lines.append(f"Lane {lane}: the rule '{found.lane_rule or found.rule}' put it there.")
        elif _decided(by_address, by_domain, "lane"):
            lines.append(f"Lane {lane}: {_decided_by(by_address, by_domain, 'lane', found.sender)}.")
        else:
            lines.append(f"Lane {lane}, from what the mail shows:")
            lines += [f"- {s.said}" for s in found.signals] or ["- nothing but that a person wrote it"]
        let_in = found.screen not in (KEPT_OUT, WAITS)
        if let_in and found.last_by == "me":
            lines.append("Waiting: you wrote the last message, and no answer has come yet.")
        elif let_in and found.last_by == "person" and found.lane == "people":
            lines.append("Owed: a person wrote the last message, and you have not answered it yet.")
        if found.rule:
            lines.append(self.core.rules.said(found.rule))
        return lines

    def awaiting(self, ids: Sequence[str]) -> list[str]:
        """``ids``, if the user wrote the last message of each (what a reminder waits on an answer to); else
        ``ValueError`` naming how many did not."""
        others = self.core.store.not_last_by_me(ids)
        if others:
            what = "this thread" if len(ids) == 1 else f"{len(others)} of the {len(ids)} threads"
            raise ValueError(f"A reminder waits for an answer to you: the last message of {what} is not yours.")
        return list(ids)

    async def after_sync(self) -> None:
        """After a whole sync: apply the Screener setting, and start screening if the store's threads are sorted
        (a store an older Pigeon wrote: after :meth:`after_sorting`)."""
        self._synced = True
        await asyncio.to_thread(self.core.store.screening_on, self.screening)
        await asyncio.to_thread(self.core.store.begin_screening, self.core.clock())

    async def after_sorting(self) -> None:
        """Sort the threads that wait for it (after the search index is filled), then start screening if a whole
        sync has been (one under way has stored only some threads' senders, and screening lets in the senders there
        are when it starts). ``moved`` says whether threads may have changed view."""
        from pigeon.store.sync import sort_stored

        sorted_now = await sort_stored(self.core.store)
        began = self._synced and await asyncio.to_thread(self.core.store.begin_screening, self.core.clock())
        self.moved = bool(sorted_now or began)

    async def announced(self, report: SyncReport) -> SyncReport:
        """A sync's report with the new mail of senders kept out left out (it never notifies), and the threads of
        the rest that wait in the Screener named."""
        threads = {m.thread_id for m in report.new_messages if m.thread_id}
        screens = await asyncio.to_thread(self.core.store.screens, threads) if threads else {}
        kept = tuple(m for m in report.new_messages if screens.get(m.thread_id or "") != KEPT_OUT)
        waiting = frozenset(t for t, screen in screens.items() if screen == WAITS)
        return replace(report, new_messages=kept, screened=waiting)

    async def refetched(self) -> set[str]:
        """The threads a sync fetches again: a few of those waiting in the Screener, the next few at each sync
        (their messages carry their senders' contacts as they are now)."""
        store, now = self.core.store, self.core.clock()
        rows = await asyncio.to_thread(store.list_threads, "screener", limit=REFETCHED, offset=self._turn, now=now)
        self._turn = self._turn + REFETCHED if len(rows) == REFETCHED else 0
        return {row.id for row in rows}


def _decided(address: Decision | None, domain: Decision | None, what: str) -> bool:
    return any(d is not None and getattr(d, what) for d in (address, domain))


def _decided_by(address: Decision | None, domain: Decision | None, what: str, sender: str) -> str:
    decision = address if address is not None and getattr(address, what) else domain
    if decision is None or not getattr(decision, what):
        return f"{sender} is let in"
    whom = f"everyone at {decision.key[1:]}" if decision.key.startswith("@") else decision.key
    value = getattr(decision, what)
    said = {"in": "let in", "out": "kept out"}.get(value, f"taught to go to {LANE_NAMES.get(value, value)}")
    source = {
        "contact": "as their contact says (any machine on your account)",
        "local": "on this machine",
    }.get(getattr(decision, f"{what}_from"), "")
    return f"{whom} {said} {source}".strip()
