"""A long conversation in the reader: it opens at the first unread message, the message cursor moves, folds open,
replies sit under what they answer, find goes from hit to hit, and a reply answers the message under the cursor."""

from __future__ import annotations

import asyncio
import email
import sys
import threading
from email import policy
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pytest
from textual.pilot import Pilot
from textual.strip import Strip

from pigeon.config import ComposeConfig, load_config
from pigeon.core.message_ids import message_id_of
from pigeon.models import Thread
from pigeon.tui.app import PigeonApp
from pigeon.tui.screens.review import ReviewScreen
from pigeon.tui.widgets.key_bar import KeyBar
from pigeon.tui.widgets.reader import Reader
from pigeon.tui.widgets.thread_ahead import Stopped, lay_out_ahead
from pigeon.tui.widgets.thread_text import ThreadText
from pigeon.tui.widgets.thread_view import INDENT, INDENT_LEVELS, ThreadView
from tests.conversation import READ, SIZE, Conversation, add_conversation
from tests.server.conftest import Service
from tests.tui.conftest import BASE, current_id, loaded, on_screen, pigeon_for, screen_text, settle

NARROW = (80, 24)


async def opened(pilot: Pilot[None], app: PigeonApp, conversation: Conversation) -> Reader:
    threads = await loaded(pilot, app)
    assert current_id(threads) == conversation.thread_id
    await pilot.press("enter")
    reader = app.screen.query_one(Reader)
    # (500 messages come from the service page by page: on a loaded machine that takes a while)
    await settle(pilot, app, lambda: len(reader.messages) == SIZE and app.focused is reader, within=60)
    return reader


def current(reader: Reader) -> str:
    assert reader.current_message is not None
    return reader.current_message.id or ""


def lines_of(reader: Reader, message_id: str) -> list[str]:
    return [line for line in reader.text.splitlines() if message_id in line]


async def test_a_long_thread_opens_at_its_first_unread_with_what_was_read_folded(service: Service) -> None:
    conversation = add_conversation(service)
    app = pigeon_for(service)
    async with app.run_test(size=NARROW) as pilot:
        reader = await opened(pilot, app, conversation)
        assert current(reader) == conversation.first_unread()
        old, new = conversation.ids[0], conversation.ids[READ]
        assert len(lines_of(reader, old)) == 1  # folded: one line (sender, time, first words)
        assert "writer0@example.com" in lines_of(reader, old)[0]
        assert len(lines_of(reader, new)) == 2  # new: unfolded (its body's two lines)
        assert len(lines_of(reader, current(reader))) == 2


async def test_the_message_keys_move_the_cursor_in_the_order_shown(service: Service) -> None:
    conversation = add_conversation(service)
    tree = [message_id for message_id, _ in conversation.tree()]
    app = pigeon_for(service)
    async with app.run_test(size=NARROW) as pilot:
        reader = await opened(pilot, app, conversation)
        start = tree.index(current(reader))
        await pilot.press("n", "n")
        assert current(reader) == tree[start + 2]
        await pilot.press("p")
        assert current(reader) == tree[start + 1]
        await pilot.press("greater_than_sign")
        assert current(reader) == tree[-1]
        await pilot.press("less_than_sign")
        assert current(reader) == tree[0]
        await pilot.press("N")
        assert current(reader) == conversation.first_unread()


async def test_a_move_brings_the_message_to_the_top_and_scrolling_moves_the_cursor(service: Service) -> None:
    conversation = add_conversation(service)
    app = pigeon_for(service)
    async with app.run_test(size=NARROW) as pilot:
        reader = await opened(pilot, app, conversation)
        await pilot.press("less_than_sign", "n", "n", "n")
        await settle(pilot, app, lambda: reader.scroll_y > 0)
        shown = current(reader)
        top = reader.text.splitlines()[round(reader.scroll_y) - 1]
        assert shown in top
        await pilot.press("j")  # one line down: the next message is at the top now (each read one is one line)
        await settle(pilot, app, lambda: current(reader) != shown)
        assert current(reader) in reader.text.splitlines()[round(reader.scroll_y) - 1]


def lines_in_view(reader: Reader) -> set[int]:
    """The lines of the thread's text the reader shows."""
    text = reader.query_one(ThreadText).region
    view = text.intersection(reader.scrollable_content_region)
    return set(range(view.y - text.y, view.bottom - text.y))


async def test_the_next_message_draws_again_only_the_lines_it_changed_or_brought_into_view(service: Service) -> None:
    conversation = add_conversation(service)
    app = pigeon_for(service)
    async with app.run_test(size=NARROW) as pilot:
        reader = await opened(pilot, app, conversation)
        await settle(pilot, app)
        before, shown = lines_in_view(reader), current(reader)
        drawn: list[int] = []
        render_line = ThreadText.render_line

        def drawing(self: ThreadText, y: int) -> Strip:
            drawn.append(y)
            return render_line(self, y)

        with patch.object(ThreadText, "render_line", drawing):
            await pilot.press("n")
            await settle(pilot, app, lambda: current(reader) != shown and bool(drawn))
        brought = lines_in_view(reader) - before
        assert brought  # (the next message came to the top: the view moved)
        assert len(set(drawn) - brought) <= 2  # the two header lines whose cursor bar moved
        assert len(drawn) < len(before)  # not every line in view


async def test_a_preview_is_laid_out_off_the_ui_thread_and_dropped_when_the_cursor_moves_on(
    service: Service,
) -> None:
    conversation = add_conversation(service)
    app = pigeon_for(service)
    started, go = threading.Event(), threading.Event()
    held_calls, outcome = [0], []

    def held(thread: Thread, *args: Any, **kwargs: Any) -> ThreadView:
        if thread.id != conversation.thread_id:
            return lay_out_ahead(thread, *args, **kwargs)
        held_calls[0] += 1
        started.set()
        go.wait(30)  # (the layout takes long: the keys must not wait for it)
        try:
            view = lay_out_ahead(thread, *args, **kwargs)
        except Stopped:
            outcome.append("stopped")
            raise
        outcome.append("laid out")
        return view

    with patch("pigeon.tui.screens.mail.reading.lay_out_ahead", held):
        async with app.run_test(size=NARROW) as pilot:
            threads = await loaded(pilot, app)
            reader = app.screen.query_one(Reader)
            await pilot.press("j")
            second = current_id(threads)
            await settle(pilot, app, lambda: reader.thread is not None and reader.thread.id == second)
            started.clear()  # (a preview of the conversation before the first j may have been held too)
            await pilot.press("k")  # back onto the conversation: its preview starts, and is held
            # Awaited off the app's loop: settling would wait for the held worker, which waits for the test.
            assert await asyncio.to_thread(started.wait, 30)
            await pilot.press("j")  # answered while the preview is being laid out
            assert current_id(threads) == second
            go.set()
            await settle(pilot, app, lambda: len(outcome) == held_calls[0])
            assert set(outcome) == {"stopped"}
            await settle(pilot, app)
            assert reader.thread is not None
            assert reader.thread.id == second  # (the conversation was never shown)


async def test_enter_unfolds_a_folded_message_and_E_unfolds_them_all(service: Service) -> None:
    conversation = add_conversation(service)
    app = pigeon_for(service)
    async with app.run_test(size=NARROW) as pilot:
        reader = await opened(pilot, app, conversation)
        first = conversation.ids[0]
        await pilot.press("less_than_sign")
        assert len(lines_of(reader, first)) == 1
        await pilot.press("enter")
        assert len(lines_of(reader, first)) == 2
        await pilot.press("enter")
        assert len(lines_of(reader, first)) == 1
        await pilot.press("E")
        assert all(len(lines_of(reader, message_id)) == 2 for message_id in conversation.ids[:READ:37])
        await pilot.press("E")
        assert all(len(lines_of(reader, message_id)) == 1 for message_id in conversation.ids[1:READ:37])


async def test_replies_sit_under_what_they_answer_indented_no_deeper_than_the_cap(service: Service) -> None:
    conversation = add_conversation(service)
    app = pigeon_for(service)
    async with app.run_test(size=NARROW) as pilot:
        reader = await opened(pilot, app, conversation)
        await pilot.press("E")  # every message as it reads, unfolded
        text = reader.text
        places = [text.index(f"Message {message_id} says") for message_id, _ in conversation.tree()]
        assert places == sorted(places)
        width = reader.scrollable_content_region.width
        assert max(len(line) for line in text.splitlines()) <= width
        depths = dict(conversation.tree())
        deep = next(message_id for message_id, depth in conversation.tree() if depth > INDENT_LEVELS)
        (line,) = [ln for ln in text.splitlines() if f"Message {deep} says" in ln]
        assert len(line) - len(line.lstrip()) <= 2 + INDENT * INDENT_LEVELS  # (the cursor's column, a space)
        root, reply = (next(m for m, d in conversation.tree() if d == depth) for depth in (0, 1))
        indents = [next(ln for ln in text.splitlines() if f"Message {m} says" in ln) for m in (root, reply)]
        assert len(indents[1]) - len(indents[1].lstrip()) == len(indents[0]) - len(indents[0].lstrip()) + INDENT
        header = text.splitlines()[text.splitlines().index(line) - 3]  # (above: the reply-to line, a blank)
        assert f"↳ {depths[deep]}" in header


async def test_slash_finds_in_the_thread_and_n_N_go_between_hits_until_escape(service: Service) -> None:
    conversation = add_conversation(service)
    tree = [message_id for message_id, _ in conversation.tree()]
    app = pigeon_for(service)
    async with app.run_test(size=NARROW) as pilot:
        reader = await opened(pilot, app, conversation)
        await pilot.press("slash", *"second line of m01", "enter")  # m010 ... m019: ten hits
        await settle(pilot, app, lambda: app.focused is reader)
        hits = [message_id for message_id in tree if message_id.startswith("m01") and len(message_id) == 4]
        assert "1 of 10" in reader.title.plain
        assert current(reader) == hits[0]
        assert len(lines_of(reader, hits[0])) == 2  # the folded message holding it was unfolded
        await pilot.press("n")
        assert ("2 of 10", current(reader)) == (reader.title.plain[-7:], hits[1])
        await pilot.press("N", "N")
        assert ("10 of 10", current(reader)) == (reader.title.plain[-8:], hits[-1])
        await pilot.press("escape")
        assert "of 10" not in reader.title.plain
        assert app.focused is reader
        before = tree.index(current(reader))
        await pilot.press("n")  # the message key again
        assert current(reader) == tree[before + 1]


async def test_in_the_reader_slash_is_called_find_and_a_slash_in_its_box_is_a_letter(service: Service) -> None:
    from textual.widgets import Input

    from pigeon.tui.screens.modals import HelpScreen

    conversation = add_conversation(service)
    app = pigeon_for(service)
    async with app.run_test(size=NARROW) as pilot:
        reader = await opened(pilot, app, conversation)
        bar = app.screen.query_one(KeyBar)
        assert " / Find " in bar.render().plain  # what / does here, not the list's Search
        assert " / Search " not in bar.render().plain
        await pilot.press("question_mark")
        await settle(pilot, app, lambda: isinstance(app.screen, HelpScreen))
        ids = {binding_id for _, _, binding_id in on_screen(app, HelpScreen).rows}
        assert "reader.find" in ids
        assert "main.filter" not in ids
        await pilot.press("escape")
        await settle(pilot, app, lambda: app.focused is reader)
        await pilot.press("slash", *"and/or")
        box = reader.query_one("#reader-find", Input)
        assert box.value == "and/or"


def programs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[str]]:
    """$VISUAL writes a line at the top of the body; the send command records its standard input."""
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import sys\np = sys.argv[-1]\nhead, _, body = open(p).read().partition('\\n\\n')\n"
        "open(p, 'w').write(head + '\\n\\nAgreed.\\n' + body)\n"
    )
    monkeypatch.setenv("VISUAL", f"{sys.executable} {editor}")
    received = tmp_path / "sent.eml"
    sender = tmp_path / "send.py"
    sender.write_text(f"import sys\nopen({str(received)!r}, 'wb').write(sys.stdin.buffer.read())\n")
    return received, [sys.executable, str(sender)]


async def test_r_after_moving_the_cursor_answers_that_message(
    service: Service, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conversation = add_conversation(service)
    received, command = programs(tmp_path, monkeypatch)
    config = load_config(base_url=BASE)
    config.settings.compose = ComposeConfig(send_command=command)
    app = pigeon_for(service, config=config)
    async with app.run_test(size=NARROW) as pilot:
        reader = await opened(pilot, app, conversation)
        await pilot.press("greater_than_sign", "p", "p")
        chosen = current(reader)
        assert chosen != conversation.ids[-1]
        answered = next(m for m in reader.messages if m.id == chosen)
        await pilot.press("r")
        await settle(pilot, app, lambda: isinstance(app.screen, ReviewScreen))
        await pilot.press("y")
        await settle(pilot, app, received.exists)
        sent = email.message_from_bytes(received.read_bytes(), policy=policy.default)
        assert f"> Message {chosen} says" in sent.get_content()
        assert sent["In-Reply-To"] == message_id_of(answered)


async def test_the_key_bar_at_80_columns_still_shows_the_essentials(service: Service) -> None:
    conversation = add_conversation(service)
    app = pigeon_for(service)
    async with app.run_test(size=NARROW) as pilot:
        await opened(pilot, app, conversation)
        bar = app.screen.query_one(KeyBar)
        await settle(pilot, app)
        shown = str(bar.render())
        for essential in ("Next msg", "Next thread", "Back", "Find", "Reply"):
            assert essential in shown


async def test_a_long_thread_opens_with_a_brief_of_what_is_new_that_stays_while_it_scrolls(service: Service) -> None:
    conversation = add_conversation(service)
    app = pigeon_for(service)
    async with app.run_test(size=NARROW) as pilot:
        reader = await opened(pilot, app, conversation)
        header = f"New since you last read it: {SIZE - READ} new messages from writer"
        await settle(pilot, app, lambda: header in screen_text(app))
        newest = conversation.ids[-1]
        assert f"Message {newest} says word{SIZE - 1} here." in screen_text(app)  # the newest, in a line
        await pilot.press("G")
        await settle(pilot, app, lambda: reader.scroll_offset.y > 0)
        assert header in screen_text(app)  # (it does not scroll away)
