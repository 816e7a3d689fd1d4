"""A thread laid out before it is shown: its view made and each message's lines laid out off the UI thread, so a
preview never holds up a key, and stopped as soon as it is no longer wanted (the cursor moved on)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pigeon.core.conversation import first_new, read_before
from pigeon.tui.widgets.thread_brief import brief_of
from pigeon.tui.widgets.thread_view import ThreadView
from pigeon.tui.widgets.thread_window import Layout, window

if TYPE_CHECKING:
    from datetime import datetime

    from pigeon.models import Contact, Message, Thread, Unreadable


class Stopped(Exception):
    """The layout was no longer wanted."""


def opening(view: ThreadView, read_at: datetime | None) -> tuple[set[str], int]:
    """Where a thread opens: the messages read before ``read_at`` folded, the cursor on the first newer one (shown
    unfolded)."""
    folded = {key for key, (message, _) in zip(view.keys, view.order, strict=True) if read_before(message, read_at)}
    cursor = first_new([message for message, _ in view.order], read_at)
    if view.keys:
        folded.discard(view.keys[cursor])
    return folded, cursor


def reopened(
    view: ThreadView, read_at: datetime | None, folded: set[str], known: Sequence[str], current: str | None
) -> tuple[set[str], int]:
    """The folds and cursor of ``view`` shown (again): the messages not ``known`` before are folded if read before
    ``read_at``; the cursor stays on ``current`` (a message the user moved to), or goes where the thread opens."""
    if not known and view.opening is not None and view.opening[0] == read_at:
        return set(view.opening[1]), view.opening[2]  # (worked out off the UI thread)
    seen = set(known)
    folded |= {k for k, (m, _) in zip(view.keys, view.order, strict=True) if k not in seen and read_before(m, read_at)}
    if current is not None and current in view.keys:
        return folded, view.keys.index(current)
    return folded, first_new([message for message, _ in view.order], read_at)


def lay_out_ahead(
    thread: Thread,
    messages: Sequence[Message],
    contacts: dict[str, Contact],
    *,
    unreadable: Sequence[Unreadable],
    read_at: datetime | None,
    width: int,
    height: int,
    show_quotes: bool,
    stop: Callable[[], bool],
    clock: Callable[[], datetime] | None = None,
) -> ThreadView:
    """The view the reader makes for ``thread``, with the lines it will show at ``width`` laid out: the window
    around where it opens (touches no widget: run it in a thread). Raises :class:`Stopped` once ``stop()`` says it
    is no longer wanted."""
    view = ThreadView(thread, messages, contacts, unreadable=unreadable, clock=clock)
    folded, cursor = opening(view, read_at)
    view.opening = (read_at, frozenset(folded), cursor)
    brief_of(view, read_at)  # (what is new, worked out here too)
    if view.keys:
        layout = Layout(width, folded, cursor, show_quotes, height=height)
        layout.piece(view, cursor)
        window(view, layout, stop=stop)
    if stop():
        raise Stopped
    return view
