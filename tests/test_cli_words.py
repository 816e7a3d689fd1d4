"""The command line takes the same words: ``pigeon snooze --until PHRASE`` at a fixed clock, search with OR, - and
day words, an operator with no value refused in one line, and a list cut at --limit that says so."""

from __future__ import annotations

import json
from datetime import date, datetime, time, timedelta
from typing import Any

import pytest

from pigeon.cli.common import core_of
from tests.command_line import run
from tests.server.conftest import Service

WEDNESDAY_LATE = datetime.fromisoformat("2026-11-25T23:30").astimezone()


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[datetime]:
    """The commands' clock, frozen at the moment held in the list (a command's core is made per command)."""
    now = [WEDNESDAY_LATE]

    def frozen(*args: Any, **kwargs: Any) -> Any:
        core = core_of(*args, **kwargs)
        core.clock = lambda: now[0]
        return core

    monkeypatch.setattr("pigeon.cli.mail.core_of", frozen)
    return now


def threads(*query: str) -> list[dict[str, Any]]:
    code, text = run("search", "--json", "--limit", "1000", *query)
    assert code == 0
    return list(json.loads(text)["threads"])


def local_day(thread: dict[str, Any]) -> date:
    return datetime.fromisoformat(thread["last_message_at"]).astimezone().date()


def test_snooze_until_a_phrase_at_a_fixed_clock(running: Service, clock: list[datetime]) -> None:
    assert run("sync")[0] == 0
    first = threads()[0]["id"]
    code, text = run("snooze", first, "--until", "friday 9am")
    assert code == 0
    assert text.startswith("Snoozed until Fri 27 Nov 09:00: 1 thread.")
    [snoozed] = threads("is:snoozed")
    assert snoozed["snoozed_until"] == "2026-11-27T09:00:00+00:00"
    clock[0] = datetime.fromisoformat("2026-11-27T10:00").astimezone()  # Friday after nine: next Friday's
    assert run("snooze", first, "--until", "fri 9am")[1].startswith("Snoozed until Fri 04 Dec 09:00:")


def test_a_snooze_phrase_that_cannot_be_read_is_one_line_and_exit_2(
    running: Service, clock: list[datetime], capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("sync")[0] == 0
    first = threads()[0]["id"]
    assert run("snooze", first, "--until", "friday 9xm")[0] == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert '"9xm" in "friday 9xm" is not understood: try "2h"' in err
    assert not threads("is:snoozed")


def test_search_or_not_and_day_words(running: Service, clock: list[datetime]) -> None:
    assert run("sync")[0] == 0
    everything = threads()
    first, second = everything[0], everything[-1]
    one = {t["id"] for t in threads(f'subject:"{first["subject"]}"')}
    other = {t["id"] for t in threads(f'subject:"{second["subject"]}"')}
    either = f'subject:"{first["subject"]}" OR subject:"{second["subject"]}"'
    assert {t["id"] for t in threads(either)} == one | other
    assert run("star", first["id"])[0] == 0
    assert {t["id"] for t in threads("-is:starred")} == {t["id"] for t in everything} - {first["id"]}
    days = sorted(local_day(t) for t in everything)
    cut = days[len(days) // 2]
    clock[0] = datetime.combine(cut + timedelta(days=1), time(23, 30)).astimezone()  # late on the day after
    older = {t["id"] for t in everything if local_day(t) < cut}
    assert older
    assert {t["id"] for t in threads("before:yesterday")} == older


@pytest.mark.parametrize("query", ["from:", "invoice -label:", 'subject:""'])
def test_an_operator_with_no_value_is_one_line_and_exit_2(
    running: Service, query: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("sync")[0] == 0
    capsys.readouterr()
    assert run("search", *query.split())[0] == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "needs a value, as in" in err
    assert "Traceback" not in err


def test_a_list_cut_at_the_limit_says_so_on_stderr_and_json_stays_clean(
    running: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("sync")[0] == 0
    capsys.readouterr()
    code, text = run("search", "--json", "--limit", "10")
    assert code == 0
    assert len(json.loads(text)["threads"]) == 10
    assert capsys.readouterr().err == "pigeon: 10 of 25 shown; --limit to see more\n"
    code, text = run("search", "--limit", "25")
    assert code == 0
    assert capsys.readouterr().err == ""  # all shown: nothing to say
    run("search", "--limit", "3", "is:unread")
    assert capsys.readouterr().err == "pigeon: 3 of 25 shown; --limit to see more\n"
