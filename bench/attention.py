"""What the Screener and the lanes cost, side by side with what the Inbox cost before them, at 100,000 threads.

    uv run python bench/attention.py --size 100000 --runs 5 --write

Three measures, each as pairs taken in turns (the two sides alternate, so a slow spell of the machine falls on
both):

- **sorting at sync**: a batch of threads stored as a sync stores them, with their sorting (lane, sender, screen)
  and without it (the store's ``attend`` replaced by the write marking the thread synced), per message; and the
  sorting alone (each pair's difference) against the storing without it;
- **the counts on start**: every view's count, lanes included, in the one pass the sidebar now makes, against the
  six counts of the views there were before (inbox, unread, starred, snoozed, done, all), one query each, with
  their conditions of then;
- **switching lanes**: a lane's first page of rows and its count, against the Inbox's.

The store is filled once from the reference service's generator (``bench/run.py``'s direct fill) and kept in
``bench/.data``.
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
from typing import TYPE_CHECKING, Any
from unittest.mock import patch

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.report import machine, write_block  # noqa: E402
from bench.run import DATA, NOW, build_service, direct_fill  # noqa: E402

if TYPE_CHECKING:
    from pigeon.models import Message, Thread
    from pigeon.store.mailstore import MailStore

BATCH = 2000
"""Threads stored in each timed batch of the sorting measure."""
OLD_DONE = "(tr.done_upto IS NOT NULL AND t.last_message_at <= tr.done_upto)"
OLD_SNOOZED = "(tr.snoozed_until IS NOT NULL AND tr.snoozed_until > :now AND t.last_message_at <= tr.snooze_upto)"
OLD_MUTED = "(COALESCE(tr.muted, 0) = 1)"
OLD_UNREAD = "(tr.read_upto IS NULL OR t.last_message_at > tr.read_upto)"
OLD_VIEWS = {  # the views and their conditions before lanes and the Screener
    "inbox": f"NOT {OLD_DONE} AND NOT {OLD_SNOOZED} AND NOT {OLD_MUTED}",
    "unread": f"{OLD_UNREAD} AND NOT {OLD_MUTED}",
    "starred": "(COALESCE(tr.starred, 0) = 1)",
    "snoozed": OLD_SNOOZED,
    "done": OLD_DONE,
    "all": "1",
}


def timed(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def paired(runs: int, ours: Callable[[], object], before: Callable[[], object]) -> tuple[list[float], list[float]]:
    """Each side ``runs`` times, in turns (the first run of each, warming the caches, left out)."""
    timed(ours)
    timed(before)
    mine: list[float] = []
    theirs: list[float] = []
    for n in range(runs):
        first, second = (ours, before) if n % 2 == 0 else (before, ours)
        a, b = timed(first), timed(second)
        mine.append(a if first is ours else b)
        theirs.append(b if first is ours else a)
    return mine, theirs


def stored_batch(service_db: Path, size: int) -> list[tuple[Thread, list[Message], str, str]]:
    """The first ``size`` threads of the service, with their messages, as a sync would store them."""
    from pigeon.store.sync import recipients_of, who_of
    from pigeon_service.db import Database

    db = Database(service_db)
    account = db.account_ids()[0]
    threads, _ = db.list_threads(account, page_size=size, page_token=None)
    batch = []
    for thread in threads:
        messages, _ = db.list_messages(account, thread.id or "", message_ids=None, page_size=100, page_token=None)
        batch.append((thread, messages, who_of(messages), recipients_of(messages)))
    db.close()
    return batch


def sorting(service_db: Path, runs: int) -> tuple[list[float], list[float], int]:
    """Seconds to store a batch with its sorting and without, and how many messages it holds."""
    from pigeon.store import cache
    from pigeon.store.mailstore import MailStore

    batch = stored_batch(service_db, BATCH)
    messages = sum(len(m) for _, m, _, _ in batch)
    folder = Path(tempfile.mkdtemp(prefix="pigeon-attention-"))

    def fill(name: str) -> Callable[[], object]:
        def run() -> None:
            for stale in folder.glob(f"{name}*"):
                stale.unlink()
            store = MailStore(folder / f"{name}.sqlite3")
            store.put_many(iter(batch))
            store.close()

        return run

    def marked_only(conn: Any, rowid: int, _id: str, _m: object, _own: object, also: dict[str, object]) -> None:
        """The thread marked synced, as the store did before sorting (the same write, without the sort)."""
        columns = ", ".join(f"{name} = :{name}" for name in also)
        conn.execute(f"UPDATE threads SET {columns} WHERE rowid = :rowid", {**also, "rowid": rowid})  # noqa: S608

    def unsorted() -> None:
        with patch.object(cache, "attend", marked_only):
            fill("before")()

    return *paired(runs, fill("ours"), unsorted), messages


def counts(store: MailStore, runs: int) -> tuple[list[float], list[float]]:
    from pigeon.store.cache import iso

    params = {"now": iso(NOW)}
    sql = "SELECT COUNT(*) FROM threads t LEFT JOIN triage tr ON tr.thread_id = t.id WHERE "

    def before() -> None:
        for condition in OLD_VIEWS.values():
            store.rows(sql + condition, params)

    return paired(runs, lambda: store.view_counts(NOW), before)


def switching(store: MailStore, view: str, runs: int) -> tuple[list[float], list[float]]:
    """A view's first page of rows and its count, against the Inbox's as it was read before (its condition of
    then, which no index of the lanes serves: the date index walked, as before). Both sides make the rows into the
    list's records, as the list did then and does now."""
    from pigeon.store.cache import iso

    joined = "FROM threads t LEFT JOIN triage tr ON tr.thread_id = t.id WHERE " + OLD_VIEWS["inbox"]
    params = {"now": iso(NOW)}

    listed = (  # the list's query as it was, to the letter (its conditions are this file's constants)
        "SELECT t.*, tr.read_upto, tr.starred, tr.done_upto, tr.snoozed_until, tr.snooze_upto, tr.muted, "  # noqa: S608
        "(SELECT group_concat(label, char(31)) FROM labels l WHERE l.thread_id = t.id) AS label_list, "
        f"{OLD_UNREAD} AS is_unread, {OLD_DONE} AS is_done, {OLD_SNOOZED} AS is_snoozed, "
        f"0 AS is_reminded, NULL AS readers {joined} "  # (what the record reads now, which then was not)
        "ORDER BY t.last_message_at DESC, t.id LIMIT 200 OFFSET 0"
    )

    def inbox_before() -> None:
        [store._stored(r) for r in store.rows(listed, params)]  # (the records, as list_threads makes them)
        store.rows(f"SELECT COUNT(*) {joined}", params)

    return paired(
        runs, lambda: (store.list_threads(view, limit=200, now=NOW), store.count(view, now=NOW)), inbox_before
    )


def median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def row(measure: str, ours: list[float], before: list[float], *, per: int = 1, unit: str = "ms") -> str:
    scale = 1_000_000 if unit == "µs" else 1000
    mine, theirs = statistics.median(ours) * scale / per, statistics.median(before) * scale / per
    ratio = mine / theirs if theirs else float("inf")
    return f"| {measure} | {mine:,.1f} {unit} | {theirs:,.1f} {unit} | {ratio:.2f}x |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--write", action="store_true", help="rewrite this bench's block of docs/performance.md")
    args = parser.parse_args(argv)
    from pigeon.store.mailstore import MailStore

    load_before = os.getloadavg()[0]
    folder = DATA / str(args.size)
    service_db, _ = build_service(args.size, folder)
    store_path = folder / "attention-store.sqlite3"
    if not store_path.exists():
        direct_fill(service_db, store_path)
    store = MailStore(store_path)
    lines = [
        "| measure | with lanes and the Screener | before them | ratio |",
        "|---|---|---|---|",
    ]
    ours, before, messages = sorting(service_db, args.runs)
    lines.append(row(f"storing {BATCH:,} threads as a sync does, per message", ours, before, per=messages, unit="µs"))
    alone = [mine - theirs for mine, theirs in zip(ours, before, strict=True)]  # (each pair's difference)
    lines.append(row("sorting alone, per message (before: storing it)", alone, before, per=messages, unit="µs"))
    ours, before = counts(store, args.runs)
    lines.append(row("the counts on start (every view; before: the six views)", ours, before))
    for view in ("inbox", "people", "newsletters", "notifications", "receipts", "screener", "owed", "waiting"):
        ours, before = switching(store, view, args.runs)
        lines.append(row(f"switching to {view}: first page and count (before: the Inbox)", ours, before))
    held = store.view_counts(NOW)
    store.close()
    load_after = os.getloadavg()[0]
    heading = (
        f"`uv run python bench/attention.py --size {args.size} --runs {args.runs} --write` ({machine()}; load "
        f"{load_before:.1f} before, {load_after:.1f} after): {args.size:,} threads, medians of {args.runs} runs "
        "taken in turns with the other side."
    )
    sizes = ", ".join(
        f"{name} {held[name]:,}"
        for name in ("inbox", "people", "newsletters", "notifications", "receipts", "owed", "waiting", "screener")
    )
    block = "\n".join([heading, "", *lines, "", f"The store's views: {sizes}."])
    print(block)
    if args.write:
        write_block("attention", block)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
