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
from bench.side_by_side import Program
from pigeon.store.mailstore import MailStore


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("bench")
    return build_service(30, folder)


def test_the_data_builder_makes_a_service_with_mail_and_a_token(tiny: tuple[Path, str]) -> None:
    from pigeon_service.db import Database

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


# --- side by side: the pseudo-terminal harness and the Maildir export ---------------------------------------------


@pytest.mark.parametrize("workers", [1, 2])
def test_the_maildir_export_writes_every_message_as_mail_a_client_can_thread(
    tiny: tuple[Path, str], tmp_path: Path, workers: int
) -> None:
    import mailbox

    from bench.maildir import export

    path, _ = tiny
    store_path = tmp_path / "store.sqlite3"
    direct_fill(path, store_path)
    store = MailStore(store_path)
    threads = store.list_threads("all", limit=50)
    stored = {m.id: m for t in threads for m in store.messages(t.id)}
    assert export(store_path, tmp_path / "maildir", workers=workers) == len(stored)
    box = mailbox.Maildir(tmp_path / "maildir" / "INBOX", create=False)
    exported = {mail["Message-ID"].strip("<>").split("@")[0]: mail for mail in box}
    assert exported.keys() == stored.keys()
    # where a client's first start leaves them (so a header cache keyed by file name stays warm): cur/, unread
    assert not list((tmp_path / "maildir" / "INBOX" / "new").iterdir())
    assert {mail.get_subdir() for mail in box} == {"cur"}
    assert {mail.get_flags() for mail in box} == {""}
    for message_id, mail in exported.items():
        message = stored[message_id]
        assert mail["From"]
        assert mail["Date"]
        if message.parent_id:
            assert mail["In-Reply-To"] == f"<{message.parent_id}@pigeon.example>"  # the same conversations
        plain = next(part for part in mail.walk() if part.get_content_type() == "text/plain")
        text = next((b.content for b in message.content_blocks if b.content and not b.filename), None)
        if text and "html" not in (message.content_blocks[0].mime_type or ""):
            payload = plain.get_payload(decode=True)
            assert isinstance(payload, bytes)
            assert text.split()[0] in payload.decode()
    store.close()


PROGRAM = """
import os, sys, time, tty as terminal
tty = os.open("/dev/tty", os.O_RDWR)  # (aerc does this: the pty must be the controlling terminal)
terminal.setraw(tty)
os.write(tty, b"\\x1b[c")  # asks for the device attributes, as a full-screen program does at start
answer = b""
while not answer.endswith(b"c"):
    answer += os.read(tty, 1)
os.write(tty, b"ready " + answer[1:].replace(b"\\x1b", b"ESC") + b"\\r\\n")
key = os.read(tty, 1)
os.write(tty, b"first part\\r\\n")
time.sleep(0.2)
os.write(tty, b"\\x1b[31mlast part of " + key + b"\\x1b[0m\\r\\n")
time.sleep(30)
"""


def test_the_pty_harness_times_a_key_to_the_last_byte_of_what_it_draws(tmp_path: Path) -> None:
    import sys

    from bench.ptyharness import PtyProgram, showing

    run = PtyProgram([sys.executable, "-c", PROGRAM], {"PATH": "/usr/bin:/bin"}, columns=60, rows=10)
    try:
        run.wait(showing("ready"), since=run.started)
        assert "ready [?6c" in run.text()  # the emulated terminal answered the program's query
        took = run.press(b"k", showing("last part of k"))
        lines = run.lines()
        assert "first part" in lines[1]
        assert lines[2].startswith("last part of k")  # the colour codes were interpreted, not shown
        assert took >= 0.2  # to the last byte the key caused, not the first
    finally:
        run.close()
    assert run.process.poll() is not None


@pytest.fixture
def pigeon_side(tiny: tuple[Path, str], tmp_path: Path) -> tuple[Program, str]:
    """Pigeon as the side-by-side bench runs it, on the tiny mailbox, and the newest thread's subject."""
    from bench import side_by_side

    path, _ = tiny
    app = tmp_path / "app"
    store = app / "store" / "default.sqlite3"
    store.parent.mkdir(parents=True)
    direct_fill(path, store)
    home = tmp_path / "home"
    home.mkdir()
    return side_by_side.pigeon(app, home), side_by_side.newest_subject(store)


def test_pigeon_runs_through_every_measure_of_the_side_by_side_bench(pigeon_side: tuple[Program, str]) -> None:
    from bench import side_by_side

    program, subject = pigeon_side
    figures = side_by_side.one_run(program, subject, escapes=True)
    assert set(figures) >= {"first_row", "open_newest", "back", "back_escape", "back_kitty_escape", "j", "rss_mib"}
    assert all(value > 0 for value in figures.values())


def test_pigeon_asks_for_the_kitty_keyboard_protocol_and_goes_back_on_its_escape(
    pigeon_side: tuple[Program, str],
) -> None:
    from bench import side_by_side
    from bench.ptyharness import PtyProgram, showing

    program, subject = pigeon_side
    run = PtyProgram(program.command, program.env)
    try:
        run.wait(showing(subject), since=run.started)
        enhancement = run.raw.split(b"\x1b[>", 1)  # CSI > flags u: the kitty protocol's progressive enhancement
        assert len(enhancement) == 2
        assert b"u" in enhancement[1][:4]
        list_keys = run.lines()[-1]  # the key bar: the focused pane's keys
        run.press(b"\r")
        assert run.lines()[-1] != list_keys  # the reader has the focus
        run.press(side_by_side.KITTY_ESCAPE)
        assert run.lines()[-1] == list_keys  # ESC as the kitty protocol sends it went back to the list
    finally:
        run.close()


def test_a_j_writes_under_a_kilobyte_to_a_terminal_200_columns_wide(pigeon_side: tuple[Program, str]) -> None:
    """Two rows change (the cursor leaves one, comes to the next), so two rows are written, in as few styles as they
    have: what an SSH link carries for each key. 24-bit colour, the longest way to say a style."""
    from bench.ptyharness import PtyProgram, showing

    program, subject = pigeon_side
    run = PtyProgram(program.command, {**program.env, "COLORTERM": "truecolor"}, columns=200, rows=50)
    try:
        run.first_shown(showing(subject), since=run.started)
        run.wait(showing("Offline"), since=run.started)  # (no service: the banner moves every line down, once)
        run.settle(1.0)
        run.press(b"j", still=0.03)  # the first key after a start writes the list whole once (see performance.md)
        written = []
        for _ in range(4):
            run.settle(0.6)  # the preview of the thread the cursor rested on is drawn meanwhile, not counted
            before = len(run.raw)
            run.press(b"j", still=0.03)
            written.append(len(run.raw) - before)
    finally:
        run.close()
    assert all(300 < size < 1024 for size in written), written


def test_a_key_at_pace_is_timed_to_the_end_of_its_own_burst_not_the_preview_after_it() -> None:
    from bench.typing_pace import key_times

    presses = [1.0, 1.15, 1.30]
    arrivals = [
        (1.002, 300),
        (1.010, 200),  # the first key's frame ends here ...
        (1.125, 9000),  # ... and 115 ms later the preview is drawn: not the key's
        (1.16, 400),
        (1.175, 100),  # (15 ms after: still the second key's frame)
    ]
    times = key_times(presses, arrivals, end=2.0)
    assert times[0] == pytest.approx(0.010)
    assert times[1] == pytest.approx(0.025)
    assert times[2] is None  # nothing came after the third key


def test_a_bench_rewrites_its_own_block_of_the_report_and_nothing_around_it() -> None:
    from bench.report import markers, replace_block

    begin, end = markers("side-by-side")
    text = f"# Performance\n\nby hand, before\n\n{begin}\nold table\n{end}\n\nby hand, after\n"
    new = replace_block(text, "side-by-side", "new table\n")
    assert new == f"# Performance\n\nby hand, before\n\n{begin}\nnew table\n{end}\n\nby hand, after\n"
    assert replace_block(new, "side-by-side", "new table") == new  # run again: the same report
    added = replace_block(new, "loopback", "sync figures")
    assert added.startswith(new.rstrip("\n"))  # a block not there yet goes at the end
    assert added.endswith("<!-- bench: loopback -->\nsync figures\n<!-- /bench: loopback -->\n")
    with pytest.raises(ValueError, match="no <!-- /bench: side-by-side -->"):
        replace_block(f"{begin}\nunfinished", "side-by-side", "table")


def _figures(j: float, open_newest: float, first_row: float, rss: float) -> dict[str, float]:
    return {"j": j, "open_newest": open_newest, "first_row": first_row, "rss_mib": rss, "back": 0.003,
            "hundred_j": 0.05, "back_escape": 0.11, "back_kitty_escape": 0.004}  # fmt: skip


def test_the_side_by_side_report_holds_pigeon_to_issue_16s_targets_at_their_sizes() -> None:
    from bench.side_by_side import block

    def program(*runs: dict[str, float]) -> dict[str, object]:
        medians: dict[str, object] = {key: sorted(run[key] for run in runs)[len(runs) // 2] for key in runs[0]}
        return {**medians, "runs": list(runs)}

    results = {
        1000: {
            "Pigeon": program(
                _figures(0.0018, 0.0046, 0.190, 75),
                _figures(0.0021, 0.0049, 0.210, 75),
                _figures(0.0019, 0.0051, 0.195, 75),
            ),
            "NeoMutt": program(_figures(0.0009, 0.0013, 0.060, 23)),
        },
        100_000: {
            "Pigeon": program(
                _figures(0.0025, 0.0040, 0.500, 79),
                _figures(0.0026, 0.0045, 0.600, 81),
                _figures(0.0027, 0.0042, 0.700, 82),
            ),
        },
    }
    text = block(results, "uv run python bench/side_by_side.py")
    rows = {line.split(" |")[0]: line for line in text.splitlines() if line.startswith("| ")}
    assert rows["| one `j` <= 2 ms"].endswith("| 1.90 ms (1.80-2.10), met | 2.60 ms (2.50-2.70), missed |")
    assert rows["| open newest <= 5 ms"].endswith("| 4.90 ms (4.60-5.10), met | 4.20 ms (4.00-4.50), met |")
    # first row is asked at 1,000 threads only, peak RSS at 100,000 only
    assert rows["| start -> first row <= 200 ms"].endswith("| 195.0 ms (190.0-210.0), met |  |")
    assert rows["| peak RSS <= 80 MiB"].endswith("|  | 81.0 MiB (79.0-82.0), missed |")
    assert "| 1,000 | NeoMutt | 60.0 ms (0.3x) | 0.9 ms (0.5x) |" in text  # the peer's ratio to Pigeon
    assert "1,000: `h` 3.0 ms, ESC as a kitty-protocol terminal sends it 4.0 ms, as one byte 110 ms" in text


def test_the_loopback_report_says_which_of_issue_16s_targets_are_met() -> None:
    from bench.loopback import block

    def part(**runs: list[float]) -> dict[str, object]:
        count = len(next(iter(runs.values())))
        all_runs = [{key: values[n] for key, values in runs.items()} for n in range(count)]
        return {**{key: sorted(values)[count // 2] for key, values in runs.items()}, "all": all_runs}

    result = {
        "sync": part(
            seconds=[12.0, 11.0, 13.0],
            client_cpu_s=[9.0, 9.0, 9.0],
            service_cpu_s=[3.0, 3.0, 3.0],
            threads=[10_000] * 3,
            messages=[29_982] * 3,
        ),
        "rows": part(seconds=[0.004, 0.005, 0.003]),
        "service": part(requests_per_s=[1200.0, 1100.0, 900.0], p50_ms=[2.0, 2.5, 3.0], p99_ms=[5.0, 6.0, 7.0]),
    }
    text = block(result, "uv run python bench/loopback.py")
    assert "| 12.0 (11.0-13.0) s | under 10 s: missed |" in text
    assert "| 2,498 | ahead of mbsync: met |" in text  # 29,982 messages in 12 s
    assert "| 4.0 (3.0-5.0) ms | under 1 s: met |" in text
    assert "| 1,100 (900-1,200) requests a second | 1,000 or more: met |" in text


@pytest.mark.parametrize(
    "script",
    [
        *("run.py", "side_by_side.py", "loopback.py", "triage.py", "maildir.py", "conversation.py"),
        *("network_sync.py", "frame_bytes.py", "typing_pace.py", "huge_thread.py", "start.py", "million.py"),
    ],
)
def test_each_bench_runs_as_the_script_its_docstring_shows(script: str) -> None:
    import subprocess
    import sys

    bench = Path(__file__).resolve().parent.parent / "bench"
    done = subprocess.run(  # noqa: S603 - this interpreter, the project's own script
        [sys.executable, str(bench / script), "--help"], capture_output=True, text=True, timeout=60, cwd=bench.parent
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout


def test_the_network_bench_syncs_through_the_proxy_and_finds_what_the_app_will_show(
    tiny: tuple[Path, str], tmp_path: Path
) -> None:
    import json
    import sqlite3

    from bench.http_clients import proxy
    from bench.loopback import service
    from bench.network_sync import Rtt, landmarks, report, run_sync

    path, token = tiny
    store = tmp_path / "store.sqlite3"
    figures = sync_store(path, token, store)
    marks = landmarks(store)
    assert marks.threads == 30
    with sqlite3.connect(store) as conn:
        newest = conn.execute("SELECT id, subject FROM threads ORDER BY last_message_at DESC LIMIT 1").fetchone()
        oldest = conn.execute("SELECT id, subject FROM threads ORDER BY last_message_at, id LIMIT 1").fetchone()
        first = conn.execute("SELECT data FROM messages WHERE thread_id = ? ORDER BY position", (oldest[0],)).fetchone()
    assert marks.newest_subject in newest[1]
    assert marks.oldest_line in json.dumps(json.loads(first[0])["content_blocks"], ensure_ascii=False)
    with service(path) as (base, _pid), proxy(int(base.rsplit(":", 1)[1]), 20) as slowed:
        seconds, messages, most = run_sync(f"http://127.0.0.1:{slowed}", token)
    assert messages == figures.messages
    assert seconds > 0.04  # two round trips at the least: the proxy was in the way
    assert most >= 1  # read from `pigeon sync -v`
    row = Rtt(80, sync_s=[10.0], most_in_flight=[128], mbsync_fsync_s=[20.0], mbsync_s=[4.0], open_s=[0.25])
    row.opened_during_sync, row.first_row_s = [True], [0.5]
    text = report([row], "bench", (0.5, 0.7))
    assert "| 80 ms | 10.00 (10.00-10.00) s | 128 | 20.00 (20.00-20.00) s | 4.00 (4.00-4.00) s | 0.50x |" in text
    assert "| 500 (500-500) ms | 250 (250-250) ms, 1 of 1 during it |" in text


# --- issue 32: a long conversation read and answered ----------------------------------------------------------------


def test_the_conversation_bench_opens_the_long_thread_and_says_which_keys_went_unanswered(tmp_path: Path) -> None:
    from bench.conversation import block, build, one_run, serving, summary

    store_path, seen = build(tmp_path, threads=8, messages=120)
    store = MailStore(store_path)
    conversation = store.list_threads("all", limit=2)[1]
    assert conversation.subject == seen.subject
    assert len(store.messages(conversation.id)) == 120  # the direct fill kept every page of it
    store.close()
    with serving(tmp_path, threads=8, messages=120) as service:
        run = one_run(store_path, seen, service, columns=160, rows=45, presses=2)
    assert run["open"] > 0
    assert run["preview"] > 0  # (drawn once the cursor rests: the first unread header on screen)
    assert run["opened_at_first_unread"] is True
    assert len(run["next"]) == 2 or "n" in run["missing"]  # n timed, or said not to be answered
    assert len(run["to"]) == len(seen.name[:5]) or {"review", "To"} & set(run["missing"])
    text = block({"160x45": summary([run])}, (0.5, 0.7), "bench", 1)
    assert "load 0.5 before, 0.7 after" in text
    assert f"| 160x45 | Enter: open at the first unread | 1 | {run['open'] * 1000:.1f} ms |" in text
    if "n" in run["missing"]:
        assert "| 160x45 | `n` next message | 0 | | | not answered |" in text


def test_the_huge_thread_bench_opens_the_thread_reads_it_and_says_what_it_missed(tmp_path: Path) -> None:
    from bench.conversation import build, serving
    from bench.huge_thread import block, pigeon_run, summary

    store_path, seen = build(tmp_path, threads=8, messages=700)  # (past the length laid out whole)
    with serving(tmp_path, threads=8, messages=700) as service:
        run = pigeon_run(store_path, seen, service, presses=2)
    assert run["missing"] == []
    assert run["open"] > 0
    assert len(run["next"]) == 2
    assert len(run["far"]) == 3
    assert run["peak_after"] >= run["peak_before"] > 0
    result = summary([run], [])
    text = block(result, 700, (0.5, 0.7), "bench", 1)
    assert "a 700-message thread" in text
    verdict = "met" if run["open"] <= 0.3 else "missed"
    assert f"| Pigeon | open it (no preview first): first screen | {run['open'] * 1000:.0f} ms " in text
    assert f"300 ms: {verdict} |" in text
    assert "NeoMutt" not in text  # (none was run)


def test_the_start_bench_times_the_empty_app_and_the_demo_and_says_what_it_missed(tmp_path: Path) -> None:
    from bench.run import pigeon_command
    from bench.start import DEMO, block, demo, empty_app, one_run

    programs = [empty_app(tmp_path), demo(tmp_path, DEMO, [*pigeon_command(), "demo", "--no-live"])]
    for program in programs:
        Path(program.env["HOME"]).mkdir(parents=True, exist_ok=True)
    empty, shown = (one_run(program) for program in programs)  # (the demo's newest thread on screen)
    assert empty["first"] > 0
    assert empty["rss_mib"] > 0
    assert shown["first"] > 0
    pigeon = {"first": empty["first"] * 2, "rss_mib": 60.0}
    figures = {"empty Textual app": empty, "Pigeon, 1,000 threads": pigeon, DEMO: shown}
    text = block(figures, 1000, 1, (0.5, 0.7), "bench")
    assert text.startswith("`bench` (")
    assert "load 0.50 before, 0.70 after" in text
    assert "Pigeon's first row against the empty app's first paint: 2.00x (target 1.0x: missed)" in text
    assert "Pigeon's peak memory at 1,000 threads: 60.0 MiB (target 50 MiB: missed)" in text
    verdict = "met" if shown["first"] <= 1.0 else "missed"
    row = f"{shown['first'] * 1000:,.0f} ms"
    assert f"`uv run pigeon demo` to its first row: {row} (target 1,000 ms: {verdict})" in text


def test_the_million_bench_types_a_search_finds_its_results_and_reports_beside_notmuch(
    tiny: tuple[Path, str], tmp_path: Path
) -> None:
    import random
    import sqlite3

    from bench.maildir import export
    from bench.million import PRESSES, Mailbox, block, newest_match, pigeon_run

    path, _ = tiny
    store = tmp_path / "app" / "store" / "default.sqlite3"
    store.parent.mkdir(parents=True)
    direct_fill(path, store)
    with sqlite3.connect(store) as conn:
        messages = conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
        subject = conn.execute("SELECT subject FROM threads ORDER BY last_message_at LIMIT 1").fetchone()[0]
    word = next(w for w in subject.lower().split() if len(w) > 4 and w.isalpha())  # (a word of the oldest thread)
    assert newest_match(store, word)
    run = pigeon_run(store, {word: newest_match(store, word)}, tmp_path / "home", random.Random(1))
    assert run["first_row"] > 0
    assert run["open"] > 0
    assert run["rss_mib"] > 0
    assert len(run["j"]) == PRESSES
    assert len(run["search_keys"]) == len(word) - 1  # each letter but the last, timed to its own frame
    assert len(run["search_results"]) == 1  # the last letter, timed to the results shown
    export(store, tmp_path / "maildir")
    box = Mailbox(
        30, store, tmp_path / "maildir", tmp_path / "notmuch-config", {"messages": messages, "notmuch_new_s": 3.0}
    )
    notmuch = {"search": [0.02, 0.03], "count": [0.01, 0.02]}
    text = block(box, {"big": [run], "small": [run], "notmuch": [notmuch]}, (0.5, 0.7), "bench")
    assert text.startswith("`bench` (")
    assert "load 0.50 before, 0.70 after" in text
    assert f"30 threads, {messages:,} messages, 1 run," in text
    assert "| `notmuch search --limit=50` | 25.0 ms | 30.0 ms |" in text
    assert "| Pigeon's store (with its search index) |" in text
    assert "| the Maildir |" in text
    assert "`notmuch new` indexed the Maildir in 3 s." in text
    verdict = "met" if run["rss_mib"] <= 100 else "missed"
    assert f"| peak memory | {run['rss_mib']:.1f} MiB |  | {run['rss_mib']:.1f} MiB | 100 MiB: {verdict} |" in text
