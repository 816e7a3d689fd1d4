"""A thread too long to lay out whole: the reader lays out the messages around its cursor, a line stands for the
rest, and scrolling or the first/last keys move that window."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from unittest.mock import patch

import pytest
from textual.pilot import Pilot

from pigeon.core.paged import PagedMessages
from pigeon.models import Message, Thread
from pigeon.tui.app import PigeonApp
from pigeon.tui.screens.mail.reading import LOADING_DELAY
from pigeon.tui.screens.mail.screen import MainScreen
from pigeon.tui.widgets.reader import Reader
from pigeon.tui.widgets.thread_view import Piece, ThreadView
from pigeon.tui.widgets.thread_window import SCREENS_ABOVE, SCREENS_BELOW, WHOLE
from tests.conversation import Conversation, add_conversation
from tests.server.conftest import Service
from tests.tui.conftest import current_id, loaded, pigeon_for, settle
from tests.tui.test_key_path import frames_drawn, until

LONG = WHOLE * 3
NARROW = (80, 24)
SAYS = re.compile(r"Message (m\d+) says")


async def opened(pilot: Pilot[None], app: PigeonApp, conversation: Conversation) -> Reader:
    threads = await loaded(pilot, app)
    assert current_id(threads) == conversation.thread_id
    await settle(pilot, app)  # the first sync done: the thread opens from the store, whole (not page by page)
    await pilot.press("enter")
    reader = app.screen.query_one(Reader)
    await settle(pilot, app, lambda: len(reader.messages) == LONG and app.focused is reader, within=120)
    return reader


def current(reader: Reader) -> str:
    assert reader.current_message is not None
    return reader.current_message.id or ""


def shown_ids(reader: Reader) -> list[str]:
    return SAYS.findall(reader.text)


def beyond(reader: Reader, way: str) -> int:
    """How many messages the line above (``earlier``) or below (``later``) the window stands for; 0: none."""
    found = re.search(rf"(\d[\d,]*) {way} messages?: scroll", reader.text)
    return int(found.group(1).replace(",", "")) if found else 0


def in_view(reader: Reader) -> str:
    top = round(reader.scroll_y) - 1
    return "\n".join(reader.text.splitlines()[max(top, 0) : top + reader.scrollable_content_region.height])


async def test_a_long_thread_lays_out_only_the_messages_around_the_cursor(service: Service) -> None:
    conversation = add_conversation(service, size=LONG)
    laid_out: set[str] = set()  # the messages whose lines were made (not those kept from before)
    made: list[Piece] = []
    piece = ThreadView.piece

    def counted(self: ThreadView, index: int, *args: Any, **kwargs: Any) -> Piece:
        found = piece(self, index, *args, **kwargs)
        if not any(found is known for known in made):
            made.append(found)
            laid_out.add(self.keys[index])
        return found

    app = pigeon_for(service)
    with patch.object(ThreadView, "piece", counted):
        async with app.run_test(size=NARROW) as pilot:
            reader = await opened(pilot, app, conversation)
            await settle(pilot, app)
            height = reader.scrollable_content_region.height
            shown = shown_ids(reader)
            earlier, later = beyond(reader, "earlier"), beyond(reader, "later")
            assert later  # a line stands for the messages below the window
            assert earlier + len(set(shown)) + later == LONG  # every message is laid out or stood for
            assert current(reader) == conversation.first_unread()
            assert current(reader) in in_view(reader)
            bound = (SCREENS_ABOVE + SCREENS_BELOW + 1) * height
            assert len(reader.text.splitlines()) < bound + 10
            assert isinstance(reader.messages, PagedMessages)  # read from the store a page at a time: the pages
            assert reader.messages.reads <= 3  # of the messages about the window, not the thread's
            laid_out.clear()
            await pilot.press("n")  # the next message: a few laid out where the window moved, not the thread again
            await settle(pilot, app)
            assert 0 < len(laid_out) < height  # (the cursor's two, and what the window took in below)
    assert len(shown) < LONG // 2


async def test_scrolling_up_past_the_window_lays_out_the_earlier_messages(service: Service) -> None:
    conversation = add_conversation(service, size=LONG)
    app = pigeon_for(service)
    async with app.run_test(size=NARROW) as pilot:
        reader = await opened(pilot, app, conversation)
        await pilot.press("greater_than_sign")  # the last message: the window is at the thread's end
        await settle(pilot, app)
        before, first_shown = beyond(reader, "earlier"), shown_ids(reader)[0]
        assert before
        height = reader.scrollable_content_region.height
        for _ in range(3):
            await pilot.press(*["up"] * height)  # a line at a time, past the window's first message
            await settle(pilot, app)
        assert beyond(reader, "earlier") < before  # the window moved up
        assert shown_ids(reader)[0] != first_shown
        assert current(reader) in in_view(reader)  # the cursor follows the scroll: its message is in view
        assert SAYS.search(in_view(reader))  # and the view shows messages, not only the line standing for some


async def test_the_first_and_last_keys_reach_the_ends_of_a_long_thread(service: Service) -> None:
    conversation = add_conversation(service, size=LONG)
    tree = [message_id for message_id, _ in conversation.tree()]
    app = pigeon_for(service)
    async with app.run_test(size=NARROW) as pilot:
        reader = await opened(pilot, app, conversation)
        await pilot.press("greater_than_sign")
        await settle(pilot, app)
        assert current(reader) == tree[-1]
        assert not beyond(reader, "later")
        assert beyond(reader, "earlier")
        await pilot.press("home")  # the top: the first message, however far
        await settle(pilot, app)
        assert current(reader) == tree[0]
        assert not beyond(reader, "earlier")
        assert tree[0] in in_view(reader)
        await pilot.press("G")  # the bottom: the last
        await settle(pilot, app)
        assert current(reader) == tree[-1]
        assert tree[-1] in in_view(reader)


async def jumps(service: Service) -> list[list[tuple[bool, set[str]]]]:
    """The frames of ``>``, ``<`` and ``>`` in a long thread (windows of other heights), each key's apart."""
    conversation = add_conversation(service, size=LONG)
    app = pigeon_for(service)
    drawn: list[list[tuple[bool, set[str]]]] = []
    async with app.run_test(size=NARROW) as pilot:
        reader = await opened(pilot, app, conversation)
        await settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, MainScreen)
        for key in ("greater_than_sign", "less_than_sign", "greater_than_sign"):
            shown = reader.text
            with frames_drawn(screen) as frames:
                await pilot.press(key)
                await settle(pilot, app)
            assert reader.text != shown
            assert current(reader) in in_view(reader)
            drawn.append(frames)
    return drawn


async def test_a_jump_across_a_long_thread_is_drawn_in_one_frame(service: Service) -> None:
    for frames in await jumps(service):
        # The new window's lines and the scroll to its message come in one frame: not the lines at the old
        # scroll first, nor a second layout asked by the new height.
        assert len([drawn for _, drawn in frames if drawn & {"ThreadText", "Reader"}]) == 1, frames


@pytest.mark.fast_path
async def test_a_jump_across_a_long_thread_and_its_scrollbar_are_drawn_as_the_key_returns(service: Service) -> None:
    for frames in await jumps(service):
        # The layout the new window's height asks for is made in the key's turn, and the scrollbar's new thumb
        # drawn with it: not two turns of the screen's queue later, nor a frame after that.
        assert all(by_key for by_key, drawn in frames if drawn & {"ThreadText", "Reader", "SteadyScrollBar"}), frames


class SlowReads:
    """The store slow to give one thread (thousands of messages to read) until ``gate`` is set."""

    def __init__(self, read: Callable[[Any, str], Awaitable[tuple[Thread | None, Sequence[Message]]]]) -> None:
        self.read = read
        self.held = ""  # the thread held
        self.started = asyncio.Event()  # its read began
        self.gate = asyncio.Event()


@contextmanager
def slow_reads() -> Iterator[SlowReads]:
    from pigeon.core.mail import MailCore

    reads = SlowReads(MailCore.stored_thread)

    async def slow(core: MailCore, thread_id: str) -> tuple[Thread | None, Sequence[Message]]:
        if thread_id == reads.held:
            reads.started.set()
            await reads.gate.wait()
        return await reads.read(core, thread_id)

    with patch.object(MailCore, "stored_thread", slow):
        yield reads


async def test_a_thread_slow_to_come_from_the_store_says_so_instead_of_showing_the_last_one(service: Service) -> None:
    app = pigeon_for(service)
    with slow_reads() as reads:
        async with app.run_test(size=NARROW) as pilot:
            threads = await loaded(pilot, app)
            reader = app.screen.query_one(Reader)
            first = current_id(threads)
            await settle(pilot, app, lambda: reader.thread is not None and reader.thread.id == first)
            shown = reader.text
            reads.held = threads.source.row(1).id
            await pilot.press("j")
            await until(pilot, lambda: "Loading messages…" in reader.text)  # (settle would wait for the held read)
            assert reader.thread is None  # the thread the cursor left is not shown
            assert reader.text != shown
            reads.gate.set()
            await settle(pilot, app, lambda: reader.thread is not None and reader.thread.id == reads.held)
            assert "Loading messages…" not in reader.text


async def test_the_open_thread_read_again_slowly_stays_on_screen_where_it_was(service: Service) -> None:
    app = pigeon_for(service)
    with slow_reads() as reads:
        async with app.run_test(size=NARROW) as pilot:
            threads = await loaded(pilot, app)
            longest = max(range(len(threads.source)), key=lambda i: threads.source.row(i).count)
            threads.cursor = longest
            await pilot.press("enter")
            reader = app.screen.query_one(Reader)
            await settle(pilot, app, lambda: app.focused is reader and len(reader.messages) > 2)
            await pilot.press("n")
            where = current(reader)
            reads.held = current_id(threads)
            service.add_message(service.alice, reads.held)  # a new message: the next sync reads the thread again
            await pilot.press("ctrl+r")  # and the store is slow to give it
            await until(pilot, reads.started.is_set)
            await pilot.pause(LOADING_DELAY * 3)  # (past the moment a thread not shown would say it is loading)
            assert reader.thread is not None
            assert reader.thread.id == reads.held
            assert "Loading messages…" not in reader.text
            reads.gate.set()
            await settle(pilot, app)
            assert current(reader) == where  # the cursor stayed on the message it was on
