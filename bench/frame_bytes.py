"""Bytes a `j` writes to the terminal, side by side: what an SSH link carries for each key.

    uv run python bench/frame_bytes.py --size 10000 --presses 8 [--write]

Pigeon (its bench store, offline), NeoMutt and aerc (the same messages as a Maildir, when installed) on a 200x50
pseudo-terminal (``bench/ptyharness.py``), in 256 colours and with ``COLORTERM=truecolor``. After the first row, 3 s
of quiet (Pigeon's offline banner comes meanwhile) and one unmeasured `j`, each `j` is counted from its write to
30 ms of silence, 0.6 s apart: Pigeon's preview of the thread the cursor rests on (120 ms after the last move) is
drawn between two keys and counted apart, as is the first `j` after a start. The time at 1 Mbit/s is the bytes' own
time on such a link (bits over the rate), not a measured one.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script: the bench package beside it

from bench.ptyharness import PtyProgram, showing  # noqa: E402
from bench.report import machine, write_block  # noqa: E402
from bench.side_by_side import DATA, Program, aerc, neomutt, newest_subject, pigeon  # noqa: E402

LINK_BITS_PER_S = 1_000_000


def count(program: Program, subject: str, presses: int, colorterm: str) -> dict[str, list[int]]:
    """The bytes of the first `j`, of each later one, and of each preview drawn between them."""
    env = {**program.env, **({"COLORTERM": colorterm} if colorterm else {})}
    run = PtyProgram(program.command, env, columns=200, rows=50)
    try:
        run.first_shown(showing(subject), since=run.started, within=120)
        run.settle(3.0)
        before = len(run.raw)
        run.press(b"j", still=0.03)
        figures: dict[str, list[int]] = {"first": [len(run.raw) - before], "j": [], "preview": []}
        for _ in range(presses):
            before = len(run.raw)
            run.settle(0.6)
            figures["preview"].append(len(run.raw) - before)
            before = len(run.raw)
            run.press(b"j", still=0.03)
            figures["j"].append(len(run.raw) - before)
        return figures
    finally:
        run.close()


def measure(size: int, presses: int) -> list[tuple[str, str, dict[str, list[int]]]]:
    folder = DATA / str(size)
    subject = newest_subject(folder / "app" / "store" / "default.sqlite3")
    maildir = (folder / "maildir").resolve()
    makers: dict[str, Callable[[Path], Program]] = {"Pigeon": lambda home: pigeon(folder / "app", home)}
    if (maildir / "INBOX").exists():
        makers |= {"NeoMutt": lambda home: neomutt(maildir, home), "aerc": lambda home: aerc(maildir, home)}
    results = []
    for name, make in makers.items():
        if name != "Pigeon" and not any((Path(p) / name.lower()).exists() for p in os.get_exec_path()):
            continue
        for colorterm in ("", "truecolor"):
            with tempfile.TemporaryDirectory(prefix="pigeon-bytes-") as home:
                figures = count(make(Path(home)), subject, presses, colorterm)
            results.append((name, colorterm or "256 colours", figures))
            print(name, colorterm, figures, flush=True)
    return results


def report(results: list[tuple[str, str, dict[str, list[int]]]], command: str) -> str:
    lines = [
        f"`{command}` ({machine()}): bytes at a 200x50 pseudo-terminal, medians (min-max) over the presses.",
        "",
        "| program | colours | one `j` | at 1 Mbit/s | the first `j` after a start | a preview between two keys |",
        "|---|---|---|---|---|---|",
    ]
    for name, colours, f in results:
        j = statistics.median(f["j"])
        previews = [p for p in f["preview"] if p] or [0]
        lines.append(
            f"| {name} | {colours} | {j:,.0f} ({min(f['j']):,}-{max(f['j']):,}) B "
            f"| {j * 8 / LINK_BITS_PER_S * 1000:.1f} ms | {f['first'][0]:,} B "
            f"| {statistics.median(previews):,.0f} ({min(previews):,}-{max(previews):,}) B |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000, help="a bench size made by bench/run.py")
    parser.add_argument("--presses", type=int, default=8)
    parser.add_argument("--write", action="store_true", help="put the table in docs/performance.md")
    args = parser.parse_args(argv)
    text = report(measure(args.size, args.presses), f"uv run python bench/frame_bytes.py --size {args.size}")
    print(text)
    if args.write:
        write_block("frame-bytes", text)


if __name__ == "__main__":
    main()
