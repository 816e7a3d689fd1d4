"""Triage keys and word search on one store, measured inside the app (headless Textual, no terminal).

    uv run python bench/triage.py bench/.data/100000/app [--runs 6]

For each of ``s`` (star), ``s`` (unstar), ``e`` (done) and ``u`` (undo), pressed on the first thread: the time
from the key to the end of the frame that shows its result, median of ``--runs``. The store ends as it began (each
change is taken back). Then the triage flow: the first thread opened, then ``e`` pressed 20 times in the reader, each
time the next thread opening in it: keys per thread cleared and the time from the key to the end of the frame that
shows the next thread's text (median and worst), the store put back after (20 undos). Then a word is typed into the
search at 120 ms a key: the longest the event loop stalled meanwhile (a frozen screen), and the time from the last
key to the results. Prints one JSON object.

``bench/run.py`` runs this for each size (in a process of its own) and puts the figures in docs/performance.md.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

KEYS = ("s", "s", "e", "u")
FLOW = 20  # threads read and cleared in a row
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

    def timed_update(self: Screen[Any]) -> None:
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
        flow_keys, flow_times = await read_and_clear(pilot, frames)
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
    out["flow_keys_per_thread"] = flow_keys / FLOW
    out["flow_next_text"] = statistics.median(flow_times)
    out["flow_next_text_max"] = max(flow_times)
    out["search_stall"] = max(stalls, default=0.0)
    out["search_results"] = results
    out["word"] = word
    return out


async def read_and_clear(pilot: Any, frames: list[float]) -> tuple[int, list[float]]:
    """Open the first thread, then clear ``FLOW`` threads with ``e`` from the reader: keys pressed, and for each
    the time from the key to the end of the first frame after the reader laid out the next thread."""
    from pigeon.tui.widgets.reader import Reader

    app = pilot.app
    reader = app.screen.query_one(Reader)
    laid_out: list[tuple[float, str]] = []
    render = Reader._render_thread

    def timed_render(self: Reader, *, place: bool, line: int = 0) -> None:
        render(self, place=place, line=line)
        if self.thread is not None and self.messages:
            laid_out.append((time.perf_counter(), self.thread.id or ""))

    Reader._render_thread = timed_render  # type: ignore[method-assign]
    await pilot.press("enter")
    await until(pilot, lambda: reader.thread is not None and bool(reader.messages) and app.focused is reader)
    keys, times = 0, []
    for _ in range(FLOW):
        before = reader.thread.id if reader.thread else ""
        frames.clear()
        laid_out.clear()
        sent = time.perf_counter()
        await pilot.press("e")
        keys += 1
        await until(pilot, lambda: any(shown != before for _, shown in laid_out))  # noqa: B023  (this key's)
        at = next(when for when, shown in laid_out if shown != before)
        await until(pilot, lambda: any(frame >= at for frame in frames))  # noqa: B023
        times.append(next(frame for frame in frames if frame >= at) - sent)
        await pilot.pause(KEY_PAUSE)  # the list's recount and the mark-read are over before the next key
    for _ in range(FLOW):  # the store as it was
        await pilot.press("u")
        await pilot.pause(KEY_PAUSE)
    Reader._render_thread = render  # type: ignore[method-assign]
    return keys, times


async def until(pilot: Any, state: Any, within: float = 10.0) -> None:
    deadline = time.perf_counter() + within
    while not state():
        if time.perf_counter() > deadline:
            raise RuntimeError("the app did not get there")
        await pilot.pause(0.001)


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
    main()
