"""Small modal screens: confirm, pick an attachment, and help."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, OptionList, Static
from textual.widgets.option_list import Option

from pigeon.tui.widgets.choices import Choices
from pigeon.tui.widgets.text_input import TextInput

if TYPE_CHECKING:
    from textual.app import App


class ConfirmScreen(ModalScreen[bool]):
    """Ask a yes/no question; dismisses with the answer. Esc means no, or yes when ``escape_agrees`` (a question
    asked by Esc on a form: Esc again gets the user out, as in other keyboard mail clients). Each button names the
    keys that answer it. With ``safe_first`` the No button has the focus, so Enter (a habitual double Enter) keeps
    things as they are and only ``y`` or a click does the destructive thing."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n", "answer(False)", "No", id="confirm.no"),
        Binding("escape", "escape", "Close", id="confirm.escape"),
    ]

    def __init__(
        self,
        question: Content,
        yes: str = "Yes",
        no: str = "No",
        *,
        escape_agrees: bool = False,
        safe_first: bool = False,
    ) -> None:
        super().__init__()
        self.question = question
        self.yes, self.no = yes, no
        self.escape_agrees = escape_agrees
        self.safe_first = safe_first

    def compose(self) -> ComposeResult:
        yes_keys, no_keys = ("y, Esc", "n") if self.escape_agrees else ("y", "n, Esc")
        with Vertical(classes="dialog"):
            yield Static(self.question, markup=False)
            with Horizontal(classes="buttons"):
                yield Button(f"{self.yes} ({yes_keys})", id="yes", variant="warning")
                yield Button(f"{self.no} ({no_keys})", id="no")

    def on_mount(self) -> None:
        if self.safe_first:
            self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)

    def action_escape(self) -> None:
        self.dismiss(self.escape_agrees)


def ask_first(
    app: App[Any],
    needed: bool,
    question: str,
    yes: str,
    no: str,
    then: Callable[[], object],
    *,
    escape_agrees: bool = False,
) -> None:
    """Do ``then`` now, or, when ``needed`` (something typed would be lost), once the user answers yes (or Esc, when
    ``escape_agrees``: the question was asked by Esc on a form, and Esc twice leaves it)."""
    if not needed:
        then()
        return

    def answer(agreed: bool | None) -> None:
        if agreed:
            then()

    if not isinstance(app.screen, ConfirmScreen):  # (a second quit key while the question is open asks nothing)
        app.push_screen(ConfirmScreen(Content(question), yes=yes, no=no, escape_agrees=escape_agrees), answer)


class PickScreen(ModalScreen[int | None]):
    """Choose one of several items (shown literally); dismisses with its index, or ``None``."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", id="pick.cancel")]

    def __init__(self, title: str, items: list[Content]) -> None:
        super().__init__()
        self.title_text = title
        self.items = items

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Content.styled(self.title_text, "bold"), markup=False)
            yield Choices(*(Option(item, id=str(n)) for n, item in enumerate(self.items)), id="pick")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(int(event.option.id or 0))

    def action_cancel(self) -> None:
        self.dismiss(None)


class HelpScreen(ModalScreen[None]):
    """Every key of the context the user was in, with what it does and its binding id (for the keymap)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q", "close", "Close", id="help.close"),
        Binding("j,down", "scroll_down", "Down", id="help.down", show=False),
        Binding("k,up", "scroll_up", "Up", id="help.up", show=False),
    ]

    def __init__(self, context: str, rows: list[tuple[str, str, str]], legend: str = "") -> None:
        super().__init__()
        self.context = context
        self.rows = rows
        self.legend = legend  # what the context's marks say (a list row's)

    def compose(self) -> ComposeResult:
        key_width = max((len(key) for key, _, _ in self.rows), default=4) + 2
        what_width = max((len(what) for _, what, _ in self.rows), default=4) + 2
        lines = [
            Content.assemble(
                Content.styled(key.ljust(key_width), "bold $text-accent"),
                what.ljust(what_width),
                Content.styled(binding_id, "dim"),
            )
            for key, what, binding_id in self.rows
        ]
        with Vertical(classes="dialog help"):
            yield Static(Content.styled(f"Keys: {self.context}", "bold"), markup=False)
            if self.legend:
                yield Static(Content(self.legend), id="help-legend", markup=False)
            with VerticalScroll(id="help-keys"):
                yield Static(Content("\n").join(lines), markup=False)
            yield Static(
                Content.styled(
                    'Remap a key in config.toml: [ui.keymap] "binding.id" = "key1,key2". Esc closes.', "dim"
                ),
                markup=False,
            )

    def action_close(self) -> None:
        self.dismiss(None)

    def action_scroll_down(self) -> None:  # (now: each press of a held key scrolls a line; see Reader.scroll_by)
        self.query_one("#help-keys", VerticalScroll).scroll_down(immediate=True)

    def action_scroll_up(self) -> None:
        self.query_one("#help-keys", VerticalScroll).scroll_up(immediate=True)


class InputScreen(ModalScreen[str | None]):
    """Ask for one line of text; dismisses with it, or ``None``."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", id="input.cancel")]

    def __init__(self, title: str, hint: str = "", value: str = "") -> None:
        super().__init__()
        self.title_text, self.hint, self.value = title, hint, value

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Content.styled(self.title_text, "bold"), markup=False)
            yield TextInput(self.value, id="answer")
            if self.hint:
                yield Static(Content.styled(self.hint, "dim"), markup=False)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
