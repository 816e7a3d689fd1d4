""" "Why is this here?": the reasons a thread is in its place (the Screener's decision, its lane's signals, a rule),
and what can move it: another lane, or the sender let in or kept out. Dismisses with the choice, or ``None``. The
rules tried are said in it too (no choices)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from pigeon.tui.render import safe_line
from pigeon.tui.widgets.choices import Choices

CHOICES = {"lane": "Move to another lane…", "in": "Let the sender in", "out": "Keep the sender out"}


class WhyScreen(ModalScreen[str | None]):
    """The reasons, a line each (untrusted text: each is cleaned), then the moves offered."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,W", "cancel", "Close", id="why.close")]

    def __init__(self, reasons: list[str], choices: list[str], *, title: str = "Why is this here?") -> None:
        super().__init__()
        self.heading = title
        self.reasons = reasons
        self.choices = [c for c in choices if c in CHOICES]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog why"):
            yield Static(Content.styled(self.heading, "bold"), markup=False)
            yield Static(Content("\n").join(safe_line(line, limit=200) for line in self.reasons), id="why-reasons")
            if self.choices:
                yield Choices(*(Option(Content(CHOICES[c]), id=c) for c in self.choices), id="pick")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
