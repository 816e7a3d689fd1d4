"""A thread laid out before it is shown: its view made and each message's lines laid out off the UI thread, so a
preview never holds up a key, and stopped as soon as it is no longer wanted (the cursor moved on)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pigeon.core.conversation import first_new, read_before
from pigeon.tui.widgets.thread_view import ThreadView

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


def lay_out_ahead(
    thread: Thread,
    messages: list[Message],
    contacts: dict[str, Contact],
    *,
    unreadable: Sequence[Unreadable],
    read_at: datetime | None,
    width: int,
    show_quotes: bool,
    stop: Callable[[], bool],
) -> ThreadView:
    """The view the reader makes for ``thread``, with the lines it will show at ``width`` laid out (touches no
    widget: run it in a thread). Raises :class:`Stopped` once ``stop()`` says it is no longer wanted."""
    view = ThreadView(thread, messages, contacts, unreadable=unreadable)
    folded, cursor = opening(view, read_at)
    for index, key in enumerate(view.keys):
        if stop():
            raise Stopped
        view.piece(index, width, folded=key in folded, current=index == cursor, show_quotes=show_quotes)
    return view
