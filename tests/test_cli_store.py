"""The CLI over the local store: sync, search, triage and undo, scriptable with --json."""

from __future__ import annotations

import gc
import json
import re
from typing import Any

import pytest
from starlette.types import Receive, Scope, Send

from pigeon.cli import main
from pigeon_service.app import ServerSettings, create_app
from pigeon_service.run import start_in_thread
from tests.command_line import run
from tests.server.conftest import Service, make_service


def test_sync_then_search_triage_and_undo(running: Service, capsys: pytest.CaptureFixture[str]) -> None:
    code, text = run("sync")
    assert code == 0
    assert "Synced 25 threads (25 changed" in text
    assert "0 changed" in run("sync")[1]

    code, text = run("search", "--json", "is:unread")
    found = json.loads(text)["threads"]
    assert code == 0
    assert len(found) == 25
    first = found[0]["id"]

    assert run("done", first) == (0, "Done: 1 thread. `pigeon undo` takes it back.\n")
    inbox = [t["id"] for t in json.loads(run("search", "--json", "--view", "inbox")[1])["threads"]]
    assert first not in inbox
    assert json.loads(run("views", "--json")[1])["done"] == 1

    assert run("star", first)[0] == 0
    assert run("label", first, "--add", "clients")[0] == 0
    labelled = json.loads(run("search", "--json", "label:clients")[1])["threads"]
    assert [(t["id"], t["starred"], t["labels"]) for t in labelled] == [(first, True, ["clients"])]

    assert run("undo")[1] == "Undone: Labelled 'clients': 1 thread\n"
    assert run("undo")[1] == "Undone: Starred: 1 thread\n"
    assert run("undo")[1] == "Undone: Done: 1 thread\n"
    assert first in [t["id"] for t in json.loads(run("search", "--json", "--view", "inbox")[1])["threads"]]
    assert run("undo")[1] == "Nothing to undo.\n"

    assert run("done", first[:8]) == (0, "Done: 1 thread. `pigeon undo` takes it back.\n")  # a unique prefix
    assert run("done", first[:8]) == (0, "Nothing changed: the threads were already so.\n")
    assert run("label", first, "--remove", "never-had") == (
        0,
        "Nothing changed: the threads did not have the label 'never-had'.\n",
    )
    assert run("undo")[1] == "Undone: Done: 1 thread\n"  # the no-op steps were none

    code, text = run("snooze", first, "--until", "tomorrow")
    assert code == 0
    assert "Snoozed until" in text
    assert json.loads(run("views", "--json")[1])["snoozed"] == 1


@pytest.mark.parametrize(
    ("argv", "complaint"),
    [
        (["snooze", "x", "--until", "someday"], "is not a time"),
        (["done", "not-a-thread"], "Not in the local store"),
        (["search", "is:sleepy"], "is: takes"),
        (["search", "--view", "nowhere"], "unknown view"),
        (["label", "x"], "--add"),
        (["done", ""], "matches no thread"),
        (["views", "--profile", "nosuch"], "No profile 'nosuch'"),
    ],
)
def test_mistakes_are_one_clear_line_and_exit_2(
    running: Service, argv: list[str], complaint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(*argv)[0] == 2
    err = capsys.readouterr().err
    assert complaint in err
    assert "Traceback" not in err


def test_sync_runs_with_the_batch_collector_and_leaves_the_collector_as_it_was(
    running: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pigeon.cli.common import BATCH_YOUNG_THRESHOLD
    from pigeon.core.mail import MailCore

    seen: list[tuple[tuple[int, int, int], int]] = []
    syncing = MailCore.sync

    async def watched(self: MailCore, **kwargs: Any) -> Any:
        seen.append((gc.get_threshold(), gc.get_freeze_count()))
        return await syncing(self, **kwargs)

    monkeypatch.setattr(MailCore, "sync", watched)
    before, frozen_before = gc.get_threshold(), gc.get_freeze_count()
    assert run("sync")[0] == 0
    (threshold, frozen), *_ = seen
    assert threshold == (BATCH_YOUNG_THRESHOLD, *before[1:])
    assert frozen > frozen_before  # what start-up made is not walked again
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == frozen_before


def test_search_on_an_empty_store_says_to_sync(capsys: pytest.CaptureFixture[str]) -> None:
    code, text = run("search", "anything")
    assert code == 0
    assert "pigeon sync" in text


def test_a_search_with_too_many_terms_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("search", *["in:all"] * 250)[0] == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "a search takes at most 100 words and operators, not 250" in err


@pytest.mark.parametrize("argv", [[], ["views"], ["search", "x"], ["undo"]])
def test_a_corrupt_store_is_one_line_naming_the_file_and_the_way_out(
    argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pigeon.store.mailstore import store_path

    path = store_path("default")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"this is not a SQLite file, it was cut short by a crash")
    monkeypatch.setenv("PIGEON_TOKEN", "pgn_x")  # the app itself (no command) would open past the login screen
    assert main(["--base-url", "http://127.0.0.1:9", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert str(path) in err
    assert "Move it aside" in err
    assert "Traceback" not in err


def test_sync_says_on_stderr_when_and_until_when_it_waits_on_a_busy_service(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pigeon.api import PigeonClient
    from pigeon.core import session

    service = make_service()
    inner = create_app(service.db, ServerSettings(deliver_webhooks=False))
    busy = [True]

    async def first_answer_busy(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and busy[0]:  # the first request is answered 429, Retry-After: 30
            busy[0] = False
            headers = [(b"retry-after", b"30"), (b"content-type", b"application/problem+json")]
            await send({"type": "http.response.start", "status": 429, "headers": headers})
            await send({"type": "http.response.body", "body": b'{"title": "Too Many Requests", "status": 429}'})
            return
        await inner(scope, receive, send)

    waits: list[float] = []

    async def no_wait(seconds: float) -> None:  # the test does not wait the 30 s it is asked to
        waits.append(seconds)

    monkeypatch.setattr(session, "default_client_factory", lambda url, token: PigeonClient(url, token, sleep=no_wait))
    thread = start_in_thread(first_answer_busy, db=service.db)
    monkeypatch.setenv("PIGEON_BASE_URL", thread.base_url)
    monkeypatch.setenv("PIGEON_TOKEN", service.alice.token)
    try:
        code, text = run("sync")
    finally:
        thread.stop()
        service.db.close()
    assert code == 0
    assert "Synced 25 threads" in text
    assert waits == [30.0]
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1
    assert re.fullmatch(r"pigeon: The service is busy \(429\); waiting 30 s, until \d\d:\d\d:\d\d…", lines[0])


def test_sync_verbose_says_its_progress_and_the_requests_in_flight_and_why(
    running: Service, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pigeon.cli import mail

    monkeypatch.setattr(mail, "PROGRESS_EVERY", 0.0)  # a line for each report (the 25 threads sync in a moment)
    code, text = run("sync", "-v")
    assert code == 0
    assert "Synced 25 threads" in text  # stdout as without -v
    lines = capsys.readouterr().err.splitlines()
    progress = [line for line in lines if "threads fetched" in line]
    assert progress, lines
    for line in progress:
        assert re.fullmatch(r"pigeon: \d+ of 25 threads fetched · \d+ in flight \([a-z :()0-9]+\)", line), line
    assert re.fullmatch(r"pigeon: at most \d+ requests were in flight \(.+\)", lines[-1])
    assert run("sync")[0] == 0
    assert capsys.readouterr().err == ""  # without -v: silent


def test_the_screener_and_lanes_from_the_command_line(running: Service) -> None:
    from pigeon_service.demo_newcomers import NEWCOMERS, newcomer_thread

    assert run("sync")[0] == 0
    counts = json.loads(run("views", "--json")[1])
    assert counts["screener"] == 0
    assert sum(counts[lane] for lane in ("people", "newsletters", "notifications", "receipts")) == counts["inbox"]
    table = run("views")[1]
    for name in ("people", "newsletters", "notifications", "receipts", "owed", "waiting", "screener", "kept-out"):
        assert re.search(rf"^{name}\s+\d+$", table, re.MULTILINE), name
    new = newcomer_thread(running.db, None, running.alice.id, NEWCOMERS[0])
    assert new is not None
    assert run("sync")[0] == 0
    waiting = json.loads(run("search", "--json", "--view", "screener")[1])["threads"]
    assert [t["id"] for t in waiting] == [new.thread_id]
    assert [t["id"] for t in json.loads(run("search", "--json", "in:screener")[1])["threads"]] == [new.thread_id]
    code, text = run("why", new.thread_id or "")
    assert code == 0
    assert "In the Screener: hello@tidepool.example is new to you" in text
    assert "- it has an unsubscribe link" in text
    assert run("let-in", new.thread_id or "") == (0, "Let in: hello@tidepool.example (1 thread)\n")
    newsletters = json.loads(run("search", "--json", "--view", "newsletters", "Tidepool")[1])["threads"]
    assert [t["id"] for t in newsletters] == [new.thread_id]
    assert run("lane", new.thread_id or "", "--to", "people")[1] == "To People: hello@tidepool.example (1 thread)\n"
    assert new.thread_id in [t["id"] for t in json.loads(run("search", "--json", "in:people")[1])["threads"]]
    code, text = run("keep-out", "--domain", new.thread_id or "")
    assert (code, text) == (0, "Kept out: everyone at tidepool.example (1 thread)\n")
    assert json.loads(run("views", "--json")[1])["kept-out"] == 0  # the address was let in: that wins
    assert run("keep-out", new.thread_id or "") == (0, "Kept out: hello@tidepool.example (1 thread)\n")
    assert json.loads(run("views", "--json")[1])["kept-out"] == 1
    assert run("lane", new.thread_id or "", "--to", "spam")[0] == 2
