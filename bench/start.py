"""Start at small size: Pigeon's first row beside an empty Textual app's first paint and NeoMutt's first row, and
``pigeon demo`` to its first row, timed at the pseudo-terminal in one run.

    uv run python bench/start.py [--runs 7] [--size 1000] [--write]

The programs take turns, each started fresh on a 160x45 pseudo-terminal (``bench/ptyharness.py``), after one
unmeasured start each (bytecode and page caches warm, as on a second start):

- an empty Textual app (one ``Static``): start -> its first paint, the framework's own floor;
- ``pigeon`` on the ``--size`` store that ``bench/run.py`` built, offline: start -> the newest thread's row, and
  its peak memory (VmHWM) once idle;
- NeoMutt (when installed) on the same mail as a Maildir: start -> the newest thread's row, and its peak memory;
- ``pigeon demo`` as a new user runs it, ``uv run pigeon demo`` from the project: start -> the newest demo
  thread's row (the service started, its mail made, the first page synced and drawn).

Figures are medians, with the machine's load before and after; ``--write`` puts them in docs/performance.md (its
``start`` block).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script: the bench package beside it

from bench.maildir import export
from bench.ptyharness import PtyProgram, showing
from bench.report import machine, write_block
from bench.run import DATA, app_environment, pigeon_command
from bench.side_by_side import base_env, neomutt, newest_subject

ROOT = Path(__file__).resolve().parent.parent
IDLE = 1.0  # silence after the first row before memory is read: the start-up work done
EMPTY_APP = (
    "from textual.app import App\n"
    "from textual.widgets import Static\n"
    "class Empty(App[None]):\n"
    "    def compose(self):\n"
    "        yield Static('first paint')\n"
    "Empty().run()\n"
)
DEMO_ROW, EMPTY_RATIO, MEMORY_MIB = 1.0, 1.0, 50.0
DEMO = "uv run pigeon demo"


@dataclass
class Program:
    name: str
    command: list[str]
    env: dict[str, str]
    shows: str
    memory: bool = False


def demo_subject() -> str:
    """Words of the newest demo thread's subject (the demo's mail is the same in every run but for its times)."""
    from pigeon_service.demo_mail import demo_database

    db, _ = demo_database()
    try:
        (account,) = db.account_ids()
        threads, _ = db.list_threads(account, page_size=1, page_token=None)
    finally:
        db.close()
    return (threads[0].subject or "")[:18]


def empty_app(home: Path) -> Program:
    command = [sys.executable, "-c", EMPTY_APP]
    return Program("empty Textual app", command, base_env(home / "empty"), "first paint", memory=True)


def demo(home: Path, name: str, command: list[str]) -> Program:
    """``pigeon demo`` as ``command`` runs it, with a new user's own uv cache and PATH and folders of its own."""
    uv = shutil.which("uv")
    cache = subprocess.run([uv, "cache", "dir"], capture_output=True, text=True).stdout.strip() if uv else ""
    env = {
        **base_env(home / "demo"),
        **({"UV_CACHE_DIR": cache} if cache else {}),
        "PIGEON_DATA_DIR": str(home / "demo" / "data"),
        "PIGEON_CONFIG_DIR": str(home / "demo" / "config"),
    }
    return Program(name, command, env, demo_subject())


def programs(size: int, home: Path) -> list[Program]:
    app_dir = DATA / str(size) / "app"
    store = app_dir / "store" / "default.sqlite3"
    subject = newest_subject(store)
    found = [
        empty_app(home),
        Program(
            f"Pigeon, {size:,} threads",
            pigeon_command(),
            app_environment(app_dir, home / "pigeon-config"),
            subject,
            memory=True,
        ),
    ]
    if shutil.which("neomutt"):
        maildir = (DATA / str(size) / "maildir").resolve()
        if not (maildir / "INBOX").exists():
            export(store, maildir)
        mutt = neomutt(maildir, home / "neomutt")
        found.append(Program(f"NeoMutt, {size:,} threads", mutt.command, mutt.env, subject, memory=True))
    uv = shutil.which("uv")
    if uv:
        found.append(demo(home, DEMO, [uv, "run", "--project", str(ROOT), "pigeon", "demo"]))
    for program in found:
        Path(program.env["HOME"]).mkdir(parents=True, exist_ok=True)
    return found


def one_run(program: Program) -> dict[str, float]:
    run = PtyProgram(program.command, program.env)
    try:
        figures = {"first": run.first_shown(showing(program.shows), since=run.started, within=120)}
        if program.memory:
            run.settle(IDLE)
            figures["rss_mib"] = run.peak_rss_mib()
        return figures
    finally:
        run.close()


def measure(size: int, runs: int) -> dict[str, Any]:
    home = Path(tempfile.mkdtemp(prefix="pigeon-bench-start-"))
    try:
        found = programs(size, home)
        for program in found:  # one unmeasured start each
            one_run(program)
        figures: dict[str, list[dict[str, float]]] = {p.name: [] for p in found}
        for _ in range(runs):  # taking turns, so a slow moment of the machine falls on all of them
            for program in found:
                figures[program.name].append(one_run(program))
        return {
            name: {key: statistics.median(f[key] for f in runs_of) for key in runs_of[0]}
            for name, runs_of in figures.items()
        }
    finally:
        shutil.rmtree(home, ignore_errors=True)


def block(results: dict[str, Any], size: int, runs: int, loads: tuple[float, float], command: str) -> str:
    def ms(value: float) -> str:
        return f"{value * 1000:,.0f} ms"

    pigeon = results[f"Pigeon, {size:,} threads"]
    empty = results["empty Textual app"]
    rows = [
        f"| {name} | {ms(r['first'])} | {'{:.1f} MiB'.format(r['rss_mib']) if 'rss_mib' in r else ''} |"
        for name, r in results.items()
    ]
    verdict: list[tuple[str, str, bool]] = [
        (
            f"Pigeon's first row against the empty app's first paint: {pigeon['first'] / empty['first']:.2f}x",
            f"{EMPTY_RATIO:.1f}x",
            pigeon["first"] <= EMPTY_RATIO * empty["first"],
        ),
        (
            f"Pigeon's peak memory at {size:,} threads: {pigeon['rss_mib']:.1f} MiB",
            f"{MEMORY_MIB:.0f} MiB",
            pigeon["rss_mib"] <= MEMORY_MIB,
        ),
    ]
    if DEMO in results:
        row = results[DEMO]["first"]
        verdict.append((f"`uv run pigeon demo` to its first row: {ms(row)}", ms(DEMO_ROW), row <= DEMO_ROW))
    lines = [
        f"`{command}` ({machine()}; load {loads[0]:.2f} before, {loads[1]:.2f} after): medians of {runs} runs, "
        "160x45, the programs taking turns.",
        "",
        "| program | start -> first row (or paint) | peak memory |",
        "|---|---|---|",
        *rows,
        "",
        *(f"- {what} (target {target}: {'met' if met else 'missed'})" for what, target, met in verdict),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None, *, load: Callable[[], float] = lambda: os.getloadavg()[0]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--write", action="store_true", help="write the start block of docs/performance.md")
    args = parser.parse_args(argv)
    before = load()
    started = time.perf_counter()
    results = measure(args.size, args.runs)
    command = "uv run python bench/start.py " + " ".join(argv if argv is not None else sys.argv[1:])
    text = block(results, args.size, args.runs, (before, load()), command.strip())
    print(text)
    print(f"({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    if args.write:
        write_block("start", text)


if __name__ == "__main__":
    main()
