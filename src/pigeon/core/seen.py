"""Who has read what the user sent: each participant's ``last_read_at`` against the user's last message, in words
("Seen by Ada 3 min ago; not yet by Bob"). Only what the service says is used: no tracking pixel is ever fetched."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, NamedTuple

from pigeon.core.conversation import Head, outbound

if TYPE_CHECKING:
    from pigeon.models import Thread


class Reader(NamedTuple):
    """A participant other than the user, when they last read the thread, and whether that was after ``since``."""

    contact_id: str
    read_at: datetime | None
    seen: bool


def last_mine(heads: Sequence[Head]) -> Head | None:
    """The user's last message of a thread (in stored order, which is time order), or None."""
    mine = outbound()
    return next((h for h in reversed(heads) if h.direction == mine), None)


def readers(thread: Thread, since: datetime | None) -> list[Reader]:
    """The participants other than the user who have read the thread, the latest reader first, then those who have
    not (in the thread's order). Empty when the service says of no one when they read it (it may not keep that)."""
    from pigeon.models import ParticipantRole

    others = [p for p in thread.participants if p.role != ParticipantRole.OWNER and p.contact_id]
    if not any(p.last_read_at for p in others):
        return []
    found = [
        Reader(p.contact_id or "", at, at is not None and (since is None or at >= since))
        for p in others
        for at in [p.last_read_at]
    ]
    seen = sorted((r for r in found if r.seen), key=lambda r: r.read_at or since or datetime.min, reverse=True)
    return seen + [r for r in found if not r.seen]


def seen_words(found: Sequence[Reader], name: Callable[[str], str], now: datetime) -> list[str]:
    """``found`` in a line or two: "Seen by Ada 3 min ago, Bob yesterday", "Not seen yet by Carol (read 2 days
    ago)"."""
    seen = [f"{name(r.contact_id)} {ago(r.read_at, now)}" for r in found if r.seen and r.read_at]
    waiting = [
        f"{name(r.contact_id)} (read {ago(r.read_at, now)})" if r.read_at else name(r.contact_id)
        for r in found
        if not r.seen
    ]
    lines = [f"Seen by {', '.join(seen)}"] if seen else []
    if waiting:
        lines.append(f"Not seen yet by {', '.join(waiting)}")
    return lines


def ago(moment: datetime, now: datetime) -> str:
    """How long ago ``moment`` was, as said: "just now", "3 min ago", "2 h ago", "yesterday", "4 days ago", "on
    3 Nov 2026" (a moment to come, as a clock set wrong makes it, is "just now")."""
    delta = now - moment
    if delta < timedelta(minutes=1):
        return "just now"
    if delta < timedelta(hours=1):
        return f"{int(delta.total_seconds() // 60)} min ago"
    if delta < timedelta(hours=24):
        return f"{int(delta.total_seconds() // 3600)} h ago"
    if delta < timedelta(days=2):
        return "yesterday"
    if delta < timedelta(days=7):
        return f"{delta.days} days ago"
    return f"on {moment.day} {moment:%b %Y}"
