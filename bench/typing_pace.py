"""Keys at typing pace: `j` every 100 ms and every 150 ms, each key to the last byte of its frame, side by side.

    uv run python bench/typing_pace.py --sizes 1000,10000 --presses 60 --runs 2 [--write]

Pigeon (its bench store, offline), NeoMutt and aerc (the same messages as a Maildir, when installed) on a 160x45
pseudo-terminal (``bench/ptyharness.py``). After the first row, 3 s of quiet and one unmeasured `j`, a `j` is written
every ``pace`` ms without waiting for the screen. A key's time is from its write to the last chunk of the first burst
of output after it (a burst ends at 20 ms of silence, or at the next key). Pigeon previews the thread the cursor rests
on 120 ms after a move, or, while keys come in a row, after twice their pace: a preview drawn between two keys is
not the keys' bytes, but a key that comes while it is drawn waits, and that wait is counted. A key with no output
before the next is unanswered.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script: the bench package beside it

from bench.ptyharness import PtyProgram, showing  # noqa: E402
from bench.report import machine, write_block  # noqa: E402
from bench.side_by_side import DATA, Program, aerc, neomutt, newest_subject, pigeon  # noqa: E402

BURST_GAP = 0.02  # seconds of silence that end a key's frame
PACES = (0.100, 0.150)
PEERS_UP_TO = 10_000
"""Larger mailboxes are Pigeon's alone: NeoMutt, with a fresh home each run, reads a Maildir of 300,000 messages
for longer than the harness waits for a first row (its keys at 100,000 threads, header cache warm, are in
``bench/side_by_side.py``)."""


def key_times(presses: list[float], arrivals: list[tuple[float, int]], end: float) -> list[float | None]:
    """For each press, seconds to the last chunk of the first burst after it (None: no output before the next)."""
    times: list[float | None] = []
    for n, sent in enumerate(presses):
        until = presses[n + 1] if n + 1 < len(presses) else end
        burst = [at for at, _size in arrivals if sent < at < until]
        if not burst:
            times.append(None)
            continue
        last = burst[0]
        for at in burst[1:]:
            if at - last >= BURST_GAP:
                break
            last = at
        times.append(last - sent)
    return times


def at_pace(program: Program, subject: str, pace: float, presses: int) -> list[float | None]:
    run = PtyProgram(program.command, program.env)
    try:
        run.first_shown(showing(subject), since=run.started, within=120)
        run.settle(3.0)
        run.press(b"j", still=0.03)
        run.settle(0.5)
        sent: list[float] = []
        due = time.perf_counter()
        for _ in range(presses):
            while (wait := due - time.perf_counter()) > 0:
                time.sleep(min(wait, 0.002))
            sent.append(time.perf_counter())
            os.write(run.master, b"j")
            due += pace
        run.settle(0.5)
        return key_times(sent, list(run.arrivals), time.perf_counter())
    finally:
        run.close()


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def _makers(folder: Path, maildir: Path, size: int) -> dict[str, Callable[[Path], Program]]:
    """Each program on this size's mail, given a home folder."""
    makers: dict[str, Callable[[Path], Program]] = {"Pigeon": lambda home: pigeon(folder / "app", home)}
    if (maildir / "INBOX").exists() and size <= PEERS_UP_TO:
        makers |= {"NeoMutt": lambda home: neomutt(maildir, home), "aerc": lambda home: aerc(maildir, home)}
    return makers


def measure(sizes: list[int], presses: int, runs: int) -> list[tuple[int, str, float, list[float | None]]]:
    results = []
    for size in sizes:
        folder = DATA / str(size)
        subject = newest_subject(folder / "app" / "store" / "default.sqlite3")
        maildir = (folder / "maildir").resolve()
        makers = _makers(folder, maildir, size)
        for pace in PACES:
            for name, make in makers.items():
                if name != "Pigeon" and not any((Path(p) / name.lower()).exists() for p in os.get_exec_path()):
                    continue
                times: list[float | None] = []
                for _ in range(runs):
                    with tempfile.TemporaryDirectory(prefix="pigeon-pace-") as home:
                        times += at_pace(make(Path(home)), subject, pace, presses)
                results.append((size, name, pace, times))
                answered = [t for t in times if t is not None]
                print(size, name, pace, f"p50 {statistics.median(answered) * 1000:.1f} p99 {_p99(answered) * 1000:.1f}")
    return results


def report(results: list[tuple[int, str, float, list[float | None]]], command: str, load: tuple[float, float]) -> str:
    lines = [
        f"`{command}` ({machine()}; load {load[0]:.1f} before, {load[1]:.1f} after): `j` written at a fixed pace, "
        "each key to the last byte of its frame. Target (Pigeon): 99th percentile under 16 ms.",
        "",
        "| threads | a key every | program | keys | median | 99th percentile | slowest | unanswered |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for size, name, pace, times in results:
        answered = [t * 1000 for t in times if t is not None]
        lines.append(
            f"| {size:,} | {pace * 1000:.0f} ms | {name} | {len(times)} | {statistics.median(answered):.1f} ms "
            f"| {_p99(answered):.1f} ms | {max(answered):.1f} ms | {len(times) - len(answered)} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--presses", type=int, default=60)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--write", action="store_true", help="put the table in docs/performance.md")
    args = parser.parse_args(argv)
    before = os.getloadavg()[0]
    results = measure([int(s) for s in args.sizes.split(",")], args.presses, args.runs)
    command = f"uv run python bench/typing_pace.py --sizes {args.sizes} --presses {args.presses} --runs {args.runs}"
    text = report(results, command, (before, os.getloadavg()[0]))
    print(text)
    if args.write:
        write_block("typing-pace", text)


if __name__ == "__main__":
    main()
