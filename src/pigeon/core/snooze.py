"""When a snooze ends: the presets and typed dates, in the user's local time (the TUI's picker and the CLI alike)."""

from __future__ import annotations

from datetime import datetime, time, timedelta

MORNING = time(8, 0)


def presets(now: datetime) -> list[tuple[str, datetime]]:
    """``[(label, when)]``: later today, tomorrow morning, next week (Monday morning)."""
    local = now.astimezone()
    later = (local + timedelta(hours=3)).replace(minute=0, second=0, microsecond=0)
    tomorrow = datetime.combine(local.date() + timedelta(days=1), MORNING, local.tzinfo)
    monday = local.date() + timedelta(days=7 - local.weekday())
    return [
        ("Later today", later),
        ("Tomorrow morning", tomorrow),
        ("Next week", datetime.combine(monday, MORNING, local.tzinfo)),
    ]


PRESET_WORDS = {"later": 0, "tomorrow": 1, "next-week": 2, "nextweek": 2}


def parse_when(text: str, now: datetime) -> datetime:
    """A preset word (``later``, ``tomorrow``, ``next-week``) or a local date/time (``2026-11-23 09:00``)."""
    value = text.strip().lower()
    if value in PRESET_WORDS:
        return presets(now)[PRESET_WORDS[value]][1]
    try:
        moment = datetime.fromisoformat(text.strip().replace(" ", "T", 1))
    except ValueError:
        raise ValueError(
            f"{text!r} is not a time: use later, tomorrow, next-week or a date like 2026-11-23 09:00"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=now.astimezone().tzinfo)
    if moment <= now:
        raise ValueError(f"{text!r} is in the past")
    return moment
