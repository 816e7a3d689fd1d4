"""Rules in config.toml: checked with a line a mistake (bad rules left out, the rest kept), tried without changing
anything, run on the new mail of a sync (not on a store's first), each rule's changes one undo step named after it,
and named by "why is this here?"."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import pytest

from pigeon.api import PigeonClient
from pigeon.config import load_config
from pigeon.core.actions import describe
from pigeon.core.mail import MailCore
from pigeon.core.rules import check_rules
from pigeon.locations import config_file
from pigeon.store.mailstore import MailStore
from pigeon_service.demo_newcomers import NEWCOMERS, newcomer_thread
from tests.command_line import run
from tests.server.conftest import NOW, Service, make_service

NEWSLETTER, PERSON, RECEIPT, ALERT = NEWCOMERS

RULES = """
[[rules]]
name = "tidepool"
match = "from:tidepool.example"
label = ["news", "reading"]
done = true

[[rules]]
name = "receipts"
match = "subject:receipt"
lane = "receipts"
star = true
"""


def test_each_mistake_is_one_line_naming_its_rule_and_the_good_rules_are_kept() -> None:
    raw = [
        {"name": "good", "match": "from:ada@example.com", "label": "ada"},
        {"match": "from:x@example.com", "done": True},
        {"name": "good", "match": "is:unread", "star": True},
        {"name": "typo", "match": "from:x", "archive": True},
        {"name": "operator", "match": "frm:ada", "done": True},
        {"name": "nothing", "match": "from:ada"},
        {"name": "no match", "done": True},
        {"name": "lane", "match": "from:ada", "lane": "spam"},
        {"name": "when", "match": "from:ada", "snooze": "the twelfth of never"},
        {"name": "both", "match": "from:ada", "done": True, "snooze": "2d"},
        {"name": "label", "match": "from:ada", "label": "x" * 61},
        {"name": "switch", "match": "from:ada", "done": "yes"},
        {"name": "fine too", "match": "subject:invoice", "snooze": "monday 9am", "mute": True},
    ]
    checked = check_rules(raw, NOW)
    assert [rule.name for rule in checked.rules] == ["good", "fine too"]
    assert checked.rules[1].words() == "mute, snooze monday 9am"
    mistakes = list(checked.mistakes)
    assert len(mistakes) == 11
    assert all("\n" not in line for line in mistakes)
    assert mistakes[0] == 'rule 2: needs a name (name = "...")'
    assert mistakes[1].startswith("rule 3 ('good'): rule 1 has the same name")
    assert mistakes[2].startswith("rule 4 ('typo'): unknown key 'archive'; a rule has name, match, label")
    assert mistakes[3].startswith("rule 5 ('operator'): match: 'frm:ada' is no operator; they are from:, to:")
    assert mistakes[4].startswith("rule 6 ('nothing'): does nothing")
    assert mistakes[5].startswith("rule 7 ('no match'): needs a match")
    assert mistakes[6] == "rule 8 ('lane'): lane 'spam' is none of people, newsletters, notifications, receipts"
    assert mistakes[7].startswith("rule 9 ('when'): snooze: ")
    assert mistakes[8].startswith("rule 10 ('both'): done and snooze both")
    assert mistakes[9].startswith("rule 11 ('label'): label is a label or a list of them")
    assert mistakes[10] == "rule 12 ('switch'): done is true or false"
    odd = check_rules(
        [
            {"name": "far", "match": "after:999999999999d", "done": True},
            {"name": "far snooze", "match": "from:ada", "snooze": "999999999999d"},
            {"name": "everything", "match": "*", "done": True},
            {"name": "shouting", "match": "Frm:ada", "done": True},
            {"name": "later", "match": "from:ada", "snooze": "later"},
        ],
        NOW,
    ).mistakes
    assert odd[0].startswith("rule 1 ('far'): match: ")
    assert odd[1].startswith("rule 2 ('far snooze'): snooze: ")
    assert all("further than a calendar goes" in line for line in odd[:2])
    assert odd[2] == "rule 3 ('everything'): match has no words to look for; it would act on all new mail"
    assert odd[3].startswith("rule 4 ('shouting'): match: 'Frm:ada' is no operator")
    assert odd[4].startswith("rule 5 ('later'): snooze: ")  # (the picker's "later" is offered at some hours only)
    assert check_rules({"name": "x"}, NOW).mistakes == (
        "rules: write each rule as a [[rules]] table (name, match, and what to do)",
    )
    assert check_rules(None, NOW) == check_rules([], NOW)


@pytest.fixture
async def ruled(tmp_path: Path) -> AsyncIterator[tuple[Service, Callable[..., MailCore]]]:
    service = make_service()
    made: list[MailCore] = []

    def core(rules: str = RULES) -> MailCore:
        file = tmp_path / "config.toml"
        file.write_text(rules)
        http = httpx.AsyncClient(transport=httpx.ASGITransport(app=service.app))
        client = PigeonClient("http://s.test", service.alice.token, http_client=http, max_retries=0)
        config = load_config(file, base_url="http://s.test")
        made.append(MailCore(config, MailStore(tmp_path / "s.sqlite3"), client=client, save_settings=False))
        made[-1].clock = lambda: NOW
        return made[-1]

    yield service, core
    for each in made:
        await each.close()
    service.db.close()


def arrive(service: Service, spec: dict[str, str]) -> str:
    message = newcomer_thread(service.db, None, service.alice.id, spec)
    assert message is not None
    return message.thread_id or ""


async def test_rules_run_on_the_new_mail_of_a_sync_one_undo_step_each_and_why_names_them(
    ruled: tuple[Service, Callable[..., MailCore]],
) -> None:
    service, cores = ruled
    core = cores()
    arrive(service, NEWSLETTER)  # there at the first sync: a store's first mail is not ruled
    await core.sync(index_now=True)
    assert core.store.undo_steps() == []
    first_news = core.store.list_threads("all", "from:tidepool.example", limit=5, now=NOW)
    assert [t.labels for t in first_news] == [()]

    news, receipt, person = arrive(service, NEWSLETTER), arrive(service, RECEIPT), arrive(service, PERSON)
    await core.sync(index_now=True)
    threads = {t.id: t for t in core.store.list_threads("all", limit=100, now=NOW)}
    assert threads[news].labels == ("news", "reading")
    assert threads[news].done
    assert threads[receipt].starred
    assert threads[receipt].labels == ()
    assert (threads[person].labels, threads[person].done, threads[person].starred) == ((), False, False)
    assert first_news[0].id not in (news, receipt)
    assert not threads[first_news[0].id].done  # (no new mail came to it: left be)
    why = await core.attention.why(receipt)
    assert "Changed by the rule 'receipts' (star, lane receipts; match: subject:receipt)." in why
    assert not any(line.startswith("Lane Receipts: the rule") for line in why)  # (in Receipts already: not moved)
    news_why = await core.attention.why(news)
    assert "Changed by the rule 'tidepool' (label news, label reading, done; match: from:tidepool.example)." in news_why

    steps = [describe(step.change) for step in core.store.undo_steps()]
    assert steps == ["Rule 'receipts': 1 thread", "Rule 'tidepool': 1 thread"]
    assert describe(core.undo() or pytest.fail("nothing undone")) == "Rule 'receipts': 1 thread"
    threads = {t.id: t for t in core.store.list_threads("all", limit=100, now=NOW)}
    assert not threads[receipt].starred
    assert "rule" not in " ".join(await core.attention.why(receipt))
    assert threads[news].done  # the other rule's step is its own
    assert describe(core.undo() or pytest.fail("nothing undone")) == "Rule 'tidepool': 1 thread"
    threads = {t.id: t for t in core.store.list_threads("all", limit=100, now=NOW)}
    assert (threads[news].labels, threads[news].done) == ((), False)


async def test_a_rules_lane_moves_the_thread_and_undo_moves_it_back(
    ruled: tuple[Service, Callable[..., MailCore]],
) -> None:
    service, cores = ruled
    core = cores('[[rules]]\nname = "northwind"\nmatch = "from:maya.lindqvist@northwind.example"\nlane = "receipts"\n')
    await core.sync(index_now=True)
    letter = arrive(service, PERSON)  # a person's: People by its signals
    await core.sync(index_now=True)
    for ruling in await core.attention.screen_all([letter], "in"):  # (out of the Screener, into the lanes)
        await asyncio.to_thread(ruling.apply)

    def lanes() -> dict[str, bool]:
        return {
            view: letter in {t.id for t in core.store.list_threads(view, limit=100, now=NOW)}
            for view in ("people", "receipts")
        }

    assert lanes() == {"people": False, "receipts": True}
    assert "Lane Receipts: the rule 'northwind' put it there." in await core.attention.why(letter)
    assert describe(core.undo() or pytest.fail("nothing undone")) == "Rule 'northwind': 1 thread"
    assert lanes() == {"people": True, "receipts": False}
    why = await core.attention.why(letter)
    assert "Lane People, from what the mail shows:" in why
    assert not any("rule" in line for line in why)


async def test_trying_the_rules_lists_what_each_would_change_and_changes_nothing(
    ruled: tuple[Service, Callable[..., MailCore]],
) -> None:
    service, cores = ruled
    arrive(service, NEWSLETTER)
    arrive(service, RECEIPT)
    core = cores()
    await core.sync(index_now=True)  # (a first sync: the rules did not run)
    before = core.store.view_counts(NOW), [t.id for t in core.store.list_threads("all", limit=100, now=NOW)]
    tried = await core.rules.tried()
    assert [(t.rule.name, t.count) for t in tried] == [("tidepool", 1), ("receipts", 1)]
    assert "Tidepool" in tried[0].threads[0].subject
    assert "receipt" in tried[1].threads[0].subject.lower()
    assert (core.store.view_counts(NOW), [t.id for t in core.store.list_threads("all", limit=100, now=NOW)]) == before
    assert core.store.undo_steps() == []
    assert all(not t.labels and not t.done for t in core.store.list_threads("all", limit=100, now=NOW))


def test_rules_check_try_and_run_from_the_command_line(running: Service, capsys: pytest.CaptureFixture[str]) -> None:
    file = config_file()
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(RULES)
    assert run("rules", "check") == (0, f"2 rules in {file}, all good.\n")
    newcomer_thread(running.db, None, running.alice.id, NEWSLETTER)
    assert run("sync")[0] == 0
    code, text = run("rules", "try")
    assert code == 0
    assert "Rule 'tidepool' (label news, label reading, done) would change 1 thread" in text
    assert "Tidepool Weekly #1" in text
    assert "Rule 'receipts' (star, lane receipts) would change 0 threads" in text
    assert text.endswith("Nothing was changed.\n")
    assert run("undo")[1] == "Nothing to undo.\n"
    newcomer_thread(running.db, None, running.alice.id, NEWSLETTER)
    capsys.readouterr()
    assert run("sync")[0] == 0
    assert "pigeon: Rules: 'tidepool' changed 1 thread (`pigeon undo` takes back the last)" in capsys.readouterr().err
    assert run("undo")[1] == "Undone: Rule 'tidepool': 1 thread\n"

    file.write_text(RULES + '\n[[rules]]\nname = "bad"\nmatch = "frm:x"\ndone = true\n')
    code, text = run("rules", "check")
    assert code == 2
    assert text.startswith("rule 3 ('bad'): match: ")
    assert text.count("\n") == 1
    code, text = run("rules", "try")
    assert code == 2
    assert text.startswith("Left out: rule 3 ('bad'): match: ")
    assert "Rule 'tidepool'" in text  # the others are tried


async def test_a_snooze_rule_snoozes_whatever_the_time_zone_and_v_moves_a_thread_a_rule_laned(
    ruled: tuple[Service, Callable[..., MailCore]], monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        service, cores = ruled
        core = cores(
            '[[rules]]\nname = "later"\nmatch = "from:maya.lindqvist@northwind.example"\nsnooze = "2h"\n'
            '[[rules]]\nname = "lane"\nmatch = "from:maya.lindqvist@northwind.example"\nlane = "receipts"\n'
            '[[rules]]\nname = "tag"\nmatch = "from:maya.lindqvist@northwind.example"\nlabel = "northwind"\n'
        )
        await core.sync(index_now=True)
        letter = arrive(service, PERSON)
        await core.sync(index_now=True)
        for ruling in await core.attention.screen_all([letter], "in"):
            await asyncio.to_thread(ruling.apply)
        assert letter in {t.id for t in core.store.list_threads("snoozed", limit=100, now=NOW)}
        why = await core.attention.why(letter)
        assert "Lane Receipts: the rule 'lane' put it there." in why  # (not 'tag', the last to change it)
        assert any(line.startswith("Changed by the rule 'tag'") for line in why)
        await asyncio.to_thread((await core.attention.teach(letter, "notifications")).apply)
        taught = core.store.why(letter)
        assert taught is not None
        assert taught.lane == "notifications"  # the user's lane for the sender wins
    finally:
        monkeypatch.undo()
        time.tzset()
