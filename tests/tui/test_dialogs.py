"""The create dialogs as a newcomer meets them: a refusal says why, Esc gets out, the palette stays on the mail."""

from __future__ import annotations

import json

import httpx
from textual.pilot import Pilot
from textual.widgets import Button, Input, Label, Static

from pigeon.api import PigeonClient
from pigeon.config import load_config
from pigeon.tui.app import PigeonApp, make_app
from pigeon.tui.screens.dialogs import CreateInboxDialog
from pigeon.tui.screens.mail import MainScreen
from pigeon.tui.screens.modals import ConfirmScreen
from tests.server.conftest import Service
from tests.tui.conftest import BASE, SIZE, frozen_clock, loaded, pigeon_for, settle
from tests.tui.test_contacts import open_editor, sender_contact


class RefusingInboxes(httpx.AsyncBaseTransport):
    """The reference service, except that creating an inbox is answered with ``answer``."""

    def __init__(self, service: Service, answer: httpx.Response) -> None:
        self.service = httpx.ASGITransport(app=service.app)
        self.answer = answer

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and request.url.path.rstrip("/") == "/v1/inboxes":
            return self.answer
        return await self.service.handle_async_request(request)


def refusing_app(service: Service, answer: httpx.Response) -> PigeonApp:
    def factory(base_url: str, token: str) -> PigeonClient:
        http = httpx.AsyncClient(transport=RefusingInboxes(service, answer))
        return PigeonClient(base_url, token, http_client=http, max_retries=0)

    config = load_config(base_url=BASE)
    return make_app(config, token=service.alice.token, client_factory=factory, clock=frozen_clock)


def status_of(app: PigeonApp) -> str:
    return str(app.screen.query_one("#dialog-status", Static).visual)


def field_error(app: PigeonApp, name: str) -> str:
    return str(app.screen.query_one(f"#{name}-error", Label).visual)


async def try_create(app: PigeonApp, pilot: Pilot[None], email: str) -> None:
    app.action_create_inbox()
    await settle(pilot, app, lambda: isinstance(app.screen, CreateInboxDialog))
    app.screen.query_one("#email", Input).value = email
    await pilot.press("ctrl+s")
    await settle(pilot, app, lambda: status_of(app).startswith("Not created:"))


async def test_a_bad_address_says_why_it_was_not_created(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await try_create(app, pilot, "not an address")
        assert "valid email" in field_error(app, "email")
        status = status_of(app)
        assert status.startswith("Not created: email: ")
        assert "valid email" in status
    assert not any(i.email == "not an address" for i in service.db.list_inboxes(service.alice.id))


async def test_an_address_in_use_says_so(service: Service) -> None:
    taken = service.db.list_inboxes(service.alice.id)[0].email
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await try_create(app, pilot, taken)
        assert field_error(app, "email") == "already in use"
        assert status_of(app) == "Not created: email: already in use"
        assert isinstance(app.screen, CreateInboxDialog)
        assert app.screen.query_one("#email", Input).value == taken  # nothing typed is lost


async def test_a_refusal_of_the_service_is_given_in_its_words_cleaned(service: Service) -> None:
    problem = {
        "title": "Unprocessable Content",
        "status": 422,
        "detail": "1 invalid field; see errors",
        "errors": [{"field": "display_name", "message": "not \x1b]2;pwned\x07allowed here"}],
    }
    answer = httpx.Response(422, content=json.dumps(problem), headers={"content-type": "application/problem+json"})
    app = refusing_app(service, answer)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await try_create(app, pilot, "sales@pigeon.example")
        status = status_of(app)
        assert status.startswith("Not created: display_name: not ")
        assert "allowed here" in status
        assert "\x1b" not in status
        assert "\x07" not in status
        assert "allowed here" in field_error(app, "display_name")


async def test_a_refusal_without_field_errors_gives_the_services_detail(service: Service) -> None:
    problem = {"title": "Conflict", "status": 409, "detail": "An inbox with this address exists already"}
    answer = httpx.Response(409, content=json.dumps(problem), headers={"content-type": "application/problem+json"})
    app = refusing_app(service, answer)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await try_create(app, pilot, "sales@pigeon.example")
        assert status_of(app) == "Not created: An inbox with this address exists already"
        assert isinstance(app.screen, CreateInboxDialog)
        assert not isinstance(app.screen, MainScreen)


def buttons_of(app: PigeonApp) -> list[str]:
    return [str(button.label) for button in app.screen.query(Button)]


async def test_escape_twice_leaves_a_form_and_the_question_says_so(service: Service) -> None:
    before = len(service.db.list_inboxes(service.alice.id))
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        app.action_create_inbox()
        await settle(pilot, app, lambda: isinstance(app.screen, CreateInboxDialog))
        dialog = app.screen
        dialog.query_one("#email", Input).value = "typed@pigeon.example"
        await pilot.press("escape")
        await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
        assert buttons_of(app) == ["Discard (y, Esc)", "Keep (n)"]
        await pilot.press("n")  # Keep: back to the form, nothing lost
        await settle(pilot, app, lambda: app.screen is dialog)
        assert dialog.query_one("#email", Input).value == "typed@pigeon.example"
        await pilot.press("escape", "escape")
        await settle(pilot, app, lambda: isinstance(app.screen, MainScreen))
    assert len(service.db.list_inboxes(service.alice.id)) == before


async def test_escape_twice_leaves_the_contact_editor_without_saving(service: Service) -> None:
    contact = sender_contact(service)
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        editor = await open_editor(pilot, app, contact)
        editor.query_one("#last_name", Input).value = "Unsaved"
        await pilot.press("escape")
        await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
        assert buttons_of(app) == ["Leave (y, Esc)", "Stay (n)"]
        await pilot.press("escape")
        await settle(pilot, app, lambda: isinstance(app.screen, MainScreen))
    kept = service.db.get_contact(service.alice.id, contact.id or "")
    assert kept is not None
    assert kept.last_name != "Unsaved"


async def test_escape_on_the_quit_question_stays(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        app.action_create_inbox()
        await settle(pilot, app, lambda: isinstance(app.screen, CreateInboxDialog))
        dialog = app.screen
        dialog.query_one("#email", Input).value = "typed@pigeon.example"
        await app.action_quit()
        await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
        assert buttons_of(app) == ["Quit (y)", "Stay (n, Esc)"]
        await pilot.press("escape")
        await settle(pilot, app, lambda: app.screen is dialog)
        assert app.is_running
        assert dialog.query_one("#email", Input).value == "typed@pigeon.example"


async def test_the_palette_does_not_open_over_a_dialog(service: Service) -> None:
    from textual.command import CommandPalette

    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        app.action_create_inbox()
        await settle(pilot, app, lambda: isinstance(app.screen, CreateInboxDialog))
        dialog = app.screen
        await pilot.press("ctrl+p")
        await settle(pilot, app)
        assert app.screen is dialog
        assert not isinstance(app.screen, CommandPalette)
        await pilot.press("escape")  # nothing typed: the dialog closes; on the mail the palette opens
        await settle(pilot, app, lambda: isinstance(app.screen, MainScreen))
        await pilot.press("ctrl+p")
        await settle(pilot, app, lambda: isinstance(app.screen, CommandPalette))


def within_screen(app: PigeonApp, selector: str) -> bool:
    """The widget is shown whole on the screen (not clipped below the dialog's edge)."""
    region = app.screen.query_one(selector).region
    dialog = app.screen.query_one(".dialog").region
    return bool(region.height) and app.screen.region.contains_region(region) and dialog.contains_region(region)


async def test_at_80x24_the_create_forms_buttons_and_status_stay_on_screen_and_enter_submits(
    service: Service,
) -> None:
    from pigeon.tui.screens.dialogs import CreateWebhookDialog

    app = pigeon_for(service)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, app)
        app.action_create_inbox()
        await settle(pilot, app, lambda: isinstance(app.screen, CreateInboxDialog))
        app.screen.query_one("#email", Input).value = "not an address"
        app.screen.query_one("#email", Input).focus()
        await pilot.press("enter")  # Enter in the Address field submits, as in a web form
        await settle(pilot, app, lambda: status_of(app).startswith("Not created:"))
        await pilot.pause()
        for selector in ("#submit", "#cancel", "#dialog-status"):
            assert within_screen(app, selector), selector

        app.screen.dismiss(None)
        await settle(pilot, app, lambda: isinstance(app.screen, MainScreen))
        app.action_create_webhook()
        await settle(pilot, app, lambda: isinstance(app.screen, CreateWebhookDialog))
        app.screen.query_one("#url", Input).value = "not a url"
        app.screen.query_one("#url", Input).focus()
        await pilot.press("enter")
        await settle(pilot, app, lambda: status_of(app).startswith("Not created:"))
        await pilot.pause()
        for selector in ("#submit", "#cancel", "#dialog-status"):
            assert within_screen(app, selector), selector
