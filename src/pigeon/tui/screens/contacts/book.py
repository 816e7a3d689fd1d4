"""The contact book: every contact Pigeon has seen in mail (the service cannot list contacts), searchable as you
type, sortable, each opened in the editor."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Input, Static

from pigeon.core.contacts import ENTRY_KINDS, KIND_TITLES, contact_haystack, type_label
from pigeon.core.mail import MailCore
from pigeon.models import Contact
from pigeon.sanitize import clean_line
from pigeon.tui.messages import ContactSaved, EditContact
from pigeon.tui.render import relative_time, safe_line
from pigeon.tui.screens.base import ReportsFailures
from pigeon.tui.widgets.key_bar import KeyBar
from pigeon.tui.widgets.text_input import TextInput

SORTS = ("name", "company", "last contacted")
NARROW_WIDTH = 140
"""Below this many columns the details go under the list, and the list leaves out the company (the details have it)."""
KIND_WIDTH = 11  # an entry's kind ("Work", "Mobile") and the space after it, before its value
WIDE_COLUMNS = ("Name", "Company", "Email", "Last contacted")
NARROW_COLUMNS = ("Name", "Email", "Contacted")


def contact_details(contact: Contact, now: datetime, width: int = 80) -> Content:
    """The contact's fields, an entry's value beside its kind where ``width`` has room for both, else under it (an
    address is never broken across lines where it could stand whole)."""
    lines: list[Content | str] = [safe_line(contact.name or "(no name)", style="bold")]
    role = " · ".join(clean_line(x) for x in (contact.title, contact.company) if x)
    if role:
        lines.append(Content(role))
    for kind, (key, _) in ENTRY_KINDS.items():
        entries = getattr(contact, kind)
        if entries:
            lines += ["", Content.styled(KIND_TITLES[kind], "bold $text-accent")]
            for entry in entries:
                kind_label = type_label(str(getattr(entry.type, "value", entry.type) or ""))
                value = safe_line(getattr(entry, key))
                if KIND_WIDTH + value.cell_length <= width:
                    lines.append(Content.assemble(Content.styled(f"{kind_label:<{KIND_WIDTH}}", "dim"), value))
                else:
                    indent = "  " if value.cell_length + 2 <= width else ""
                    lines += [Content.styled(kind_label, "dim"), Content.assemble(indent, value)]
    if contact.tags:
        lines += ["", Content.assemble(Content.styled("Tags: ", "dim"), safe_line(", ".join(contact.tags)))]
    if contact.last_contacted_at:
        lines.append(Content.styled(f"Last contacted {relative_time(contact.last_contacted_at, now)}", "dim"))
    return Content("\n").join(Content(x) if isinstance(x, str) else x for x in lines)


class ContactBook(ReportsFailures, Screen[None]):
    """Every contact Pigeon has seen in mail, searchable as you type."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back", id="book.close"),
        Binding("slash", "search", "Search", id="book.search"),
        Binding("e,enter", "edit", "Edit", id="book.edit"),
        Binding("o", "sort", "Sort", id="book.sort", tooltip="Sort by name, company or last contacted"),
        Binding("down", "move(1)", "Next", id="book.next", show=False),  # (from the search box)
        Binding("up", "move(-1)", "Previous", id="book.previous", show=False),
    ]

    def __init__(self, core: MailCore) -> None:
        super().__init__()
        self.core = core
        self.sort = 0
        self.query_text = ""
        self.shown: list[Contact] = []

    def compose(self) -> ComposeResult:
        yield TextInput(placeholder="Search name, company, email, phone, username", id="book-search")
        with Horizontal(id="book"):
            yield DataTable(id="book-table", cursor_type="row", zebra_stripes=True)
            yield Static("", id="book-details", markup=False)
        yield Static("", id="book-status", markup=False)
        yield KeyBar()

    def on_mount(self) -> None:
        self.refresh_book()
        self.query_one("#book-search", Input).focus()  # type to search at once; arrows move, enter edits
        self.learn_contacts()

    def refresh_book(self) -> None:
        contacts = list(self.core.contacts.values())
        if self.query_text:
            needle = self.query_text.lower()
            contacts = [c for c in contacts if needle in contact_haystack(c)]
        key = SORTS[self.sort]
        if key == "name":
            contacts.sort(key=lambda c: (c.name or "").lower())
        elif key == "company":
            contacts.sort(key=lambda c: ((c.company or "~").lower(), (c.name or "").lower()))
        else:
            contacts.sort(key=lambda c: c.last_contacted_at.timestamp() if c.last_contacted_at else 0, reverse=True)
        self.shown = contacts
        table = self.query_one(DataTable)
        current = table.cursor_row
        wide = not self.has_class("narrow")
        columns = WIDE_COLUMNS if wide else NARROW_COLUMNS
        if tuple(str(c.label) for c in table.columns.values()) != columns:
            table.clear(columns=True)
            table.add_columns(*columns)
        table.clear()
        now = self.core.clock()
        for contact in contacts:
            email = contact.emails[0].email if contact.emails else ""
            cells = [
                Text(clean_line(contact.name, limit=30)),
                Text(clean_line(contact.company, limit=26)),
                Text(clean_line(email, limit=40)),
                Text(relative_time(contact.last_contacted_at, now)),
            ]
            table.add_row(*(cells if wide else [cells[0], *cells[2:]]), key=contact.id)
        if contacts:
            table.move_cursor(row=min(current, len(contacts) - 1))
        self.show_details()
        many = f"{len(contacts)} contact{'s' if len(contacts) != 1 else ''}"
        self.query_one("#book-status", Static).update(
            Content.styled(f"{many} · sorted by {key} (o in the list) · type to search, ↑↓ and enter to edit", "dim")
        )

    def show_details(self) -> None:
        table = self.query_one(DataTable)
        details = self.query_one("#book-details", Static)
        if not self.shown or table.cursor_row >= len(self.shown):
            details.update(Content.styled("No contact seen in mail yet matches.", "dim"))
            return
        width = details.scrollable_content_region.width or 80  # (0 before the first layout)
        details.update(contact_details(self.shown[table.cursor_row], self.core.clock(), width))

    def on_resize(self, event: events.Resize) -> None:
        narrow = event.size.width < NARROW_WIDTH
        if narrow != self.has_class("narrow"):
            self.set_class(narrow, "narrow")
            self.refresh_book()
        self.call_after_refresh(self.show_details)  # (laid out anew: the details' width has changed)

    @on(DataTable.RowHighlighted)
    def _highlighted(self) -> None:
        self.show_details()

    @on(DataTable.RowSelected)
    def _selected(self) -> None:
        self.action_edit()

    @on(Input.Changed, "#book-search")
    def _search(self, event: Input.Changed) -> None:
        self.query_text = event.value.strip()
        self.refresh_book()

    @on(Input.Submitted, "#book-search")
    def _search_done(self) -> None:
        self.action_edit()  # enter in the search edits the contact the arrows are on

    def action_move(self, by: int) -> None:
        """Arrows typed in the search move through the contacts it found."""
        table = self.query_one(DataTable)
        if self.shown:
            table.move_cursor(row=max(0, min(table.cursor_row + by, len(self.shown) - 1)))

    def action_search(self) -> None:
        self.set_focus(self.query_one("#book-search", Input))  # at once: the keys typed after / are the search's

    def action_sort(self) -> None:
        self.sort = (self.sort + 1) % len(SORTS)
        self.refresh_book()

    def action_close(self) -> None:
        search = self.query_one("#book-search", Input)
        if search.value:
            search.value = ""
            search.focus()
        else:
            self.dismiss(None)

    def action_edit(self) -> None:
        table = self.query_one(DataTable)
        if self.shown and table.cursor_row < len(self.shown):
            self.post_message(EditContact(self.shown[table.cursor_row]))

    def on_contact_saved(self, event: ContactSaved) -> None:
        self.refresh_book()

    @work(exclusive=True, group="learn", exit_on_error=False, description="reading contacts")
    async def learn_contacts(self) -> None:
        """Every contact the store has met in synced mail (the API cannot list contacts)."""
        await self.core.all_contacts()
        self.refresh_book()
