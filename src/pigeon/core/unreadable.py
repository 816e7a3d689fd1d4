"""Unreadable records said in one line each: what a sync left out, and where a thread's unreadable messages would
be (the record itself is :class:`pigeon.models.Unreadable`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pigeon.sanitize import clean_line

if TYPE_CHECKING:
    from pigeon.models import Unreadable


def skipped_words(skipped: Sequence[Unreadable], *, why: bool = False) -> str:
    """What a sync left out, in one line short enough for a notification: "Left out 1 unreadable thread: 3f2a9c1e…"
    (with ``why``, the first one's reason too)."""
    count, first = len(skipped), skipped[0]
    kinds = {u.kind for u in skipped}
    kind = first.kind if len(kinds) == 1 else "record"
    noun = kind if count == 1 else ("inboxes" if kind == "inbox" else f"{kind}s")
    name = clean_line(first.record_id, limit=12) + (" …" if count > 1 else "")
    reason = f" ({clean_line(first.why, limit=100)})" if why else ""
    return f"Left out {count} unreadable {noun}: {name}{reason}"


def unreadable_words(unreadable: Sequence[Unreadable]) -> str:
    """A thread's messages that could not be read, in one line: "1 message could not be read: id: why"."""
    count = len(unreadable)
    noun = "message" if count == 1 else "messages"
    return (
        f"{count} {noun} could not be read: "
        + "; ".join(clean_line(str(u), limit=100) for u in unreadable[:3])
        + (" …" if count > 3 else "")
    )
