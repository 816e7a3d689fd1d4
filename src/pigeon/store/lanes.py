"""Which lane of the Inbox a thread belongs in (People, Newsletters, Notifications, Receipts), found from its mail
alone by rules of thumb, with the signals that decided it, so that "why is this here?" can name them. The rules
are in docs/attention.md; every signal is a short sentence.

Only the thread's first messages from others are read (``READ_AT_MOST``), so sorting a thread costs the same
whatever its length.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from pigeon.models import Message, Recipient

LANES = ("people", "newsletters", "notifications", "receipts")
"""The Inbox's lanes, in the order they are shown."""
PEOPLE = "people"
READ_AT_MOST = 5
"""Messages from others read for signals: the first few say what a thread is."""
TEXT_AT_MOST = 20_000
"""Characters of a message read for signals (a long newsletter says what it is near its top and its foot)."""
SUBJECT_AT_MOST = 1_000
"""Characters of a subject read for signals."""
DECIDES = 2
"""A lane other than People needs this score, and more than People's."""

_AUTOMATED = (
    r"^(no[-_.]?reply|do[-_.]?not[-_.]?reply|notifications?|notify|alerts?|mailer-daemon|postmaster|bounces?"
    r"|automated|system|robot|bot|security|monitoring|ci|builds?)([-_.+].*)?$"
)
_LISTS = r"^(newsletters?|news|digest|updates|weekly|daily|marketing|hello|team|community|list)([-_.+].*)?$"
_BILLING = r"^(receipts?|billing|invoices?|orders?|payments?|shop|store|sales|accounts?)([-_.+].*)?$"
_UNSUBSCRIBE = r"unsubscribe|opt[- ]out|manage (your )?(email )?preferences"
_RECEIPT_WORDS = (
    r"\b(receipt|invoice|order (confirmation|#|number|no\.?)|your order|payment (received|confirmation)|amount due"
    r"|order total|subtotal|refund)\b"
)
AMOUNT = r"[$€£¥]\s?\d[\d,]{0,20}(\.\d\d)?|(?<![\d,])\d[\d,]{0,20}\.\d\d\s?(USD|EUR|GBP|CHF|JPY)\b"
"""An amount of money (the digits bounded: a long run of them is read in linear time)."""
_CURRENCIES = ("$", "€", "£", "¥", "USD", "EUR", "GBP", "CHF", "JPY")
_RECEIPT_MARKERS = ("receipt", "invoice", "order", "payment", "amount due", "subtotal", "refund")
"""Each of ``AMOUNT``'s and ``_RECEIPT_WORDS``' matches holds one of these: a text with none is not searched (finding
a word costs a tenth of a pattern's search, which tries every position)."""
_ALERT_WORDS = (
    r"\b(alert|notification|verify|verification|sign[- ]in|new login|password reset|security code|your code"
    r"|build (failed|passed)|deploy(ed|ment)?|incident|reminder)\b"
)
"""(These three read text already in lower case: a case-blind search of each took several times as long. Every
pattern here is compiled on first use, by re's own cache, not when the store is imported before the first frame.)"""
LINKS_MANY = 5
_PLAIN = r"\s*[^\s<>()\[\]\\,;:@\"]+@[^\s<>()\[\]\\,;:@\"]+\s*$"
"""An address alone, as most senders and recipients are given: nothing for the address parser to do."""


class Signal(NamedTuple):
    """One reason for a lane: the lane it speaks for, how strongly, and what was seen."""

    lane: str
    weight: int
    said: str


class Sorted(NamedTuple):
    """A thread sorted: the address of its first writer other than the user (``""``: the user alone wrote), its
    lane, the signals for that lane, who wrote its last message (``me``, ``person``, ``automated``; ``""`` for
    none), and the addresses the user wrote to in it."""

    sender: str
    lane: str
    signals: tuple[Signal, ...]
    last_by: str
    written_to: tuple[str, ...]


def parsed(text: str) -> str:
    """An address as written (``Ada <ada@example.com>``, ``ada@example.com``), lower case; text that holds no
    address as it is, stripped and lower case (a sender is never nobody because their address is odd)."""
    if re.match(_PLAIN, text):  # (most are: the parser costs half of sorting a thread)
        return text.strip().lower()
    from email.utils import parseaddr  # (the email package loads on first use, after the first frame)

    _, address = parseaddr(text)
    return (address or text).strip().lower()


def address_of(message: Message) -> str:
    """The sender's address, lower case (``""`` if it has none)."""
    sender = message.sender
    if sender is None:
        return ""
    address = parsed(sender.raw_address or "")
    if not address and sender.contact is not None:
        address = next((e.email for e in sender.contact.emails if e.email), "") or ""
    return address.strip().lower()


def recipient_address(recipient: Recipient) -> str:
    return parsed(recipient.raw_address or "")


def domain_of(address: str) -> str:
    """The domain of an address (after its last ``@``); ``""`` for text with none."""
    return address.rpartition("@")[2] if "@" in address else ""


def names_currency(text: str) -> bool:
    """Whether ``AMOUNT`` can match in ``text``: it names a currency."""
    return any(mark in text for mark in _CURRENCIES)


def _receipt_words(lower: str) -> re.Match[str] | None:
    return re.search(_RECEIPT_WORDS, lower) if any(mark in lower for mark in _RECEIPT_MARKERS) else None


def _amount(text: str) -> re.Match[str] | None:
    return re.search(AMOUNT, text) if names_currency(text) else None


def _local(address: str) -> str:
    return address.partition("@")[0]


def automated(address: str) -> bool:
    """An address no person answers (``no-reply@``, ``alerts@`` ...)."""
    return bool(re.match(_AUTOMATED, _local(address)))


def _text(message: Message) -> str:
    parts = [b.content or "" for b in message.content_blocks if not b.attached]
    return "\n".join(parts)[:TEXT_AT_MOST]


def _mine(message: Message, own: frozenset[str]) -> bool:
    """The user sent it: the service says so; or, when it says no direction, it comes from the user's address (a
    message the service calls inbound is someone else's, whatever its From says)."""
    direction = str(getattr(message.direction, "value", message.direction) or "")
    if direction in ("MESSAGE_DIRECTION_OUTBOUND", "MESSAGE_DIRECTION_INBOUND"):
        return direction == "MESSAGE_DIRECTION_OUTBOUND"
    return address_of(message) in own


def sort_thread(
    messages: Sequence[Message], own: Iterable[str] = (), *, written_to: Callable[[str], bool] = lambda _: False
) -> Sorted:
    """Sort a thread's messages (in their order) into a lane. ``own``: the user's addresses (the inboxes');
    ``written_to``: whether the user has written to an address in another thread."""
    mine_addresses = frozenset(a.lower() for a in own)
    theirs: list[Message] = []
    wrote: list[str] = []
    user_wrote = False
    for message in messages:
        if _mine(message, mine_addresses):
            user_wrote = True
            wrote += [a for a in map(recipient_address, message.recipients) if "@" in a]
        elif len(theirs) < READ_AT_MOST:
            theirs.append(message)
    last = messages[-1] if messages else None
    last_by = "" if last is None else "me" if _mine(last, mine_addresses) else "person"
    sender = next((a for a in map(address_of, theirs) if a), "(no address)" if theirs else "")
    if last is not None and last_by == "person" and automated(address_of(last)):
        last_by = "automated"
    signals = _signals(
        theirs, sender, user_wrote=user_wrote, known=bool(sender) and (sender in wrote or written_to(sender))
    )
    lane, chosen = _decide(signals)
    return Sorted(sender, lane, chosen, last_by, tuple(dict.fromkeys(wrote)))


def _signals(theirs: Sequence[Message], sender: str, *, user_wrote: bool, known: bool) -> list[Signal]:
    found: list[Signal] = []
    if user_wrote:
        found.append(Signal(PEOPLE, 3, "you wrote in this thread"))
    elif known:
        found.append(Signal(PEOPLE, 3, f"you have written to {sender}"))
    if not theirs:
        return found
    local = _local(sender)
    if sender and re.match(_AUTOMATED, local):
        found.append(Signal("notifications", 3, f"sent from an automated address ({sender})"))
    if sender and re.match(_LISTS, local):
        found.append(Signal("newsletters", 1, f"sent from a list-shaped address ({sender})"))
    if sender and re.match(_BILLING, local):
        found.append(Signal("receipts", 1, f"sent from a billing address ({sender})"))
    first = theirs[0]
    text = _text(first)
    subject = (first.subject or "")[:SUBJECT_AT_MOST]
    lower, lower_subject = text.lower(), subject.lower()
    if re.search(_UNSUBSCRIBE, lower):
        found.append(Signal("newsletters", 2, "it has an unsubscribe link"))
    links = lower.count("http://") + lower.count("https://")
    if links >= LINKS_MANY:
        found.append(Signal("newsletters", 1, f"it has many links ({links})"))
    headers = {str(k).lower().replace("_", "-"): v for m in theirs for k, v in (m.metadata or {}).items()}
    if {"list-unsubscribe", "list-id"} & set(headers):
        found.append(Signal("newsletters", 2, "it came through a mailing list"))
    if str(headers.get("auto-submitted", "no")).strip().lower() != "no":  # (RFC 3834: "no" is a person's)
        found.append(Signal("notifications", 2, "it says it was sent automatically"))
    words = _receipt_words(lower_subject) or _receipt_words(lower)
    if words:
        found.append(Signal("receipts", 2, f"it mentions {words.group(0).lower()!r}"))
    amount = _amount(subject) or _amount(text)
    if amount:
        found.append(Signal("receipts", 1, f"it names an amount ({amount.group(0)})"))
    alert = re.search(_ALERT_WORDS, lower_subject)
    if alert:
        found.append(Signal("notifications", 1, f"its subject says {alert.group(0).lower()!r}"))
    if not user_wrote and not known and len(first.recipients) <= 3 and not any(s.lane != PEOPLE for s in found):
        found.append(Signal(PEOPLE, 1, "written to you by a person, not to a list"))
    return found


def _decide(signals: Sequence[Signal]) -> tuple[str, tuple[Signal, ...]]:
    """The lane with the highest score (at least ``DECIDES``, and above People's), else People."""
    scores = {lane: sum(s.weight for s in signals if s.lane == lane) for lane in LANES}
    best = max(LANES[1:], key=lambda lane: (scores[lane], LANES.index(lane)))  # (a tie: the later lane)
    lane = best if scores[best] >= DECIDES and scores[best] > scores[PEOPLE] else PEOPLE
    return lane, tuple(s for s in signals if s.lane == lane)
