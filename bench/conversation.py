"""A long conversation read and answered, timed at the pseudo-terminal: issue 32's measures.

    uv run python bench/conversation.py [--runs 10] [--sizes 160x45,80x24] [--write]

The store (built once in ``bench/.data/conversation``) holds 200 threads of demo mail whose second newest is a
conversation of 500 messages with a reply tree, its owner having read all but the latest 12. Each run starts
``pigeon`` on a fresh copy of it, on a pseudo-terminal (``bench/ptyharness.py``: key written -> last byte of what
it draws), with only the environment given here, and:

- ``j`` to the conversation (to the last byte of its preview, drawn once the cursor rests: the header of its first
  unread message on screen), then Enter: opening it, to the last byte; whether that header is then on screen is
  noted;
- ``n`` (next message in the reader) ``--presses`` times at typing pace (a pause of 150-300 ms after each frame);
- ``r`` on the message under the cursor, with ``EDITOR`` a script that adds a line to the draft and quits; when the
  review step appears (its key bar offers ``y Send``), ``t`` to its To field, then a contact's name typed at
  typing pace, each key to the last byte of the completion it draws.

A key the app does not answer yet (before the message cursor or the review step exists) is reported as missing,
not timed. Figures: median and 99th percentile over every key of every run, with the machine's load before and
after. ``--write`` puts them in docs/performance.md (its ``conversation`` block).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script: the bench package beside it

from bench.ptyharness import PtyProgram, Screen, Silent, showing
from bench.report import machine, write_block
from bench.run import app_environment, direct_fill, pigeon_command

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / ".data" / "conversation"
NOW = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)
SEED = 32
THREADS, MESSAGES = 200, 500
KEY_GAP = 0.1
"""The silence that ends a key's frames in the reader: shorter than the 250 ms after which an opened thread is marked
read (a frame of its own, not the key's)."""
READING = 0.6  # seconds of silence after opening before the first key: the thread marked read, the counts redrawn
STARTED = 2.0  # seconds of silence after the first row before the first key: the start-up check for mail done
TARGET_MEDIAN, TARGET_P99 = 0.016, 0.050
REVIEW = re.compile(r"\by\s+Send\b")  # the review step's key bar
NEXT, REPLY, TO = b"n", b"r", b"t"  # next message in the reader; reply; the review's To field (the registry's keys)


@dataclass(frozen=True)
class Conversation:
    """What the runs look for: the thread's subject, the time its first unread message's header shows (in the
    order shown: replies under what they answer; only an unfolded header shows the time to the minute), a name to
    type."""

    subject: str
    first_unread: str
    name: str


def build(folder: Path, *, threads: int = THREADS, messages: int = MESSAGES) -> tuple[Path, Conversation]:
    """The store with the conversation (built once per size) and what the runs look for in it."""
    from pigeon_service.db import Database
    from pigeon_service.demo_mail import populate

    folder.mkdir(parents=True, exist_ok=True)
    service, store = folder / f"service-{threads}-{messages}.sqlite3", folder / f"store-{threads}-{messages}.sqlite3"
    if not service.exists():
        db = Database(service)
        account = db.ensure_account("bench")
        populate(db, account, threads=threads, contacts=100, seed=SEED, now=NOW, hostile=False, conversation=messages)
        db.close()
    if not store.exists():
        direct_fill(service, store)
    return store, facts(service)


def facts(service: Path) -> Conversation:
    from pigeon.core.conversation import first_new, tree_order
    from pigeon.models import ParticipantRole
    from pigeon.tui.render import full_time
    from pigeon_service.db import Database

    db = Database(service)
    try:
        account = db.account_ids()[0]
        thread = db.list_threads(account, page_size=2, page_token=None)[0][1]
        owner = next(p for p in thread.participants if p.role == ParticipantRole.OWNER)
        assert owner.last_read_at is not None
        found, page = [], None
        while page != "":
            messages, page = db.list_messages(
                account, thread.id or "", message_ids=None, page_size=100, page_token=page
            )
            found += messages
        shown = [message for message, _ in tree_order(found)]
        first = shown[first_new(shown, owner.last_read_at)]
        contact = first.sender.contact if first.sender else None
        return Conversation(
            thread.subject or "",
            full_time(first.created_at),
            contact.first_name if contact and contact.first_name else "",
        )
    finally:
        db.close()


@contextmanager
def serving(folder: Path, *, threads: int = THREADS, messages: int = MESSAGES) -> Iterator[tuple[str, str]]:
    """The conversation's service on 127.0.0.1 while the runs last: its address and a token. The app reaches it,
    so no "could not reach the service" notice comes and goes on the screen while keys are timed."""
    from pigeon_service.app import ServerSettings, create_app
    from pigeon_service.db import Database
    from pigeon_service.run import start_in_thread

    db = Database(folder / f"service-{threads}-{messages}.sqlite3")
    token = db.create_token(db.account_ids()[0])
    service = start_in_thread(create_app(db, ServerSettings(deliver_webhooks=False)), db=db)
    try:
        yield service.base_url, token
    finally:
        service.stop()
        db.close()


def one_run(
    store: Path, seen: Conversation, service: tuple[str, str], *, columns: int, rows: int, presses: int
) -> dict[str, Any]:
    """One start of the app on a fresh copy of ``store``: the figures in seconds, and what was not answered."""
    home = Path(tempfile.mkdtemp(prefix="pigeon-bench-conversation-"))
    try:
        (home / "app" / "store").mkdir(parents=True)
        shutil.copy(store, home / "app" / "store" / "default.sqlite3")
        (home / "config").mkdir()
        (home / "config" / "config.toml").write_text('[compose]\nsend_command = ["sh", "-c", "cat > /dev/null"]\n')
        editor = home / "editor"
        editor.write_text('#!/bin/sh\nprintf "Agreed, thanks.\\n" >> "$1"\n')
        editor.chmod(0o700)
        env = {
            **app_environment(home / "app", home / "config"),
            "PIGEON_BASE_URL": service[0],
            "PIGEON_TOKEN": service[1],
            "EDITOR": str(editor),
            "HOME": str(home),
        }
        run = PtyProgram(pigeon_command(), env, columns=columns, rows=rows)
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
    run.settle(STARTED)  # the start-up check for mail ends with the list drawn again: not a key's frame
    try:  # the cursor to the conversation, to its preview in the reader (drawn once the cursor rests)
        out["preview"] = run.press(b"j", lambda lines: any(seen.first_unread in line for line in lines), within=10)
    except Silent:
        out["missing"].append("preview")
    out["open"] = run.press(b"\r", still=KEY_GAP)  # to the first silence: the mark-read frame comes 250 ms later
    out["opened_at_first_unread"] = seen.first_unread in run.text()
    run.settle(READING)
    out["next"] = _typed(run, [NEXT] * presses, pace, out["missing"], "n")
    sent = time.perf_counter()
    os.write(run.master, REPLY)  # the editor runs (the app suspended), adds a line and quits
    try:
        run.wait(lambda lines: bool(REVIEW.search(lines[-1])), since=sent, within=15)
    except Silent:
        out["missing"].append("review")
        out["to"] = []
        return out
    out["to"] = _typed(run, [TO, *(letter.encode() for letter in seen.name[:5])], pace, out["missing"], "To")
    out["to"] = out["to"][1:]  # the letters only: t opened the field
    return out


def _typed(run: PtyProgram, keys: list[bytes], pace: random.Random, missing: list[str], name: str) -> list[float]:
    """Each key at typing pace, timed to the last byte of its frame; the first unanswered one ends the typing."""
    times = []
    for key in keys:
        time.sleep(pace.uniform(0.0, 0.15))  # with the harness's own 150 ms wait for silence: 150-300 ms a key
        try:
            times.append(run.press(key, _changed(run.lines()), within=3, still=KEY_GAP))
        except Silent:
            missing.append(name)
            break
    return times


def _changed(before: list[str]) -> Screen:
    """The screen differs from ``before`` elsewhere than on the panes' bottom border, where the app says on its own
    when it checks for mail."""
    return lambda lines: lines[:-2] + lines[-1:] != before[:-2] + before[-1:]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Median, 99th percentile and count of each figure over every key of every run; what went unanswered."""
    out: dict[str, Any] = {}
    for figure in ("preview", "open", "next", "to"):
        found = [run.get(figure) for run in runs]
        values: list[float] = [v for got in found for v in (got if isinstance(got, list) else [got]) if v is not None]
        if values:
            out[figure] = {"median": statistics.median(values), "p99": percentile(values, 0.99), "count": len(values)}
    out["opened_at_first_unread"] = sum(1 for run in runs if run.get("opened_at_first_unread"))
    out["missing"] = sorted({m for run in runs for m in run["missing"]})
    return out


LABELS = {
    "preview": "`j` onto it, to its preview",
    "open": "Enter: open at the first unread",
    "next": "`n` next message",
    "to": "a letter in the review's To field",
}


def block(results: dict[str, dict[str, Any]], load: tuple[float, float], command: str, runs: int) -> str:
    lines = [
        f"`{command}` ({machine()}; load {load[0]:.1f} before, {load[1]:.1f} after): a {MESSAGES}-message "
        f"conversation, {runs} runs a size, each key to the last byte at the pseudo-terminal. Targets: median "
        f"{TARGET_MEDIAN * 1000:.0f} ms, 99th percentile {TARGET_P99 * 1000:.0f} ms.",
        "",
        "| size | measure | keys | median | 99th percentile | target |",
        "|---|---|---|---|---|---|",
    ]
    for size, result in results.items():
        for figure, label in LABELS.items():
            if figure not in result:
                lines.append(f"| {size} | {label} | 0 | | | not answered |")
                continue
            got = result[figure]
            met = got["median"] <= TARGET_MEDIAN and got["p99"] <= TARGET_P99
            verdict = "(no target)" if figure == "preview" else "met" if met else "missed"
            lines.append(
                f"| {size} | {label} | {got['count']} | {got['median'] * 1000:.1f} ms | {got['p99'] * 1000:.1f} ms "
                f"| {verdict} |"
            )
        lines.append(
            f"| {size} | opened at the first unread | {result['opened_at_first_unread']} of {runs} runs | | | |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--presses", type=int, default=30, help="n pressed this many times a run")
    parser.add_argument("--sizes", default="160x45,80x24", help="terminal sizes, COLUMNSxROWS")
    parser.add_argument("--write", action="store_true", help="write the conversation block of docs/performance.md")
    args = parser.parse_args(argv)
    store, seen = build(DATA)
    before = os.getloadavg()[0]
    results = {}
    with serving(DATA) as service:
        for size in args.sizes.split(","):
            columns, rows = (int(n) for n in size.split("x"))
            runs = [
                one_run(store, seen, service, columns=columns, rows=rows, presses=args.presses)
                for _ in range(args.runs)
            ]
            results[size] = summary(runs)
    after = os.getloadavg()[0]
    print(json.dumps({"load": [before, after], "results": results}, indent=1))
    command = " ".join(["uv run python bench/conversation.py", *(sys.argv[1:] if argv is None else argv)])
    text = block(results, (before, after), command, args.runs)
    print(text)
    if args.write:
        write_block("conversation", text)


if __name__ == "__main__":
    main()
