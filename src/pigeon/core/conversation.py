"""A conversation's shape and what in it is new: replies under what they answer, and the moment the user last read
it (the later of the local read state and the service's read mark of the owner)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from pigeon.models import Thread


class Head(Protocol):
    """What a thread's shape and what is new in it need of a message: a message, or its stored outline."""

    @property
    def id(self) -> str | None: ...

    @property
    def parent_id(self) -> str | None: ...

    @property
    def direction(self) -> object: ...

    @property
    def created_at(self) -> datetime | None: ...


H = TypeVar("H", bound=Head)


def tree_order(messages: Sequence[H]) -> list[tuple[H, int]]:
    """The messages with their reply depth, each followed by its replies (oldest first, as the messages come);
    a message whose parent is not in the thread stays where its time puts it. A loop of parents is cut."""
    return [(messages[place], depth) for place, depth in tree_places(messages)]


def tree_places(messages: Sequence[Head]) -> list[tuple[int, int]]:
    """:func:`tree_order` as each message's place in ``messages`` and its depth."""
    ids = {m.id for m in messages if m.id}
    children: dict[str, list[int]] = {}
    roots: list[int] = []
    for place, message in enumerate(messages):
        parent = message.parent_id
        if parent and parent in ids and parent != message.id:
            children.setdefault(parent, []).append(place)
        else:
            roots.append(place)
    order: list[tuple[int, int]] = []
    placed = [False] * len(messages)
    for root in roots:
        stack = [(root, 0)]
        while stack:
            place, depth = stack.pop()
            if placed[place]:
                continue
            placed[place] = True
            order.append((place, depth))
            replies = children.get(messages[place].id or "")
            if replies:
                stack += [(reply, depth + 1) for reply in reversed(replies)]
    # Messages on a loop of parents (no root leads to them) keep their time order at the end.
    order += [(place, 0) for place, done in enumerate(placed) if not done]
    return order


def last_read(local: datetime | None, thread: Thread | None) -> datetime | None:
    """When the user last read the thread: the later of ``local`` (the store's read mark) and the ``last_read_at``
    the service keeps for the thread's owner."""
    from pigeon.models import ParticipantRole

    moments = [local] if local is not None else []
    if thread is not None:
        moments += [p.last_read_at for p in thread.participants if p.role == ParticipantRole.OWNER and p.last_read_at]
    return max(moments) if moments else None


def is_new(message: Head, read_at: datetime | None) -> bool:
    """A message someone else sent after the user last read the thread (never read: every such message)."""
    if message.direction == outbound():
        return False  # what the user sent is read
    if read_at is None:
        return True
    return message.created_at is None or message.created_at > read_at


@functools.cache
def outbound() -> str:
    """The direction of what the user sent."""
    from pigeon.models import MessageDirection  # (the models load on first use)

    return MessageDirection.OUTBOUND


def read_before(message: Head, read_at: datetime | None) -> bool:
    """A message the reader folds on opening: the thread was read before, and this is not new since."""
    return read_at is not None and not is_new(message, read_at)


def first_new(order: Sequence[Head], read_at: datetime | None) -> int:
    """Where a thread opens: the first new message in ``order``; never read, the first; nothing new, the last."""
    if not order:
        return 0
    if read_at is None:
        return 0
    return next((n for n, message in enumerate(order) if is_new(message, read_at)), len(order) - 1)
