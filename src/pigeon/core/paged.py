"""A long thread's messages read from the store a page at a time: its outline (shape, senders, attachment and HTML
counts) read at once, a message read when it is first asked for, with the page around it. Opening a thread of
thousands of messages then costs its outline and the pages on screen, not every message."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from typing import TYPE_CHECKING, overload

if TYPE_CHECKING:
    from pigeon.core.conversation import Head
    from pigeon.models import Contact, Message, Thread
    from pigeon.store.mailstore import MailStore
    from pigeon.store.pages import Outline

log = logging.getLogger("pigeon.core")

LONG = 500
"""Threads of more stored messages than this are read a page at a time."""
PAGE = 50
"""Messages read from the store at once."""
UNREADABLE_TEXT = "(This message could not be read from the store. The next sync writes it again.)"


class PagedMessages(Sequence["Message"]):
    """A thread's messages in stored order, each read (with its page) when first asked for; safe from any thread."""

    def __init__(self, outline: list[Outline], read: Callable[[Sequence[str]], dict[str, str]]) -> None:
        self.outline = outline
        self._read = read
        self._pages: dict[int, list[Message]] = {}
        self._lock = threading.Lock()
        self._writers: dict[tuple[str, object], Contact] = {}  # each writer's contact one object, as read whole

    def __len__(self) -> int:
        return len(self.outline)

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> list[Message]: ...

    def __getitem__(self, index: int | slice) -> Message | list[Message]:
        if isinstance(index, slice):
            return [self[n] for n in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        page = index // PAGE
        with self._lock:
            messages = self._pages.get(page)
            if messages is None:
                messages = self._pages[page] = self._load(page)
        return messages[index - page * PAGE]

    def loaded(self) -> Iterator[Message]:
        """The messages read so far."""
        with self._lock:
            pages = list(self._pages.values())
        for page in pages:
            yield from page

    @property
    def pages_read(self) -> int:
        return len(self._pages)

    def _load(self, page: int) -> list[Message]:
        heads = self.outline[page * PAGE : (page + 1) * PAGE]
        texts = self._read([head.id for head in heads])
        return [self._message(head, texts.get(head.id)) for head in heads]

    def _message(self, head: Outline, text: str | None) -> Message:
        from pigeon.models import ContentBlock, Message

        try:
            message = Message.model_validate_json(text) if text is not None else None
        except ValueError as exc:  # (a damaged row: shown in its place, named, never stopping the thread)
            log.warning("a stored message could not be read: %s", str(exc)[:200])
            message = None
        if message is None:
            block = ContentBlock(content=UNREADABLE_TEXT, mime_type="text/plain")
            return Message(
                id=head.id,
                parent_id=head.parent_id,
                direction=head.direction,
                created_at=head.created_at,
                content_blocks=[block],
            )
        contact = message.sender.contact if message.sender else None
        if message.sender is not None and contact is not None and contact.id:
            message.sender.contact = self._writers.setdefault((contact.id, contact.updated_at), contact)
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
                store.fill_outline(thread_id, keyed)
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
        return (messages[n] for n, head in enumerate(messages.outline) if head.attachments)
    return messages


def with_html(messages: Sequence[Message]) -> Iterable[Message]:
    """The messages that may have HTML blocks (when paged, only those the outline says have)."""
    if isinstance(messages, PagedMessages):
        return (messages[n] for n, head in enumerate(messages.outline) if head.html)
    return messages


def latest_by_writer(messages: Sequence[Message]) -> Iterable[Message]:
    """The messages newest first; when paged, only each writer's newest (what naming the writers needs)."""
    if not isinstance(messages, PagedMessages):
        return reversed(messages)
    seen: set[str | None] = set()
    newest = [n for n in reversed(range(len(messages))) if not _met(messages.outline[n].sender_id, seen)]
    return (messages[n] for n in newest)


def _met(sender: str | None, seen: set[str | None]) -> bool:
    if sender in seen:
        return True
    seen.add(sender)
    return False
