"""Pigeon, NeoMutt and aerc on the same mailbox, in the same run, through the same pseudo-terminal harness.

    uv run python bench/side_by_side.py --sizes 1000,10000,100000 [--runs 5]

For each size the bench store ``bench/.data/<size>/app`` (made by ``bench/run.py``) is Pigeon's mailbox; its
messages are exported once as a Maildir (``bench/maildir.py``) for NeoMutt (header cache warmed by one unmeasured
start) and aerc, when they are installed (``apt-get install -y neomutt aerc``). Each program runs on a 160x45
pseudo-terminal (``bench/ptyharness.py``: key written -> last byte of the frame, the screen emulated by pyte) with
only the environment given here. One run: start -> the newest thread's subject on screen; Enter on it -> the
last byte of what it draws; after ``READING`` seconds of silence, the back key -> the list again; then 20 single
``j`` (median), then 100 ``j`` in one write; peak RSS. Pigeon also goes back with ESC as a terminal without the
kitty keyboard protocol sends it (one byte: Textual waits out the escape ambiguity) and as one with it sends it
(``CSI 27 u``). Medians over ``--runs``; prints one JSON object and a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script: the bench package beside it

from bench.maildir import export
from bench.ptyharness import PtyProgram, showing
from bench.report import machine, write_block

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / ".data"
PRESSES = 20
FRAME_GAP = 0.03
"""The silence that ends one ``j``'s frame. Pigeon draws the thread under the cursor in the reader once the cursor
has rested 120 ms (a frame of its own, not the key's): with the 150 ms silence used elsewhere a single ``j`` would
be timed to that preview instead of to its cursor move."""
BURST_GAP = 0.06
"""The silence that ends the frames of 100 ``j`` sent at once: while a program works through them its frames come
closer than this (Pigeon's at most a 60th of a second apart), and Pigeon's preview of the thread the cursor rests
on comes 120 ms after the last move (measured: the last move drawn at 26-61 ms, the preview at 158-166 ms). With
the 150 ms silence used elsewhere, the 100 ``j`` were timed to that preview."""
KITTY_ESCAPE = b"\x1b[27u"  # ESC as a terminal speaking the kitty keyboard protocol sends it
READING = 0.4
"""Seconds of silence after a thread opens before the back key, as a person reads first: Pigeon marks the thread
read 250 ms after it opened, a frame of its own, which a back key pressed at once was timed to."""


@dataclass
class Program:
    name: str
    command: list[str]
    env: dict[str, str]
    back: bytes


def base_env(home: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "TERM": "xterm-256color", "LANG": "C.UTF-8"}


def newest_subject(store: Path) -> str:
    """Words of the newest thread's subject that every program shows in its first row."""
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as conn:
        subject = str(conn.execute("SELECT subject FROM threads ORDER BY last_message_at DESC LIMIT 1").fetchone()[0])
    while subject.lower().startswith(("re: ", "fwd: ")):
        subject = subject.split(": ", 1)[1]
    return subject[:18]


def pigeon(app_dir: Path, home: Path) -> Program:
    env = {
        **base_env(home),
        "PIGEON_DATA_DIR": str(app_dir),
        "PIGEON_CONFIG_DIR": str(home / "pigeon-config"),
        "PIGEON_BASE_URL": "http://127.0.0.1:9",  # nothing listens: the app works from its store, as offline
        "PIGEON_TOKEN": "bench",
    }
    script = Path(sys.executable).parent / "pigeon"
    return Program("Pigeon", [str(script)], env, back=b"h")


def neomutt(maildir: Path, home: Path) -> Program:
    home.mkdir(parents=True, exist_ok=True)
    rc = home / "muttrc"
    rc.write_text(
        f'set folder = "{maildir}"\nset spoolfile = "+INBOX"\nset mbox_type = Maildir\n'
        f'set header_cache = "{home / "hcache"}"\nset sort = threads\nset sort_aux = reverse-last-date-received\n'
        "set mail_check = 3600\nset timeout = 3600\nset quit = yes\nset wait_key = no\nset sleep_time = 0\n"
        "set mark_old = no\n"
    )
    return Program("NeoMutt", ["neomutt", "-n", "-F", str(rc)], base_env(home), back=b"q")


def aerc(maildir: Path, home: Path) -> Program:
    config = home / "config" / "aerc"
    config.mkdir(parents=True, exist_ok=True)
    accounts = config / "accounts.conf"
    accounts.write_text(
        f"[bench]\nsource = maildir://{maildir}\ndefault = INBOX\nfrom = Bench <bench@pigeon.example>\n"
    )
    accounts.chmod(0o600)
    system = Path("/usr/share/aerc/aerc.conf")
    text = system.read_text() if system.exists() else "[ui]\n"
    (config / "aerc.conf").write_text(text.replace("#sort=\n", "sort=-r date\n", 1))
    return Program("aerc", ["aerc"], {**base_env(home), "XDG_CONFIG_HOME": str(home / "config")}, back=b"q")


def one_run(program: Program, subject: str, *, escapes: bool) -> dict[str, float]:
    run = PtyProgram(program.command, program.env)
    try:
        figures = {"first_row": run.first_shown(showing(subject), since=run.started, within=600)}
        figures["open_newest"] = run.press(b"\r")
        run.settle(READING)
        figures["back"] = run.press(program.back, showing(subject))
        if escapes:
            run.press(b"\r")
            run.settle(READING)
            figures["back_escape"] = run.press(b"\x1b", showing(subject))
            run.press(b"\r")
            run.settle(READING)
            figures["back_kitty_escape"] = run.press(KITTY_ESCAPE, showing(subject))
        figures["j"] = statistics.median(run.press(b"j", still=FRAME_GAP) for _ in range(PRESSES))
        figures["hundred_j"] = run.press(b"j" * 100, still=BURST_GAP)
        figures["rss_mib"] = run.peak_rss_mib()
        return figures
    finally:
        run.close()


def warm(program: Program, subject: str) -> None:
    """One unmeasured start: Python's bytecode cache, NeoMutt's header cache, the page cache."""
    run = PtyProgram(program.command, program.env)
    try:
        run.wait(showing(subject), since=run.started, within=600)
        run.settle()
    finally:
        run.close()


@contextmanager
def homes() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="pigeon-side-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def measure_size(size: int, runs: int) -> dict[str, Any]:
    app_dir = DATA / str(size) / "app"
    store = app_dir / "store" / "default.sqlite3"
    maildir = (DATA / str(size) / "maildir").resolve()  # (aerc does not follow a symbolic link to its folder)
    if not (maildir / "INBOX").exists():
        export(store, maildir)
    subject = newest_subject(store)
    results: dict[str, Any] = {}
    with homes() as home:
        programs = [pigeon(app_dir, home / "pigeon")]
        if shutil.which("neomutt"):
            programs.append(neomutt(maildir, home / "neomutt"))
        if shutil.which("aerc"):
            programs.append(aerc(maildir, home / "aerc"))
        for program in programs:
            Path(program.env["HOME"]).mkdir(parents=True, exist_ok=True)
            warm(program, subject)
        found: dict[str, list[dict[str, float]]] = {p.name: [] for p in programs}
        for _ in range(runs):  # the programs take turns, so a slow moment of the machine falls on all three
            for program in programs:
                found[program.name].append(one_run(program, subject, escapes=program.name == "Pigeon"))
        for name, figures in found.items():
            results[name] = {key: statistics.median(f[key] for f in figures) for key in figures[0]}
            results[name]["runs"] = figures
    return results


def table(results: dict[int, dict[str, Any]]) -> str:
    columns = [
        ("first_row", "start -> first row", 1000, "ms"),
        ("j", "one `j`", 1000, "ms"),
        ("open_newest", "open newest", 1000, "ms"),
        ("back", "back to list", 1000, "ms"),
        ("hundred_j", "100 `j` at once", 1000, "ms"),
        ("rss_mib", "peak RSS", 1, "MiB"),
    ]
    lines = [
        "| threads | program | " + " | ".join(title for _, title, _, _ in columns) + " |",
        "|---|---|" + "---|" * len(columns),
    ]
    for size, by_program in results.items():
        ours = by_program.get("Pigeon", {})
        for name, figures in by_program.items():
            cells = []
            for key, _, scale, unit in columns:
                value = figures[key] * scale
                cell = f"{value:.0f} {unit}" if value >= 100 else f"{value:.1f} {unit}"
                if name != "Pigeon" and ours.get(key):
                    cell += f" ({figures[key] / ours[key]:.1f}x)"
                cells.append(cell)
            lines.append(f"| {size:,} | {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


TARGETS = [  # issue 16: (figure, its name, the sizes it is asked at (None: every size), at most, scale, unit)
    ("j", "one `j`", None, 0.002, 1000, "ms"),
    ("open_newest", "open newest", None, 0.005, 1000, "ms"),
    ("first_row", "start -> first row", {1000}, 0.200, 1000, "ms"),
    ("rss_mib", "peak RSS", {100_000}, 80.0, 1, "MiB"),
]


def targets(results: dict[int, dict[str, Any]]) -> str:
    """Pigeon against issue 16's targets: median (min-max of the runs), met or not."""
    lines = [
        "| target | " + " | ".join(f"{size:,}" for size in results) + " |",
        "|---|" + "---|" * len(results),
    ]
    for key, title, sizes, most, scale, unit in TARGETS:
        cells = []
        for size, by_program in results.items():
            ours = by_program.get("Pigeon")
            if ours is None or (sizes is not None and size not in sizes):
                cells.append("")
                continue
            values = [run[key] for run in ours["runs"]]
            verdict = "met" if ours[key] <= most else "missed"
            digits = 2 if most * scale < 10 else 1  # (2.02 ms is over 2 ms; "2.0 ms, missed" would puzzle)
            low, median, high = (f"{value * scale:.{digits}f}" for value in (min(values), ours[key], max(values)))
            cells.append(f"{median} {unit} ({low}-{high}), {verdict}")
        lines.append(f"| {title} <= {most * scale:g} {unit} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def escapes(results: dict[int, dict[str, Any]]) -> str:
    found = [
        f"{size:,}: `h` {ours['back'] * 1000:.1f} ms, ESC as a kitty-protocol terminal sends it "
        f"{ours['back_kitty_escape'] * 1000:.1f} ms, as one byte {ours['back_escape'] * 1000:.0f} ms"
        for size, by_program in results.items()
        if (ours := by_program.get("Pigeon")) and "back_escape" in ours
    ]
    return "Pigeon's back to the list, medians: " + "; ".join(found) + "."


def block(results: dict[int, dict[str, Any]], command: str) -> str:
    return "\n\n".join(
        [
            f"`{command}` ({machine()}); medians over the runs, each peer's figure with its ratio to Pigeon's "
            "(below 1: faster or smaller than Pigeon).",
            table(results),
            "Issue 16's targets, Pigeon's medians with the range of its runs:",
            targets(results),
            escapes(results),
        ]
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--write", action="store_true", help="put the tables in docs/performance.md")
    args = parser.parse_args(argv)
    results = {}
    for size in args.sizes.split(","):
        results[int(size)] = measure_size(int(size), args.runs)
        print(json.dumps({size: results[int(size)]}), file=sys.stderr, flush=True)  # kept if a later size fails
    print(json.dumps(results, indent=1))
    text = block(results, f"uv run python bench/side_by_side.py --sizes {args.sizes} --runs {args.runs}")
    print(text)
    if args.write:
        write_block("side-by-side", text)


if __name__ == "__main__":
    main()
