"""Addresses in the app: the palette finds a contact and opens its editor; the address field completes from the book."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from email.utils import getaddresses

import pytest
from textual.app import App, ComposeResult
from textual.command import CommandPalette
from textual.containers import Horizontal, Vertical
from textual.pilot import Pilot
from textual.widgets import Button, Label

from pigeon.core.address_book import AddressEntry
from pigeon.tui.screens.contacts.editor import ContactEditor
from pigeon.tui.screens.mail import MainScreen
from pigeon.tui.widgets.address_input import AddressInput, Candidates, Lookup, LookupAtOnce, last_address_start
from tests.server.conftest import Service
from tests.tui.conftest import SIZE, loaded, on_screen, palette_hits, pigeon_for, settle
from tests.tui.scenes import editor_ready
from tests.tui.scenes import settle as settle_scene
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
        await settle(pilot, app, lambda: editor_ready(app))
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


# --- the address field, alone in a small app ----------------------------------------------------------------------

BOOK = [
    AddressEntry("Ada Lovelace", "ada@engine.example", "Analytical Engines"),
    AddressEntry("Adam Smith", "adam@wealth.example"),
    AddressEntry('Mallory <boss@corp.example>, "x"', "mallory@evil.example"),
    AddressEntry("[b]Eve[/b] $accent", "eve@evil.example", "[link=https://evil.example]x[/link]"),
]


class Form(App[None]):
    """To and Cc, as the review screen has them, and a button after: Tab's usual next stop."""

    def __init__(self, lookup: Lookup, lookup_at_once: LookupAtOnce | None = None) -> None:
        super().__init__()
        self.lookup = lookup
        self.lookup_at_once = lookup_at_once

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield Label("To: ")
            yield AddressInput("", lookup=self.lookup, lookup_at_once=self.lookup_at_once, id="to")
        yield AddressInput("", lookup=self.lookup, id="cc")
        yield Button("Send")


class Dialog(App[None]):
    """The field in a box centred on the screen, as the review has it (``at_bottom``: at the screen's foot)."""

    CSS = """
    Screen { align: center middle; }
    #box { width: 60; height: auto; border: round $accent; }
    Screen.at-bottom { align: center bottom; }
    """

    def __init__(self, lookup: Lookup, *, at_bottom: bool = False) -> None:
        super().__init__()
        self.lookup = lookup
        self.at_bottom = at_bottom

    def compose(self) -> ComposeResult:
        with Vertical(id="box"):
            yield Label("Review before sending")
            yield AddressInput("", lookup=self.lookup, id="to")

    def on_mount(self) -> None:
        self.screen.set_class(self.at_bottom, "at-bottom")


class Book:
    """A lookup over ``BOOK`` by the start of a name or email; it can be held to answer later."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.gate = asyncio.Event()
        self.gate.set()

    async def __call__(self, text: str) -> list[AddressEntry]:
        self.asked.append(text)
        await self.gate.wait()
        return self.at_once(text)

    def at_once(self, text: str) -> list[AddressEntry]:
        wanted = text.casefold()
        return [e for e in BOOK if e.name.casefold().startswith(wanted) or e.email.startswith(wanted)]


def offered(app: App[None]) -> list[str]:
    """The addresses listed under the focused field."""
    field = app.focused
    assert isinstance(field, AddressInput)
    candidates = field.candidates
    if not field.open or not candidates.region.overlaps(app.screen.region):
        return []
    return [label.split("  ")[0] for label in candidates.labels]


async def test_typing_offers_the_book_below_the_field_and_tab_takes_the_highlighted_one() -> None:
    app = Form(Book())
    async with app.run_test(size=(80, 24)) as pilot:
        to = app.query_one("#to", AddressInput)
        to.focus()
        await pilot.press(*"ad")
        await settle_until(
            pilot, lambda: offered(app) == ["Ada Lovelace <ada@engine.example>", "Adam Smith <adam@wealth.example>"]
        )
        candidates = to.candidates
        assert candidates in app.screen.query(Candidates)
        assert candidates.region.y == to.region.bottom  # under the field, over what is below it
        await pilot.press("down", "tab")
        assert to.value == "Adam Smith <adam@wealth.example>, "
        assert app.focused is to  # Tab took the address; it did not move on
        assert offered(app) == []
        await pilot.press(*"ada")
        await settle_until(pilot, lambda: offered(app)[:1] == ["Ada Lovelace <ada@engine.example>"])
        await pilot.press("right")  # Right at the end of the field takes it too
        assert to.value == "Adam Smith <adam@wealth.example>, Ada Lovelace <ada@engine.example>, "
        assert [a for _, a in getaddresses([to.value]) if a] == ["adam@wealth.example", "ada@engine.example"]
        await pilot.press("tab")  # nothing offered: Tab moves on as ever
        assert app.focused is app.query_one("#cc")


async def test_ignored_the_offer_changes_nothing_typed() -> None:
    app = Form(Book())
    async with app.run_test(size=(80, 24)) as pilot:
        to = app.query_one("#to", AddressInput)
        to.focus()
        await pilot.press(*"ad")
        await settle_until(pilot, lambda: len(offered(app)) == 2)
        await pilot.press(*"x@y.example")  # typed on: nothing matches, the list goes
        await settle_until(pilot, lambda: offered(app) == [])
        assert to.value == "adx@y.example"
        await pilot.press("backspace", "ctrl+u")
        await pilot.press(*"ad", "escape")  # Escape closes the list; the text stays
        await settle_until(pilot, lambda: to.typed == "ad")
        assert offered(app) == []
        assert to.value == "ad"
        await pilot.press("tab")
        assert app.focused is app.query_one("#cc")
        assert to.value == "ad"


async def test_keys_never_wait_for_the_book_and_a_late_answer_for_old_text_is_dropped() -> None:
    book = Book()
    book.gate.clear()  # the book answers nothing until let go
    app = Form(book)
    async with app.run_test(size=(80, 24)) as pilot:
        to = app.query_one("#to", AddressInput)
        to.focus()
        await pilot.press(*"adam")
        assert to.value == "adam"  # every key took effect while the book had not answered
        assert book.asked[-1] == "adam"
        book.gate.set()
        await settle_until(pilot, lambda: offered(app) == ["Adam Smith <adam@wealth.example>"])


async def test_a_hostile_name_is_offered_literally_and_taken_as_one_address() -> None:
    app = Form(Book())
    async with app.run_test(size=(80, 24)) as pilot:
        to = app.query_one("#to", AddressInput)
        to.focus()
        await pilot.press(*"mallory@")
        await settle_until(pilot, lambda: len(offered(app)) == 1)
        assert offered(app) == ['"Mallory <boss@corp.example>, \\"x\\"" <mallory@evil.example>']
        await pilot.press("ctrl+u", *"eve@")  # markup in a name or note is shown as typed, never applied
        await settle_until(pilot, lambda: len(offered(app)) == 1)
        [prompt] = to.candidates.labels
        assert str(prompt) == '"[b]Eve[/b] $accent" <eve@evil.example>  [link=https://evil.example]x[/link]'
        await pilot.press("ctrl+u", *"mallory@")
        await settle_until(pilot, lambda: len(offered(app)) == 1)
        await pilot.press("tab", *"ada")
        await settle_until(pilot, lambda: offered(app)[:1] == ["Ada Lovelace <ada@engine.example>"])
        assert [a for _, a in getaddresses([to.value]) if a] == ["mallory@evil.example", "ada"]


async def test_a_book_that_can_answer_at_once_is_not_waited_for() -> None:
    book = Book()
    book.gate.clear()  # (asked the slow way, it would never answer)
    app = Form(book, book.at_once)
    async with app.run_test(size=(80, 24)) as pilot:
        app.query_one("#to", AddressInput).focus()
        await pilot.press("a")
        assert offered(app) == ["Ada Lovelace <ada@engine.example>", "Adam Smith <adam@wealth.example>"]
        await pilot.press("d", "a", "m")
        assert offered(app) == ["Adam Smith <adam@wealth.example>"]
        assert book.asked == []


async def test_the_list_narrowed_by_a_letter_keeps_its_box_and_highlights_the_first() -> None:
    book = Book()
    app = Form(book, book.at_once)
    async with app.run_test(size=(80, 24)) as pilot:
        to = app.query_one("#to", AddressInput)
        to.focus()
        await pilot.press("a")
        await settle_until(pilot, lambda: len(offered(app)) == 2)
        box = to.candidates.region
        await pilot.press("down", "d", "a", "m")
        await settle_until(pilot, lambda: offered(app) == ["Adam Smith <adam@wealth.example>"])
        assert to.candidates.region == box  # (no layout while it narrows: the letter's frame draws it)
        await pilot.press("tab")
        assert to.value == "Adam Smith <adam@wealth.example>, "


async def test_the_box_around_the_field_stays_where_it_is_when_the_list_opens() -> None:
    app = Dialog(Book())
    async with app.run_test(size=(80, 24)) as pilot:
        to = app.query_one("#to", AddressInput)
        to.focus()
        await pilot.pause()
        box = app.query_one("#box").region
        await pilot.press("a")
        await settle_until(pilot, lambda: len(offered(app)) == 2)
        assert app.query_one("#box").region == box
        assert to.candidates.region.y == to.region.bottom


async def test_with_no_room_below_the_field_the_list_opens_above_it() -> None:
    app = Dialog(Book(), at_bottom=True)
    async with app.run_test(size=(80, 24)) as pilot:
        to = app.query_one("#to", AddressInput)
        to.focus()
        await pilot.press("a")
        await settle_until(pilot, lambda: len(offered(app)) == 2)
        assert to.region.bottom + 2 > 24  # (the field is at the foot of the screen)
        assert to.candidates.region.bottom == to.region.y
        assert to.candidates.region.y >= 0


@pytest.mark.parametrize(
    ("text", "typed"),
    [
        ("ada", "ada"),
        ("a@b.example, ad", " ad"),
        ('a@b.example, "Smith, Jo', ' "Smith, Jo'),  # a comma in a quoted name is the name's
        ('"Q \\", x" <q@x.example>, gr', " gr"),  # an escaped quote does not end the name
        ("<odd,one@x.example>, z", " z"),
    ],
)
def test_the_address_being_typed_starts_after_the_last_comma_between_addresses(text: str, typed: str) -> None:
    assert text[last_address_start(text) :] == typed


async def settle_until(pilot: Pilot[None], until: Callable[[], bool]) -> None:
    try:
        await settle_scene(pilot, until, within=10.0)
    except RuntimeError as exc:
        raise AssertionError("the field did not reach the expected state") from exc
