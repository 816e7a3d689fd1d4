"""Bring the local store up to date with the service, fetching only what changed.

The thread list is read whole (the service offers no "changed since"), each page stored as it arrives so its rows
show at once; the messages of a thread are fetched again only when its ``last_message_at`` or ``message_count``
moved, newest threads first, as many requests in flight as the client's throttle finds the link carries, behind
any other request (the next page of threads, a thread the user opens). Fetched threads are written in batches,
one transaction each, by one writer while the fetches go on; their text goes into the search index after
(:func:`index_stored`), or with them when the caller waits for the index anyway (``pigeon sync``).
Store writes run in a thread, so an event loop (the app's) never waits on the disk.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from pigeon.store.account import account_of
from pigeon.store.cache import Fetched
from pigeon.store.mailstore import MailStore

if TYPE_CHECKING:
    from pigeon.models import Inbox, Message, Thread, Unreadable

PAGE_SIZE = 100
BATCH_MAX = 500  # threads written in one transaction at most (the writer takes what has arrived meanwhile)
INDEX_BATCH = 200  # threads put into the search index in one transaction
NEW_KEPT = 1000  # new messages a report carries at most (a first sync stores every message new)


@dataclass(frozen=True)
class SyncReport:
    threads: int
    fetched: int
    messages: int
    changed: tuple[str, ...] = ()
    inbox_list: tuple[Inbox, ...] = ()
    skipped: tuple[Unreadable, ...] = ()
    """Records the service sent that could not be read, left out while the rest synced: only those no earlier sync
    met (a record is reported once, and again once it changes)."""
    new_messages: tuple[Message, ...] = ()
    """Messages the store did not have before this sync (the first ``NEW_KEPT``): what new mail to announce."""
    screened: frozenset[str] = frozenset()
    """Threads of ``new_messages`` waiting in the Screener (the core fills it; mail kept out is left out there)."""


def sender_label(message: Message) -> str:
    sender = message.sender
    if sender is None:
        return ""
    name = sender.contact.name if sender.contact is not None else ""
    if name and not _looks_like_an_address(name):
        return name
    return sender.raw_address or name  # a name that names an address shows the address the mail came from


def _looks_like_an_address(name: str) -> bool:
    return "@" in name or "<" in name


def who_of(messages: list[Message]) -> str:
    """Who wrote a thread, latest first: one name in full, or several first names."""
    names: list[str] = []
    for message in reversed(messages):
        name = sender_label(message)
        if name and name not in names:
            names.append(name)
    if len(names) == 1:
        return names[0]
    return ", ".join(n.split()[0] for n in names[:3])


def recipients_of(messages: list[Message]) -> str:
    return " ".join(r.raw_address or "" for m in messages for r in m.recipients)


async def fetch_thread(
    client: Any, store: MailStore, thread_id: str, unreadable: list[Unreadable] | None = None
) -> AsyncIterator[tuple[list[Message], bool]]:
    """A thread's messages from the service, page by page (what has arrived, and whether more follow), stored and
    indexed once all have arrived (opening a thread the store lacks). A message that cannot be read is left out,
    kept in the store with its place, and added to ``unreadable`` (if given) as its page arrives."""
    loaded: list[Message] = []
    left_out: list[Unreadable] = []
    async for page in client.messages.iter_pages(thread_id, page_size=PAGE_SIZE):
        left_out += _placed(page.skipped, len(loaded))
        if unreadable is not None:
            unreadable += _placed(page.skipped, len(loaded))
        loaded += page.items
        yield list(loaded), page.has_next_page
    await asyncio.to_thread(
        store.put_messages,
        thread_id,
        loaded,
        who=who_of(loaded),
        recipients=recipients_of(loaded),
        unreadable=left_out,
    )


async def fetch_messages(client: Any, thread_id: str, unreadable: list[Unreadable]) -> list[Message]:
    """All messages of a thread, page by page; a message that cannot be read is left out and added to
    ``unreadable`` with its place."""
    loaded: list[Message] = []
    async for page in client.messages.iter_pages(thread_id, page_size=PAGE_SIZE):
        unreadable += _placed(page.skipped, len(loaded))
        loaded += page.items
    return loaded


def _put_new(store: MailStore, batch: Sequence[Fetched], *, index: bool, clashes: list[Unreadable]) -> list[Message]:
    """Store a batch of fetched threads; returns their messages the store did not hold before and holds now (a
    message left out for an id another thread holds is not new mail)."""
    ids = json.dumps([f.thread_id for f in batch])
    query = "SELECT thread_id, id FROM messages WHERE thread_id IN (SELECT value FROM json_each(?))"
    known = {r["id"] for r in store.rows(query, (ids,))}
    store.put_fetched(batch, index=index, clashes=clashes)
    held = {(r["thread_id"], r["id"]) for r in store.rows(query, (ids,))}
    return [m for f in batch for m in f.messages if m.id and m.id not in known and (f.thread_id, m.id) in held]


def _askable(thread_id: str | None) -> bool:
    """Whether the service can be asked for a thread's messages: its id is a UUID, as the spec types it."""
    try:
        uuid.UUID(thread_id or "")
    except ValueError:
        return False
    return True


def _unaskable(thread: Thread) -> Unreadable:
    """The note for a thread left out because its messages cannot be asked for."""
    from pigeon.models import refused

    why = "must be a UUID" if thread.id else "missing"
    return refused("thread", thread.to_wire(), "id", why)


def _placed(skipped: Sequence[Unreadable], before: int) -> list[Unreadable]:
    """A page's unreadable messages placed in the thread (the page's places count from its own first message)."""
    return [replace(u, before=u.before + before) for u in skipped]


async def index_stored(store: MailStore) -> int:
    """Put the text of the threads a sync stored into the search index, a batch at a time; returns how many."""
    indexed = 0
    while done := await asyncio.to_thread(store.index_pending, INDEX_BATCH):
        indexed += done
    return indexed


async def sort_stored(store: MailStore) -> int:
    """Sort the threads that wait for it (stored by an older Pigeon, or lacking a signal learnt since), a batch at a
    time; returns how many."""
    sorted_now = 0
    while done := await asyncio.to_thread(store.sort_pending, INDEX_BATCH):
        sorted_now += done
    return sorted_now


async def sync(
    client: Any,
    store: MailStore,
    *,
    on_progress: Callable[[int, int], None] | None = None,
    index: bool = False,
    new: list[Message] | None = None,
    also: set[str] | None = None,
) -> SyncReport:
    """Sync ``store`` from ``client`` (a :class:`pigeon.api.PigeonClient`); errors of the client propagate.

    The messages are stored when this returns; their text goes into the search index with them (``index``: for a
    caller that waits for the index anyway, which then costs no second reading of every message) or waits for
    :func:`index_stored` (the app: rows and messages first). The messages the store did not have are added to
    ``new`` as they are stored (a caller's list keeps them even if the sync fails or is cancelled after). The
    threads in ``also`` that the service lists are fetched even if they did not move (a message's new status moves
    neither count nor last time); once synced, they leave ``also``."""
    listed: list[Unreadable] = []  # inboxes and threads that could not be read: left out, the rest synced
    new_messages: list[Unreadable] = []  # messages that could not be read and no earlier sync met
    inboxes: list[Inbox] = []
    # The first page of threads is asked for beside the inboxes (one round trip less before the first rows); it is
    # stored only once the inboxes have said whose mail this is.
    pages = aiter(client.threads.iter_pages())
    first_page = asyncio.ensure_future(anext(pages, None))
    try:
        async for page in client.inboxes.iter_pages():
            inboxes += page.items
            listed += page.skipped
        account = account_of(inboxes, getattr(client, "base_url", ""))

        def keep_inboxes() -> None:
            store.claim(account)  # whose mail this is, before anything is written: never another account's
            store.put_inboxes(inboxes)

        await asyncio.to_thread(keep_inboxes)
    except BaseException:
        first_page.cancel()
        await asyncio.gather(first_page, return_exceptions=True)
        raise
    threads: list[Thread] = []
    changed: list[str] = []
    fetched: asyncio.Queue[Fetched | None] = asyncio.Queue()  # None: every fetch is over
    written = 0
    total_messages = 0
    new = [] if new is None else new
    tasks: list[asyncio.Future[None]] = []
    wanted = frozenset(also or ())

    async def fetch(thread_id: str) -> None:
        left_out: list[Unreadable] = []
        with client.background():  # behind the thread list's next page and whatever the user asks for
            loaded = await fetch_messages(client, thread_id, left_out)
        fetched.put_nowait(Fetched(thread_id, loaded, who_of(loaded), recipients_of(loaded), left_out))

    async def write() -> None:
        # One writer: whatever has arrived goes into the store in one transaction while the next fetches go on.
        nonlocal written, total_messages
        last = False
        while not last:
            batch: list[Fetched] = []
            item = await fetched.get()
            while item is not None:
                batch.append(item)
                if fetched.empty() or len(batch) >= BATCH_MAX:
                    break
                item = fetched.get_nowait()
            last = item is None
            if not batch:
                continue
            await client.throttle.unheld()  # (the user's thread is stored and drawn first)
            notes = [note for f in batch for note in f.unreadable]
            if notes:  # (reported only if no earlier sync met them: asked before this batch replaces them)
                new_messages.extend(await asyncio.to_thread(store.unmet, notes))
            fresh = await asyncio.to_thread(_put_new, store, batch, index=index, clashes=new_messages)
            new.extend(fresh[: max(NEW_KEPT - len(new), 0)])
            written += len(batch)
            total_messages += sum(len(f.messages) for f in batch)
            if on_progress is not None:
                on_progress(written, len(changed))

    writer = asyncio.ensure_future(write())
    fetches: asyncio.Future[list[None]] | None = None
    try:
        # Rows first: each page of the thread list is stored as it arrives (its rows can be shown at once), and
        # the messages of its changed threads are asked for at once, newest first, while the next page loads.
        page = await first_page
        while page is not None:
            askable = [t for t in page.items if _askable(t.id)]
            threads += askable
            listed += [*page.skipped, *(_unaskable(t) for t in page.items if not _askable(t.id))]
            fresh = await asyncio.to_thread(store.put_threads, askable)
            fresh += [t.id for t in askable if t.id and t.id in wanted and t.id not in fresh]
            changed += fresh
            if on_progress is not None and fresh:
                on_progress(written, len(changed))
            tasks += [asyncio.ensure_future(fetch(thread_id)) for thread_id in fresh]
            page = await anext(pages, None)
        new_listed = await asyncio.to_thread(store.note_unreadable, listed)
        fetches = asyncio.gather(*tasks)
        either: set[asyncio.Future[Any]] = {fetches, writer}
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        if writer.done():
            writer.result()  # the writer failed (a full disk): its error, not a wait for the fetches
        await fetches
        fetched.put_nowait(None)
        await writer
        if also is not None:
            also.difference_update(wanted)
    except BaseException:
        # One thread failed (or the sync was cancelled): stop the others, so that none reports progress or writes
        # after the caller has been told the sync ended.
        for task in tasks:
            task.cancel()
        writer.cancel()
        ending: list[asyncio.Future[Any]] = [*tasks, writer, *([fetches] if fetches is not None else [])]
        await asyncio.gather(*ending, return_exceptions=True)
        raise
    return SyncReport(
        threads=len(threads),
        fetched=len(changed),
        messages=total_messages,
        changed=tuple(changed),
        inbox_list=tuple(inboxes),
        skipped=(*new_listed, *new_messages),
        new_messages=tuple(new),
    )
