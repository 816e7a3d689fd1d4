"""Contacts: the book, the editor (PATCH of what changed, errors at their fields, drafts that survive), dialogs."""

from __future__ import annotations

import asyncio
import json
import stat
from pathlib import Path

import httpx
import pytest
from textual import events
from textual.pilot import Pilot
from textual.widgets import Button, DataTable, Input, Label, Select, SelectionList, Static, TextArea

from pigeon.api import PigeonClient
from pigeon.config import load_config
from pigeon.core.contacts import ContactForm, FormInvalid, changes, type_label, validate
from pigeon.models import Contact
from pigeon.store.contact_drafts import ContactDraft, ContactDrafts
from pigeon.tui.app import PigeonApp, make_app
from pigeon.tui.messages import EditContact
from pigeon.tui.screens.contacts.book import NARROW_WIDTH, ContactBook
from pigeon.tui.screens.contacts.editor import ContactEditor, EntryRow
from pigeon.tui.screens.dialogs import CreateInboxDialog, CreateWebhookDialog, SecretScreen
from pigeon.tui.screens.mail import MainScreen
from pigeon.tui.screens.modals import ConfirmScreen
from pigeon.tui.widgets.inbox_list import InboxList
from pigeon.tui.widgets.reader import Reader
from tests.server.conftest import Service, first_thread
from tests.tui.conftest import BASE, SIZE, Notes, frozen_clock, loaded, on_screen, pigeon_for, screen_text, settle
from tests.tui.scenes import editor_ready

ADA = Contact.model_validate(
    {
        "id": "3c9b6c1e-2f4d-4e8a-9a7b-0d1c2b3a4f5e",
        "first_name": "Ada",
        "last_name": "Lovelace",
        "emails": [{"id": "e1", "type": "EMAIL_TYPE_WORK", "email": "ada@engine.example"}],
        "phones": [{"id": "p1", "type": "PHONE_TYPE_WORK", "phone": "+44 1"}],
        "metadata": {"met": 1843},
    }
)


# --- the form, without widgets -----------------------------------------------------------------------------------


def test_only_what_changed_is_sent_and_arrays_go_whole() -> None:
    original = ContactForm.of(ADA)
    assert changes(original, ContactForm.of(ADA)) == {}
    edited = ContactForm.from_json(original.to_json())
    edited.first_name = "Augusta Ada"
    edited.phones = [{"type": "PHONE_TYPE_PERSONAL", "phone": "+44 1"}]
    assert changes(original, edited) == {
        "first_name": "Augusta Ada",
        "phones": [{"type": "PHONE_TYPE_PERSONAL", "phone": "+44 1"}],
    }
    edited.metadata_text = '{"met": 1843, "vip": true}'
    assert changes(original, edited)["metadata"] == {"met": 1843, "vip": True}


@pytest.mark.parametrize(("text", "message"), [("{nope", "not valid JSON"), ("[1, 2]", "JSON object")])
def test_bad_metadata_is_pointed_out_at_the_field(text: str, message: str) -> None:
    edited = ContactForm.of(ADA)
    edited.metadata_text = text
    with pytest.raises(FormInvalid) as caught:
        changes(ContactForm.of(ADA), edited)
    assert caught.value.errors[0].field == "metadata"
    assert message in caught.value.errors[0].message


def test_invalid_entries_are_named_as_the_service_names_them() -> None:
    with pytest.raises(FormInvalid) as caught:
        validate(
            {
                "emails": [
                    {"type": "EMAIL_TYPE_WORK", "email": "ok@example.com"},
                    {"type": "EMAIL_TYPE_WORK", "email": "nope"},
                ]
            }
        )
    assert [e.field for e in caught.value.errors] == ["emails.1.email"]


def test_drafts_are_private_files_that_survive_and_go_when_discarded(isolated_environment: Path) -> None:
    drafts = ContactDrafts()
    drafts.save(ADA.id or "", {"first_name": "Typed"}, reason="ServerError")
    path = drafts.folder / f"{ADA.id}.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = ContactDrafts().load(ADA.id or "")
    assert again is not None
    assert again.fields == {"first_name": "Typed"}
    assert again.reason == "ServerError"
    assert ContactDrafts().ids() == [ADA.id]
    assert drafts.discard(ADA.id or "") is True
    assert drafts.load(ADA.id or "") is None
    with pytest.raises(ValueError, match="bad draft id"):
        drafts.save("../escape", {})


# --- with the app -------------------------------------------------------------------------------------------------


def sender_contact(service: Service) -> Contact:
    thread = first_thread(service, service.alice)
    messages = service.db.list_messages(service.alice.id, thread, message_ids=None, page_size=100, page_token=None)[0]
    return next(
        m.sender.contact for m in messages if m.sender and m.sender.contact and m.sender.contact.first_name != "You"
    )


async def open_editor(pilot: Pilot[None], app: PigeonApp, contact: Contact) -> ContactEditor:
    app.post_message(EditContact(contact))
    await settle(pilot, app, lambda: editor_ready(app))
    return on_screen(app, ContactEditor)


async def opened_book(pilot: Pilot[None], app: PigeonApp, at_least: int) -> ContactBook:
    """The mail loaded, then the contact book (``b``) showing ``at_least`` contacts."""
    await loaded(pilot, app)
    await pilot.press("b")
    await settle(pilot, app, lambda: isinstance(app.screen, ContactBook))
    book = on_screen(app, ContactBook)
    await settle(pilot, app, lambda: len(book.shown) >= at_least)
    return book


async def test_the_book_learns_contacts_from_mail_searches_and_sorts(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        book = await opened_book(pilot, app, 10)
        everyone = len(book.shown)
        someone = book.shown[3]
        email = someone.emails[0].email or ""
        await pilot.press(*email[:12])  # typed at once: the book searches as you type, no / first
        await settle(pilot, app)
        assert someone in book.shown
        assert len(book.shown) < everyone
        assert all(email[:12].lower() in " ".join(e.email or "" for e in c.emails).lower() for c in book.shown)
        await pilot.press("tab", "o")  # from the search to the list, where o sorts
        assert book.sort == 1
        details = str(book.query_one("#book-details", Static).visual)
        assert book.shown[book.query_one(DataTable).cursor_row].name in details


async def test_the_book_says_its_count_and_the_entry_types_in_proper_words(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        book = await opened_book(pilot, app, 10)
        email = book.shown[3].emails[0].email or ""
        await pilot.press(*email)
        await settle(pilot, app, lambda: len(book.shown) == 1)
        assert "1 contact · sorted by" in screen_text(app)
        assert type_label("SOCIAL_PROFILE_TYPE_LINKEDIN") == "LinkedIn"  # (as its owners spell it)
        assert type_label("EMAIL_TYPE_WORK") == "Work"


@pytest.mark.parametrize(
    ("size", "columns"),
    [((80, 24), ["Name", "Email", "Contacted"]), (SIZE, ["Name", "Company", "Email", "Last contacted"])],
)
async def test_the_book_shows_its_columns_whole_and_never_breaks_an_address(
    service: Service, size: tuple[int, int], columns: list[str]
) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=size) as pilot:
        book = await opened_book(pilot, app, 10)
        longest = max(range(len(book.shown)), key=lambda n: len(book.shown[n].emails[0].email or ""))
        book.query_one(DataTable).move_cursor(row=longest)  # the details of the longest address
        await settle(pilot, app)
        lines = [line for line in screen_text(app).splitlines() if line.strip()]
        header = next(line for line in lines if line.lstrip().startswith("Name")).partition("╭")[0]
        assert header.split() == " ".join(columns).split()  # each title whole, and only these
        for contact in [*book.shown[:5], book.shown[longest]]:
            email = contact.emails[0].email or ""
            assert any(email in line for line in lines), email  # on one line, in the list and the details
        name_at = [n for n, line in enumerate(lines) if (book.shown[longest].name or "") in line]
        if size[0] < NARROW_WIDTH:  # the details under the list: the name in the list's row, then in their box
            first, second = name_at
            assert second > first
            assert "╭" in lines[second - 1]


async def test_in_the_book_arrows_move_from_the_search_and_enter_edits(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        book = await opened_book(pilot, app, 3)
        await pilot.press("down", "down")
        assert book.query_one(DataTable).cursor_row == 2
        wanted = book.shown[2]
        await pilot.press("enter")
        await settle(pilot, app, lambda: editor_ready(app))
        assert on_screen(app, ContactEditor).contact.id == wanted.id


async def test_keys_typed_while_the_editor_opens_reach_its_first_field(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        book = await opened_book(pilot, app, 3)
        await pilot.press("down")
        wanted = book.shown[1]
        asked, gate = asyncio.Event(), asyncio.Event()
        draft_of = app.core.contact_draft

        async def held(contact_id: str | None) -> ContactDraft | None:  # the editor is on its way meanwhile
            asked.set()
            await gate.wait()
            return await draft_of(contact_id)

        monkeypatch.setattr(app.core, "contact_draft", held)
        app.post_message(events.Key("enter", "\r"))
        await asyncio.wait_for(asked.wait(), 10)  # (not the pilot's pause: it waits for the App, which waits here)
        for key, character in (("space", " "), ("J", "J"), ("full_stop", ".")):
            app.post_message(events.Key(key, character))
        gate.set()
        await settle(pilot, app, lambda: editor_ready(app))
        editor = on_screen(app, ContactEditor)
        assert editor.contact.id == wanted.id
        assert editor.query_one("#first_name", Input).value == f"{wanted.first_name or ''} J."  # added, not replacing
        assert book.query_one("#book-search", Input).value == ""


async def test_editing_every_kind_of_field_patches_and_shows_everywhere(service: Service) -> None:
    contact = sender_contact(service)
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await pilot.press("enter")
        reader = app.screen.query_one(Reader)
        await settle(pilot, app, lambda: app.focused is reader and bool(reader.messages))
        editor = await open_editor(pilot, app, contact)
        editor.query_one("#first_name", Input).value = "Renamed"
        editor.query_one("#last_name", Input).value = "Person"
        editor.query_one("#add-emails", Button).press()
        await settle(pilot, app)
        rows = list(editor.query_one("#emails").query_children(EntryRow))
        rows[-1].query_one(Input).value = "new@person.example"
        rows[-1].query_one(Select).value = "EMAIL_TYPE_PERSONAL"
        social = list(editor.query_one("#social_profiles").query_children(EntryRow))
        for row in social:
            row.remove()
        editor.query_one("#add-social_profiles", Button).press()
        await settle(pilot, app)
        list(editor.query_one("#social_profiles").query_children(EntryRow))[-1].query_one(Input).value = "renamed-p"
        editor.query_one("#metadata", TextArea).text = '{"vip": true}'
        await pilot.press("ctrl+s")
        await settle(pilot, app, lambda: not isinstance(app.screen, ContactEditor))
        saved = service.db.get_contact(service.alice.id, contact.id or "")
        assert saved is not None
        assert (saved.first_name, saved.last_name, saved.display_name) == ("Renamed", "Person", "Renamed Person")
        assert [(e.type, e.email) for e in saved.emails][-1] == ("EMAIL_TYPE_PERSONAL", "new@person.example")
        assert [(s.type, s.username) for s in saved.social_profiles] == [("SOCIAL_PROFILE_TYPE_LINKEDIN", "renamed-p")]
        assert saved.metadata == {"vip": True}
        assert app.core.contacts[contact.id or ""].first_name == "Renamed"
        if any(m.sender and m.sender.contact_id == contact.id for m in reader.messages):
            assert "Renamed Person" in reader.text


async def test_invalid_input_is_pointed_out_before_sending(service: Service) -> None:
    contact = sender_contact(service)
    sent: list[httpx.Request] = []

    async def spy(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return await httpx.ASGITransport(app=service.app).handle_async_request(request)

    client = PigeonClient(BASE, service.alice.token, http_client=httpx.AsyncClient(transport=httpx.MockTransport(spy)))
    app = make_app(load_config(base_url=BASE), client=client, clock=frozen_clock)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        editor = await open_editor(pilot, app, contact)
        editor.query_one("#emails").query_children(EntryRow).first().query_one(Input).value = "not-an-address"
        editor.query_one("#metadata", TextArea).text = "[1]"
        before = len(sent)
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        assert isinstance(app.screen, ContactEditor)
        assert len(sent) == before
        assert "JSON object" in str(editor.query_one("#metadata-error", Label).visual)
        editor.query_one("#metadata", TextArea).text = "{}"
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        row_error = editor.query_one("#emails").query_children(EntryRow).first().query_one(".field-error", Label)
        assert "'not-an-address' is not a valid email" in str(row_error.visual)
        assert len(sent) == before
        editor.query_one("#emails").query_children(EntryRow).first().query_one(Input).value = "fixed@example.com"
        await settle(pilot, app, lambda: not str(row_error.visual))


async def test_no_way_out_of_the_editor_drops_an_edit_without_asking(service: Service) -> None:
    from textual.widgets import Button

    from pigeon.tui.screens.modals import ConfirmScreen

    contact = sender_contact(service)
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        editor = await open_editor(pilot, app, contact)
        editor.query_one("#first_name", Input).value = "Typed"
        cancel = editor.query_one("#cancel", Button)
        cancel.focus()
        await settle(pilot, app, lambda: app.focused is cancel)  # (a q typed before would go into the field)
        for key in ("q", "ctrl+q"):  # q from a button, and the app's own quit
            await pilot.press(key)
            await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
            await pilot.press("n")
            await settle(pilot, app, lambda: app.screen is editor)
            assert app.is_running
            assert editor.query_one("#first_name", Input).value == "Typed"
        await pilot.press("ctrl+c")  # Textual's "press ctrl+q to quit" hint: nothing is dropped
        await settle(pilot, app)
        assert app.screen is editor
        await pilot.press("ctrl+q")
        await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await settle(pilot, app, lambda: not app.is_running)


def patch_failing(service: Service, response: httpx.Response) -> PigeonClient:
    async def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "PATCH":
            return response
        return await httpx.ASGITransport(app=service.app).handle_async_request(request)

    return PigeonClient(
        BASE, service.alice.token, http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)), max_retries=0
    )


async def test_server_validation_errors_show_at_their_field(service: Service) -> None:
    contact = sender_contact(service)
    problem = httpx.Response(
        422,
        headers={"content-type": "application/problem+json"},
        json={
            "title": "Unprocessable",
            "status": 422,
            "errors": [{"field": "emails.0.email", "message": "domain blocked"}],
        },
    )
    app = make_app(load_config(base_url=BASE), client=patch_failing(service, problem), clock=frozen_clock)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        editor = await open_editor(pilot, app, contact)
        editor.query_one("#first_name", Input).value = "Changed"
        await pilot.press("ctrl+s")
        row = editor.query_one("#emails").query_children(EntryRow).first()
        await settle(pilot, app, lambda: "domain blocked" in str(row.query_one(".field-error", Label).visual))
        assert isinstance(app.screen, ContactEditor)
        assert editor.query_one("#first_name", Input).value == "Changed"


async def test_a_failed_save_keeps_the_edit_across_a_restart(service: Service, isolated_environment: Path) -> None:
    contact = sender_contact(service)
    down = httpx.Response(503, json={"title": "Service Unavailable", "status": 503})
    app = make_app(load_config(base_url=BASE), client=patch_failing(service, down), clock=frozen_clock)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        editor = await open_editor(pilot, app, contact)
        editor.query_one("#first_name", Input).value = "Typed Before The Crash"
        await pilot.press("ctrl+s")
        await settle(pilot, app, lambda: ContactDrafts().load(contact.id or "") is not None)
        assert isinstance(app.screen, ContactEditor)
        assert editor.query_one("#first_name", Input).value == "Typed Before The Crash"
        assert "kept" in str(editor.query_one("#editor-status", Static).visual)

    restarted = pigeon_for(service)  # the service is back, the app was closed and opened again
    async with restarted.run_test(size=SIZE) as pilot:
        await loaded(pilot, restarted)
        editor = await open_editor(pilot, restarted, contact)
        assert editor.query_one("#first_name", Input).value == "Typed Before The Crash"
        assert editor.query_one("#restored", Static)
        await pilot.press("ctrl+s")
        await settle(pilot, restarted, lambda: not isinstance(restarted.screen, ContactEditor))
    saved = service.db.get_contact(service.alice.id, contact.id or "")
    assert saved is not None
    assert saved.first_name == "Typed Before The Crash"
    assert ContactDrafts().load(contact.id or "") is None


async def test_leaving_with_unsaved_changes_asks_first(service: Service) -> None:
    contact = sender_contact(service)
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        editor = await open_editor(pilot, app, contact)
        await pilot.press("escape")
        await settle(pilot, app)
        assert isinstance(app.screen, MainScreen)  # nothing changed: leaves at once
        editor = await open_editor(pilot, app, contact)
        editor.query_one("#last_name", Input).value = "Unsaved"
        await pilot.press("escape")
        await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")
        await settle(pilot, app)
        assert on_screen(app, ContactEditor) is editor
        assert editor.query_one("#last_name", Input).value == "Unsaved"
        await pilot.press("escape")
        await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await settle(pilot, app, lambda: isinstance(app.screen, MainScreen))
    kept = service.db.get_contact(service.alice.id, contact.id or "")
    assert kept is not None
    assert kept.last_name != "Unsaved"


async def test_create_inbox_adds_it_to_the_inboxes_pane(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        app.action_create_inbox()
        await settle(pilot, app, lambda: isinstance(app.screen, CreateInboxDialog))
        app.screen.query_one("#email", Input).value = "not an address"
        await pilot.press("ctrl+s")
        await settle(pilot, app, lambda: "valid email" in str(app.screen.query_one("#email-error", Label).visual))
        app.screen.query_one("#email", Input).value = "sales@pigeon.example"
        app.screen.query_one("#metadata", TextArea).text = '{"team": "sales"}'
        await pilot.press("ctrl+s")
        await settle(pilot, app, lambda: isinstance(app.screen, MainScreen))
        pane = app.screen.query_one(InboxList)
        prompts = [str(pane.get_option_at_index(i).prompt) for i in range(pane.option_count)]
        assert any(p.startswith("sales@pigeon") for p in prompts)
    assert any(i.email == "sales@pigeon.example" for i in service.db.list_inboxes(service.alice.id))


async def test_a_dialog_with_something_typed_asks_before_it_closes(service: Service) -> None:
    from pigeon.tui.screens.modals import ConfirmScreen

    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        app.action_create_inbox()
        await settle(pilot, app, lambda: isinstance(app.screen, CreateInboxDialog))
        dialog = app.screen
        dialog.query_one("#email", Input).value = "typed@pigeon.example"
        await pilot.press("escape")
        await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")
        await settle(pilot, app, lambda: app.screen is dialog)
        assert dialog.query_one("#email", Input).value == "typed@pigeon.example"
        await pilot.press("escape")
        await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await settle(pilot, app, lambda: isinstance(app.screen, MainScreen))
        app.action_create_inbox()  # nothing typed: escape closes at once
        await settle(pilot, app, lambda: isinstance(app.screen, CreateInboxDialog))
        await pilot.press("escape")
        await settle(pilot, app, lambda: isinstance(app.screen, MainScreen))


async def test_create_webhook_shows_the_secret_once(service: Service) -> None:
    app = pigeon_for(service)
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        await loaded(pilot, app)
        app.action_create_webhook()
        await settle(pilot, app, lambda: isinstance(app.screen, CreateWebhookDialog))
        dialog = app.screen
        dialog.query_one("#url", Input).value = "https://hooks.example.com/pigeon"
        dialog.query_one("#events", SelectionList).deselect("message.updated")
        await pilot.press("ctrl+s")
        await settle(pilot, app, lambda: isinstance(app.screen, SecretScreen))
        secret_screen = on_screen(app, SecretScreen)
        secret = secret_screen.webhook.secret or ""
        assert secret.startswith("whsec_")
        shown = str(secret_screen.query_one("#secret", Static).visual)
        assert shown == secret
        assert secret_screen.webhook.events == [
            "message.created",
            "message.sent",
            "message.delivered",
            "message.failed",
        ]
        await pilot.press("c")
        assert "copied" in notes.text
        await pilot.press("escape")
        await settle(pilot, app, lambda: isinstance(app.screen, MainScreen))
        assert secret not in screen_text(app)  # shown once: nothing on screen keeps it
        assert not any(isinstance(s, SecretScreen) for s in app.screen_stack)


async def test_dialog_metadata_must_be_a_json_object(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        app.action_create_webhook()
        await settle(pilot, app, lambda: isinstance(app.screen, CreateWebhookDialog))
        dialog = app.screen
        dialog.query_one("#url", Input).value = "https://hooks.example.com/pigeon"
        dialog.query_one("#metadata", TextArea).text = "[1, 2]"
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        assert isinstance(app.screen, CreateWebhookDialog)
        assert "JSON object" in str(dialog.query_one("#metadata-error", Label).visual)
    assert not service.db.rows("SELECT 1 FROM webhooks")  # the service is untouched: no subscription was created


async def test_a_draft_file_of_the_wrong_shape_keeps_what_fits_and_the_editor_opens(
    service: Service, isolated_environment: Path
) -> None:
    """A draft on disk is read as hostile: a field of the wrong type is the contact's own value instead."""
    contact = sender_contact(service)
    folder = ContactDrafts().folder
    folder.mkdir(parents=True, exist_ok=True)
    fields = {
        "first_name": 5,
        "last_name": "Kept From The Draft",
        "emails": "not a list",
        "phones": [{"type": 3, "phone": ["x"]}, {"type": "PHONE_TYPE_MOBILE", "phone": "+1 555 0100"}],
        "social_profiles": [7],
        "metadata_text": {"not": "text"},
    }
    draft = {"fields": fields, "saved_at": "2026-11-20T09:00:00+00:00", "reason": ["not text"]}
    (folder / f"{contact.id}.json").write_text(json.dumps(draft))
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        editor = await open_editor(pilot, app, contact)
        assert editor.query_one("#restored", Static)
        assert editor.query_one("#first_name", Input).value == (contact.first_name or "")
        assert editor.query_one("#last_name", Input).value == "Kept From The Draft"
        emails = [row.query_one(Input).value for row in editor.query_one("#emails").query_children(EntryRow)]
        assert emails[: len(contact.emails)] == [e.email for e in contact.emails]
        phones = [row.query_one(Input).value for row in editor.query_one("#phones").query_children(EntryRow)]
        assert phones == ["+1 555 0100"]  # the draft's list, its entry that is not text by text left out


async def test_ctrl_d_in_a_field_discards_the_restored_draft_after_asking(
    service: Service, isolated_environment: Path
) -> None:
    contact = sender_contact(service)
    ContactDrafts().save(contact.id or "", {"last_name": "Typed Before"}, reason="ServerError")
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        editor = await open_editor(pilot, app, contact)
        assert isinstance(app.focused, Input)  # (a field has the focus, as it does when the editor opens)
        assert editor.query_one("#last_name", Input).value == "Typed Before"
        await settle(pilot, app, lambda: "Discard draft" in screen_text(app))  # the key bar offers it
        await pilot.press("ctrl+d")
        await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await settle(pilot, app, lambda: not isinstance(app.screen, (ContactEditor, ConfirmScreen)))
        assert ContactDrafts().load(contact.id or "") is None
        editor = await open_editor(pilot, app, contact)  # no draft now: ctrl+d is the field's, delete right
        field = editor.query_one("#last_name", Input)
        field.focus()
        await pilot.pause()
        field.cursor_position = 0
        before = field.value
        assert before
        assert "Discard draft" not in screen_text(app)  # nothing to discard: not in the key bar
        await pilot.press("ctrl+d")
        assert field.value == before[1:]
        assert isinstance(app.screen, ContactEditor)
