"""A record the service sent that the models cannot read: left out of what is kept, named, and fingerprinted, so
that it is reported once (until it changes) and a thread can show where its unreadable message would be."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError


@dataclass(frozen=True)
class Unreadable:
    """One record left out: what it is, its id as sent (``"?"`` without one) and why, in one line."""

    kind: str
    """``"inbox"``, ``"thread"`` or ``"message"``."""
    record_id: str
    why: str
    fingerprint: str
    """The same for the same record sent again, different once anything in it changes."""
    thread_id: str = ""
    """A message's thread, as asked for ("" for an inbox or a thread)."""
    before: int = 0
    """A message's place: how many readable messages of its thread come before it."""

    def __str__(self) -> str:
        return f"{self.record_id}: {self.why}"


def unreadable(kind: str, record: Any, error: ValidationError, *, thread_id: str = "", before: int = 0) -> Unreadable:
    """The note for ``record`` that ``error`` refused: its first problem, where it is, and its fingerprint."""
    problems = [(_where(e["loc"]), e["msg"]) for e in error.errors()]
    where = problems[0][0]
    why = [msg for place, msg in problems if place == where][-1]  # an open enum's last branch: "a valid string"
    return refused(kind, record, where, why, thread_id=thread_id, before=before)


def refused(kind: str, record: Any, where: str, why: str, *, thread_id: str = "", before: int = 0) -> Unreadable:
    """The note for ``record``, which the models read but Pigeon cannot keep (``where``: the field, ``why``)."""
    problems = [(where, why)]
    found = record.get("id") if isinstance(record, dict) else None
    name = found[:40] if isinstance(found, str) and found else "?"
    try:
        raw = json.dumps([kind, thread_id, record], sort_keys=True, default=repr)  # (ASCII: lone surrogates pass)
    except (ValueError, RecursionError):  # (nested past what the encoder takes: its id and problems stand for it)
        raw = json.dumps([kind, thread_id, name, problems])
    fingerprint = hashlib.sha256(raw.encode()).hexdigest()[:32]
    return Unreadable(kind, name, f"{where}: {why}", fingerprint, thread_id, before)


def _where(loc: tuple[int | str, ...]) -> str:
    """A field's path without the union branches pydantic names in it (``status.str-enum[MessageStatus]``)."""
    return ".".join(str(p) for p in loc if isinstance(p, int) or ("[" not in p and p != "str")) or "record"
