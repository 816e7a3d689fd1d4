"""Mail is hostile: markup, click actions, terminal escape sequences, bidi tricks, huge bodies, path traversal."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from textual.command import CommandPalette

from pigeon import locations
from pigeon.core.attachments import attachment_bytes, attachment_filename, save_into
from pigeon.models import ContentBlock
from pigeon.server.db import iso
from pigeon.tui.screens.main import MainScreen
from pigeon.tui.screens.modals import ConfirmScreen
from pigeon.tui.widgets.reader import Reader
from pigeon.tui.widgets.thread_list import ThreadList
from tests.server.conftest import NOW, Service
from tests.tui.conftest import SIZE, Notes, loaded, palette_hits, pigeon_for, screen_text, settle

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
        await settle(pilot, app, lambda: bool(reader.messages))
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
        await settle(pilot, app, lambda: bool(reader.messages))
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
