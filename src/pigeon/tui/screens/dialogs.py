"""Dialogs for the rest of the service: create an inbox, create a webhook (and show its secret once)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, SelectionList, Static, TextArea

from pigeon.core.errors import FieldError, InvalidInput, PigeonError, StatusError
from pigeon.core.mail import MailCore
from pigeon.models import EventKind, WebhookSubscription
from pigeon.sanitize import clean_line
from pigeon.tui.screens.modals import ask_first
from pigeon.tui.widgets.text_input import TextInput


class FormDialog(ModalScreen[Any]):
    """A dialog whose fields each have an error label (``#<field>-error``) and whose submit talks to the service."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="dialog.cancel"),
        Binding("ctrl+s", "submit", "Create", id="dialog.submit"),
    ]
    FIELDS: ClassVar[tuple[str, ...]] = ()

    def __init__(self, core: MailCore) -> None:
        super().__init__()
        self.core = core

    @property
    def dirty(self) -> bool:
        """Something was typed (the app's quit asks first too)."""
        return any(box.value.strip() for box in self.query(Input)) or any(
            area.text.strip() for area in self.query(TextArea)
        )

    def action_cancel(self) -> None:
        """Close; with something typed, ask first (nothing typed is lost without a question); Esc again discards."""
        ask_first(
            self.app,
            self.dirty,
            "Discard what you typed?",
            "Discard",
            "Keep",
            lambda: self.dismiss(None),
            escape_agrees=True,
        )

    @on(Input.Submitted)
    def _enter(self) -> None:
        """Enter in a field submits the form, as in a web form."""
        self.action_submit()

    @on(Button.Pressed, "#cancel")
    def _cancel(self) -> None:
        self.action_cancel()

    @on(Button.Pressed, "#submit")
    def _submit(self) -> None:
        self.action_submit()

    def action_submit(self) -> None:
        raise NotImplementedError

    def show_errors(self, errors: list[FieldError], summary: str = "") -> None:
        """Each error under its field, and every one of them in the status line after ``summary`` (a field may be
        scrolled out of sight, and an error of a field the form does not have has nowhere else to go)."""
        for name in self.FIELDS:
            self.query_one(f"#{name}-error", Label).update("")
        for error in errors:
            name = error.field.split(".")[0]
            if name in self.FIELDS:
                self.query_one(f"#{name}-error", Label).update(Content.styled(clean_line(error.message), "$text-error"))
        text = " ".join(x for x in (summary, "; ".join(str(error) for error in errors)) if x)
        self.query_one("#dialog-status", Static).update(Content.styled(clean_line(text), "bold $text-error"))

    async def create_with(self, call: Callable[[], Awaitable[Any]]) -> None:
        """Await ``call()`` (a create request of the core); field errors go to their fields, and the reason, with
        every field error, to the status line; success dismisses the dialog with the created resource."""
        try:
            created = await call()
        except (InvalidInput, StatusError) as exc:
            if exc.errors:
                self.show_errors(exc.errors, "Not created:")
            else:  # (the service's own words when it gave some, else the whole error)
                said = exc.detail if isinstance(exc, StatusError) else ""
                self.show_errors([], f"Not created: {said or exc}")
            return
        except PigeonError as exc:
            self.show_errors([], f"Not created: {exc}")
            return
        self.dismiss(created)

    def add_metadata(self, fields: dict[str, Any]) -> bool:
        """Put the metadata box's JSON object into ``fields``; ``False`` (with the error at the field) if it is bad."""
        try:
            metadata = self.metadata()
        except InvalidInput as exc:
            self.show_errors(exc.errors)
            return False
        if metadata is not None:
            fields["metadata"] = metadata
        return True

    def metadata(self) -> dict[str, Any] | None:
        text = self.query_one("#metadata", TextArea).text.strip()
        if not text:
            return None
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise InvalidInput("metadata", [FieldError("metadata", f"not valid JSON: {exc}")]) from None
        if not isinstance(value, dict):
            raise InvalidInput("metadata", [FieldError("metadata", "must be a JSON object")])
        return value

    def buttons(self, label: str) -> ComposeResult:
        yield Static("", id="dialog-status", markup=False)
        with Horizontal(classes="buttons"):
            yield Button(label, id="submit", variant="primary")
            yield Button("Cancel", id="cancel")

    def field(self, name: str, label: str, widget: Any) -> ComposeResult:
        yield Label(label)
        yield widget
        yield Label("", id=f"{name}-error", classes="field-error")


class CreateInboxDialog(FormDialog):
    FIELDS = ("email", "display_name", "metadata")

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog form"):
            yield Static(Content.styled("New inbox (type EMAIL_INBOX)", "bold"), markup=False)
            with VerticalScroll(classes="form-body"):
                yield from self.field("email", "Address (leave empty to let the service choose)", TextInput(id="email"))
                yield from self.field(
                    "display_name", "Display name (optional, at most 100)", TextInput(id="display_name")
                )
                yield from self.field("metadata", "Metadata (optional JSON object)", TextArea("", id="metadata"))
            yield from self.buttons("Create inbox")

    def action_submit(self) -> None:
        fields: dict[str, Any] = {}
        for name in ("email", "display_name"):
            value = self.query_one(f"#{name}", Input).value.strip()
            if value:
                fields[name] = value
        if not self.add_metadata(fields):
            return
        self.create(fields)

    @work(exclusive=True, group="create-inbox", exit_on_error=False)
    async def create(self, fields: dict[str, Any]) -> None:
        await self.create_with(lambda: self.core.create_inbox(**fields))


class CreateWebhookDialog(FormDialog):
    FIELDS = ("url", "events", "description", "metadata")

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog form"):
            yield Static(Content.styled("New webhook subscription", "bold"), markup=False)
            with VerticalScroll(classes="form-body"):
                yield from self.field("url", "URL that receives the events (http or https)", TextInput(id="url"))
                yield from self.field(
                    "events",
                    "Events (space to choose)",
                    SelectionList[str](*((kind.value, kind.value, True) for kind in EventKind), id="events"),
                )
                yield from self.field("description", "Description (optional)", TextInput(id="description"))
                yield from self.field("metadata", "Metadata (optional JSON object)", TextArea("", id="metadata"))
            yield from self.buttons("Create webhook")

    def action_submit(self) -> None:
        fields: dict[str, Any] = {
            "url": self.query_one("#url", Input).value.strip(),
            "events": list(self.query_one("#events", SelectionList).selected),
        }
        description = self.query_one("#description", Input).value.strip()
        if description:
            fields["description"] = description
        if not self.add_metadata(fields):
            return
        self.create(fields)

    @work(exclusive=True, group="create-webhook", exit_on_error=False)
    async def create(self, fields: dict[str, Any]) -> None:
        await self.create_with(lambda: self.core.create_webhook(**fields))


class SecretScreen(ModalScreen[None]):
    """The new webhook's signing secret, shown this once."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "copy", "Copy secret", id="secret.copy"),
        Binding("escape,enter", "close", "Done", id="secret.close"),
    ]

    def __init__(self, webhook: WebhookSubscription) -> None:
        super().__init__()
        self.webhook = webhook

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Content.styled("Webhook created", "bold"), markup=False)
            yield Static(
                Content.assemble(
                    Content.styled("URL: ", "dim"),
                    clean_line(self.webhook.url),
                    Content.styled("\nEvents: ", "dim"),
                    ", ".join(clean_line(str(getattr(e, "value", e))) for e in self.webhook.events),
                ),
                markup=False,
            )
            yield Static(Content.styled("Signing secret", "bold $text-accent"), markup=False)
            yield Static(
                Content(clean_line(self.webhook.secret or "(the service sent none)")), id="secret", markup=False
            )
            yield Static(
                Content.styled(
                    "This secret will not be shown again. Copy it now (c) and keep it where your receiver can read it.",
                    "$text-warning",
                ),
                markup=False,
            )
            with Horizontal(classes="buttons"):
                yield Button("Copy secret", id="copy", variant="primary")
                yield Button("Done", id="done")

    def action_copy(self) -> None:
        if self.webhook.secret:
            self.app.copy_to_clipboard(self.webhook.secret)
            self.notify("Secret copied to the clipboard.", markup=False)

    def action_close(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#copy")
    def _copy(self) -> None:
        self.action_copy()

    @on(Button.Pressed, "#done")
    def _done(self) -> None:
        self.dismiss(None)
