"""When a snooze ends: the presets and typed dates, in the user's local time (the TUI's picker and the CLI alike)."""

from __future__ import annotations

from datetime import datetime, time, timedelta

MORNING = time(8, 0)
EVENING = time(21, 0)  # "later today" is not offered past this: later than that is tomorrow
NIGHT_ENDS = time(5, 0)  # before this, "tomorrow morning" is the morning about to come


def choices(now: datetime) -> list[tuple[str, str, datetime]]:
    """``[(word, label, when)]`` that make sense at this hour, each later than the one before, none the same:
    later today (only while it is still today, before the evening), the coming morning, this weekend (on a
    weekday before Friday), next week (a Monday that is not the coming morning)."""
    local = now.astimezone()
    today = local.date()
    found: list[tuple[str, str, datetime]] = []
    later = (local + timedelta(hours=3)).replace(minute=0, second=0, microsecond=0)
    if later.date() == today and later.time() <= EVENING:
        found.append(("later", "Later today", later))
    if local.time() < NIGHT_ENDS:  # past midnight: the coming morning is today's
        morning = datetime.combine(today, MORNING, local.tzinfo)
        found.append(("tomorrow", "This morning", morning))
    else:
        morning = datetime.combine(today + timedelta(days=1), MORNING, local.tzinfo)
        found.append(("tomorrow", "Tomorrow morning", morning))
    if local.weekday() < 4:  # Monday to Thursday
        saturday = today + timedelta(days=5 - local.weekday())
        found.append(("weekend", "This weekend", datetime.combine(saturday, MORNING, local.tzinfo)))
    monday = datetime.combine(today + timedelta(days=7 - local.weekday()), MORNING, local.tzinfo)
    if monday <= morning:  # on Sunday evening next Monday is tomorrow morning: next week is the one after
        monday += timedelta(days=7)
    found.append(("next-week", "Next week", monday))
    return found


def presets(now: datetime) -> list[tuple[str, datetime]]:
    """``[(label, when)]`` for the picker (see :func:`choices`)."""
    return [(label, when) for _, label, when in choices(now)]


PRESET_WORDS = {"later": "later", "tomorrow": "tomorrow", "weekend": "weekend", "next-week": "next-week"}
PRESET_WORDS["nextweek"] = "next-week"


def parse_when(text: str, now: datetime) -> datetime:
    """A preset word (``later``, ``tomorrow``, ``next-week``) or a local date/time (``2026-11-23 09:00``)."""
    value = text.strip().lower()
    if value in PRESET_WORDS:
        offered = {word: when for word, _, when in choices(now)}
        word = PRESET_WORDS[value]
        if word not in offered:
            raise ValueError(
                f"{value!r} is not offered now (too late in the day or week): use one of {', '.join(offered)}"
            )
        return offered[word]
    try:
        moment = datetime.fromisoformat(text.strip().replace(" ", "T", 1))
    except ValueError:
        raise ValueError(
            f"{text!r} is not a time: use later, tomorrow, weekend, next-week or a date like 2026-11-23 09:00"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=now.astimezone().tzinfo)
    if moment <= now:
        raise ValueError(f"{text!r} is in the past")
    return moment
