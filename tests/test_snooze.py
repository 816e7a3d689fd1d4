"""Snooze presets make sense at any hour and any day; a word that is not offered, or a time that cannot be read,
says why."""

from __future__ import annotations

from datetime import datetime

import pytest

from pigeon.core.snooze import choices, parse_when


def at(text: str) -> datetime:
    """A local wall-clock time (the presets are in the user's local time)."""
    return datetime.fromisoformat(text).astimezone()


def offered(now: datetime) -> dict[str, str]:
    return {label: f"{when:%a %H:%M}" for _, label, when in choices(now)}


def test_sunday_late_evening_offers_no_later_today_and_next_week_is_not_tomorrow() -> None:
    assert offered(at("2026-11-22T22:58")) == {"Tomorrow morning": "Mon 08:00", "Next week": "Mon 08:00"}
    [(_, _, tomorrow), (_, _, next_week)] = choices(at("2026-11-22T22:58"))
    assert (next_week - tomorrow).days == 7


def test_a_weekday_morning_offers_all_four_in_order() -> None:
    now = at("2026-11-23T09:00")  # a Monday
    assert offered(now) == {
        "Later today": "Mon 12:00",
        "Tomorrow morning": "Tue 08:00",
        "This weekend": "Sat 08:00",
        "Next week": "Mon 08:00",
    }
    whens = [when for _, _, when in choices(now)]
    assert whens == sorted(whens)
    assert len(set(whens)) == len(whens)
    assert all(when > now for when in whens)


def test_after_midnight_the_coming_morning_is_this_morning() -> None:
    assert offered(at("2026-11-25T02:00")) == {  # a Wednesday night
        "Later today": "Wed 05:00",
        "This morning": "Wed 08:00",
        "This weekend": "Sat 08:00",
        "Next week": "Mon 08:00",
    }


def test_friday_evening_offers_no_weekend_and_no_later_today() -> None:
    assert offered(at("2026-11-27T19:30")) == {"Tomorrow morning": "Sat 08:00", "Next week": "Mon 08:00"}


def test_a_word_not_offered_now_or_a_time_that_cannot_be_read_says_why() -> None:
    with pytest.raises(ValueError, match="not offered now"):
        parse_when("later", at("2026-11-22T22:58"))
    with pytest.raises(ValueError, match="is not a time"):
        parse_when("someday", at("2026-11-22T22:58"))
    with pytest.raises(ValueError, match="in the past"):
        parse_when("2020-01-01 09:00", at("2026-11-22T22:58"))
    assert f"{parse_when('tomorrow', at('2026-11-22T22:58')):%a %H:%M}" == "Mon 08:00"
