"""A message's text out of the app, by keys: piped to a command (``|``), written to a file (``w``), copied (``y``),
shown raw (``H``), and its attachments and links (``a``, ``O``, ``L``): always the message under the reader's cursor,
its thread's offered with a note when it has none."""

from __future__ import annotations

import base64
import json
import os
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from pigeon import locations
from pigeon.core.compose import message_text
from pigeon.core.message_out import mail_text
from pigeon.tui.app import PigeonApp
from pigeon.tui.screens.links import LinksScreen
from pigeon.tui.screens.mail import MainScreen
from pigeon.tui.screens.message_out import PipedScreen, RawScreen
from pigeon.tui.screens.modals import ConfirmScreen, InputScreen, PickScreen
from pigeon.tui.widgets.reader import Reader
from pigeon_service.db import iso
from tests.server.conftest import NOW, Service
from tests.tui.conftest import SIZE, Notes, loaded, on_screen, pigeon_for, screen_text, settle

SUBJECT = "Q4 plan"
LINKS = {"old.bin": (1, "https://old.example/a"), "new.bin": (2, "https://new.example/b")}
"""Each file's message links to a page of its own (numbered in the order of the thread)."""
SENDERS = ("Bob <bob@example.com>", "Ann Lee <ann@example.com>")


def block(name: str) -> dict[str, object]:
    return {
        "type": "CONTENT_TYPE_FILE",
        "mime_type": "application/octet-stream",
        "filename": name,
        "content": base64.b64encode(name.encode()).decode(),
        "metadata": {"encoding": "base64"},
    }


def a_message(place: int, name: str | None) -> dict[str, object]:
    """A hostile message (escapes in its text, a block field the spec does not name, a Message-ID), with the file
    ``name`` and its link, or neither."""
    link = LINKS[name][1] if name else "no link"
    text = f"The plan is ready.\nred \x1b[31mtext\x1b[0m and \x1b]52;c;aGFja2Vk\x07{link}\n"
    blocks: list[dict[str, object]] = [
        {"type": "CONTENT_TYPE_TEXT", "mime_type": "text/plain", "content": text, "x_scan_verdict": "clean"}
    ]
    return {
        "created_at": iso(NOW - timedelta(hours=5 - place)),
        "sender_address": SENDERS[place % 2],
        "recipients": [{"raw_address": "alice@example.com", "type": "RECIPIENT_TYPE_TO"}],
        "content_blocks": blocks + ([block(name)] if name else []),
        "metadata": {"message_id": f"<q4-{place}@mail.example.com>"},
    }


def add_thread(service: Service, files: tuple[str | None, ...] = ("old.bin", "new.bin")) -> str:
    """A thread, newest in the account, of a message for each of ``files`` (oldest first): that file and its link,
    or neither. (Whichever message the reader's cursor starts on, the tests ask of that one.)"""
    db, account = service.db, service.alice.id
    inbox = db.list_inboxes(account)[0]
    with db.transaction() as conn:
        thread_id = db.insert_thread(
            conn, account, {"inbox_id": inbox.id, "subject": SUBJECT, "created_at": iso(NOW), "participants": []}
        )
        for place, name in enumerate(files):
            db.insert_message(
                conn,
                account,
                {
                    "thread_id": thread_id,
                    "inbox_id": inbox.id,
                    "direction": "MESSAGE_DIRECTION_INBOUND",
                    "status": "MESSAGE_STATUS_RECEIVED",
                    "subject": SUBJECT,
                    **a_message(place, name),
                },
            )
    return thread_id


async def open_thread(pilot: Pilot[None], app: PigeonApp) -> Reader:
    await loaded(pilot, app)
    await pilot.press("enter")
    reader = app.screen.query_one(Reader)
    await settle(pilot, app, lambda: "The plan is ready." in reader.text)
    await settle(pilot, app, lambda: app.focused is reader)
    return reader


@pytest.fixture(autouse=True)
def no_desktop(monkeypatch: pytest.MonkeyPatch) -> None:
    """No desktop clipboard program runs unless a test sets one up (the terminal's clipboard is the app's)."""
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr("sys.platform", "linux")


@pytest.fixture
def bin_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder on the path for the commands a test pipes to."""
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    return folder


def command(folder: Path, name: str, body: str) -> str:
    path = folder / name
    path.write_text(f"#!{sys.executable}\nimport os, sys\n{body}\n")
    path.chmod(0o700)
    return name


async def pipe_to(pilot: Pilot[None], app: PigeonApp, words: str) -> None:
    await pilot.press("vertical_line")
    await settle(pilot, app, lambda: isinstance(app.screen, InputScreen))
    await pilot.press(*words, "enter")


async def test_pipe_gives_the_message_to_the_command_with_no_secret_and_shows_what_it_said_cleaned(
    service: Service, bin_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PIGEON_TOKEN", "tok-secret")
    got, env = tmp_path / "got", tmp_path / "env.json"
    name = command(
        bin_folder,
        "keep-mail",
        f"open({str(got)!r}, 'wb').write(sys.stdin.buffer.read())\n"
        f"import json; json.dump(dict(os.environ), open({str(env)!r}, 'w'))\n"
        "print('kept \\x1b[2J\\x1b]52;c;aGFja2Vk\\x07it', sys.argv[1:])",
    )
    add_thread(service)
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        reader = await open_thread(pilot, app)
        message = reader.current_message
        assert message is not None
        await pipe_to(pilot, app, f"{name} --flag 'two words'")
        await settle(pilot, app, lambda: isinstance(app.screen, PipedScreen))
        assert got.read_bytes() == mail_text(message, reader.contacts).encode()
        head, body = got.read_text().split("\n\n", 1)
        assert message.sender is not None
        assert message.metadata is not None
        assert f"From: {message.sender.raw_address}" in head.splitlines()
        assert f"Message-ID: {message.metadata['message_id']}" in head.splitlines()
        assert "Subject: Q4 plan" in head.splitlines()
        assert body.startswith("The plan is ready.\nred text and https://")
        assert "\x1b" not in body
        assert "PIGEON_TOKEN" not in json.loads(env.read_text())
        shown = on_screen(app, PipedScreen)
        assert shown.shown == "kept it ['--flag', 'two words']\n"
        assert "kept it ['--flag', 'two words']" in screen_text(app)
        assert "finished" in screen_text(app)
        # The command is offered again, for the next message.
        await pilot.press("escape")
        await settle(pilot, app, lambda: isinstance(app.screen, MainScreen))
        await pilot.press("vertical_line")
        await settle(pilot, app, lambda: isinstance(app.screen, InputScreen))
        assert app.screen.query_one(Input).value == f"{name} --flag 'two words'"


async def test_a_command_not_found_and_a_failing_one_are_said_in_words(service: Service, bin_folder: Path) -> None:
    name = command(bin_folder, "grumpy", "sys.stdin.read(); print('cannot do that', file=sys.stderr); sys.exit(3)")
    add_thread(service)
    app, notes = pigeon_for(service), Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        await open_thread(pilot, app)
        await pipe_to(pilot, app, "no-such-program-here")
        await settle(pilot, app, lambda: "Could not pipe the message" in notes.text)
        assert "Could not pipe the message: no-such-program-here was not found" in notes.text
        assert isinstance(app.screen, MainScreen)
        await pilot.press("vertical_line")
        await settle(pilot, app, lambda: isinstance(app.screen, InputScreen))
        app.screen.query_one(Input).clear()
        await pilot.press(*name, "enter")
        await settle(pilot, app, lambda: isinstance(app.screen, PipedScreen))
        shown = screen_text(app)
        assert "grumpy failed (exit 3)" in shown
        assert "cannot do that" in shown


async def test_keys_are_answered_while_a_piped_command_runs(service: Service, bin_folder: Path, tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    name = command(
        bin_folder, "slow", f"import time\nwhile not os.path.exists({str(gate)!r}): time.sleep(0.02)\nprint('done')"
    )
    add_thread(service)
    app, notes = pigeon_for(service), Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        reader = await open_thread(pilot, app)

        async def until(state: Callable[[], bool]) -> None:  # (settle would wait for the command's worker)
            deadline = time.monotonic() + 20
            while not state():
                assert time.monotonic() < deadline, "not reached"
                await pilot.pause(0.01)

        await pipe_to(pilot, app, name)
        await until(lambda: isinstance(app.screen, MainScreen))
        await pilot.press("y")  # answered while the command waits
        await until(lambda: "Copied the message" in notes.text)
        assert not isinstance(app.screen, PipedScreen)
        assert any(w.group == "pipe" and not w.is_finished for w in app.screen.workers)
        gate.touch()
        await settle(pilot, app, lambda: isinstance(app.screen, PipedScreen))
        assert on_screen(app, PipedScreen).shown == "done\n"
        assert reader.current_message is not None


async def test_write_puts_the_message_in_a_file_and_asks_before_replacing_one(service: Service) -> None:
    add_thread(service)
    app, notes = pigeon_for(service), Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        reader = await open_thread(pilot, app)
        message = reader.current_message
        assert message is not None
        target = locations.download_dir() / "Q4-plan.txt"
        await pilot.press("w")
        await settle(pilot, app, lambda: isinstance(app.screen, InputScreen))
        assert app.screen.query_one(Input).value == str(target)
        await pilot.press("enter")
        await settle(pilot, app, lambda: "Wrote" in notes.text)
        assert target.read_text() == mail_text(message, reader.contacts)
        target.write_text("mine")
        await pilot.press("w")
        await settle(pilot, app, lambda: isinstance(app.screen, InputScreen))
        await pilot.press("enter")
        await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
        assert on_screen(app, ConfirmScreen).question.plain == f"Replace {target}?"
        await pilot.press("n")
        await settle(pilot, app, lambda: isinstance(app.screen, MainScreen))
        assert target.read_text() == "mine"
        await pilot.press("w")
        await settle(pilot, app, lambda: isinstance(app.screen, InputScreen))
        await pilot.press("enter")
        await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await settle(pilot, app, lambda: target.read_text() != "mine")
        assert target.read_text() == mail_text(message, reader.contacts)


async def test_a_write_that_fails_says_why_in_one_line(service: Service, tmp_path: Path) -> None:
    add_thread(service)
    app, notes = pigeon_for(service), Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        await open_thread(pilot, app)
        await pilot.press("w")
        await settle(pilot, app, lambda: isinstance(app.screen, InputScreen))
        app.screen.query_one(Input).clear()
        await pilot.press(*str(tmp_path), "enter")  # a folder
        await settle(pilot, app, lambda: "Could not write" in notes.text)
        assert "Could not write the message: that is a folder" in notes.text


async def test_raw_shows_every_field_the_service_sent_cleaned_and_y_copies_it(service: Service) -> None:
    thread_id = add_thread(service)
    app, notes = pigeon_for(service), Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        reader = await open_thread(pilot, app)
        await pilot.press("H")
        await settle(pilot, app, lambda: isinstance(app.screen, RawScreen))
        raw = on_screen(app, RawScreen).shown
        record = json.loads(raw)
        message = reader.current_message
        assert message is not None
        assert (record["id"], record["thread_id"]) == (message.id, thread_id)
        assert record["content_blocks"][0]["x_scan_verdict"] == "clean"  # a field the spec does not name
        assert record["content_blocks"][1]["filename"] in LINKS
        assert record["metadata"] == message.metadata
        assert "\x1b" not in raw
        assert '"x_scan_verdict": "clean"' in screen_text(app)
        await pilot.press("y")
        await settle(pilot, app, lambda: app.clipboard == raw)
        assert f"Copied the raw message ({len(raw.splitlines())} lines)" in notes.text
        await pilot.press("q")
        await settle(pilot, app, lambda: isinstance(app.screen, MainScreen))
        assert app.is_running


async def test_copy_puts_the_message_text_on_the_clipboard_and_says_how_many_lines(
    service: Service, bin_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = tmp_path / "desktop-clipboard"
    part = f"{kept}.part"  # (whole or not there: the test reads it once it is there)
    command(bin_folder, "wl-copy", f"open({part!r}, 'w').write(sys.stdin.read()); os.replace({part!r}, {str(kept)!r})")
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    add_thread(service)
    app, notes = pigeon_for(service), Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        reader = await open_thread(pilot, app)
        message = reader.current_message
        assert message is not None
        await pilot.press("y")
        await settle(pilot, app, lambda: "Copied the message" in notes.text)
        assert app.clipboard == message_text(message)
        assert app.clipboard.startswith("The plan is ready.\nred text and https://")
        assert "Copied the message (2 lines)" in notes.text
        await settle(pilot, app, lambda: kept.exists())
        assert kept.read_text() == app.clipboard  # the desktop's clipboard too, where the terminal's may not reach


async def test_save_and_links_act_on_the_message_under_the_cursor(service: Service) -> None:
    add_thread(service)
    app, notes = pigeon_for(service), Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        reader = await open_thread(pilot, app)
        assert {b.filename for _, b in reader.attachments} == {"old.bin", "new.bin"}
        (name,) = [b.filename or "" for m, b in reader.attachments if m is reader.current_message]
        other = ({"old.bin", "new.bin"} - {name}).pop()
        await pilot.press("a")  # the message's one attachment, not a choice among the thread's two
        await settle(pilot, app, lambda: "Saved" in notes.text)
        assert (locations.download_dir() / name).read_bytes() == name.encode()
        assert not (locations.download_dir() / other).exists()
        await pilot.press("L")
        await settle(pilot, app, lambda: isinstance(app.screen, LinksScreen))
        links = on_screen(app, LinksScreen).links
        assert [(link.number, link.target) for link in links] == [LINKS[name]]  # numbered as the reader's
        assert "Links (1)" in screen_text(app)
        await pilot.press("y")
        await settle(pilot, app, lambda: app.clipboard == LINKS[name][1])


async def test_a_message_with_no_attachments_or_links_says_so_and_offers_the_threads(service: Service) -> None:
    add_thread(service, (None, "old.bin", None))  # (the first and the last message have none)
    app, notes = pigeon_for(service), Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        await open_thread(pilot, app)
        await pilot.press("O")
        await settle(pilot, app, lambda: isinstance(app.screen, PickScreen))
        assert "This message has no attachments. Open which of the thread's?" in screen_text(app)
        await pilot.press("escape")
        await settle(pilot, app, lambda: isinstance(app.screen, MainScreen))
        await pilot.press("L")
        await settle(pilot, app, lambda: isinstance(app.screen, LinksScreen))
        assert [link.target for link in on_screen(app, LinksScreen).links] == ["https://old.example/a"]
        assert "This message has no links. The thread's (1):" in screen_text(app)
