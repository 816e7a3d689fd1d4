"""The Pigeon terminal app.

The App is handed the mail core (:class:`pigeon.core.mail.MailCore`), which owns the API client and the store for
the app's whole life, and gives it to each screen. Screens report up with messages (:mod:`pigeon.tui.messages`);
failures are turned into UI here, in one place (:meth:`PigeonApp.on_failed`).
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events, work
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.notifications import SeverityLevel
from textual.screen import ModalScreen, Screen

from pigeon.config import Config, ConfigError
from pigeon.core.errors import (
    ConnectionFailed,
    OtherAccount,
    PigeonError,
    RateLimited,
    StoreUnwritable,
    Unauthorized,
)
from pigeon.core.mail import MailCore, MailStore
from pigeon.core.session import ClientFactory
from pigeon.sanitize import clean, clean_line
from pigeon.tui import fast_path
from pigeon.tui.commands import PigeonCommands
from pigeon.tui.keymap import checked_keymap
from pigeon.tui.keys import bindings
from pigeon.tui.memory import Collector, freeze_start_up
from pigeon.tui.messages import (
    ContactSaved,
    EditContact,
    EditDraft,
    Failed,
    InboxesChanged,
    LoggedIn,
    Offline,
    ReviewDraft,
)
from pigeon.tui.screens.base import ReportsFailures
from pigeon.tui.screens.login import LoginScreen
from pigeon.tui.screens.mail import MainScreen
from pigeon.tui.screens.modals import HelpScreen, ask_first
from pigeon.tui.widgets.thread_row import LEGEND

if TYPE_CHECKING:  # the models (pydantic) and the contact and dialog screens load when first used
    from pigeon.core.drafts import MailDraft
    from pigeon.core.session import PigeonClient
    from pigeon.models import Contact, Inbox, WebhookSubscription
    from pigeon.tui.messages import BrowseInTerminal

log = logging.getLogger("pigeon.tui")

HELP_CONTEXTS = {"threads": "thread list", "reader": "reader", "inboxes": "inboxes", "filter": "filter"}
SHADOWED_COMMANDS = frozenset({"Quit", "Keys"})  # Textual's palette entries that Pigeon's registry has its own of


class PigeonApp(ReportsFailures, App[None]):
    """Pigeon on a mail core: with a token (or client) it opens on the mail, else on the login screen."""

    CSS_PATH = "app.tcss"
    TITLE = "Pigeon"
    COMMANDS: ClassVar = App.COMMANDS | {PigeonCommands}
    BINDINGS: ClassVar[list[BindingType]] = bindings("app")

    def __init__(self, core: MailCore, *, login_message: str = "") -> None:
        super().__init__()
        self.core = core
        self.login_message = login_message
        self.collector = Collector()
        # `pigeon` turns the collector off before it imports Textual: the collector is then the app's to manage
        # (pigeon.tui.memory). An app made with the collector on (tests, another program) leaves it alone.
        self.manages_collector = not gc.isenabled()
        core.on_start_up_stage = self.start_up_stage_done
        made = core.client_factory

        def client_factory(base_url: str, token: str) -> PigeonClient:  # (each client says when it waits)
            client = made(base_url, token)
            client.on_busy = self.service_busy
            return client

        core.client_factory = client_factory
        if core.config.ui.theme in self.available_themes:
            self.theme = core.config.ui.theme
        self._theme_loaded = True

    # --- life -------------------------------------------------------------------------------------------------

    def start_up_stage_done(self) -> None:
        """A stage of start-up is over (first frame, models loaded, client made): freeze what it made."""
        if self.manages_collector:
            freeze_start_up()

    def on_ready(self) -> None:
        """The first frame is on screen: freeze what start-up made; from now on full collections run between the
        user's keys (see :mod:`pigeon.tui.memory`)."""
        self.call_after_refresh(self.start_up_stage_done)
        if self.manages_collector:
            self.set_interval(1.0, self.collector.tick, name="collector")

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key | events.MouseEvent):  # a key, a click, a scroll of the wheel
            self.collector.input()
            if isinstance(event, events.Key) and await fast_path.run_bound_key(self, event):
                return  # (run at once, on the fast path)
        await super().on_event(event)

    def get_default_screen(self) -> Screen[Any]:
        """The first screen: the mail, or the login screen without a token. It is the bottom of the stack itself:
        a blank screen beneath would repaint the whole screen above it whenever it refreshed."""
        if not self.core.logged_in:
            return LoginScreen(self.core, self.core.config.base_url, self.login_message)
        return MainScreen(self.core)

    def on_mount(self) -> None:
        keymap, warnings = checked_keymap(self.core.config.ui.keymap)
        for warning in warnings:
            self.notify(warning, title="Keymap", severity="warning", timeout=15)
        if keymap:
            self.set_keymap(keymap)

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Textual's own palette entries but its Quit and Keys: Pigeon's Quit and Help are in the palette already."""
        return (c for c in super().get_system_commands(screen) if c.title not in SHADOWED_COMMANDS)

    def get_key_display(self, binding: Binding) -> str:
        """A key as shown (key bar, help, palette): cleaned like all text, whatever a keymap put in it."""
        return clean_line(super().get_key_display(binding))

    async def on_unmount(self) -> None:
        await self.core.close()

    async def action_quit(self) -> None:
        """Quit (q, ctrl+q, the palette); with an unsaved edit on any screen, ask first: nothing typed is lost."""
        unsaved = any(getattr(screen, "dirty", False) for screen in self.screen_stack)
        ask_first(
            self, unsaved, "You have unsaved changes. Quit Pigeon without saving them?", "Quit", "Stay", self.exit
        )

    def tell_screens(self, make: Callable[[], Message]) -> None:
        """Post a message (made anew for each) to every screen on the stack: screens show what changed."""
        for screen in self.screen_stack:
            screen.post_message(make())

    def on_logged_in(self, event: LoggedIn) -> None:
        if event.warning:
            self.notify(event.warning, severity="warning", timeout=15, markup=False)
        while len(self.screen_stack) > 1:
            self.pop_screen()
        self.push_screen(MainScreen(self.core))

    @work(group="logout", exit_on_error=False, description="logging out")
    async def action_logout(self) -> None:
        warning = await self.core.logout()
        if warning:
            self.notify(warning, severity="warning", markup=False)
        self.show_login("Logged out.")

    def show_login(self, message: str) -> None:
        while len(self.screen_stack) > 1:
            self.pop_screen()
        self.push_screen(LoginScreen(self.core, self.core.service_url, message))

    def service_busy(self, wait: object) -> None:
        """The service answered "busy" and the client waits before it asks again: say until when (``wait``, the
        client's account of it, reads as one line)."""
        self.notify(
            str(wait), title="Waiting", severity="warning", timeout=max(5.0, getattr(wait, "seconds", 0)), markup=False
        )

    # --- failures: the one place ------------------------------------------------------------------------------

    def on_failed(self, event: Failed) -> None:
        """Tell the user what failed and what to do about it."""
        error, doing = event.error, event.doing
        if isinstance(error, Unauthorized):
            self.show_login("The service refused the token (it may have expired). Log in again.")
        elif isinstance(error, OtherAccount):  # nothing of that account was written: log in to it, or start afresh
            self.show_login(str(error))
        elif isinstance(error, ConnectionFailed):
            self.tell_screens(Offline)
            self.notify(f"{error} Press ctrl+r to retry.", title="Offline", severity="warning", timeout=8, markup=False)
        elif isinstance(error, RateLimited):
            wait = f" in {error.retry_after:.0f} s" if error.retry_after else " later"
            self.notify(f"The service is busy; try again{wait}.", severity="warning", markup=False)
        elif isinstance(error, PigeonError | StoreUnwritable):
            self.notify(str(error), title=f"Failed {doing}", severity="error", timeout=10, markup=False)
        elif isinstance(error, ConfigError | OSError):
            self.notify(f"Could not finish {doing}: {error}", severity="warning", markup=False)
        else:
            log.error("unexpected error while %s", doing, exc_info=error)
            self.notify(
                f"Something unexpected went wrong while {doing}. Pigeon keeps running; the log has the details.",
                severity="error",
                markup=False,
            )

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every notification passes here, the screens' too: its text is cleaned and never read as markup (a
        message may quote mail or a service's answer). ``markup`` is accepted and ignored."""
        super().notify(clean(message), title=clean_line(title), severity=severity, timeout=timeout, markup=False)

    # --- the app's own actions ----------------------------------------------------------------------------------

    def action_command_palette(self) -> None:
        """The palette, over a full screen only: over a dialog or a question it would stack a second one."""
        if not isinstance(self.screen, ModalScreen):
            super().action_command_palette()

    def action_help(self) -> None:
        """Every key of the focused context, with its binding id (for the keymap)."""
        keys: dict[str, list[str]] = {}  # every key of a binding ("j, ↓"), not only the first one met
        named: dict[str, tuple[str, str]] = {}
        for active in self.screen.active_bindings.values():
            binding = active.binding
            label = binding.description or binding.action
            ident = binding.id or ""
            shown = self.get_key_display(binding)
            group = keys.setdefault(ident or label, [])
            if shown not in group:
                group.append(shown)
            named.setdefault(ident or label, (label, ident))
        rows = [(", ".join(sorted(group, key=len)), *named[name]) for name, group in keys.items()]
        focused = self.screen.focused
        context = HELP_CONTEXTS.get(focused.id if focused and focused.id else "", "Pigeon")
        legend = LEGEND if context == "thread list" else ""
        # Pigeon's own keys first (they have ids, for the keymap), then Textual's built-in ones.
        rows.sort(key=lambda row: (not row[2], row[2] or row[1]))
        self.push_screen(HelpScreen(context, rows, legend))

    async def on_edit_contact(self, event: EditContact) -> None:
        """The editor, with a draft kept from a failed save. Not a worker: the App takes no other key until the
        editor is mounted, so keys typed as it opens reach its first field (reading the draft is one small read)."""
        from pigeon.tui.screens.contacts.editor import ContactEditor  # loads on first use

        draft = await self.core.contact_draft(event.contact.id)

        def saved(contact: Contact | None) -> None:
            if contact is not None:
                self.tell_screens(lambda: ContactSaved(contact))

        await self.push_screen(ContactEditor(self.core, event.contact, draft), saved)

    def on_edit_draft(self, event: EditDraft) -> None:
        """Hand the terminal to the user's editor on the draft (the app suspended meanwhile), then review it (or,
        with ``[compose] review = false``, send it at once). From the review it goes back there, whatever the
        editor did: nothing is lost."""
        from textual.app import SuspendNotSupported

        from pigeon.core.programs import ProgramFailed

        handoff, draft, again = self.core.handoff, event.draft, event.again
        try:
            try:
                with self.suspend():
                    edited = handoff.edit(draft, again=again)
            except SuspendNotSupported:  # (no terminal to hand over: headless tests; an editor needs none there)
                if not self.is_headless:
                    self.notify("This terminal cannot hand over to an editor.", severity="error", markup=False)
                    if again:
                        self.review_draft(draft)
                    return
                edited = handoff.edit(draft, again=again)
        except (ProgramFailed, OSError) as exc:
            self.notify(f"Could not open the editor: {exc}", severity="error", timeout=10, markup=False)
            if again:
                self.review_draft(draft)
            return
        if not (edited.changed or again):
            self.notify(edited.said, markup=False)
        elif handoff.reviews:
            self.review_draft(draft)
        else:
            self.send_draft(draft)

    def on_review_draft(self, event: ReviewDraft) -> None:
        self.review_draft(event.draft)

    def review_draft(self, draft: MailDraft) -> None:
        """The review of the draft; "edit again" hands it back to the editor through :meth:`on_edit_draft`."""
        from pigeon.tui.screens.review import ReviewScreen  # loads on first use

        def done(outcome: str | None) -> None:
            if outcome == "edit":
                self.post_message(EditDraft(draft, again=True))

        self.push_screen(ReviewScreen(self.core, draft), done)

    def on_browse_in_terminal(self, event: BrowseInTerminal) -> None:
        """Hand the terminal to a console browser on a link (the app suspended meanwhile): it never draws beside
        the app. Where the terminal cannot be handed over, the link is copied instead."""
        from textual.app import SuspendNotSupported

        from pigeon.core.programs import ProgramFailed

        handoff = self.core.handoff
        try:
            try:
                with self.suspend():
                    handoff.browse_in_terminal(event.command)
            except SuspendNotSupported:  # (headless tests: no terminal to take)
                if not self.is_headless:
                    self.copy_to_clipboard(event.link)
                    self.notify("This terminal cannot hand over to a browser: copied the link.", markup=False)
                    return
                handoff.browse_in_terminal(event.command)
        except (ProgramFailed, OSError) as exc:
            self.notify(f"Could not open the link: {exc}", severity="error", timeout=10, markup=False)

    @work(group="send", exit_on_error=False, description="sending")
    async def send_draft(self, draft: MailDraft) -> None:
        from pigeon.core.drafts import SendFailed

        try:
            said = await self.core.handoff.send(draft)
        except SendFailed as exc:
            self.notify(str(exc), title="Not sent", severity="error", timeout=15, markup=False)
            return
        self.notify(said, markup=False)

    def action_create_inbox(self) -> None:
        from pigeon.tui.screens.dialogs import CreateInboxDialog

        def created(inbox: Inbox | None) -> None:
            if inbox is not None:
                self.tell_screens(InboxesChanged)
                self.notify(f"Created inbox {inbox.email}", markup=False)

        self.push_screen(CreateInboxDialog(self.core), created)

    def action_create_webhook(self) -> None:
        from pigeon.tui.screens.dialogs import CreateWebhookDialog, SecretScreen

        def created(webhook: WebhookSubscription | None) -> None:
            if webhook is not None:
                self.push_screen(SecretScreen(webhook))

        self.push_screen(CreateWebhookDialog(self.core), created)

    # --- settings -------------------------------------------------------------------------------------------------

    def watch_theme(self, theme: str) -> None:
        if getattr(self, "_theme_loaded", False):
            self.run_worker(
                self.core.save_theme(theme), group="settings", exit_on_error=False, description="saving the theme"
            )


def make_app(
    config: Config,
    *,
    token: str | None = None,
    client: PigeonClient | None = None,
    client_factory: ClientFactory | None = None,
    remember_token: bool = True,
    save_settings: bool = True,
    clock: Callable[[], datetime] | None = None,
    login_message: str = "",
    live: bool | None = None,
    poll_interval: float | None = None,
    store: MailStore | None = None,
) -> PigeonApp:
    """The app, used alike by the CLI and the tests: with a token (or client) it opens on the mail, else on login."""
    core = MailCore(
        config,
        store if store is not None else MailStore.for_profile(config.profile),
        token=token,
        client=client,
        client_factory=client_factory,
        clock=clock,
        remember_token=remember_token,
        save_settings=save_settings,
        live=live,
        poll_interval=poll_interval,
    )
    return PigeonApp(core, login_message=login_message)
