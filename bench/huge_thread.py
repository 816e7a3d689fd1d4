"""A thread of 10,000 messages opened and read, timed at the pseudo-terminal, beside NeoMutt on the same mail.

    uv run python bench/huge_thread.py [--runs 5] [--messages 10000] [--presses 30] [--write]

The store (built once in ``bench/.data/conversation``, as ``bench/conversation.py`` builds it) holds 200 threads of
demo mail whose second newest is a conversation of ``--messages`` messages with a reply tree, read but for its
latest 12. Each run starts ``pigeon`` on a fresh copy of it (``bench/ptyharness.py``: key written -> last byte) and:

- ``j`` and Enter written together, so no preview comes first: key -> the output after which the screen first
  shows the header of the first unread message (the store read, the thread's view made, its window laid out; the
  frames after it, the thread marked read 250 ms after it opens, are not waited for);
- ``n`` ``--presses`` times at typing pace (150-300 ms a key), each key to the last byte of its frame;
- ``>`` (the last message) and ``<`` (the first): moves across the whole thread;
- peak memory (VmHWM) before the open and at the end: what the thread added.

NeoMutt (when installed) reads the same mail as a Maildir (``bench/maildir.py``), threaded: start -> first row
(it reads every message's headers, the huge thread's too, with its header cache warm), Enter (a message of the
newest thread), ``j`` in the index, and its peak memory. Figures: medians and 99th percentiles over every key of
every run, the programs taking turns, with the machine's load before and after. ``--write`` puts them in
docs/performance.md (its ``huge-thread`` block).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script: the bench package beside it

from bench.conversation import DATA, SEED, THREADS, Conversation, build, percentile, serving
from bench.maildir import export
from bench.ptyharness import PtyProgram, Silent, showing
from bench.report import machine, write_block
from bench.run import app_environment, pigeon_command
from bench.side_by_side import READING, base_env, neomutt, newest_subject

KEY_GAP = 0.1  # the silence that ends a key's frames (shorter than the 250 ms after which a thread is marked read)
STARTED = 2.0  # silence after the first row before the first key: the start-up check for mail done
FIRST_SCREEN, KEY_P99, GROWTH_MIB = 0.3, 0.05, 50.0
NEXT, LAST, FIRST = b"n", b">", b"<"


def pigeon_run(store: Path, seen: Conversation, service: tuple[str, str], presses: int) -> dict[str, Any]:
    home = Path(tempfile.mkdtemp(prefix="pigeon-bench-huge-"))
    try:
        (home / "app" / "store").mkdir(parents=True)
        shutil.copy(store, home / "app" / "store" / "default.sqlite3")
        (home / "config").mkdir()
        env = {
            **app_environment(home / "app", home / "config"),
            "PIGEON_BASE_URL": service[0],
            "PIGEON_TOKEN": service[1],
            "HOME": str(home),
        }
        run = PtyProgram(pigeon_command(), env)
        try:
            return _measure(run, seen, presses)
        finally:
            run.close()
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _measure(run: PtyProgram, seen: Conversation, presses: int) -> dict[str, Any]:
    pace = random.Random(SEED)  # noqa: S311  (pauses between keys, not security)
    out: dict[str, Any] = {"missing": []}
    run.first_shown(showing(seen.subject[:16]), since=run.started, within=120)
    run.settle(STARTED)
    out["peak_before"] = run.peak_rss_mib()
    run.settle()
    sent = time.perf_counter()
    os.write(run.master, b"j\r")
    try:
        out["open"] = run.first_shown(lambda lines: any(seen.first_unread in line for line in lines), since=sent)
    except Silent:
        out["missing"].append("open")
        return out
    run.settle(READING)
    out["next"] = []
    for _ in range(presses):
        time.sleep(pace.uniform(0.0, 0.15))
        try:
            out["next"].append(run.press(NEXT, within=3, still=KEY_GAP))
        except Silent:
            out["missing"].append("n")
            break
    out["far"] = [run.press(key, within=10, still=KEY_GAP) for key in (LAST, FIRST, LAST)]
    out["peak_after"] = run.peak_rss_mib()
    return out


def neomutt_run(maildir: Path, home: Path, subject: str) -> dict[str, Any]:
    program = neomutt(maildir, home)
    run = PtyProgram(program.command, program.env)
    try:
        out: dict[str, Any] = {"first_row": run.first_shown(showing(subject), since=run.started, within=600)}
        out["open"] = run.press(b"\r")
        run.settle(READING)
        run.press(program.back, showing(subject))
        out["j"] = [run.press(b"j", still=KEY_GAP) for _ in range(10)]
        out["peak"] = run.peak_rss_mib()
        return out
    finally:
        run.close()


def spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "p99": percentile(values, 0.99), "count": len(values)}


def summary(pigeon: list[dict[str, Any]], mutt: list[dict[str, Any]]) -> dict[str, Any]:
    answered = [run for run in pigeon if "open" in run]
    out: dict[str, Any] = {"missing": sorted({m for run in pigeon for m in run["missing"]})}
    if answered:
        out["open"] = spread([run["open"] for run in answered])
        out["next"] = spread([t for run in answered for t in run["next"]])
        out["far"] = spread([t for run in answered for t in run["far"]])
        out["growth"] = statistics.median(run["peak_after"] - run["peak_before"] for run in answered)
        out["peak"] = statistics.median(run["peak_after"] for run in answered)
    if mutt:
        out["neomutt"] = {
            "first_row": spread([run["first_row"] for run in mutt]),
            "open": spread([run["open"] for run in mutt]),
            "j": spread([t for run in mutt for t in run["j"]]),
            "peak": statistics.median(run["peak"] for run in mutt),
        }
    return out


def block(result: dict[str, Any], messages: int, load: tuple[float, float], command: str, runs: int) -> str:
    def ms(figure: dict[str, float]) -> str:
        return f"{figure['median'] * 1000:.0f} ms | {figure['p99'] * 1000:.0f} ms"

    lines = [
        f"`{command}` ({machine()}; load {load[0]:.1f} before, {load[1]:.1f} after): a {messages:,}-message thread, "
        f"{runs} runs, 160x45, at the pseudo-terminal: the open to the output that first shows its first screen, "
        "each other key to the last byte of its frames.",
        "",
        "| program | measure | median | 99th percentile | target |",
        "|---|---|---|---|---|",
    ]
    if "open" in result:
        opened, keys, far = result["open"], result["next"], result["far"]
        verdict = "met" if opened["median"] <= FIRST_SCREEN else "missed"
        lines.append(f"| Pigeon | open it (no preview first): first screen | {ms(opened)} | 300 ms: {verdict} |")
        verdict = "met" if keys["p99"] <= KEY_P99 else "missed"
        lines.append(f"| Pigeon | `n` at typing pace ({keys['count']} keys) | {ms(keys)} | 50 ms: {verdict} |")
        verdict = "met" if far["p99"] <= KEY_P99 else "missed"
        lines.append(f"| Pigeon | `>` / `<`: last, first message | {ms(far)} | 50 ms: {verdict} |")
        verdict = "met" if result["growth"] <= GROWTH_MIB else "missed"
        lines.append(
            f"| Pigeon | peak memory: what the thread added (peak at the end) | {result['growth']:.0f} MiB "
            f"({result['peak']:.0f} MiB) | | 50 MiB: {verdict} |"
        )
    if "neomutt" in result:
        mutt = result["neomutt"]
        lines += [
            f"| NeoMutt | start -> first row (reads the thread's headers) | {ms(mutt['first_row'])} | |",
            f"| NeoMutt | Enter: a message | {ms(mutt['open'])} | |",
            f"| NeoMutt | `j` in the index | {ms(mutt['j'])} | |",
            f"| NeoMutt | peak memory | {mutt['peak']:.0f} MiB | | |",
        ]
    if result["missing"]:
        lines.append(f"\nNot answered in some run: {', '.join(result['missing'])}.")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--presses", type=int, default=30, help="n pressed this many times a run")
    parser.add_argument("--write", action="store_true", help="write the huge-thread block of docs/performance.md")
    args = parser.parse_args(argv)
    store, seen = build(DATA, messages=args.messages)
    maildir = (DATA / f"maildir-{THREADS}-{args.messages}").resolve()
    has_mutt = shutil.which("neomutt") is not None
    if has_mutt and not (maildir / "INBOX").exists():
        export(store, maildir)
    subject = newest_subject(store)
    before = os.getloadavg()[0]
    pigeon: list[dict[str, Any]] = []
    mutt: list[dict[str, Any]] = []
    home = Path(tempfile.mkdtemp(prefix="pigeon-bench-huge-mutt-"))
    try:
        with serving(DATA, messages=args.messages) as service:
            if has_mutt:
                neomutt_run(maildir, home, subject)  # unmeasured: its header cache filled
            for _ in range(args.runs):  # the programs take turns: a slow moment of the machine falls on both
                pigeon.append(pigeon_run(store, seen, service, args.presses))
                if has_mutt:
                    mutt.append(neomutt_run(maildir, home, subject))
    finally:
        shutil.rmtree(home, ignore_errors=True)
    after = os.getloadavg()[0]
    result = summary(pigeon, mutt)
    print(json.dumps({"load": [before, after], "result": result, "env": sorted(base_env(home))}, indent=1))
    command = " ".join(["uv run python bench/huge_thread.py", *(sys.argv[1:] if argv is None else argv)])
    text = block(result, args.messages, (before, after), command, args.runs)
    print(text)
    if args.write:
        write_block("huge-thread", text)


if __name__ == "__main__":
    main()
