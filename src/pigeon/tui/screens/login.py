"""The login screen: service URL and token (masked), checked against the service (and its account against the
profile's store) before it is kept."""

from __future__ import annotations

from typing import ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Button, Input, Label, Static

from pigeon.config import check_base_url
from pigeon.core.errors import Account, ConnectionFailed, OtherAccount, PigeonError, Unauthorized
from pigeon.core.mail import MailCore
from pigeon.sanitize import clean_line
from pigeon.tui.messages import LoggedIn
from pigeon.tui.screens.modals import ConfirmScreen
from pigeon.tui.widgets.key_bar import KeyBar
from pigeon.tui.widgets.text_input import TextInput


class LoginScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.quit", "Quit", id="login.quit"),
        # A letter typed past the fields (the focus on the button) is not a key here: `q` had quit, and the
        # token being typed was lost. Escape quits, as the key bar says.
        Binding("q", "typed_past", show=False),
    ]

    def __init__(self, core: MailCore, base_url: str, message: str = "") -> None:
        super().__init__()
        self.core = core
        self.base_url = base_url
        self.message = message

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog login"):
            yield Static(Content.styled("Log in to your mail service", "bold"), markup=False)
            yield Label("Service URL")
            yield TextInput(self.base_url, placeholder="https://mail.example.com", id="base-url")
            yield Label("Token")
            yield TextInput(placeholder="your access token", password=True, id="token")
            yield Static(Content(self.message), id="login-error", markup=False)
            yield Button("Log in", id="login", variant="primary")
            yield Static(id="token-keeping", markup=False)
        yield KeyBar()

    def action_typed_past(self) -> None:
        """A letter typed where no field takes it: said, not acted on."""
        self.notify("Type into a field (Tab moves between them); Escape quits.", markup=False)

    def on_mount(self) -> None:
        self.query_one("#token" if self.base_url else "#base-url", Input).focus()
        self.say_where_the_token_goes()

    @work(thread=True, exit_on_error=False, description="asking the keyring")
    def say_where_the_token_goes(self) -> None:
        """Where a login keeps the token (the keyring is asked which it is: off the event loop)."""
        words = self.core.token_keeping()
        self.app.call_from_thread(self.query_one("#token-keeping", Static).update, Content.styled(words, "dim"))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "base-url":
            self.query_one("#token", Input).focus()
        else:
            self.submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.submit()

    def say(self, text: str) -> None:
        self.query_one("#login-error", Static).update(Content.styled(clean_line(text), "$text-error"))

    def submit(self) -> None:
        base_url = self.query_one("#base-url", Input).value.strip()
        token = self.query_one("#token", Input).value.strip()
        if not base_url:
            self.say("Enter the service URL.")
            return
        try:
            check_base_url(base_url, "Service URL")
        except ValueError as exc:
            self.say(str(exc))
            return
        if not token:
            self.say("Enter the token.")
            return
        self.query_one("#login", Button).disabled = True
        self.query_one("#login-error", Static).update(Content.styled("Checking…", "italic"))
        self.verify(base_url, token)

    @work(exclusive=True, group="login", exit_on_error=False)
    async def verify(self, base_url: str, token: str, *, afresh: bool = False) -> None:
        try:
            warning = await self.core.login(base_url, token, start_afresh=afresh)
        except OtherAccount as exc:
            if exc.held is not None:
                self.ask_afresh(exc.held, exc.given, base_url, token)
                return
            self.say(str(exc))
        except Unauthorized:
            self.say("The service refused this token. Check it and try again.")
        except ConnectionFailed as exc:
            self.say(f"Could not reach the service: {exc}")
        except PigeonError as exc:  # an address that is not a service URL, a service error
            self.say(str(exc))
        else:
            self.post_message(LoggedIn(warning))
            return
        self.query_one("#login", Button).disabled = False

    def ask_afresh(self, held: Account, given: Account | None, base_url: str, token: str) -> None:
        """Ask before emptying the store for another account: Enter and Esc keep the mail (and what was typed)."""
        question = (
            f"This profile's store holds the mail of {held.words}.\n"
            f"This token is of {Account.named(given)}.\n\n"
            "Start the store afresh for the new account? Its mail, triage state, labels and undo are removed. "
            "To keep both, quit and use another profile (pigeon --profile NAME)."
        )

        def answer(agreed: bool | None) -> None:
            if agreed:
                self.query_one("#login-error", Static).update(Content.styled("Starting afresh…", "italic"))
                self.verify(base_url, token, afresh=True)
                return
            self.say("Kept this profile's mail; nothing was written. Log in as its account or use another profile.")
            self.query_one("#login", Button).disabled = False
            self.query_one("#token", Input).focus()

        self.app.push_screen(
            ConfirmScreen(Content(question), yes="Start afresh", no="Keep my mail", safe_first=True), answer
        )
