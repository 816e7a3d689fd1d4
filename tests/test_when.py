"""Time as people type it, read at fixed clock times in a fixed zone (Europe/Berlin, which changes to winter time on
25 Oct 2026): late evening, weekends, month and year ends, across the change."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from pigeon.core.snooze import example, parse_when
from pigeon.core.when import WhenError, day_start, moment


@pytest.fixture(autouse=True)
def berlin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def at(text: str) -> datetime:
    """A local wall-clock time, as the UTC moment the app's clock would give."""
    return datetime.fromisoformat(text).astimezone()


def said(phrase: str, now: str) -> str:
    return f"{moment(phrase, at(now)):%a %d %b %Y %H:%M}"


WEDNESDAY_LATE = "2026-11-25T23:30"


@pytest.mark.parametrize(
    ("phrase", "meant"),
    [
        ("2h", "Thu 26 Nov 2026 01:30"),
        ("30m", "Thu 26 Nov 2026 00:00"),
        ("3d", "Sat 28 Nov 2026 23:30"),
        ("in 2 hours", "Thu 26 Nov 2026 01:30"),
        ("in 3 days", "Sat 28 Nov 2026 23:30"),
        ("1h30m", "Thu 26 Nov 2026 01:00"),
        ("15:00", "Thu 26 Nov 2026 15:00"),  # a time already past today is tomorrow's
        ("3pm", "Thu 26 Nov 2026 15:00"),
        ("9am", "Thu 26 Nov 2026 09:00"),
        ("23:45", "Wed 25 Nov 2026 23:45"),  # still to come today
        ("fri", "Fri 27 Nov 2026 08:00"),  # a day alone is its morning
        ("friday", "Fri 27 Nov 2026 08:00"),
        ("friday 9am", "Fri 27 Nov 2026 09:00"),
        ("Friday at 9 AM", "Fri 27 Nov 2026 09:00"),
        ("wed", "Wed 02 Dec 2026 08:00"),  # today's name alone is next week's
        ("wed 23:45", "Wed 25 Nov 2026 23:45"),  # unless a later time today is given
        ("tomorrow", "Thu 26 Nov 2026 08:00"),
        ("tomorrow 14:00", "Thu 26 Nov 2026 14:00"),
        ("next week", "Mon 30 Nov 2026 08:00"),
        ("next monday", "Mon 30 Nov 2026 08:00"),
        ("tonight", "Thu 26 Nov 2026 20:00"),  # tonight's 20:00 has passed
        ("this weekend", "Sat 28 Nov 2026 08:00"),
        ("2026-12-01", "Tue 01 Dec 2026 08:00"),
        ("2026-12-01 9:00", "Tue 01 Dec 2026 09:00"),
        ("dec 1", "Tue 01 Dec 2026 08:00"),
        ("1 dec 9am", "Tue 01 Dec 2026 09:00"),
        ("noon", "Thu 26 Nov 2026 12:00"),
        ("2026-12-01T09:00", "Tue 01 Dec 2026 09:00"),
    ],
)
def test_phrases_late_on_a_wednesday_evening(phrase: str, meant: str) -> None:
    assert said(phrase, WEDNESDAY_LATE) == meant


def test_weekends() -> None:
    saturday = "2026-11-28T10:00"
    assert said("this weekend", saturday) == "Sat 05 Dec 2026 08:00"  # the coming one: this one's morning is gone
    assert said("sat", saturday) == "Sat 05 Dec 2026 08:00"
    assert said("sat 18:00", saturday) == "Sat 28 Nov 2026 18:00"
    assert said("sunday", saturday) == "Sun 29 Nov 2026 08:00"
    assert said("this weekend", "2026-11-28T07:00") == "Sat 28 Nov 2026 08:00"
    sunday_evening = "2026-11-29T21:00"
    assert said("monday", sunday_evening) == "Mon 30 Nov 2026 08:00"
    assert said("tomorrow", sunday_evening) == "Mon 30 Nov 2026 08:00"
    assert said("next week", sunday_evening) == "Mon 07 Dec 2026 08:00"  # as the preset: not tomorrow morning


def test_month_and_year_ends() -> None:
    assert said("tomorrow", "2026-11-30T23:30") == "Tue 01 Dec 2026 08:00"
    assert said("9am", "2026-11-30T23:30") == "Tue 01 Dec 2026 09:00"
    assert said("tomorrow", "2026-12-31T22:00") == "Fri 01 Jan 2027 08:00"
    assert said("2h", "2026-12-31T23:30") == "Fri 01 Jan 2027 01:30"
    assert said("dec 1", "2026-12-31T12:00") == "Wed 01 Dec 2027 08:00"  # this year's has passed: next year's
    assert said("jan 1", "2026-12-31T12:00") == "Fri 01 Jan 2027 08:00"
    assert said("feb 29", "2026-12-31T12:00") == "Tue 29 Feb 2028 08:00"  # the next year that has one


def test_across_the_change_to_winter_time_days_keep_the_clock_and_hours_the_elapsed_time() -> None:
    friday = "2026-10-23T09:00"  # summer time; the clocks go back on Sunday 25 Oct at 03:00
    in_three_days = moment("in 3 days", at(friday))
    assert f"{in_three_days:%a %H:%M %z}" == "Mon 09:00 +0100"
    assert f"{moment('monday', at(friday)):%a %H:%M %z}" == "Mon 08:00 +0100"
    before = at("2026-10-25T01:30")
    two_hours = moment("2h", before)
    assert (two_hours - before).total_seconds() == 2 * 3600
    assert f"{two_hours:%H:%M %z}" == "02:30 +0100"  # the clock went back an hour in between


@pytest.mark.parametrize(
    ("phrase", "words"),
    [
        ("someday", '"someday" is not a time Pigeon understands: try "2h"'),
        ("friday 9xm", '"9xm" in "friday 9xm" is not understood: try'),
        ("feb 30", '"feb 30" is not a time Pigeon understands'),
        ("25:00", '"25:00" is not a time'),
        ("2020-01-01 09:00", '"2020-01-01 09:00" is in the past'),
        ("today 9am", '"today 9am" is in the past'),
        ("0m", '"0m" is no time from now'),
    ],
)
def test_what_is_not_understood_is_named_in_one_line_with_an_example(phrase: str, words: str) -> None:
    with pytest.raises(WhenError) as caught:
        moment(phrase, at(WEDNESDAY_LATE))
    assert str(caught.value).startswith(words)
    assert "\n" not in str(caught.value)
    assert '"2026-12-01 09:00"' in str(caught.value)  # next month's first: a date to come


def test_the_snooze_takes_the_presets_and_every_phrase() -> None:
    past_midnight = at("2026-11-25T02:00")
    assert f"{parse_when('tomorrow', past_midnight):%a %H:%M}" == "Wed 08:00"  # the preset: "This morning"
    assert f"{parse_when('tomorrow 9am', past_midnight):%a %H:%M}" == "Thu 09:00"
    assert f"{parse_when('next week', past_midnight):%a %d %H:%M}" == "Mon 30 08:00"
    friday_evening = at("2026-11-27T19:30")  # the weekend preset is not offered: the phrase still reads
    assert f"{parse_when('weekend', friday_evening):%a %d %H:%M}" == "Sat 28 08:00"
    with pytest.raises(ValueError, match="not offered now"):
        parse_when("later", at(WEDNESDAY_LATE))


@pytest.mark.parametrize("now", ["2026-11-25T23:30", "2026-11-27T09:30", "2026-11-27T23:59", "2026-12-31T23:00"])
def test_the_pickers_example_is_never_in_the_past(now: str) -> None:
    shown = example(at(now))
    phrase, moment_shown = shown.split(" (")[0], shown.split(" (")[1].split(")")[0]
    assert moment_shown == f"{moment(phrase, at(now)):%a %d %b %H:%M}"
    others = shown.split("), ")[1].split(", ")
    assert len(others) == 3
    for each in [phrase, *others]:
        assert moment(each, at(now)) > at(now), each


@pytest.mark.parametrize(
    ("phrase", "start"),
    [
        ("today", "Wed 25 Nov 2026 00:00"),
        ("yesterday", "Tue 24 Nov 2026 00:00"),
        ("wed", "Wed 25 Nov 2026 00:00"),  # the latest Wednesday: today
        ("monday", "Mon 23 Nov 2026 00:00"),
        ("thu", "Thu 19 Nov 2026 00:00"),
        ("last wed", "Wed 18 Nov 2026 00:00"),
        ("3d", "Sun 22 Nov 2026 23:30"),  # to the minute: the last 72 hours
        ("2w", "Wed 11 Nov 2026 23:30"),
        ("2 weeks ago", "Wed 11 Nov 2026 23:30"),
        ("this week", "Mon 23 Nov 2026 00:00"),
        ("last week", "Mon 16 Nov 2026 00:00"),
        ("last month", "Thu 01 Oct 2026 00:00"),
        ("dec 1", "Mon 01 Dec 2025 00:00"),  # the latest one
        ("2026-11-01", "Sun 01 Nov 2026 00:00"),
    ],
)
def test_search_days_look_back(phrase: str, start: str) -> None:
    assert f"{day_start(phrase, at(WEDNESDAY_LATE)):%a %d %b %Y %H:%M}" == start


def test_search_days_at_a_month_end_and_a_new_year() -> None:
    assert f"{day_start('yesterday', at('2026-12-01T00:10')):%d %b}" == "30 Nov"
    assert f"{day_start('last month', at('2027-01-01T09:00')):%d %b %Y}" == "01 Dec 2026"
    assert f"{day_start('sat', at('2026-11-29T12:00')):%a %d %b}" == "Sat 28 Nov"  # on a Sunday
    with pytest.raises(WhenError, match='"someday" is not a time Pigeon understands: try "yesterday"'):
        day_start("someday", at(WEDNESDAY_LATE))


def test_a_snooze_is_said_in_local_time_as_it_was_typed() -> None:
    from pigeon.core.actions import describe
    from pigeon.store.triage import Change

    until = parse_when("friday 9am", at(WEDNESDAY_LATE))
    assert until.utcoffset() is not None
    said = describe(Change("snooze", 1, True, until.astimezone(UTC).isoformat()))
    assert said == "Snoozed until Fri 27 Nov 09:00: 1 thread"  # not 08:00 UTC


def test_the_example_in_an_error_is_a_date_to_come_even_at_the_year_end() -> None:
    with pytest.raises(WhenError, match='"2027-01-01 09:00"'):
        moment("someday", at("2026-12-31T23:30"))
    with pytest.raises(WhenError, match=r'or "2026-12-01"$'):
        day_start("someday", at("2026-12-31T23:30"))
