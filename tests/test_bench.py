"""The benchmark's pieces on a tiny size, so the harness cannot silently break (no timings are asserted)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bench.run import (
    SizeResult,
    UIRun,
    build_service,
    direct_fill,
    has_thread_row,
    measure_triage,
    measure_ui,
    report,
    sync_store,
)
from pigeon.store.mailstore import MailStore


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("bench")
    return build_service(30, folder)


def test_the_data_builder_makes_a_service_with_mail_and_a_token(tiny: tuple[Path, str]) -> None:
    from pigeon.server.db import Database

    path, token = tiny
    db = Database(path)
    account = db.account_for_token(token)
    assert account is not None
    threads, _ = db.list_threads(account, page_size=500, page_token=None)
    assert len(threads) == 30
    assert all(1 <= (t.message_count or 0) <= 10 for t in threads)
    db.close()
    assert build_service(30, path.parent) == tiny  # built once, then reused


def test_sync_and_direct_fill_give_the_same_store(tiny: tuple[Path, str], tmp_path: Path) -> None:
    path, token = tiny
    figures = sync_store(path, token, tmp_path / "synced.sqlite3")
    assert (figures.threads, figures.requests > figures.threads) == (30, True)
    assert figures.messages > 30
    assert direct_fill(path, tmp_path / "direct.sqlite3") == 30
    synced, direct = MailStore(tmp_path / "synced.sqlite3"), MailStore(tmp_path / "direct.sqlite3")
    assert [t.id for t in synced.list_threads("all", limit=50)] == [t.id for t in direct.list_threads("all", limit=50)]
    assert synced.count("all", "has:attachment") == direct.count("all", "has:attachment")


def test_the_row_detector_sees_rows_and_not_an_empty_list() -> None:
    assert has_thread_row("│ ●   Ada Lovelace   Engines               (3)    5m ││ reader")
    assert has_thread_row("│ ●   Ada            Notes                        Nov 3 ││")
    assert not has_thread_row("│ Loading…                                          ││")


def test_the_tmux_driver_finds_the_first_row_and_opens_the_newest(tiny: tuple[Path, str], tmp_path: Path) -> None:
    assert shutil.which("tmux"), "the benchmark needs tmux (it is in this machine image: apt-get install tmux)"
    path, _ = tiny
    store = tmp_path / "app" / "store" / "default.sqlite3"
    store.parent.mkdir(parents=True)
    direct_fill(path, store)
    run = measure_ui(tmp_path / "app", presses=2)
    assert run.first_row > 0
    assert run.keypress > 0
    assert run.open_newest > 0
    assert run.rss_mib > 10
    text = report([SizeResult(30, "direct fill", [run])], None, None, "test")
    assert "| 30 | direct fill |" in text


def test_the_triage_measure_presses_each_key_and_types_a_search(tiny: tuple[Path, str], tmp_path: Path) -> None:
    path, _ = tiny
    store = tmp_path / "app" / "store" / "default.sqlite3"
    store.parent.mkdir(parents=True)
    direct_fill(path, store)
    starred, inbox = MailStore(store).count("starred"), MailStore(store).count("inbox")
    figures = measure_triage(tmp_path / "app", runs=1)
    assert all(figures[f"key_{key}"] > 0 for key in "seu")
    assert figures["flow_keys_per_thread"] == 1  # e in the reader: the next thread is there, no other key
    assert 0 < figures["flow_next_text"] <= figures["flow_next_text_max"]
    assert figures["search_stall"] >= 0
    assert figures["search_results"] > 0
    assert MailStore(store).count("starred") == starred  # the store ends as it began
    assert MailStore(store).count("inbox") == inbox
    ui = UIRun(first_row=0.2, keypress=0.005, hundred=0.05, open_newest=0.02, rss_mib=70)
    text = report([SizeResult(30, "direct fill", [ui], figures)], None, None, "test")
    assert "## Triage and search" in text
    assert f"| 30 | {figures['key_s'] * 1000:.1f} ms |" in text
    assert f"{figures['flow_next_text'] * 1000:.1f} ms" in text


def test_the_report_says_which_targets_are_met_and_which_are_missed_where() -> None:
    from bench.run import UIRun, targets_line

    fast = UIRun(first_row=0.4, keypress=0.004, hundred=0.05, open_newest=0.02, rss_mib=70)
    slow_open = UIRun(first_row=0.4, keypress=0.004, hundred=0.05, open_newest=0.08, rss_mib=70)
    line = targets_line([SizeResult(1000, "sync", [fast]), SizeResult(100_000, "direct fill", [slow_open])])
    assert line == ("Targets met at every size: first row, one keypress, peak RSS. Missed: open newest (at 100,000).")
    assert targets_line([SizeResult(1000, "sync", [fast])]) == (
        "Targets met at every size: first row, one keypress, open newest, peak RSS."
    )


def test_the_app_gets_only_the_environment_the_bench_gives_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bench.run import Tmux, app_environment

    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")  # this sandbox's own setting must not reach the app
    tmux = Tmux("envcheck")
    out = tmp_path / "env.txt"
    try:
        tmux.start(["sh", "-c", f"env > {out}; sleep 5"], app_environment(tmp_path / "data", tmp_path / "config"))
        tmux.wait_for(lambda _screen: out.exists() and out.stat().st_size > 0, timeout=10)
    finally:
        tmux.stop()
    names = {line.split("=", 1)[0] for line in out.read_text().splitlines() if "=" in line}
    assert "PYTHONDONTWRITEBYTECODE" not in names
    assert {"PIGEON_DATA_DIR", "PIGEON_CONFIG_DIR", "PIGEON_TOKEN", "TERM"} <= names
