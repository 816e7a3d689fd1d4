"""Undo steps another local user or a bug has damaged in the store file: what reaches the terminal is cleaned, and
a step that cannot be applied says so in one line, changes nothing and is kept."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pigeon.store.mailstore import store_path
from pigeon_service.app import ServerSettings, create_app
from pigeon_service.run import start_in_thread
from tests.command_line import run
from tests.server.conftest import make_service

ESCAPE = "\x1b]2;owned\x07"


@pytest.fixture
def synced(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, str]]:
    """A profile synced from a running service, one thread marked done; the store's path and that thread."""
    service = make_service()
    thread = start_in_thread(create_app(service.db, ServerSettings(deliver_webhooks=False)), db=service.db)
    monkeypatch.setenv("PIGEON_BASE_URL", thread.base_url)
    monkeypatch.setenv("PIGEON_TOKEN", service.alice.token)
    try:
        assert run("sync")[0] == 0
        first = json.loads(run("search", "--json", "--view", "inbox")[1])["threads"][0]["id"]
        assert run("done", first)[0] == 0
        yield store_path("default"), first
    finally:
        thread.stop()
        service.db.close()


def rows(path: Path) -> dict[str, list[Any]]:
    """The triage state, labels and undo stack as the file holds them."""
    with sqlite3.connect(path) as conn:
        return {
            "triage": sorted(tuple(r) for r in conn.execute("SELECT * FROM triage")),
            "labels": sorted(tuple(r) for r in conn.execute("SELECT * FROM labels")),
            "undo": sorted(tuple(r) for r in conn.execute("SELECT * FROM undo")),
        }


def damage_last_step(path: Path, description: str | None = None, changes: str | None = None) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute(
            "UPDATE undo SET description = coalesce(?, description), changes = coalesce(?, changes) "
            "WHERE seq = (SELECT max(seq) FROM undo)",
            (description, changes),
        )


def inbox() -> list[str]:
    return [t["id"] for t in json.loads(run("search", "--json", "--view", "inbox")[1])["threads"]]


@pytest.mark.parametrize(
    "description",
    [
        f"{ESCAPE}Done: 1 thread",  # words as an older Pigeon kept them, with a terminal title change inside
        json.dumps({"kind": "snooze", "count": 1, "detail": "not a time"}),
    ],
)
def test_a_damaged_description_is_printed_cleaned_and_the_step_still_undone(
    synced: tuple[Path, str], description: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path, first = synced
    damage_last_step(path, description=description)
    code, text = run("undo")
    assert code == 0
    assert text.startswith("Undone: ")
    assert text.count("\n") == 1
    assert "\x1b" not in text
    assert "\x07" not in text
    assert "Traceback" not in capsys.readouterr().err
    assert first in inbox()  # its changes were good: the thread is back


@pytest.mark.parametrize(
    "changes",
    [
        "{not json",
        "[]",
        '"a string"',
        '[{"thread_id": "x", "labels": "not a list", "triage": null}]',
        '[{"thread_id": "THREAD", "labels": ["\\u001b]2;owned\\u0007"], "triage": null}]',
        '[{"thread_id": "THREAD", "labels": [], "triage": {"starred) VALUES (1); --": 1}}]',
        '[{"thread_id": "THREAD", "labels": [], "triage": {"thread_id": "another", "starred": 1}}]',
        '[{"thread_id": "THREAD", "labels": [], "triage": {"starred": [1, 2]}}]',
        '[{"thread_id": "THREAD", "labels": [], "triage": {"starred": null}}]',  # NOT NULL in the table
    ],
)
def test_a_step_whose_changes_cannot_be_applied_says_so_changes_nothing_and_is_kept(
    synced: tuple[Path, str], changes: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path, first = synced
    damage_last_step(path, changes=changes.replace("THREAD", first), description=f"{ESCAPE}Done: 1 thread")
    before = rows(path)
    code, text = run("undo")
    err = capsys.readouterr().err
    assert (code, text) == (2, "")
    assert err.count("\n") == 1
    assert "Cannot undo" in err
    assert "damaged" in err
    assert "kept" in err
    assert "Done: 1 thread" in err  # which step, in its own words, cleaned
    assert "\x1b" not in err
    assert "Traceback" not in err
    assert rows(path) == before  # nothing changed, the step still there
    assert first not in inbox()
    assert run("undo")[0] == 2  # and it says so again, not "Undone"
