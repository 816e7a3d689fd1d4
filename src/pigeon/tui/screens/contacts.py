"""The contact book and the contact editor."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Button, DataTable, Input, Label, Select, Static, TextArea

from pigeon.api import ConnectionFailed, FieldError, Invalid, PigeonError, RateLimited, ServerError, Unauthorized
from pigeon.models import Contact
from pigeon.sanitize import clean, clean_line
from pigeon.store.drafts import Draft, Drafts
from pigeon.tui.contacts import ENTRY_KINDS, NEW_ENTRY_TYPES, ContactForm, FormInvalid, changes, validate
from pigeon.tui.render import relative_time, safe_line
from pigeon.tui.screens.modals import ConfirmScreen
from pigeon.tui.widgets.key_bar import KeyBar

if TYPE_CHECKING:
    from pigeon.tui.app import PigeonApp

SORTS = ("name", "company", "last contacted")
KIND_TITLES = {"emails": "Emails", "phones": "Phones", "social_profiles": "Social profiles"}


def _type_label(value: str) -> str:
    return value.split("_TYPE_", 1)[-1].replace("_", " ").title()


def contact_haystack(contact: Contact) -> str:
    parts = [contact.name, contact.first_name, contact.last_name, contact.company, contact.title, *contact.tags]
    parts += [e.email for e in contact.emails] + [p.phone for p in contact.phones]
    parts += [s.username for s in contact.social_profiles]
    return " ".join(p for p in parts if p).lower()


def contact_details(contact: Contact, now: datetime) -> Content:
    lines = [safe_line(contact.name or "(no name)", style="bold")]
    role = " · ".join(clean_line(x) for x in (contact.title, contact.company) if x)
    if role:
        lines.append(Content(role))
    for kind, (key, _) in ENTRY_KINDS.items():
        entries = getattr(contact, kind)
        if entries:
            lines += ["", Content.styled(KIND_TITLES[kind], "bold $accent")]
            for entry in entries:
                kind_label = _type_label(str(getattr(entry.type, "value", entry.type) or ""))
                lines.append(
                    Content.assemble(Content.styled(f"{kind_label:<10} ", "dim"), safe_line(getattr(entry, key)))
                )
    if contact.tags:
        lines += ["", Content.assemble(Content.styled("Tags: ", "dim"), safe_line(", ".join(contact.tags)))]
    if contact.last_contacted_at:
        lines.append(Content.styled(f"Last contacted {relative_time(contact.last_contacted_at, now)}", "dim"))
    return Content("\n").join(Content(x) if isinstance(x, str) else x for x in lines)


class ContactBook(Screen[None]):
    """Every contact Pigeon has seen in mail, searchable as you type."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back", id="book.close"),
        Binding("slash", "search", "Search", id="book.search"),
        Binding("e,enter", "edit", "Edit", id="book.edit"),
        Binding("o", "sort", "Sort", id="book.sort", tooltip="Sort by name, company or last contacted"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.sort = 0
        self.query_text = ""
        self.shown: list[Contact] = []

    @property
    def pigeon(self) -> PigeonApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield Input(placeholder="Search name, company, email, phone, username", id="book-search")
        with Horizontal(id="book"):
            yield DataTable(id="book-table", cursor_type="row", zebra_stripes=True)
            yield Static("", id="book-details", markup=False)
        yield Static("", id="book-status", markup=False)
        yield KeyBar()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("Name", "Company", "Email", "Last contacted")
        self.refresh_book()
        table.focus()
        self.learn_contacts()

    def refresh_book(self) -> None:
        contacts = list(self.pigeon.mailbox.contacts.values())
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
        table.clear()
        now = self.pigeon.clock()
        for contact in contacts:
            email = contact.emails[0].email if contact.emails else ""
            table.add_row(
                Text(clean_line(contact.name, limit=40)),
                Text(clean_line(contact.company, limit=30)),
                Text(clean_line(email, limit=40)),
                Text(relative_time(contact.last_contacted_at, now)),
                key=contact.id,
            )
        if contacts:
            table.move_cursor(row=min(current, len(contacts) - 1))
        self.show_details()
        self.query_one("#book-status", Static).update(
            Content.styled(f"{len(contacts)} contacts · sorted by {key} · o to change", "dim")
        )

    def show_details(self) -> None:
        table = self.query_one(DataTable)
        details = self.query_one("#book-details", Static)
        if not self.shown or table.cursor_row >= len(self.shown):
            details.update(Content.styled("No contact seen in mail yet matches.", "dim"))
            return
        details.update(contact_details(self.shown[table.cursor_row], self.pigeon.clock()))

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
        self.set_focus(self.query_one(DataTable))

    def action_search(self) -> None:
        self.set_focus(self.query_one("#book-search", Input))  # at once: the keys typed after / are the search's

    def action_sort(self) -> None:
        self.sort = (self.sort + 1) % len(SORTS)
        self.refresh_book()

    def action_close(self) -> None:
        search = self.query_one("#book-search", Input)
        if search.has_focus and search.value:
            search.value = ""
            self.set_focus(self.query_one(DataTable))
        else:
            self.dismiss(None)

    def action_edit(self) -> None:
        table = self.query_one(DataTable)
        if self.shown and table.cursor_row < len(self.shown):
            self.pigeon.edit_contact(self.shown[table.cursor_row], on_saved=lambda _: self.refresh_book())

    @work(exclusive=True, group="learn", exit_on_error=False, description="reading contacts")
    async def learn_contacts(self) -> None:
        """Every contact the store has met in synced mail (the API cannot list contacts)."""
        mailbox = self.pigeon.mailbox
        for contact in await asyncio.to_thread(self.pigeon.store.contacts):
            if contact.id and contact.id not in mailbox.contacts:
                mailbox.contacts[contact.id] = contact
        self.refresh_book()

    def on_worker_state_changed(self, event: Any) -> None:
        self.pigeon.on_worker_state_changed(event)


class EntryRow(Vertical):
    """One email, phone or social profile: its type, its value, a remove button, and its error."""

    def __init__(self, kind: str, entry: dict[str, str]) -> None:
        super().__init__(classes="entry")
        self.kind = kind
        self.entry = entry

    def compose(self) -> ComposeResult:
        key, enum = ENTRY_KINDS[self.kind]
        with Horizontal(classes="entry-line"):
            yield Select(
                [(_type_label(m.value), m.value) for m in enum],
                value=self.entry.get("type")
                if self.entry.get("type") in {m.value for m in enum}
                else next(iter(enum)).value,
                allow_blank=False,
                classes="entry-type",
            )
            yield Input(clean(self.entry.get(key, ""), multiline=False), placeholder=key, classes="entry-value")
            yield Button("Remove", classes="entry-remove", variant="error")
        yield Label("", classes="field-error")

    def value(self) -> dict[str, str]:
        key, _ = ENTRY_KINDS[self.kind]
        return {"type": str(self.query_one(Select).value), key: self.query_one(Input).value}

    @on(Button.Pressed, ".entry-remove")
    def _remove(self, event: Button.Pressed) -> None:
        event.stop()
        editor = self.screen
        self.remove()
        if isinstance(editor, ContactEditor):
            editor.call_after_refresh(editor.renumber)


class ContactEditor(Screen[Contact | None]):
    """Edit a contact; save sends only what changed. A failed save keeps the edit on disk until saved or discarded."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save", id="editor.save"),
        Binding("escape", "close", "Close", id="editor.close", tooltip="Close (asks first if there are changes)"),
        Binding("ctrl+d", "discard_draft", "Discard draft", id="editor.discard", show=False),
    ]

    def __init__(self, contact: Contact, drafts: Drafts, draft: Draft | None = None) -> None:
        super().__init__()
        self.contact = contact
        self.drafts = drafts
        self.original = ContactForm.of(contact)
        self.restored = draft
        self.start = ContactForm.from_json(draft.fields) if draft else self.original

    @property
    def pigeon(self) -> PigeonApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="editor"):
            yield Static(
                Content.assemble(Content.styled("Edit contact  ", "bold"), safe_line(self.contact.name or "(no name)")),
                markup=False,
            )
            if self.restored is not None:
                yield Static(
                    Content.styled(
                        f"Restored unsaved changes from {self.restored.saved_at:%Y-%m-%d %H:%M} UTC"
                        f"{' (' + self.restored.reason + ')' if self.restored.reason else ''}. "
                        "Save with ctrl+s, or ctrl+d to discard them.",
                        "$warning",
                    ),
                    id="restored",
                    markup=False,
                )
            for name, label in (("first_name", "First name"), ("last_name", "Last name")):
                yield Label(label)
                yield Input(getattr(self.start, name), id=name, classes="name")
                yield Label("", id=f"{name}-error", classes="field-error")
            for kind, title in KIND_TITLES.items():
                yield Label(title, classes="section")
                with Vertical(id=kind, classes="entries"):
                    for entry in getattr(self.start, kind):
                        yield EntryRow(kind, entry)
                yield Button(f"+ Add {title.lower().rstrip('s')}", id=f"add-{kind}", classes="add")
            yield Label("Metadata (a JSON object)", classes="section")
            yield TextArea(self.start.metadata_text, id="metadata", language=None, soft_wrap=True)
            yield Label("", id="metadata-error", classes="field-error")
            yield Static("", id="editor-status", markup=False)
            with Horizontal(classes="buttons"):
                yield Button("Save", id="save", variant="primary")
                yield Button("Cancel", id="cancel")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#first_name", Input).focus()

    # --- the form ---------------------------------------------------------------------------------------------

    def form(self) -> ContactForm:
        def entries(kind: str) -> list[dict[str, str]]:
            return [row.value() for row in self.query_one(f"#{kind}", Vertical).query_children(EntryRow)]

        return ContactForm(
            first_name=self.query_one("#first_name", Input).value,
            last_name=self.query_one("#last_name", Input).value,
            emails=entries("emails"),
            phones=entries("phones"),
            social_profiles=entries("social_profiles"),
            metadata_text=self.query_one("#metadata", TextArea).text,
        )

    @property
    def dirty(self) -> bool:
        return self.form().to_json() != self.original.to_json()

    def renumber(self) -> None:
        self.clear_errors()

    @on(Button.Pressed, ".add")
    def _add(self, event: Button.Pressed) -> None:
        kind = (event.button.id or "").removeprefix("add-")
        row = EntryRow(kind, {"type": NEW_ENTRY_TYPES[kind]})
        self.query_one(f"#{kind}", Vertical).mount(row)
        row.call_after_refresh(lambda: row.query_one(Input).focus())

    @on(Button.Pressed, "#save")
    def _save_pressed(self) -> None:
        self.action_save()

    @on(Button.Pressed, "#cancel")
    def _cancel_pressed(self) -> None:
        self.action_close()

    # --- errors at their fields ------------------------------------------------------------------------------------

    def clear_errors(self) -> None:
        for label in self.query(".field-error").results(Label):
            label.update("")
        self.query_one("#editor-status", Static).update("")

    def field_widget(self, field: str) -> Label | None:
        parts = field.split(".")
        if parts[0] in ("first_name", "last_name", "metadata"):
            return self.query_one(f"#{parts[0]}-error", Label)
        if parts[0] in ENTRY_KINDS:
            rows = list(self.query_one(f"#{parts[0]}", Vertical).query_children(EntryRow))
            if len(parts) > 1 and parts[1].isdigit() and int(parts[1]) < len(rows):
                return rows[int(parts[1])].query_one(".field-error", Label)
        return None

    def show_errors(self, errors: list[FieldError], summary: str) -> None:
        self.clear_errors()
        placed = []
        for error in errors:
            label = self.field_widget(error.field)
            if label is not None:
                label.update(Content.styled(clean_line(error.message), "$error"))
                placed.append(error)
        rest = [e for e in errors if e not in placed]
        text = summary + ("" if not rest else ": " + "; ".join(str(e) for e in rest))
        self.query_one("#editor-status", Static).update(Content.styled(clean_line(text), "bold $error"))

    # --- saving ----------------------------------------------------------------------------------------------

    def action_save(self) -> None:
        form = self.form()
        try:
            body = changes(self.original, form)
            request = validate(body)
        except FormInvalid as exc:
            self.show_errors(exc.errors, "Fix the marked fields before saving")
            return
        if not body:
            self.query_one("#editor-status", Static).update(Content.styled("Nothing changed.", "dim"))
            return
        self.query_one("#save", Button).disabled = True
        self.query_one("#editor-status", Static).update(Content.styled("Saving…", "italic"))
        self.save(form, request)

    @work(exclusive=True, group="save-contact", exit_on_error=False)
    async def save(self, form: ContactForm, request: Any) -> None:
        contact_id = self.contact.id or ""
        try:
            updated = await (await self.pigeon.connect()).contacts.update(contact_id, request)
        except Invalid as exc:
            self.show_errors(exc.errors, f"The service refused the change ({exc.status})")
        except Unauthorized as exc:
            await self.keep_draft(form, "not logged in")
            self.pigeon.report(exc, "saving the contact")
        except (ConnectionFailed, ServerError, RateLimited, PigeonError) as exc:
            await self.keep_draft(form, type(exc).__name__)
            self.show_errors([], f"Not saved: {exc}. Your changes are kept and will be here next time")
        else:
            await asyncio.to_thread(self.drafts.discard, contact_id)
            self.pigeon.contact_saved(updated)
            self.notify(f"Saved {clean_line(updated.name)}", markup=False)
            self.dismiss(updated)
            return
        finally:
            if self.is_mounted:
                self.query_one("#save", Button).disabled = False

    async def keep_draft(self, form: ContactForm, reason: str) -> None:
        try:
            await asyncio.to_thread(self.drafts.save, self.contact.id or "", form.to_json(), reason=reason)
        except OSError as exc:
            self.notify(f"Could not keep the draft on disk: {exc}", severity="error", markup=False)

    # --- leaving ---------------------------------------------------------------------------------------------

    def action_close(self) -> None:
        if not self.dirty:
            self.dismiss(None)
            return

        def answer(discard: bool | None) -> None:
            if discard:
                self.dismiss(None)

        self.app.push_screen(
            ConfirmScreen(Content("You have unsaved changes. Leave without saving?"), yes="Leave", no="Stay"), answer
        )

    def action_discard_draft(self) -> None:
        if self.restored is None:
            return

        async def discard() -> None:
            await asyncio.to_thread(self.drafts.discard, self.contact.id or "")
            self.dismiss(None)

        def answer(yes: bool | None) -> None:
            if yes:
                self.run_worker(discard(), group="discard", exit_on_error=False)

        self.app.push_screen(ConfirmScreen(Content("Discard the restored changes?"), yes="Discard", no="Keep"), answer)

    def on_worker_state_changed(self, event: Any) -> None:
        self.pigeon.on_worker_state_changed(event)
