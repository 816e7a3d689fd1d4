"""Time as people type it ("2h", "friday 9am", "dec 1"), read in the user's local time from a given ``now``: moments
to come (a snooze's end) and days gone by (search's ``before:``/``after:``). docs/time-words.md has the rules."""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta

MORNING = time(8, 0)  # a day named without a time means its morning, as the snooze presets do
TONIGHT = time(20, 0)


def example(now: datetime) -> str:
    """Phrases to try, the date among them one to come (next month's first day)."""
    first = (now.date().replace(day=1) + timedelta(days=32)).replace(day=1)
    return f'try "2h", "friday 9am", "tomorrow 14:00" or "{first:%Y-%m-%d} 09:00"'


def day_example(now: datetime) -> str:
    """Day words to try, the date among them one gone by (this month's first day)."""
    return f'try "yesterday", "friday", "3d", "last week" or "{now.date().replace(day=1):%Y-%m-%d}"'


WEEKDAYS = {
    **{name: n for n, name in enumerate(("mon", "tue", "wed", "thu", "fri", "sat", "sun"))},
    **{
        name: n for n, name in enumerate(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))
    },
    "tues": 1,
    "wednes": 2,
    "thur": 3,
    "thurs": 3,
}
MONTH_NAMES = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
MONTHS = {
    **{name: n for n, name in enumerate(MONTH_NAMES, 1)},
    **{name[:3]: n for n, name in enumerate(MONTH_NAMES, 1)},
}
MONTHS["sept"] = 9
UNITS = {
    **dict.fromkeys(("m", "min", "mins", "minute", "minutes"), timedelta(minutes=1)),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), timedelta(hours=1)),
    **dict.fromkeys(("d", "day", "days"), timedelta(days=1)),
    **dict.fromkeys(("w", "wk", "wks", "week", "weeks"), timedelta(weeks=1)),
}
_SPAN = re.compile(r"(\d+|an?)\s*([a-z]+)")
_SPANS = re.compile(r"(?:(?:\d+|an?)\s*[a-z]+\s*)+")
_CLOCK = re.compile(r"(\d{1,2})(?::(\d{2}))?\s*(am|pm)?")
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}")
_FILLER = {"at", "on", "this", "the", ","}


class WhenError(ValueError):
    """A phrase that is not a time: names the words not understood and gives an example."""


def local(day: date, at: time) -> datetime:
    """``day`` at wall-clock ``at`` in the local zone, with the offset in force then (a DST change between now and
    then moves the offset, not the time on the clock)."""
    return datetime.combine(day, at).astimezone()


def _words(text: str) -> list[str]:
    return [w for w in re.sub(r"(\d)(am|pm)\b", r"\1 \2", text.lower().replace(",", " ")).split() if w]


def _span(text: str) -> timedelta | None:
    """``2h``, ``30 minutes``, ``1h30m``, ``a week``: the length said, or ``None`` if ``text`` is not one."""
    if not _SPANS.fullmatch(text):
        return None
    total = timedelta()
    for count, unit in _SPAN.findall(text):
        if unit not in UNITS:
            return None
        try:
            total += UNITS[unit] * (1 if count in {"a", "an"} else int(count))
        except OverflowError:
            raise WhenError(f"{text!r} is further than a calendar goes") from None
    return total


def _shifted(now: datetime, span: timedelta) -> datetime:
    """``now`` moved by ``span``: its days keep the time on the clock, its hours and minutes are time elapsed (a
    DST change between moves the one and not the other)."""
    days = timedelta(days=span.days)
    try:
        return ((datetime.combine(now.date(), now.time()) + days).astimezone() + (span - days)).astimezone()
    except (OverflowError, ValueError):  # (past the year 9999, or before the year 1)
        raise WhenError("that is further than a calendar goes") from None


def _clock(words: list[str]) -> tuple[time, int] | None:
    """A time of day at the end of ``words`` (``15:00``, ``3pm``, ``3 pm``, ``9:30am``, ``noon``, ``midnight``)
    and how many words it took."""
    if words and words[-1] in {"noon", "midday"}:
        return time(12, 0), 1
    if words and words[-1] == "midnight":
        return time(0, 0), 1
    took = 2 if len(words) >= 2 and words[-1] in {"am", "pm"} else 1
    text = "".join(words[-took:]) if words else ""
    found = _CLOCK.fullmatch(text)
    if not found or (found[2] is None and found[3] is None):  # a bare number is no time ("9" could be a day)
        return None
    hour, minute, half = int(found[1]), int(found[2] or 0), found[3]
    if half:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if half == "pm" else 0)
    if hour > 23 or minute > 59:
        return None
    return time(hour, minute), took


def _month_day(words: list[str]) -> tuple[int, int] | None:
    """``dec 1``, ``1 dec``, ``december 1st``: (month, day)."""
    if len(words) != 2:
        return None
    first, second = words
    if first in MONTHS:
        month, day = MONTHS[first], second
    elif second in MONTHS:
        month, day = MONTHS[second], first
    else:
        return None
    day = re.sub(r"(st|nd|rd|th)$", "", day)
    return (month, int(day)) if day.isdigit() and 1 <= int(day) <= 31 else None


KNOWN = {"today", "tonight", "tomorrow", "tmr", "tmrw", "yesterday", "next", "last", "this", "week", "weekend"}
KNOWN |= {"month", "in", "ago", "am", "pm", "noon", "midday", "midnight", *WEEKDAYS, *MONTHS, *UNITS}
_KNOWN_FORM = re.compile(
    r"\d+(st|nd|rd|th)?|\d{1,2}:\d{2}(am|pm)?|\d{4}-\d{2}-\d{2}|\d+(m|mins?|h|hrs?|d|w|wks?|am|pm)"
)


def _not_understood(text: str, words: list[str], example: str) -> WhenError:
    """Names the first word not understood (or the whole phrase, when each word is known but not so put)."""
    whole = text.strip()
    odd = next((w for w in words if w not in KNOWN and not _KNOWN_FORM.fullmatch(w)), None)
    if odd is None or odd == whole.lower():
        return WhenError(f'"{whole}" is not a time Pigeon understands: {example}')
    return WhenError(f'"{odd}" in "{whole}" is not understood: {example}')


def moment(text: str, now: datetime) -> datetime:
    """The moment to come that ``text`` names, local time: a span from now, a time of day (the next one), a day
    (its morning, or the time given), a date. :class:`WhenError` if it cannot be read or has passed."""
    local_now = now.astimezone()
    today = local_now.date()
    phrase = " ".join(_words(text))
    span = _span(phrase.removeprefix("in ").strip())
    if span is not None:
        if not span:
            raise WhenError(f'"{text.strip()}" is no time from now: {example(local_now)}')
        return _shifted(local_now, span)
    words = [w for w in phrase.split() if w not in _FILLER]
    clock = _clock(words)
    at, day_words = (clock[0], words[: -clock[1]]) if clock else (None, words)
    found: datetime | None = None
    if not day_words and at is not None:  # a time alone: today's, or tomorrow's once it has passed
        found = local(today, at)
        if found <= local_now:
            found = local(today + timedelta(days=1), at)
        return found
    day = _day_to_come(day_words, local_now, at)
    if day is None:
        written = _iso_moment(text)
        if written is None:
            raise _not_understood(text, day_words, example(local_now))
        if written <= local_now:
            raise WhenError(f'"{text.strip()}" is in the past: {example(local_now)}')
        return written
    if day_words == ["tonight"]:
        at = at or TONIGHT
    found = local(day, at or MORNING)
    if found <= local_now:
        raise WhenError(f'"{text.strip()}" is in the past ({found:%a %d %b %H:%M}): {example(local_now)}')
    return found


def _iso_moment(text: str) -> datetime | None:
    """``2026-12-01T09:00`` or with an offset (ISO 8601 with a time), as scripts write it."""
    try:
        written = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    return written.astimezone()  # (a time without an offset is local)


def _day_to_come(words: list[str], now: datetime, at: time | None) -> date | None:
    """The day that ``words`` name, looking forward from ``now``: today's weekday is next week's unless a time
    later today is given."""
    today = now.date()
    if words in (["today"], ["tonight"]):
        if words == ["tonight"] and now.time() >= TONIGHT and at is None:
            return today + timedelta(days=1)
        return today
    if words in (["tomorrow"], ["tmrw"], ["tmr"]):
        return today + timedelta(days=1)
    if words == ["weekend"]:  # the coming Saturday morning
        ahead = (5 - today.weekday()) % 7
        return today + timedelta(days=7 if ahead == 0 and now.time() >= (at or MORNING) else ahead)
    if words in (["next", "week"], ["nextweek"], ["next-week"]):
        return next_week(now)
    if len(words) == 2 and words[0] == "next" and words[1] in WEEKDAYS:
        words = words[1:]
    if len(words) == 1 and words[0] in WEEKDAYS:
        ahead = (WEEKDAYS[words[0]] - today.weekday()) % 7
        if ahead == 0 and (at is None or local(today, at) <= now):
            ahead = 7
        return today + timedelta(days=ahead)
    if len(words) == 1 and _ISO.fullmatch(words[0]):
        try:
            return date.fromisoformat(words[0])
        except ValueError:
            return None
    month_day = _month_day(words)
    if month_day:
        for year in range(today.year, today.year + 5):  # (29 Feb: the next year that has one)
            try:
                day = date(year, *month_day)
            except ValueError:
                continue
            if local(day, at or MORNING) > now:
                return day
    return None


def next_week(now: datetime) -> date:
    """Next week's Monday; on a Sunday evening, when that is tomorrow morning, the Monday after."""
    local_now = now.astimezone()
    monday = local_now.date() + timedelta(days=7 - local_now.weekday())
    if local_now.weekday() == 6 and local_now.time() >= time(5, 0):
        monday += timedelta(days=7)
    return monday


def day_start(text: str, now: datetime) -> datetime:
    """The start of the day ``text`` names looking back from ``now`` (search's ``before:``/``after:``): ``today``,
    ``yesterday``, a weekday (the latest, today's included), ``this week``/``last week`` (their Monday),
    ``this month``/``last month``, ``dec 1`` (the latest), ``2026-11-01``; or a span back from now, to the minute:
    ``3d``, ``2w``, ``5h``, ``2 weeks ago``. :class:`WhenError` if it cannot be read."""
    local_now = now.astimezone()
    today = local_now.date()
    words = [w for w in _words(text) if w != "ago"]
    span = _span(" ".join(words))
    if span is not None:
        return _shifted(local_now, -span)
    day: date | None = None
    if words == ["today"]:
        day = today
    elif words == ["yesterday"]:
        day = today - timedelta(days=1)
    elif len(words) in (1, 2) and words[-1] in WEEKDAYS and words[0] in {words[-1], "last"}:
        day = today - timedelta(days=(today.weekday() - WEEKDAYS[words[-1]]) % 7 or (7 if len(words) == 2 else 0))
    elif words in (["this", "week"], ["last", "week"]):
        day = today - timedelta(days=today.weekday() + (7 if words[0] == "last" else 0))
    elif words in (["this", "month"], ["last", "month"]):
        day = today.replace(day=1)
        if words[0] == "last":
            day = (day - timedelta(days=1)).replace(day=1)
    elif len(words) == 1 and _ISO.fullmatch(words[0]):
        try:
            day = date.fromisoformat(words[0])
        except ValueError:
            day = None
    elif month_day := _month_day(words):
        for year in range(today.year, today.year - 5, -1):
            try:
                day = date(year, *month_day)
            except ValueError:
                continue
            if day <= today:
                break
            day = None
    if day is None:
        raise _not_understood(text, words, day_example(local_now))
    return local(day, time(0, 0))
