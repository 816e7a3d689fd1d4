"""The triage flow: the reader follows the work, previews where the cursor rests, select all, links, attachments
and replies handed to the user's own programs."""

from __future__ import annotations

import base64
import email
import json
import stat
import sys
from email import policy
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from textual.pilot import Pilot

from pigeon.config import ComposeConfig, Config, load_config
from pigeon.models import Message
from pigeon.store.mail_drafts import MailDrafts
from pigeon.tui.app import PigeonApp
from pigeon.tui.screens.links import LinksScreen
from pigeon.tui.screens.mail import MainScreen, reading, triage
from pigeon.tui.screens.modals import ConfirmScreen
from pigeon.tui.widgets.reader import Reader
from pigeon.tui.widgets.thread_list import ThreadList
from tests.server.conftest import Service, first_thread
from tests.tui.conftest import BASE, SIZE, Notes, current_id, on_screen, pigeon_for, settle
from tests.tui.scenes import scene_app


async def synced(pilot: Pilot[None], app: PigeonApp) -> ThreadList:
    screen = app.screen
    await settle(pilot, app, lambda: getattr(screen, "synced", False))
    return screen.query_one(ThreadList)


def is_unread(app: PigeonApp, thread_id: str) -> bool:
    return next(t.unread for t in app.core.store.list_threads("all", limit=10_000) if t.id == thread_id)


def showing(reader: Reader, thread_id: str) -> bool:
    return reader.thread is not None and reader.thread.id == thread_id and bool(reader.messages)


def shown_by(reader: Reader, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The threads the reader lays out from now on, in order (each ``show``)."""
    shown: list[str] = []
    show = reader.show

    def counted_show(*args: Any, **kwargs: Any) -> None:
        shown.append(args[0].id)
        show(*args, **kwargs)

    monkeypatch.setattr(reader, "show", counted_show)
    return shown


def with_ui(**fields: object) -> Config:
    config = load_config(base_url=BASE)
    for name, value in fields.items():
        setattr(config.ui, name, value)
    return config


async def open_first(pilot: Pilot[None], app: PigeonApp) -> tuple[ThreadList, Reader]:
    threads = await synced(pilot, app)
    reader = app.screen.query_one(Reader)
    first = current_id(threads)
    await pilot.press("enter")
    await settle(pilot, app, lambda: showing(reader, first) and app.focused is reader)
    return threads, reader


# --- the reader follows the work ---------------------------------------------------------------------------------


async def test_done_in_the_reader_opens_the_next_thread_and_marks_it_read(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads, reader = await open_first(pilot, app)
        first, second = threads.source.row(0).id, threads.source.row(1).id
        await pilot.press("e")
        await settle(pilot, app, lambda: showing(reader, second) and not is_unread(app, second))
        assert app.focused is reader
        assert current_id(threads) == second
        assert first not in [threads.source.row(i).id for i in range(len(threads.source))]


async def test_at_the_end_of_the_list_the_previous_thread_opens_and_in_an_empty_one_the_list(
    service: Service,
) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await synced(pilot, app)
        reader = app.screen.query_one(Reader)
        await pilot.press("G")
        last, before = threads.source.row(len(threads.source) - 1).id, threads.source.row(len(threads.source) - 2).id
        await pilot.press("enter")
        await settle(pilot, app, lambda: showing(reader, last))
        await pilot.press("e")
        await settle(pilot, app, lambda: showing(reader, before))

        await pilot.press("s", "3")  # star it, then the Starred view: it holds this thread alone
        await settle(pilot, app, lambda: len(threads.source) == 1)
        await pilot.press("enter")
        await settle(pilot, app, lambda: showing(reader, before) and app.focused is reader)
        await pilot.press("s")  # unstarred: it leaves the view, which is now empty
        await settle(pilot, app, lambda: len(threads.source) == 0 and app.focused is threads)
        assert reader.thread is None


@pytest.mark.parametrize(("after", "expected"), [("previous", 0), ("list", None)])
async def test_after_triage_chooses_the_previous_thread_or_the_list(
    service: Service, after: str, expected: int | None
) -> None:
    app = pigeon_for(service, config=with_ui(after_triage=after))
    async with app.run_test(size=SIZE) as pilot:
        threads = await synced(pilot, app)
        reader = app.screen.query_one(Reader)
        await pilot.press("j", "j")
        earlier = threads.source.row(1).id
        done = threads.source.row(2).id
        await pilot.press("enter")
        await settle(pilot, app, lambda: showing(reader, done))
        await pilot.press("e")
        if expected is None:  # back in the list, whose cursor's thread the reader previews (not the one done)
            await settle(pilot, app, lambda: app.focused is threads and reader.thread is not None)
            assert reader.thread is not None
            assert reader.thread.id != done
        else:
            await settle(pilot, app, lambda: showing(reader, earlier) and app.focused is reader)


async def test_shift_j_and_k_in_the_reader_open_the_next_and_previous_thread(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads, reader = await open_first(pilot, app)
        first, second = threads.source.row(0).id, threads.source.row(1).id
        await pilot.press("J")
        await settle(pilot, app, lambda: showing(reader, second) and not is_unread(app, second))
        await pilot.press("K")
        await settle(pilot, app, lambda: showing(reader, first))
        assert app.focused is reader


async def test_the_reader_previews_where_the_cursor_rests_without_marking_it_read(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await synced(pilot, app)
        reader = app.screen.query_one(Reader)
        wanted = next(i for i in range(1, len(threads.source)) if threads.source.row(i).unread)
        for _ in range(wanted):
            await pilot.press("j")
        thread_id = current_id(threads)
        await settle(pilot, app, lambda: showing(reader, thread_id))
        await settle(pilot, app)
        assert app.focused is threads
        assert is_unread(app, thread_id)

        def no_store(thread_id: str) -> list[Message]:
            raise AssertionError("read from the store again")

        monkeypatch.setattr(app.core.store, "messages", no_store)  # enter shows what the preview read
        shown_again = shown_by(reader, monkeypatch)
        await pilot.press("enter")
        await settle(pilot, app, lambda: app.focused is reader and not is_unread(app, thread_id))
        assert shown_again == []  # the preview's layout stays: Enter moves the focus and marks the thread read


@pytest.mark.parametrize("pace", [0.05, 0.15, 0.3, 0.39])
def test_a_preview_waits_twice_the_pace_of_keys_typed_in_a_row(pace: float) -> None:
    waited = reading.preview_wait(pace)
    assert waited > pace  # the next key, at the same pace, comes before the preview
    assert reading.PREVIEW_DELAY <= waited <= reading.TYPING
    assert reading.preview_wait(None) == reading.preview_wait(reading.TYPING) == reading.PREVIEW_DELAY


async def test_keys_typed_in_a_row_preview_only_where_the_cursor_rests(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await synced(pilot, app)
        reader = app.screen.query_one(Reader)
        await settle(pilot, app, lambda: showing(reader, current_id(threads)))
        clock = [0.0]  # the keys' pace, as the reader tells it: 0.3 s apart (so a preview waits 0.4 s)
        monkeypatch.setattr(reading, "time", SimpleNamespace(monotonic=lambda: clock[0]))
        shown = shown_by(reader, monkeypatch)
        passed = []
        for _ in range(4):
            clock[0] += 0.3
            await pilot.press("j")
            passed.append(current_id(threads))
            await pilot.pause(0.2)  # longer than a resting cursor's wait: a preview would be drawn here
        await settle(pilot, app, lambda: showing(reader, passed[-1]))
        assert len(set(passed)) == 4
        assert shown[-1] == passed[-1]
        assert not set(shown) & set(passed[1:-1])  # (the first move, after a rest, may be previewed: no pace yet)


# --- select all -------------------------------------------------------------------------------------------------


async def test_select_all_then_one_action_asks_first_and_is_one_undo_step(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(triage, "BULK_CONFIRM", 10)
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await synced(pilot, app)
        screen = on_screen(app, MainScreen)
        total = len(threads.source)
        await pilot.press("ctrl+a")
        await settle(pilot, app, lambda: len(screen.selected) == total)
        assert f"{total} selected" in screen.status
        await pilot.press("e")
        await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
        assert f"all {total} selected threads" in str(on_screen(app, ConfirmScreen).question)
        await pilot.press("y")
        await settle(pilot, app, lambda: len(threads.source) == 0)
        assert len(app.core.store.undo_steps()) == 1
        await pilot.press("u")
        await settle(pilot, app, lambda: len(threads.source) == total)


async def test_marking_a_whole_view_read_takes_two_keys(service: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(triage, "BULK_CONFIRM", 10)  # more threads than that: still no question for read
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await synced(pilot, app)
        assert app.core.view_counts()[0]["unread"] > 0
        await pilot.press("ctrl+a", "m")
        await settle(pilot, app, lambda: app.core.view_counts()[0]["unread"] == 0)
        await pilot.press("ctrl+a")  # pressed again with all selected: none
        await settle(pilot, app, lambda: not on_screen(app, MainScreen).selected)


# --- links and attachments --------------------------------------------------------------------------------------


def newest_with(service: Service, **fields: object) -> str:
    thread_id = first_thread(service, service.alice)  # the newest
    service.add_message(service.alice, thread_id, sender_address="ann@example.com", **fields)
    return thread_id


async def test_links_open_their_real_target_and_a_misleading_one_asks_first(
    service: Service, browser: list[str]
) -> None:
    html = (
        '<p><a href="https://docs.example.com/q4">the plan</a> and '
        '<a href="https://evil.test/login">www.paypal.com</a></p>'
    )
    thread_id = newest_with(
        service, content_blocks=[{"type": "CONTENT_TYPE_HTML", "mime_type": "text/html", "content": html}]
    )
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await synced(pilot, app)
        assert current_id(threads) == thread_id
        reader = app.screen.query_one(Reader)
        await pilot.press("enter")
        await settle(pilot, app, lambda: "www.paypal.com [2]" in reader.text)
        await pilot.press("L")
        await settle(pilot, app, lambda: isinstance(app.screen, LinksScreen))
        await pilot.press("1")
        await settle(pilot, app, lambda: browser == ["https://docs.example.com/q4"])

        await pilot.press("L")
        await settle(pilot, app, lambda: isinstance(app.screen, LinksScreen))
        await pilot.press("2")
        await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
        question = on_screen(app, ConfirmScreen).question.plain
        assert "www.paypal.com" in question
        assert "https://evil.test/login" in question
        assert browser == ["https://docs.example.com/q4"]  # nothing opened before the answer
        await pilot.press("y")
        await settle(pilot, app, lambda: browser[-1] == "https://evil.test/login")

        await pilot.press("L")
        await settle(pilot, app, lambda: isinstance(app.screen, LinksScreen))
        await pilot.press("y")  # copies the highlighted link's target
        await settle(pilot, app, lambda: app.clipboard == "https://docs.example.com/q4")


async def test_O_opens_an_attachment_privately_with_the_configured_program(service: Service, tmp_path: Path) -> None:
    record = tmp_path / "argv.json"
    recorder = tmp_path / "open.py"
    recorder.write_text(f"import json, sys\nopen({str(record)!r}, 'w').write(json.dumps(sys.argv[1:]))\n")
    blocks = [
        {"type": "CONTENT_TYPE_TEXT", "mime_type": "text/plain", "content": "The minutes."},
        {
            "type": "CONTENT_TYPE_FILE",
            "mime_type": "application/pdf",
            "filename": "minutes.pdf",
            "content": base64.b64encode(b"%PDF-1.4 minutes").decode(),
            "metadata": {"encoding": "base64"},
        },
        {"type": "CONTENT_TYPE_FILE", "mime_type": "application/pdf", "filename": "invoice.pdf.exe", "content": "MZ"},
    ]
    newest_with(service, content_blocks=blocks)
    app = pigeon_for(service, config=with_ui(open_command=[sys.executable, str(recorder)]))
    async with app.run_test(size=SIZE) as pilot:
        await synced(pilot, app)
        reader = app.screen.query_one(Reader)
        await pilot.press("enter")
        await settle(pilot, app, lambda: "minutes.pdf" in reader.text)
        await pilot.press("greater_than_sign")  # the cursor to the newest message, which holds the files
        shown = reader.current_message  # (the picker lists the attachments of the message under the cursor)
        names = [block.filename for message, block in reader.attachments if message is shown]
        await pilot.press("O")
        await settle(pilot, app, lambda: bool(app.screen.query("#pick")))
        await pilot.press(*["down"] * names.index("minutes.pdf"), "enter")
        await settle(pilot, app, lambda: record.exists())
        (opened,) = json.loads(record.read_text())
        path = Path(opened)
        assert path.name == "minutes.pdf"
        assert path.read_bytes() == b"%PDF-1.4 minutes"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        record.unlink()

        await pilot.press("O")
        await settle(pilot, app, lambda: bool(app.screen.query("#pick")))
        await pilot.press(*["down"] * names.index("invoice.pdf.exe"), "enter")  # a program, whatever its type says
        await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
        assert ".exe file can run code" in on_screen(app, ConfirmScreen).question.plain
        await pilot.press("n")
        await settle(pilot, app)
        assert not record.exists()


# --- replies ----------------------------------------------------------------------------------------------------


def programs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, fail: bool = False) -> tuple[Path, list[str]]:
    """$VISUAL writes a line at the top of the body; the send command records its standard input (or fails)."""
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import sys\np = sys.argv[-1]\nhead, _, body = open(p).read().partition('\\n\\n')\n"
        "open(p, 'w').write(head + '\\n\\nOn my way.\\n' + body)\n"
    )
    monkeypatch.setenv("VISUAL", f"{sys.executable} {editor}")
    received = tmp_path / "sent.eml"
    sender = tmp_path / "send.py"
    sender.write_text(
        "import sys\n"
        + ("sys.stderr.write('sendmail: no route to host\\n'); sys.exit(1)\n" if fail else "")
        + f"open({str(received)!r}, 'wb').write(sys.stdin.buffer.read())\n"
    )
    return received, [sys.executable, str(sender)]


async def test_r_hands_a_reply_to_the_editor_and_with_review_off_to_the_send_command_at_once(
    service: Service, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    received, command = programs(tmp_path, monkeypatch)
    newest_with(
        service,
        subject="Lunch?",
        content_blocks=[{"type": "CONTENT_TYPE_TEXT", "mime_type": "text/plain", "content": "Noon?"}],
    )
    config = load_config(base_url=BASE)
    config.settings.compose = ComposeConfig(send_command=command, review=False)
    app = pigeon_for(service, config=config)
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        await synced(pilot, app)
        await pilot.press("r")
        await settle(pilot, app, lambda: received.exists() and "Sent with" in notes.text)
        sent = email.message_from_bytes(received.read_bytes(), policy=policy.default)
        assert sent["To"] == "ann@example.com"
        assert sent["Subject"] == "Re: Lunch?"
        thread_inbox = next(i for i in app.core.inboxes if i.email in str(sent["From"]))
        assert sent["From"].addresses[0].addr_spec == thread_inbox.email
        body = sent.get_content()
        assert body.startswith("On my way.\n")
        assert "> Noon?" in body
        assert MailDrafts().all() == []


async def test_a_failed_send_keeps_the_draft_and_says_why(
    service: Service, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _received, command = programs(tmp_path, monkeypatch, fail=True)
    config = load_config(base_url=BASE)
    config.settings.compose = ComposeConfig(send_command=command, review=False)
    app = pigeon_for(service, config=config)
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        await synced(pilot, app)
        await pilot.press("r")
        await settle(pilot, app, lambda: "Not sent" in notes.text)
        assert "no route to host" in notes.text
        (kept,) = MailDrafts().all()
        assert "On my way." in kept.path.read_text()
        assert f"pigeon drafts send {kept.id}" in notes.text


async def test_the_first_sync_brings_the_contacts_the_reader_names_recipients_by() -> None:
    """On a fresh account the saved contacts are read (none yet) while the first sync is still storing them: the
    reader must still name recipients by them ("To: You", not the address), without a restart."""
    app = scene_app()
    core = app.core
    await core.load_saved()
    assert core.contacts == {}
    await core.sync()
    stored = {contact.id for contact in core.store.contacts()}
    assert stored
    assert stored <= set(core.contacts)
    await core.close()
