"""The contact editor: names, emails, phones, social profiles (with their types) and metadata. Save sends only what
changed; a mistake is shown at its field; a failed save keeps the edit on disk until it is saved or discarded."""

from __future__ import annotations

from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Button, Input, Label, Select, Static, TextArea

from pigeon.core.contacts import (
    ENTRY_KINDS,
    KIND_TITLES,
    NEW_ENTRY_TYPES,
    ContactForm,
    FormInvalid,
    changes,
    kept,
    on_screen,
    type_label,
    validate,
)
from pigeon.core.errors import FieldError, Invalid, Unauthorized
from pigeon.core.mail import ContactDraft, MailCore, NotSaved
from pigeon.models import Contact
from pigeon.sanitize import clean_line
from pigeon.tui.messages import Failed
from pigeon.tui.render import safe_line
from pigeon.tui.screens.base import ReportsFailures
from pigeon.tui.screens.modals import ask_first
from pigeon.tui.widgets.key_bar import KeyBar
from pigeon.tui.widgets.text_input import TextInput


class EntryRow(Vertical):
    """One email, phone or social profile: its type, its value, a remove button, and its error."""

    def __init__(self, kind: str, entry: dict[str, str]) -> None:
        super().__init__(classes="entry")
        self.kind = kind
        self.entry = entry

    def compose(self) -> ComposeResult:
        key, enum = ENTRY_KINDS[self.kind]
        known = [m.value for m in enum]
        current = self.entry.get("type") or known[0]
        types = known if current in known else [*known, current]  # a type this Pigeon does not know is kept
        with Horizontal(classes="entry-line"):
            yield Select(
                [(Content(clean_line(type_label(t))), t) for t in types],
                value=current,
                allow_blank=False,
                classes="entry-type",
            )
            yield TextInput(
                on_screen(self.entry.get(key, "")), placeholder=key, classes="entry-value", select_on_focus=False
            )
            yield Button("Remove", classes="entry-remove", variant="error")
        yield Label("", classes="field-error")

    def value(self) -> dict[str, str]:
        key, _ = ENTRY_KINDS[self.kind]
        return {
            "type": str(self.query_one(Select).value),
            key: kept(self.query_one(Input).value, self.entry.get(key, "")),
        }

    @on(Button.Pressed, ".entry-remove")
    def _remove(self, event: Button.Pressed) -> None:
        event.stop()
        editor = self.screen
        self.remove()
        if isinstance(editor, ContactEditor):
            editor.call_after_refresh(editor.renumber)


class ContactEditor(ReportsFailures, Screen[Contact | None]):
    """Edit a contact; save sends only what changed. A failed save keeps the edit on disk until saved or discarded."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save", id="editor.save"),
        Binding("escape", "close", "Close", id="editor.close", tooltip="Close (asks first if there are changes)"),
        # (a priority: the focused field would take ctrl+d as "delete right", and the draft would stay; in the key
        # bar only while a draft is restored: ``check_action``)
        Binding("ctrl+d", "discard_draft", "Discard draft", id="editor.discard", priority=True),
    ]

    def __init__(self, core: MailCore, contact: Contact, draft: ContactDraft | None = None) -> None:
        super().__init__()
        self.core = core
        self.contact = contact
        self.original = ContactForm.of(contact)
        self.restored = draft
        self.start = ContactForm.from_json(draft.fields, self.original) if draft else self.original
        self._marked = False  # fields are marked with errors: edits check them again

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
                        f"{' (' + clean_line(self.restored.reason) + ')' if self.restored.reason else ''}. "
                        "Save with ctrl+s, or ctrl+d to discard them.",
                        "$text-warning",
                    ),
                    id="restored",
                    markup=False,
                )
            yield Static("", id="editor-status", markup=False)  # at the top: where a failed save is looked for
            for name, label in (("first_name", "First name"), ("last_name", "Last name")):
                yield Label(label)
                # (a field gets the cursor at its end, not selected: a key typed as the form opens adds to it)
                yield TextInput(on_screen(getattr(self.start, name)), id=name, classes="name", select_on_focus=False)
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
            with Horizontal(classes="buttons"):
                yield Button("Save", id="save", variant="primary")
                yield Button("Cancel", id="cancel")
        yield KeyBar()

    def on_mount(self) -> None:
        self.set_focus(self.query_one("#first_name", Input), scroll_visible=False)  # (now: keys typed ahead wait)

    # --- the form ---------------------------------------------------------------------------------------------

    def form(self) -> ContactForm:
        def entries(kind: str) -> list[dict[str, str]]:
            return [row.value() for row in self.query_one(f"#{kind}", Vertical).query_children(EntryRow)]

        return ContactForm(
            first_name=kept(self.query_one("#first_name", Input).value, self.start.first_name),
            last_name=kept(self.query_one("#last_name", Input).value, self.start.last_name),
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
        self._marked = bool(errors)
        placed = []
        for error in errors:
            label = self.field_widget(error.field)
            if label is not None:
                label.update(Content.styled(clean_line(error.message), "$text-error"))
                placed.append(error)
        rest = [e for e in errors if e not in placed]
        text = summary + ("" if not rest else ": " + "; ".join(str(e) for e in rest))
        status = self.query_one("#editor-status", Static)
        status.update(Content.styled(clean_line(text), "bold $text-error"))
        first = self.field_widget(placed[0].field) if placed else None
        (first or status).scroll_visible(animate=False)

    @on(Input.Changed)
    @on(TextArea.Changed)
    def _recheck(self) -> None:
        """While fields are marked, each edit checks them again: a fixed field's mark goes at once."""
        if not self._marked:
            return
        try:
            validate(changes(self.original, self.form()))
        except FormInvalid as exc:
            self.show_errors(exc.errors, "Fix the marked fields before saving")
        else:
            self._marked = False
            self.clear_errors()

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
        try:
            updated = await self.core.save_contact(self.contact.id or "", request, form.to_json())
        except Invalid as exc:
            self.show_errors(exc.errors, f"The service refused the change ({exc.status})")
        except NotSaved as exc:
            if exc.draft_error:
                self.notify(exc.draft_error, severity="error", markup=False)
            if isinstance(exc.cause, Unauthorized):
                self.post_message(Failed(exc.cause, "saving the contact"))
            self.show_errors([], f"Not saved: {exc}. Your changes are kept and will be here next time")
        else:
            self.notify(f"Saved {clean_line(updated.name)}", markup=False)
            self.dismiss(updated)
            return
        finally:
            if self.is_mounted:
                self.query_one("#save", Button).disabled = False

    # --- leaving ---------------------------------------------------------------------------------------------

    def action_close(self) -> None:
        ask_first(
            self.app,
            self.dirty,
            "You have unsaved changes. Leave without saving?",
            "Leave",
            "Stay",
            lambda: self.dismiss(None),
            escape_agrees=True,
        )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """ctrl+d discards a restored draft; with none, it is the field's (delete right)."""
        return self.restored is not None if action == "discard_draft" else True

    def action_discard_draft(self) -> None:
        if self.restored is None:
            return

        async def discard() -> None:
            await self.core.discard_contact_draft(self.contact.id or "")
            self.dismiss(None)

        ask_first(
            self.app,
            True,
            "Discard the restored changes?",
            "Discard",
            "Keep",
            lambda: self.run_worker(discard(), group="discard", exit_on_error=False),
        )
