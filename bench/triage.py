"""Triage keys and word search on one store, measured inside the app (headless Textual, no terminal).

    uv run python bench/triage.py bench/.data/100000/app [--runs 6]

For each of ``s`` (star), ``s`` (unstar), ``e`` (done) and ``u`` (undo), pressed on the first thread: the time
from the key to the end of the frame that shows its result, median of ``--runs``. The store ends as it began (each
change is taken back). Then a word is typed into the search at 120 ms a key: the longest the event loop stalled
meanwhile (a frozen screen), and the time from the last key to the results. Prints one JSON object.

``bench/run.py`` runs this for each size (in a process of its own) and puts the figures in docs/performance.md.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

KEYS = ("s", "s", "e", "u")
WORD = "budget"
KEY_PAUSE = 0.3  # after a key: its worker, its frame and the list's recount are over before the next


async def measure(runs: int, word: str) -> dict[str, float | str]:
    gc.disable()  # as `pigeon` does before the app starts: the app then runs the collector in pauses of the keys
    from textual.screen import Screen

    from pigeon.cli.common import config_of
    from pigeon.cli.parser import build_parser
    from pigeon.tui.app import make_app

    frames: list[float] = []  # when each screen update ended
    update = Screen._on_timer_update

    def timed_update(self: Screen) -> None:
        update(self)
        frames.append(time.perf_counter())

    Screen._on_timer_update = timed_update  # type: ignore[method-assign]
    app = make_app(config_of(build_parser().parse_args([])), token=os.environ["PIGEON_TOKEN"])
    figures: dict[str, list[float]] = {key: [] for key in dict.fromkeys(KEYS)}
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause(3.0)  # start-up, the read of saved mail, the (failing) first sync
        for _ in range(runs):
            for key in KEYS:
                frames.clear()
                sent = time.perf_counter()
                await pilot.press(key)
                await pilot.pause(KEY_PAUSE)
                if frames:
                    figures[key].append(frames[0] - sent)
        stalls: list[float] = []

        async def watch() -> None:
            last = time.perf_counter()
            while True:
                await asyncio.sleep(0.005)
                now = time.perf_counter()
                stalls.append(now - last - 0.005)
                last = now

        await pilot.press("slash")
        await pilot.pause(0.3)
        watcher = asyncio.create_task(watch())
        typed = 0.0
        for letter in word:
            typed = time.perf_counter()
            await pilot.press(letter)
            await pilot.pause(0.12)
        while "Searching" in app.screen.status:  # type: ignore[attr-defined]
            await pilot.pause(0.01)
        results = time.perf_counter() - typed
        watcher.cancel()
    out: dict[str, float | str] = {f"key_{name}": statistics.median(v) for name, v in figures.items() if v}
    out["search_stall"] = max(stalls, default=0.0)
    out["search_results"] = results
    out["word"] = word
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("app_dir", type=Path, help="a data folder with store/default.sqlite3 (as bench/run.py makes)")
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--word", default=WORD)
    args = parser.parse_args(argv)
    os.environ.update(
        {
            "PIGEON_DATA_DIR": str(args.app_dir.resolve()),
            "PIGEON_CONFIG_DIR": tempfile.mkdtemp(prefix="pigeon-bench-config-"),
            "PIGEON_BASE_URL": "http://127.0.0.1:9",  # nothing listens: the app works from its store
            "PIGEON_TOKEN": "bench",
        }
    )
    print(json.dumps(asyncio.run(measure(args.runs, args.word))))


if __name__ == "__main__":
    sys.exit(main())
