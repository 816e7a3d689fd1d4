"""The review of a draft after the editor: send, edit again, To, attach and remove, postpone, discard; a failed
send stays there with its reason."""

from __future__ import annotations

import email
import sys
from email import policy
from email.message import EmailMessage
from email.utils import getaddresses
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Static

from pigeon.config import ComposeConfig, load_config
from pigeon.core.message_ids import derived_id
from pigeon.store.mail_drafts import MailDrafts
from pigeon.tui.app import PigeonApp
from pigeon.tui.screens.mail import MainScreen
from pigeon.tui.screens.modals import ConfirmScreen
from pigeon.tui.screens.review import ReviewScreen
from pigeon.tui.widgets.address_input import AddressInput
from pigeon.tui.widgets.reader import Reader
from tests.server.conftest import Service
from tests.tui.conftest import BASE, SIZE, Notes, on_screen, pigeon_for, screen_text, settle
from tests.tui.test_flow import newest_with, programs, synced


def app_with(service: Service, command: list[str]) -> PigeonApp:
    config = load_config(base_url=BASE)
    config.settings.compose = ComposeConfig(send_command=command)  # (review: on, the default)
    return pigeon_for(service, config=config)


def said(app: PigeonApp) -> str:
    return str(on_screen(app, ReviewScreen).query_one("#review-said", Static).render())


def parsed(path: Path) -> EmailMessage:
    sent = email.message_from_bytes(path.read_bytes(), policy=policy.default)
    assert isinstance(sent, EmailMessage)
    return sent


async def reviewing(pilot: Pilot[None], app: PigeonApp) -> ReviewScreen:
    """``r`` on the newest thread: the editor runs, then the review shows the draft."""
    await synced(pilot, app)
    await pilot.press("r")
    await settle(pilot, app, lambda: isinstance(app.screen, ReviewScreen) and "Re: Lunch?" in screen_text(app))
    return on_screen(app, ReviewScreen)


async def postponed(pilot: Pilot[None], app: PigeonApp) -> None:
    """``r`` on the newest thread, then ``p`` on its review: the draft kept, the mail screen back."""
    await reviewing(pilot, app)
    await pilot.press("p")
    await settle(pilot, app, lambda: isinstance(app.screen, MainScreen))


async def test_the_review_shows_the_draft_and_y_sends_it_threaded(
    service: Service, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    received, command = programs(tmp_path, monkeypatch)
    thread_id = newest_with(service, subject="Lunch?")
    app = app_with(service, command)
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        await reviewing(pilot, app)
        shown = screen_text(app)
        assert "To:      ann@example.com" in shown
        assert "Subject: Re: Lunch?" in shown
        assert "On my way." in shown
        assert not received.exists()  # (nothing goes before y)
        await pilot.press("y")
        await settle(pilot, app, lambda: isinstance(app.screen, MainScreen) and received.exists())
        sent = parsed(received)
        _, messages = await app.core.stored_thread(thread_id)
        answered = next(m for m in reversed(messages) if m.sender and m.sender.raw_address == "ann@example.com")
        assert sent["In-Reply-To"] == derived_id(answered.id or "")
        assert str(sent["References"]).split()[-1] == sent["In-Reply-To"]
        assert MailDrafts().all() == []
        assert "Sent with" in notes.text


async def test_the_review_shows_words_written_under_the_quote(
    service: Service, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _received, command = programs(tmp_path, monkeypatch)
    editor = tmp_path / "below.py"  # an editor used the other way: the answer under the quote
    editor.write_text("import sys\nopen(sys.argv[-1], 'a').write('\\nThanks, noted.\\n')\n")
    monkeypatch.setenv("VISUAL", f"{sys.executable} {editor}")
    text = "\n".join(f"Point {n} of the plan." for n in range(12))  # a quote longer than the review's lines
    newest_with(service, subject="Lunch?", content_blocks=[{"type": "CONTENT_TYPE_TEXT", "content": text}])
    app = app_with(service, command)
    async with app.run_test(size=SIZE) as pilot:
        review = await reviewing(pilot, app)
        body = str(review.query_one("#review-body", Static).render())
        assert "Thanks, noted." in body
        assert "and 13 quoted lines" in body  # (what it quotes is counted, not shown in its place)
        assert "Point 0" not in body


async def test_edit_again_goes_back_to_the_editor_then_to_the_review(
    service: Service, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _received, command = programs(tmp_path, monkeypatch)
    newest_with(service, subject="Lunch?")
    app = app_with(service, command)
    async with app.run_test(size=SIZE) as pilot:
        first = await reviewing(pilot, app)
        await pilot.press("e")
        await settle(pilot, app, lambda: isinstance(app.screen, ReviewScreen) and app.screen is not first)
        (kept,) = MailDrafts().all()
        assert kept.path.read_text().count("On my way.") == 2
        await settle(pilot, app, lambda: screen_text(app).count("On my way.") == 2)


async def test_postpone_keeps_the_draft_and_says_where(
    service: Service, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    received, command = programs(tmp_path, monkeypatch)
    newest_with(service, subject="Lunch?")
    app = app_with(service, command)
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        await postponed(pilot, app)
        (kept,) = MailDrafts().all()
        assert f"Kept in drafts: D finds it again (pigeon drafts: {kept.id})" in notes.text
        assert "On my way." in kept.path.read_text()
        assert not received.exists()


async def test_discard_asks_first_then_drops_the_draft(
    service: Service, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    received, command = programs(tmp_path, monkeypatch)
    newest_with(service, subject="Lunch?")
    app = app_with(service, command)
    async with app.run_test(size=SIZE) as pilot:
        await reviewing(pilot, app)
        await pilot.press("d")
        await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")
        await settle(pilot, app, lambda: isinstance(app.screen, ReviewScreen))
        assert len(MailDrafts().all()) == 1
        await pilot.press("d")
        await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await settle(pilot, app, lambda: isinstance(app.screen, MainScreen) and not MailDrafts().all())
        assert not received.exists()


async def test_attach_refuses_a_missing_file_in_words_then_attaches_and_removes_one(
    service: Service, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    received, command = programs(tmp_path, monkeypatch)
    newest_with(service, subject="Lunch?")
    plan = tmp_path / "plan.txt"
    plan.write_bytes(b"step one\r\nstep two\n")
    app = app_with(service, command)
    async with app.run_test(size=SIZE) as pilot:
        review = await reviewing(pilot, app)
        await pilot.press("a")
        await settle(pilot, app, lambda: bool(review.query("#review-input")))
        review.query_one("#review-input", Input).value = str(tmp_path / "missing.pdf")
        await pilot.press("enter")
        await settle(pilot, app, lambda: "no file at" in said(app))
        assert "missing.pdf" in said(app)
        assert MailDrafts().all()[0].files == ()

        review.query_one("#review-input", Input).value = str(plan)
        await pilot.press("enter")
        await settle(pilot, app, lambda: "plan.txt" in screen_text(app) and not review.query("#review-input"))
        assert [f.name for f in MailDrafts().all()[0].files] == ["plan.txt"]

        await pilot.press("x")
        await settle(pilot, app, lambda: "No attached files" in screen_text(app))
        assert MailDrafts().all()[0].files == ()

        await pilot.press("a")
        await settle(pilot, app, lambda: bool(review.query("#review-input")))
        review.query_one("#review-input", Input).value = str(plan)
        await pilot.press("enter")
        await settle(pilot, app, lambda: "plan.txt" in screen_text(app) and not review.query("#review-input"))
        await pilot.press("y")
        await settle(pilot, app, lambda: received.exists())
        (part,) = list(parsed(received).iter_attachments())
        assert part.get_filename() == "plan.txt"
        assert part.get_payload(decode=True) == plan.read_bytes()


async def test_t_changes_the_recipients_before_sending(
    service: Service, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    received, command = programs(tmp_path, monkeypatch)
    newest_with(service, subject="Lunch?")
    app = app_with(service, command)
    async with app.run_test(size=SIZE) as pilot:
        review = await reviewing(pilot, app)
        await pilot.press("t")
        await settle(pilot, app, lambda: bool(review.query("#review-input")))
        field = review.query_one("#review-input", Input)
        assert field.value == "ann@example.com"
        field.value = "ann@example.com, nobody"
        await pilot.press("enter")
        await settle(pilot, app, lambda: "not an address" in said(app))
        field.value = "Dan <dan@example.com>"
        await pilot.press("enter")
        await settle(pilot, app, lambda: "To:      Dan <dan@example.com>" in screen_text(app))
        await pilot.press("y")
        await settle(pilot, app, lambda: received.exists())
        assert parsed(received)["To"] == "Dan <dan@example.com>"


async def test_a_failed_send_stays_on_the_review_with_the_reason_and_keeps_the_draft(
    service: Service, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _received, command = programs(tmp_path, monkeypatch, fail=True)
    newest_with(service, subject="Lunch?")
    app = app_with(service, command)
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        await reviewing(pilot, app)
        await pilot.press("y")
        await settle(pilot, app, lambda: "no route to host" in said(app))
        assert isinstance(app.screen, ReviewScreen)
        (kept,) = MailDrafts().all()
        assert f"pigeon drafts send {kept.id}" in said(app)
        assert "no route to host" not in notes.text  # (said on the review alone: no note over its edge)


async def test_F_forwards_the_message_as_an_attached_message(
    service: Service, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    received, command = programs(tmp_path, monkeypatch)
    newest_with(service, subject="Lunch?")
    app = app_with(service, command)
    async with app.run_test(size=SIZE) as pilot:
        await synced(pilot, app)
        await pilot.press("F")
        await settle(pilot, app, lambda: isinstance(app.screen, ReviewScreen) and "Lunch?.eml" in screen_text(app))
        review = on_screen(app, ReviewScreen)
        assert "Subject: Fwd: Lunch?" in screen_text(app)
        await pilot.press("t")
        await settle(pilot, app, lambda: bool(review.query("#review-input")))
        review.query_one("#review-input", Input).value = "dan@example.com"
        await pilot.press("enter")
        await settle(pilot, app, lambda: "To:      dan@example.com" in screen_text(app))
        await pilot.press("y")
        await settle(pilot, app, lambda: received.exists())
        (part,) = list(parsed(received).iter_attachments())
        assert part.get_content_type() == "message/rfc822"
        assert part.get_content()["Subject"] == "Lunch?"


async def test_to_completes_from_the_contact_book_as_it_is_typed(
    service: Service, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    received, command = programs(tmp_path, monkeypatch)
    newest_with(service, subject="Lunch?")
    app = app_with(service, command)
    async with app.run_test(size=SIZE) as pilot:
        review = await reviewing(pilot, app)
        (entry, *_) = await app.core.address_book.lookup(next(iter(app.core.contacts.values())).name[:3])
        await pilot.press("t")
        await settle(pilot, app, lambda: bool(review.query("#review-input")))
        field = review.query_one("#review-input", AddressInput)
        field.value = ""
        await pilot.press(*entry.name[:3])
        await settle(pilot, app, lambda: field.open and entry in field.offered)
        for _ in range(field.offered.index(entry)):
            await pilot.press("down")
        await pilot.press("tab", "enter")
        assert field.value == f"{entry.written}, "
        await settle(pilot, app, lambda: "To changed" in said(app))
        await pilot.press("y")
        await settle(pilot, app, lambda: received.exists())
        assert [a for _, a in getaddresses([str(parsed(received)["To"])])] == [entry.email]


async def test_r_in_the_list_answers_the_latest_message_whatever_the_preview_shows(
    service: Service, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, command = programs(tmp_path, monkeypatch)
    thread_id = newest_with(service, subject="Lunch?")
    app = app_with(service, command)
    async with app.run_test(size=SIZE) as pilot:
        await synced(pilot, app)
        reader = app.screen.query_one(Reader)
        await settle(pilot, app, lambda: reader.thread is not None and reader.thread.id == thread_id)
        shown = reader.current_message  # (the preview's cursor: the thread's first message, never read)
        assert shown is not None
        assert shown.subject != "Lunch?"
        await pilot.press("r")
        await settle(pilot, app, lambda: isinstance(app.screen, ReviewScreen) and "Re: Lunch?" in screen_text(app))


async def test_a_postponed_draft_is_found_again_with_D_and_sent_from_its_review(
    service: Service, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pigeon.tui.screens.modals import PickScreen

    received, command = programs(tmp_path, monkeypatch)
    newest_with(service, subject="Lunch?")
    app = app_with(service, command)
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        await pilot.press("D")
        await settle(pilot, app, lambda: "No drafts kept" in notes.text)  # (none yet: said, no empty dialog)
        await postponed(pilot, app)
        await pilot.press("D")
        await settle(pilot, app, lambda: isinstance(app.screen, PickScreen))
        shown = screen_text(app)
        assert "Drafts (1)" in shown
        assert "Re: Lunch?" in shown
        assert "to ann@example.com" in shown
        await pilot.press("enter")
        await settle(pilot, app, lambda: isinstance(app.screen, ReviewScreen) and "On my way." in screen_text(app))
        await pilot.press("y")
        await settle(pilot, app, lambda: isinstance(app.screen, MainScreen) and received.exists())
        assert "On my way." in parsed(received).get_body(("plain",)).get_content()  # type: ignore[union-attr]
        assert MailDrafts().all() == []
