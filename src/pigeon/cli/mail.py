"""Commands on the local store, through the mail core: sync, search, the views' counts, triage (one command per
verb of the action registry), undo, and what needs you (senders let in or kept out, lanes taught, why)."""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING, Any, TextIO

from pigeon.cli.common import batch_collection, core_of, run
from pigeon.cli.output import EXIT_OK, UsageError, print_json, table, when
from pigeon.core.actions import BY_ID, describe
from pigeon.core.mail import skipped_words
from pigeon.sanitize import clean_line

if TYPE_CHECKING:
    from pigeon.core.mail import MailCore, SyncReport

PROGRESS_EVERY = 1.0  # seconds between two progress lines of ``pigeon sync -v``


async def _sync_saying_waits(core: MailCore, verbose: bool = False) -> SyncReport:
    """Sync, with a line on stderr for each wait on a busy service (a sync may otherwise sit silent for minutes),
    and with ``verbose`` a progress line a second: threads fetched, requests in flight and why."""
    client = await core.connect()
    client.on_busy = lambda wait: sys.stderr.write(f"pigeon: {wait}\n")
    said = time.monotonic()

    def progress(done: int, total: int) -> None:
        nonlocal said
        if time.monotonic() - said >= PROGRESS_EVERY and done < total:
            said = time.monotonic()
            sys.stderr.write(f"pigeon: {done:,} of {total:,} threads fetched · {core.in_flight_words()}\n")

    for mistake in core.rules.mistakes:
        sys.stderr.write(f"pigeon: a rule is left out: {clean_line(mistake)}\n")
    report = await core.sync(on_progress=progress if verbose else None, index_now=True)
    ruled = core.rules.news()
    if ruled:
        sys.stderr.write(f"pigeon: {clean_line(ruled)} (`pigeon undo` takes back the last)\n")
    if verbose:
        throttle = client.throttle
        sys.stderr.write(f"pigeon: at most {throttle.most_in_flight} requests were in flight ({throttle.why})\n")
    return report


def cmd_sync(args: argparse.Namespace, out: TextIO) -> int:
    with batch_collection():
        report = run(args, lambda core: _sync_saying_waits(core, args.verbose), local=True)
    if args.json:
        figures = {"threads": report.threads, "fetched": report.fetched, "messages": report.messages}
        print_json({**figures, "skipped": [str(u) for u in report.skipped]}, out)
    else:
        out.write(f"Synced {report.threads} threads ({report.fetched} changed, {report.messages} messages fetched).\n")
    if report.skipped:
        sys.stderr.write(f"pigeon: {skipped_words(report.skipped, why=True)}\n")
    return EXIT_OK


def _thread_json(thread: Any) -> dict[str, Any]:
    return {
        "id": thread.id,
        "inbox_id": thread.inbox_id,
        "subject": thread.subject,
        "who": thread.who,
        "last_message_at": thread.last_message_at.isoformat() if thread.last_message_at else None,
        "message_count": thread.message_count,
        "has_attachment": thread.has_attachment,
        "unread": thread.unread,
        "starred": thread.starred,
        "done": thread.done,
        "snoozed_until": thread.snoozed_until.isoformat() if thread.snoozed_until else None,
        "muted": thread.muted,
        "labels": list(thread.labels),
        "seen_by": list(thread.seen_by),
        "seen_at": thread.seen_at.isoformat() if thread.seen_at else None,
    }


def _marks(thread: Any) -> str:
    return ("●" if thread.unread else " ") + ("★" if thread.starred else " ")


def cmd_search(args: argparse.Namespace, out: TextIO) -> int:
    core = core_of(args, online=False)
    try:
        threads, total = core.search(args.view, " ".join(args.query), sort=args.sort, limit=args.limit)
    except ValueError as exc:  # (a QueryError too)
        raise UsageError(str(exc)) from None
    if total > len(threads):  # on stderr: what --json prints stays the threads alone
        sys.stderr.write(f"pigeon: {len(threads)} of {total} shown; --limit to see more\n")
    if args.json:
        print_json({"threads": [_thread_json(t) for t in threads]}, out)
        return EXIT_OK
    if not threads and not core.stored_threads():
        out.write("The local store is empty: run `pigeon sync` first.\n")
        return EXIT_OK
    rows = [(_marks(t), when(t.last_message_at), t.who, t.subject, ",".join(t.labels), t.id) for t in threads]
    out.write(table(("", "LAST MESSAGE", "FROM", "SUBJECT", "LABELS", "ID"), rows) + "\n")
    return EXIT_OK


def cmd_views(args: argparse.Namespace, out: TextIO) -> int:
    counts, _ = core_of(args, online=False).view_counts()
    if args.json:
        print_json(counts, out)
    else:
        out.write(table(("VIEW", "THREADS"), list(counts.items())) + "\n")
    return EXIT_OK


def cmd_triage(args: argparse.Namespace, out: TextIO) -> int:
    """A triage verb of the registry (``args.action_id``, with ``args.on``) on the threads named."""
    from pigeon.core.errors import UnknownThread
    from pigeon.core.snooze import parse_when

    core = core_of(args, online=False)
    action = BY_ID[args.action_id]
    try:
        if action.op in ("snooze", "remind"):
            try:
                until = parse_when(args.until, core.clock())
            except ValueError as exc:
                raise UsageError(str(exc)) from None
            change = core.apply(action, core.resolve_threads(args.threads), until=until)
        elif action.op == "label":
            if not args.add and not args.remove:
                raise UsageError("label needs --add LABEL or --remove LABEL")
            label, on = args.add or args.remove, bool(args.add)
            change = core.apply(action, core.resolve_threads(args.threads), label=label, on=on)
        else:
            change = core.apply(action, core.resolve_threads(args.threads), on=args.on)  # ids or unique prefixes
    except UnknownThread as exc:
        raise UsageError(f"Not in the local store (run `pigeon sync`?): {exc}") from None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    said = clean_line(describe(change))
    out.write(f"{said}. `pigeon undo` takes it back.\n" if change.count else f"{said}.\n")
    return EXIT_OK


def cmd_undo(args: argparse.Namespace, out: TextIO) -> int:
    from pigeon.core.errors import DamagedStep, damaged_step_words

    try:
        change = core_of(args, online=False).undo()
    except DamagedStep as exc:
        raise UsageError(damaged_step_words(exc)) from None
    out.write(f"Undone: {clean_line(describe(change))}\n" if change else "Nothing to undo.\n")
    return EXIT_OK


def cmd_attention(args: argparse.Namespace, out: TextIO) -> int:
    """A Screener or lane verb of the registry (``args.action_id``) on the senders of the threads named, or why."""
    import asyncio

    from pigeon.core.attention import NoSender
    from pigeon.core.errors import UnknownThread

    async def go(core: MailCore) -> list[str]:
        try:
            ids = core.resolve_threads(args.threads)
        except UnknownThread as exc:
            raise UsageError(f"Not in the local store (run `pigeon sync`?): {exc}") from None
        if args.action_id == "attention.why":
            return await core.attention.why(ids[0])
        try:
            if args.action_id == "attention.lane":
                rulings = [await core.attention.teach(thread_id, args.lane) for thread_id in dict.fromkeys(ids)]
            else:
                let_in = args.action_id == "attention.let_in"
                rulings = await core.attention.screen_all(ids, "in" if let_in else "out", domain=args.domain)
        except NoSender as exc:
            raise UsageError(str(exc)) from None
        return [ruling.words(await asyncio.to_thread(ruling.apply)) for ruling in rulings]

    for line in run(args, go, local=True):
        out.write(clean_line(line) + "\n")
    return EXIT_OK
