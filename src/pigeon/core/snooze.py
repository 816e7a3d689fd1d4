"""When a snooze ends: the presets and typed phrases (``core/when.py``), in the user's local time (the TUI's picker
and the CLI alike)."""

from __future__ import annotations

from datetime import datetime, time, timedelta

from pigeon.core.when import MORNING, WhenError, local, moment, next_week

EVENING = time(21, 0)  # "later today" is not offered past this: later than that is tomorrow
NIGHT_ENDS = time(5, 0)  # before this, "tomorrow morning" is the morning about to come


def choices(now: datetime) -> list[tuple[str, str, datetime]]:
    """``[(word, label, when)]`` that make sense at this hour, each later than the one before, none the same:
    later today (only while it is still today, before the evening), the coming morning, this weekend (on a
    weekday before Friday), next week (a Monday that is not the coming morning)."""
    here = now.astimezone()
    today = here.date()
    found: list[tuple[str, str, datetime]] = []
    later = (here + timedelta(hours=3)).replace(minute=0, second=0, microsecond=0)
    if later.date() == today and later.time() <= EVENING:
        found.append(("later", "Later today", later))
    if here.time() < NIGHT_ENDS:  # past midnight: the coming morning is today's
        morning = local(today, MORNING)
        found.append(("tomorrow", "This morning", morning))
    else:
        morning = local(today + timedelta(days=1), MORNING)
        found.append(("tomorrow", "Tomorrow morning", morning))
    if here.weekday() < 4:  # Monday to Thursday
        saturday = today + timedelta(days=5 - here.weekday())
        found.append(("weekend", "This weekend", local(saturday, MORNING)))
    found.append(("next-week", "Next week", local(next_week(now), MORNING)))
    return found


def presets(now: datetime) -> list[tuple[str, datetime]]:
    """``[(label, when)]`` for the picker (see :func:`choices`)."""
    return [(label, when) for _, label, when in choices(now)]


PRESET_WORDS = {"later": "later", "tomorrow": "tomorrow", "weekend": "weekend", "next-week": "next-week"}
PRESET_WORDS |= {"nextweek": "next-week", "next week": "next-week"}


def parse_when(text: str, now: datetime) -> datetime:
    """When a typed snooze ends: a preset word means what the picker offers now (at 02:00 ``tomorrow`` is this
    morning, as its list says); anything else is read by :func:`pigeon.core.when.moment`."""
    value = " ".join(text.lower().split())
    offered = {word: when for word, _, when in choices(now)}
    preset = PRESET_WORDS.get(value)
    if preset in offered:
        return offered[preset]
    try:
        return moment(text, now)
    except WhenError:
        if preset is None:
            raise
        raise WhenError(
            f"{value!r} is not offered now (too late in the day or week): use one of {', '.join(offered)}"
        ) from None


def example(now: datetime) -> str:
    """A phrase for the picker's placeholder, with the moment it names: always one to come."""
    phrase = "friday 9am" if now.astimezone().weekday() != 4 else "monday 9am"
    later = now.astimezone().date() + timedelta(days=10)
    return f"{phrase} ({moment(phrase, now):%a %d %b %H:%M}), 2h, tomorrow 14:00, {later:%Y-%m-%d} 09:00"
