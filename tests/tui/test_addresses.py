"""Addresses in the app: the palette finds a contact and opens its editor; the address field completes from the book."""

from __future__ import annotations

from textual.command import CommandPalette

from pigeon.tui.screens.contacts.editor import ContactEditor
from pigeon.tui.screens.mail import MainScreen
from tests.server.conftest import Service
from tests.tui.conftest import SIZE, loaded, on_screen, palette_hits, pigeon_for, settle
from tests.tui.test_contacts import sender_contact


async def test_the_palette_finds_a_contact_by_email_and_opens_the_editor(service: Service) -> None:
    wanted = sender_contact(service)
    email = wanted.emails[0].email or ""
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await pilot.press("ctrl+p")
        on_screen(app, CommandPalette)
        await pilot.press(*email[: email.index("@") + 1])  # the start of the email is enough
        hit = f"Contact {wanted.name} <{email}>"
        await settle(pilot, app, lambda: palette_hits(app)[:1] == [hit])
        await pilot.press("enter")
        await settle(pilot, app, lambda: isinstance(app.screen, ContactEditor))
        assert on_screen(app, ContactEditor).contact.id == wanted.id
        await pilot.press("escape")
        await settle(pilot, app, lambda: isinstance(app.screen, MainScreen))


async def test_the_palette_finds_a_contact_by_a_part_of_the_name(service: Service) -> None:
    wanted = sender_contact(service)
    last_name = wanted.last_name or ""
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await pilot.press("ctrl+p", *last_name.lower())
        await settle(pilot, app, lambda: any(h.startswith(f"Contact {wanted.name} <") for h in palette_hits(app)))
