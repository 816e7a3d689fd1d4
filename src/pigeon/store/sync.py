"""Bring the local store up to date with the service, fetching only what changed.

The thread list is read whole (the service offers no "changed since"), each page stored as it arrives so its rows
show at once; the messages of a thread are fetched again only when its ``last_message_at`` or ``message_count``
moved, newest threads first, several requests in flight while the next page of threads loads. Store writes run in
a thread, so an event loop (the app's) never waits on the disk.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pigeon.store.mailstore import MailStore

if TYPE_CHECKING:
    from pigeon.models import Inbox, Message, Thread

DEFAULT_CONCURRENCY = 8  # requests in flight for messages (the reference service answers them in parallel)
PAGE_SIZE = 100


@dataclass(frozen=True)
class SyncReport:
    threads: int
    fetched: int
    messages: int
    changed: tuple[str, ...] = ()
    inbox_list: tuple[Inbox, ...] = ()
    skipped: tuple[str, ...] = ()
    """Records the service sent that could not be read ("id: why"), left out while the rest synced."""


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
    client: Any, store: MailStore, thread_id: str, skipped: list[str] | None = None
) -> AsyncIterator[tuple[list[Message], bool]]:
    """A thread's messages from the service, page by page (what has arrived, and whether more follow), stored once
    all have arrived: the one way both a sync and opening a thread fetch messages. A message that cannot be read
    is left out (and named in ``skipped``, if given)."""
    loaded: list[Message] = []
    async for page in client.messages.iter_pages(thread_id, page_size=PAGE_SIZE):
        loaded += page.items
        if skipped is not None:
            skipped += page.skipped
        yield list(loaded), page.has_next_page
    await asyncio.to_thread(store.put_messages, thread_id, loaded, who=who_of(loaded), recipients=recipients_of(loaded))


async def sync(
    client: Any,
    store: MailStore,
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    on_progress: Callable[[int, int], None] | None = None,
) -> SyncReport:
    """Sync ``store`` from ``client`` (a :class:`pigeon.api.PigeonClient`); errors of the client propagate."""
    skipped: list[str] = []  # records that could not be read: left out, named in the report, the rest synced
    inboxes: list[Inbox] = []
    async for page in client.inboxes.iter_pages():
        inboxes += page.items
        skipped += page.skipped
    await asyncio.to_thread(store.put_inboxes, inboxes)
    threads: list[Thread] = []
    changed: list[str] = []
    gate = asyncio.Semaphore(concurrency)
    done = 0
    total_messages = 0
    tasks: list[asyncio.Future[None]] = []

    async def fetch(thread_id: str) -> None:
        nonlocal done, total_messages
        fetched = 0
        async with gate:
            async for loaded, _more in fetch_thread(client, store, thread_id, skipped):
                fetched = len(loaded)
        done += 1
        total_messages += fetched
        if on_progress is not None:
            on_progress(done, len(changed))

    try:
        # Rows first: each page of the thread list is stored as it arrives (its rows can be shown at once), and
        # the messages of its changed threads are asked for at once, newest first, while the next page loads.
        async for page in client.threads.iter_pages():
            threads += page.items
            skipped += page.skipped
            fresh = await asyncio.to_thread(store.put_threads, page.items)
            changed += fresh
            if on_progress is not None and fresh:
                on_progress(done, len(changed))
            tasks += [asyncio.ensure_future(fetch(thread_id)) for thread_id in fresh]
        await asyncio.gather(*tasks)
    except BaseException:
        # One thread failed (or the sync was cancelled): stop the others, so that none reports progress or writes
        # after the caller has been told the sync ended.
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    return SyncReport(
        threads=len(threads),
        fetched=len(changed),
        messages=total_messages,
        changed=tuple(changed),
        inbox_list=tuple(inboxes),
        skipped=tuple(skipped),
    )
