"""Pickers of the triage actions: when a snooze ends, and which label to add or remove. Each is a modal that
dismisses with its answer (or ``None``); a typed time shows the moment it is read as while it is typed, and one
that cannot be read keeps the dialog open with the reason."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from pigeon.core.snooze import example, parse_when, presets
from pigeon.sanitize import clean_line
from pigeon.tui.widgets.choices import Choices
from pigeon.tui.widgets.text_input import TextInput

TYPED = "typed"


class SnoozePicker(ModalScreen[datetime | None]):
    """Later today, tomorrow morning, next week, or a typed time."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", id="snooze.cancel")]

    def __init__(self, now: Callable[[], datetime], *, title: str = "Snooze until…") -> None:
        super().__init__()
        self.now = now
        self.title_text = title
        self.choices = presets(now())

    def compose(self) -> ComposeResult:
        options = [
            Option(Content(f"{label}  ({when:%a %d %b %H:%M})"), id=str(n))
            for n, (label, when) in enumerate(self.choices)
        ]
        with Vertical(classes="dialog"):
            yield Static(Content.styled(self.title_text, "bold"), markup=False)
            yield Choices(*options, Option(Content("Pick a date and time…"), id=TYPED), id="pick")
            yield TextInput(placeholder=example(self.now()), id="answer", classes="hidden")
            yield Static("", id="snooze-error", markup=False)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id == TYPED:
            box = self.query_one("#answer", Input)
            box.remove_class("hidden")
            box.focus()
        else:
            self.dismiss(self.choices[int(event.option.id or 0)][1])

    def on_input_changed(self, event: Input.Changed) -> None:
        """The moment understood so far, said under the box before it is chosen (or, quietly, why not yet)."""
        said = self.query_one("#snooze-error", Static)
        if not event.value.strip():
            said.update("")
            return
        try:
            when = parse_when(event.value, self.now())
        except ValueError as exc:
            said.update(Content.styled(clean_line(str(exc)), "dim"))
            return
        said.update(Content.styled(f"→ {when:%a %d %b %H:%M}", "bold"))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        try:
            when = parse_when(event.value, self.now())
        except ValueError as exc:
            self.query_one("#snooze-error", Static).update(Content.styled(clean_line(str(exc)), "$text-warning"))
            return
        self.dismiss(when)

    def action_cancel(self) -> None:
        self.dismiss(None)
