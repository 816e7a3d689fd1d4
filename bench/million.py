"""A million messages: Pigeon's start, keys, search and memory on a heavy user's mailbox, beside notmuch on the
same mail, and Pigeon at 1,000 threads in the same run.

    uv run python bench/million.py [--threads 330000] [--runs 3] [--write]

Built once in ``bench/.data/<threads>`` (an hour or so here, about 16 GB): the reference service's demo mail of
``--threads`` threads (1-10 messages each: about 1,000,000 messages at 330,000), a Pigeon store filled from it
directly (``bench/run.py``'s direct fill), the store exported as a Maildir (``bench/maildir.py``, a process a
core) and indexed by ``notmuch new`` (timed). Then, the programs taking turns ``--runs`` times:

- ``pigeon`` offline on the store, 160x45 (``bench/ptyharness.py``): start -> the newest thread's row; Enter on it
  -> the last byte of its frame, back with ``h``; ``j`` 20 times at typing pace, each to the last byte of its
  frame; ``/`` and each of ``WORDS`` typed a letter at a time at typing pace, each letter to the last byte of its
  frame, and the last letter to the results (the newest matching thread shown, the search done); peak memory;
- the same on the 1,000-thread store (``bench/run.py`` builds it): what "as at 1,000" means;
- ``notmuch search --limit=50`` (the first screen of threads, newest first) and ``notmuch count --output=threads``
  for each word, each process timed whole.

Also reported: each one's size on disk per message (Pigeon's store with its search index, notmuch's index, the
Maildir). Medians and 99th percentiles, with the machine's load before and after; ``--write`` puts them in
docs/performance.md (its ``million`` block).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script: the bench package beside it

from bench.conversation import percentile
from bench.maildir import export
from bench.ptyharness import PtyProgram, Screen, showing
from bench.report import machine, write_block
from bench.run import DATA, app_environment, build_service, direct_fill, pigeon_command
from bench.side_by_side import FRAME_GAP, READING, newest_subject

THREADS = 330_000
SMALL = 1_000
WORDS = ("kestrel", "offsite")
"""A project's name (in a tenth of the project threads) and a meeting's (fewer): common and rarer words."""
PRESSES = 20
RESULTS_GAP = 0.3  # silence after a search's results (the preview drawn); under the search box's cursor blink, 0.5 s
FIRST_ROW, SEARCH_KEY_P99, MEMORY_MIB = 0.5, 0.05, 100.0


@dataclass(frozen=True)
class Mailbox:
    threads: int
    store: Path
    maildir: Path
    notmuch_config: Path
    facts: dict[str, Any]


def build(threads: int) -> Mailbox:
    """The mailbox of ``threads`` threads in its three forms, each made once (a step's end is marked by a file)."""
    folder = DATA / str(threads)
    service_db, _ = build_service(threads, folder)
    store = folder / "app" / "store" / "default.sqlite3"
    facts_file = folder / "facts.json"
    facts: dict[str, Any] = json.loads(facts_file.read_text()) if facts_file.exists() else {}
    if "messages" not in facts:
        store.parent.mkdir(parents=True, exist_ok=True)
        direct_fill(service_db, store)
        with sqlite3.connect(store) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # (its size on disk is the file's alone)
            facts["messages"] = conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
        facts_file.write_text(json.dumps(facts))
    maildir = (folder / "maildir").resolve()
    if "exported" not in facts:
        facts["exported"] = export(store, maildir, workers=os.cpu_count() or 1)
        facts_file.write_text(json.dumps(facts))
    config = folder / "notmuch-config"
    config.write_text(
        f"[database]\npath={maildir}\n[new]\ntags=unread;inbox\n[search]\nexclude_tags=\n"
        "[maildir]\nsynchronize_flags=false\n[user]\nname=Bench\nprimary_email=bench@pigeon.example\n"
    )
    if "notmuch_new_s" not in facts and shutil.which("notmuch"):
        started = time.perf_counter()
        subprocess.run(["notmuch", "new", "--quiet"], env=notmuch_env(config), check=True)
        facts["notmuch_new_s"] = time.perf_counter() - started
        facts_file.write_text(json.dumps(facts))
    return Mailbox(threads, store, maildir, config, facts)


def notmuch_env(config: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", ""), "HOME": str(config.parent), "NOTMUCH_CONFIG": str(config)}


def disk_bytes(path: Path) -> int:
    """Bytes on disk of a file (with its write-ahead log) or of everything under a folder."""
    if path.is_file():
        return sum(p.stat().st_blocks * 512 for p in path.parent.glob(path.name + "*"))
    return sum(p.stat().st_blocks * 512 for p in path.rglob("*") if p.is_file())


def newest_match(store: Path, word: str) -> str:
    """Words of the subject of the newest thread a search for ``word`` finds (what Pigeon's list shows first)."""
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as conn:
        row = conn.execute(
            "SELECT t.subject FROM search s JOIN threads t ON t.id = s.thread_id WHERE search MATCH ? "
            "ORDER BY t.last_message_at DESC LIMIT 1",
            (f'"{word}"*',),
        ).fetchone()
    return str(row[0])[:18] if row else ""


def _typed_at_pace(run: PtyProgram, keys: list[bytes], pace: random.Random) -> list[float]:
    """Each key at typing pace (a pause of 0-150 ms after its frame), timed to the last byte of its frame."""
    times = []
    for key in keys:
        time.sleep(pace.uniform(0.0, 0.15))
        times.append(run.press(key, still=FRAME_GAP, within=10))
    return times


def _results(word: str, subject: str) -> Screen:
    """The list shows the search's results: the count of what matches ``word``, and the newest match."""
    return lambda lines: any(f'matching "{word}"' in line for line in lines) and any(subject in line for line in lines)


def pigeon_run(store: Path, words: dict[str, str], home: Path, pace: random.Random) -> dict[str, Any]:
    env = app_environment(store.parent.parent, home / "pigeon-config")
    run = PtyProgram(pigeon_command(), env)
    try:
        out: dict[str, Any] = {"first_row": run.first_shown(showing(newest_subject(store)), since=run.started)}
        run.settle(1.0)  # the start-up work (the offline notice, the counts) done
        out["open"] = run.press(b"\r", still=FRAME_GAP)
        run.settle(READING)
        run.press(b"h")
        out["j"] = _typed_at_pace(run, [b"j"] * PRESSES, pace)
        out["search_keys"], out["search_results"] = [], []
        for word, subject in words.items():
            out["search_keys"] += _typed_at_pace(run, [b"/", *(c.encode() for c in word[:-1])], pace)[1:]
            time.sleep(pace.uniform(0.0, 0.15))
            run.settle()
            sent = time.perf_counter()
            os.write(run.master, word[-1].encode())
            out["search_results"].append(run.first_shown(_results(word, subject), since=sent, within=60))
            run.settle(RESULTS_GAP)  # the preview of the thread under the cursor drawn
            run.press(b"\x1b[27u", still=RESULTS_GAP)  # the search cleared (ESC as a kitty-protocol terminal sends it)
        out["rss_mib"] = run.peak_rss_mib()
        return out
    finally:
        run.close()


def notmuch_run(box: Mailbox, words: tuple[str, ...]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"search": [], "count": []}
    env = notmuch_env(box.notmuch_config)
    for word in words:
        for figure, command in (
            ("search", ["notmuch", "search", "--limit=50", "--sort=newest-first", word]),
            ("count", ["notmuch", "count", "--output=threads", word]),
        ):
            started = time.perf_counter()
            subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
            out[figure].append(time.perf_counter() - started)
    return out


def measure(box: Mailbox, small: Path, runs: int) -> dict[str, Any]:
    pace = random.Random(7)  # noqa: S311  (pauses between keys, not security)
    words = {word: newest_match(box.store, word) for word in WORDS}
    small_words = {word: match for word in WORDS if (match := newest_match(small, word))}
    home = Path(tempfile.mkdtemp(prefix="pigeon-bench-million-"))
    found: dict[str, list[dict[str, Any]]] = {"big": [], "small": [], "notmuch": []}
    try:
        pigeon_run(box.store, words, home, pace)  # one unmeasured start each: the page cache, the bytecode
        pigeon_run(small, small_words, home, pace)
        for _ in range(runs):  # taking turns, so a slow moment of the machine falls on all of them
            found["big"].append(pigeon_run(box.store, words, home, pace))
            found["small"].append(pigeon_run(small, small_words, home, pace))
            if shutil.which("notmuch"):
                found["notmuch"].append(notmuch_run(box, WORDS))
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return found


def spread(runs: list[dict[str, Any]], figure: str) -> dict[str, float]:
    values = [v for run in runs for v in (run[figure] if isinstance(run[figure], list) else [run[figure]])]
    return {"median": statistics.median(values), "p99": percentile(values, 0.99), "count": len(values)}


def block(box: Mailbox, found: dict[str, list[dict[str, Any]]], loads: tuple[float, float], command: str) -> str:
    def ms(value: float) -> str:
        return f"{value * 1000:,.1f} ms" if value < 0.1 else f"{value * 1000:,.0f} ms"

    messages, runs = box.facts["messages"], len(found["big"])
    big = {f: spread(found["big"], f) for f in ("first_row", "open", "j", "search_keys", "search_results", "rss_mib")}
    small = {f: spread(found["small"], f) for f in ("first_row", "open", "j", "rss_mib")}
    rows = [
        (
            "start -> first row",
            ms(big["first_row"]["median"]),
            "",
            ms(small["first_row"]["median"]),
            f"{ms(FIRST_ROW)}: {'met' if big['first_row']['median'] <= FIRST_ROW else 'missed'}",
        ),
        (
            "Enter: open the newest thread",
            ms(big["open"]["median"]),
            ms(big["open"]["p99"]),
            ms(small["open"]["median"]),
            "as at 1,000",
        ),
        ("`j` at typing pace", ms(big["j"]["median"]), ms(big["j"]["p99"]), ms(small["j"]["median"]), "as at 1,000"),
        (
            "a letter typed into the search",
            ms(big["search_keys"]["median"]),
            ms(big["search_keys"]["p99"]),
            "",
            f"{ms(SEARCH_KEY_P99)} p99: {'met' if big['search_keys']['p99'] <= SEARCH_KEY_P99 else 'missed'}",
        ),
        (
            "the last letter -> the results",
            ms(big["search_results"]["median"]),
            ms(big["search_results"]["p99"]),
            "",
            "no slower than notmuch",
        ),
        (
            "peak memory",
            f"{big['rss_mib']['median']:.1f} MiB",
            "",
            f"{small['rss_mib']['median']:.1f} MiB",
            f"{MEMORY_MIB:.0f} MiB: {'met' if big['rss_mib']['median'] <= MEMORY_MIB else 'missed'}",
        ),
    ]
    lines = [
        f"`{command}` ({machine()}; load {loads[0]:.2f} before, {loads[1]:.2f} after): {box.threads:,} threads, "
        f"{messages:,} messages, {runs} run{'s' if runs != 1 else ''}, 160x45, the programs taking turns; "
        f"the words searched: {', '.join(f'`{w}`' for w in WORDS)}.",
        "",
        f"| Pigeon | {box.threads:,} threads: median | 99th percentile | {SMALL:,} threads: median | target |",
        "|---|---|---|---|---|",
        *(f"| {' | '.join(row)} |" for row in rows),
    ]
    if found["notmuch"]:
        search, count = spread(found["notmuch"], "search"), spread(found["notmuch"], "count")
        lines += [
            "",
            "| notmuch, the same words | median | 99th percentile |",
            "|---|---|---|",
            f"| `notmuch search --limit=50` | {ms(search['median'])} | {ms(search['p99'])} |",
            f"| `notmuch count --output=threads` | {ms(count['median'])} | {ms(count['p99'])} |",
        ]
    sizes = [("Pigeon's store (with its search index)", disk_bytes(box.store))]
    if (box.maildir / ".notmuch").exists():
        sizes.append(("notmuch's index", disk_bytes(box.maildir / ".notmuch")))
    sizes.append(("the Maildir", disk_bytes(box.maildir / "INBOX")))
    lines += ["", "| on disk | in all | a message |", "|---|---|---|"]
    lines += [f"| {name} | {size / 2**30:.2f} GiB | {size / messages:,.0f} bytes |" for name, size in sizes]
    if "notmuch_new_s" in box.facts:
        lines += ["", f"`notmuch new` indexed the Maildir in {box.facts['notmuch_new_s']:,.0f} s."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=THREADS)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--build-only", action="store_true", help="make the mailbox, measure nothing")
    parser.add_argument("--write", action="store_true", help="write the million block of docs/performance.md")
    args = parser.parse_args(argv)
    box = build(args.threads)
    if args.build_only:
        print(json.dumps(box.facts))
        return
    small = DATA / str(SMALL) / "app" / "store" / "default.sqlite3"
    if not small.exists():
        raise SystemExit(f"no {SMALL:,}-thread store: run `uv run python bench/run.py --sizes {SMALL}` first")
    before = os.getloadavg()[0]
    found = measure(box, small, args.runs)
    print(json.dumps(found), file=sys.stderr)
    command = "uv run python bench/million.py " + " ".join(argv if argv is not None else sys.argv[1:])
    text = block(box, found, (before, os.getloadavg()[0]), command.strip())
    print(text)
    if args.write:
        write_block("million", text)


if __name__ == "__main__":
    main()
