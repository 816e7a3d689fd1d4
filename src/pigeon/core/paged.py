"""A long thread's messages read from the store a page at a time: its outline (shape, senders, attachment and HTML
counts) read at once, a message read when it is first asked for, with the page around it. Opening a thread of
thousands of messages then costs its outline and the pages on screen, not every message."""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import TYPE_CHECKING, overload

from pigeon.store.cache import one_contact_each
from pigeon.store.pages import OUTLINED

if TYPE_CHECKING:
    from pigeon.core.conversation import Head
    from pigeon.models import Contact, Message, Thread
    from pigeon.store.mailstore import MailStore
    from pigeon.store.pages import Outline

log = logging.getLogger("pigeon.core")

LONG = OUTLINED
"""Threads of more stored messages than this are read a page at a time."""
PAGE = 50
"""Messages read from the store at once."""
CHUNK = 500
"""Messages asked for in one statement."""
UNREADABLE_TEXT = "(This message could not be read from the store. The next sync writes it again.)"
GONE_TEXT = "(This message changed in the store since the thread was read: open the thread again to see it.)"


class PagedMessages(Sequence["Message"]):
    """A thread's messages in stored order, each read when first asked for with others likely asked next (those
    beside it, or a page of the thread as shown: :meth:`fetch`), and kept; safe from any thread."""

    def __init__(self, outline: list[Outline], read: Callable[[Sequence[str]], dict[str, str]]) -> None:
        self.outline = outline
        self.reads = 0
        """How many times messages were read from the store."""
        self._read = read
        self._held: dict[int, Message] = {}
        self._lock = threading.Lock()
        self._writers: dict[tuple[str, object], Contact] = {}  # each writer's contact held once, as read whole

    def __len__(self) -> int:
        return len(self.outline)

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> list[Message]: ...

    def __getitem__(self, index: int | slice) -> Message | list[Message]:
        if isinstance(index, slice):
            places = range(*index.indices(len(self)))
            self.fetch(places)
            return [self[n] for n in places]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        found = self._held.get(index)
        if found is None:
            start = index - index % PAGE
            self.fetch(range(start, min(start + PAGE, len(self))))
            found = self._held[index]
        return found

    def holds(self, index: int) -> bool:
        return index in self._held

    def fetch(self, places: Iterable[int]) -> None:
        """Read the messages at these places not read yet, in one trip to the store."""
        with self._lock:
            missing = [n for n in places if n not in self._held]
            if not missing:
                return
            texts: dict[str, str] = {}
            for start in range(0, len(missing), CHUNK):  # (SQLite bounds the values a statement takes)
                texts |= self._read([self.outline[n].id for n in missing[start : start + CHUNK]])
            self.reads += 1
            read = [self._message(self.outline[n], texts.get(self.outline[n].id)) for n in missing]
            self._held.update(zip(missing, one_contact_each(read, self._writers), strict=True))

    def loaded(self) -> list[Message]:
        """The messages read so far."""
        with self._lock:
            return list(self._held.values())

    def _message(self, head: Outline, text: str | None) -> Message:
        from pigeon.models import ContentBlock, Message

        try:
            message = Message.model_validate_json(text) if text is not None else None
        except ValueError as exc:  # (a damaged row: shown in its place, named, never stopping the thread)
            log.warning("a stored message could not be read: %s", str(exc)[:200])
            message = None
        if message is None:
            block = ContentBlock(content=UNREADABLE_TEXT if text is not None else GONE_TEXT, mime_type="text/plain")
            return Message(
                id=head.id,
                parent_id=head.parent_id,
                direction=head.direction,
                created_at=head.created_at,
                content_blocks=[block],
            )
        return message


def stored_messages(store: MailStore, thread: Thread) -> Sequence[Message]:
    """The stored messages of ``thread``: whole, or a page at a time when it is long (a thread stored before the
    store kept outlines is read whole once, and outlined)."""
    thread_id = thread.id or ""
    if (thread.message_count or 0) > LONG:
        outline = store.outline(thread_id)
        if outline is None:
            keyed = store.keyed_messages(thread_id)
            if len(keyed) > LONG:
                try:
                    store.fill_outline(thread_id, keyed)
                except (sqlite3.Error, OSError) as exc:  # (read whole again next time: the thread is shown now)
                    log.warning("a long thread could not be outlined: %s", exc)
            return [message for _, message in keyed]
        if len(outline) > LONG:
            return PagedMessages(outline, partial(store.page, thread_id))
    return store.messages(thread_id)


def heads(messages: Sequence[Message]) -> Sequence[Head]:
    """What the thread's shape needs of each message: its outline when paged, else the messages themselves."""
    return messages.outline if isinstance(messages, PagedMessages) else messages


def loaded(messages: Sequence[Message]) -> Iterable[Message]:
    """The messages in memory: those read so far when paged."""
    return messages.loaded() if isinstance(messages, PagedMessages) else messages


def with_attachments(messages: Sequence[Message]) -> Iterable[Message]:
    """The messages that may have attachments (when paged, only those the outline says have)."""
    if isinstance(messages, PagedMessages):
        return _only(messages, [n for n, head in enumerate(messages.outline) if head.attachments])
    return messages


def with_html(messages: Sequence[Message]) -> Iterable[Message]:
    """The messages that may have HTML blocks (when paged, only those the outline says have)."""
    if isinstance(messages, PagedMessages):
        return _only(messages, [n for n, head in enumerate(messages.outline) if head.html])
    return messages


def latest_by_writer(messages: Sequence[Message]) -> Iterable[Message]:
    """The messages newest first; when paged, only each writer's newest (what naming the writers needs)."""
    if not isinstance(messages, PagedMessages):
        return reversed(messages)
    newest: dict[str | None, int] = {}
    for n in reversed(range(len(messages))):
        newest.setdefault(messages.outline[n].sender_id, n)
    return _only(messages, list(newest.values()))


def _only(messages: PagedMessages, places: list[int]) -> list[Message]:
    """The messages at ``places``, those not read yet read in one trip (not the pages around each)."""
    messages.fetch(places)
    return [messages[n] for n in places]
