"""The Pigeon terminal app.

The App owns one API client and the mailbox for its whole life; screens and widgets never build their own. Every
network or disk call runs in a worker, and worker failures are turned into UI in one place
(:meth:`PigeonApp.on_worker_state_changed`).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib
import logging
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, ClassVar

from textual import events
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.reactive import reactive
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from pigeon import credentials
from pigeon.api import ConnectionFailed, PigeonError, RateLimited, Unauthorized
from pigeon.config import Config, ConfigError, update_config_file
from pigeon.store.drafts import Drafts
from pigeon.store.mailstore import MailStore
from pigeon.tui.commands import PigeonCommands
from pigeon.tui.mailbox import Mailbox
from pigeon.tui.memory import Collector, freeze_start_up
from pigeon.tui.render import safe_line
from pigeon.tui.screens.login import LoginScreen
from pigeon.tui.screens.main import MainScreen
from pigeon.tui.screens.modals import PickScreen
from pigeon.tui.widgets.reader import Reader

if TYPE_CHECKING:  # the models (pydantic) and the contact and dialog screens load when first used
    from pigeon.api.client import PigeonClient
    from pigeon.models import Contact, Inbox, WebhookSubscription

log = logging.getLogger("pigeon.tui")

ClientFactory = Callable[[str, str], "PigeonClient"]


def default_client_factory(base_url: str, token: str) -> PigeonClient:
    from pigeon.api.client import PigeonClient  # httpx loads here, not before the first screen

    return PigeonClient(base_url, token)


class PigeonApp(App[None]):
    """Pigeon. Give it a configuration and either a ready client or the means to make one after login."""

    CSS_PATH = "app.tcss"
    TITLE = "Pigeon"
    COMMANDS: ClassVar = App.COMMANDS | {PigeonCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit", id="app.quit", tooltip="Leave Pigeon"),
        Binding("question_mark", "help", "Help", id="app.help", tooltip="Every key of this context"),
    ]

    offline: reactive[bool] = reactive(False)

    def __init__(
        self,
        config: Config,
        *,
        client: PigeonClient | None = None,
        token: str | None = None,
        client_factory: ClientFactory | None = None,
        remember_token: bool = True,
        save_settings: bool = True,
        clock: Callable[[], datetime] | None = None,
        login_message: str = "",
        live: bool | None = None,
        poll_interval: float | None = None,
        store: MailStore | None = None,
    ) -> None:
        super().__init__()
        self._token = token
        self.store = store or MailStore(":memory:")
        self.login_message = login_message
        profile = config.profile_config
        self.live = profile.live if live is None else live
        self.poll_interval = poll_interval or profile.poll_interval
        self.config = config
        self._client = client
        self._client_lock = asyncio.Lock()
        self.client_factory: ClientFactory = client_factory or default_client_factory
        self.remember_token = remember_token
        self.save_settings = save_settings
        self.clock = clock or (lambda: datetime.now(UTC))
        self.mailbox = Mailbox()
        self.collector = Collector()
        # `pigeon` turns the collector off before it imports Textual: the collector is then the app's to manage
        # (pigeon.tui.memory). An app made with the collector on (tests, another program) leaves it alone.
        self.manages_collector = not gc.isenabled()
        self.drafts = Drafts("contacts")
        if config.ui.theme in self.available_themes:
            self.theme = config.ui.theme
        self._theme_loaded = True

    # --- life -------------------------------------------------------------------------------------------------

    @property
    def client(self) -> PigeonClient:
        """The app's one client, made on first use (so httpx loads after the first screen is painted).

        Workers use :meth:`connect`, which makes it off the event loop."""
        if self._client is None:
            self._client = self._make_client()
        return self._client

    def _make_client(self) -> PigeonClient:
        if not self._token:
            raise RuntimeError("not logged in")
        client = self.client_factory(self.config.base_url, self._token)
        # httpx loads anyio's backend on the first request; load it here too, off the event loop.
        with contextlib.suppress(ImportError):
            importlib.import_module("httpcore._backends.anyio")
            importlib.import_module("anyio._backends._asyncio")
        return client

    @property
    def service_url(self) -> str:
        """The address of the service in use (the login screen may have changed it)."""
        return self._client.base_url if self._client else self.config.base_url

    async def connect(self) -> PigeonClient:
        """The app's one client; the first call makes it in a thread (httpx, TLS and anyio take about 0.3 s to
        load, and the screen keeps painting and answering keys meanwhile)."""
        async with self._client_lock:
            if self._client is None:
                self._client = await asyncio.to_thread(self._make_client)
                self.start_up_stage_done()
        return self._client

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
        await super().on_event(event)

    def get_default_screen(self) -> Screen:
        """The first screen: the mail, or the login screen without a token. It is the bottom of the stack itself:
        a blank screen beneath would repaint the whole screen above it whenever it refreshed."""
        if self._client is None and not self._token:
            return LoginScreen(self.config.base_url, self.login_message)
        return MainScreen()

    def on_mount(self) -> None:
        if self.config.ui.keymap:
            self.set_keymap(self.config.ui.keymap)

    async def on_unmount(self) -> None:
        if self._client is not None:
            await self._client.aclose()
        self.store.close()

    @property
    def main_screen(self) -> MainScreen | None:
        return next((s for s in self.screen_stack if isinstance(s, MainScreen)), None)

    async def logged_in(self, client: PigeonClient, base_url: str, token: str) -> None:
        """A token was checked: keep it (keyring) and the URL (config), then show the mail."""
        old, self._client = self._client, client
        if old is not None:
            await old.aclose()
        self.mailbox = Mailbox()
        if self.remember_token:
            try:
                await asyncio.to_thread(credentials.store_token, self.config.profile, token)
            except credentials.CredentialsError as exc:
                self.notify(f"Logged in for this session only. {exc}", severity="warning", timeout=15, markup=False)
        if self.save_settings:
            await self._save(lambda data: self._set_base_url(data, base_url))
        while len(self.screen_stack) > 1:
            self.pop_screen()
        await self.push_screen(MainScreen())

    def _set_base_url(self, data: dict, base_url: str) -> None:
        profiles = data.setdefault("profiles", {})
        profiles.setdefault(self.config.profile, {})["base_url"] = base_url
        data.setdefault("default_profile", self.config.profile)

    def action_logout(self) -> None:
        self.run_worker(self._logout(), group="logout", exit_on_error=False)

    async def _logout(self) -> None:
        if self.remember_token:
            try:
                await asyncio.to_thread(credentials.delete_token, self.config.profile)
            except credentials.CredentialsError as exc:
                self.notify(str(exc), severity="warning", markup=False)
        self.show_login(self.service_url, "Logged out.")

    def show_login(self, base_url: str, message: str) -> None:
        while len(self.screen_stack) > 1:
            self.pop_screen()
        self.push_screen(LoginScreen(base_url, message))

    # --- errors: the one place ------------------------------------------------------------------------------

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Failures of the app's own workers; screens forward theirs here (the message does not bubble)."""
        worker = event.worker
        if event.state is WorkerState.ERROR and worker.error is not None:
            self.report(worker.error, worker.description or worker.name or "working")

    def report(self, error: BaseException, doing: str) -> None:
        """Tell the user what failed and what to do about it."""
        if isinstance(error, Unauthorized):
            self.show_login(self.service_url, "The service refused the token (it may have expired). Log in again.")
        elif isinstance(error, ConnectionFailed):
            self.offline = True
            self.notify(f"{error} Press r to retry.", title="Offline", severity="warning", timeout=8, markup=False)
        elif isinstance(error, RateLimited):
            wait = f" in {error.retry_after:.0f} s" if error.retry_after else " later"
            self.notify(f"The service is busy; try again{wait}.", severity="warning", markup=False)
        elif isinstance(error, PigeonError):
            self.notify(str(error), title=f"Failed {doing}", severity="error", timeout=10, markup=False)
        else:
            log.error("unexpected error while %s", doing, exc_info=error)
            self.notify(
                f"Something unexpected went wrong while {doing} ({type(error).__name__}). Pigeon keeps running.",
                severity="error",
                markup=False,
            )

    # --- commands -----------------------------------------------------------------------------------------------

    def action_help(self) -> None:
        screen = self.screen
        if isinstance(screen, MainScreen):
            screen.action_help()

    def run_main(self, what: str) -> None:
        screen = self.main_screen
        if screen is None:
            return
        if what == "quotes":
            screen.query_one(Reader).action_toggle_quotes()
        elif what == "save":
            screen.action_save_attachment()
        else:
            getattr(screen, f"action_{what}")()

    def show_view(self, view: str) -> None:
        if self.main_screen is not None:
            self.main_screen.action_view(view)

    def go_to_inbox(self, inbox_id: str | None) -> None:
        if self.main_screen is not None and inbox_id:
            self.main_screen.select_inbox(inbox_id)

    def go_to_thread(self, thread_id: str | None) -> None:
        screen = self.main_screen
        thread = self.mailbox.thread(thread_id or "")
        if screen is not None and thread is not None and thread.id:
            screen.open_thread(thread.id)

    # --- contacts, inboxes, webhooks ------------------------------------------------------------------------

    def action_contacts(self) -> None:
        from pigeon.tui.screens.contacts import ContactBook

        if not isinstance(self.screen, ContactBook):
            self.push_screen(ContactBook())

    def edit_contact(self, contact: Contact, on_saved: Callable[[Contact], None] | None = None) -> None:
        self.run_worker(self._open_editor(contact, on_saved), group="editor", exit_on_error=False)

    async def _open_editor(self, contact: Contact, on_saved: Callable[[Contact], None] | None) -> None:
        from pigeon.tui.screens.contacts import ContactEditor

        draft = await asyncio.to_thread(self.drafts.load, contact.id) if contact.id else None

        def done(result: Contact | None) -> None:
            if result is not None and on_saved is not None:
                on_saved(result)

        await self.push_screen(ContactEditor(contact, self.drafts, draft), done)

    def action_edit_sender(self) -> None:
        """Edit the person who wrote the open thread (asks which one when several did)."""
        screen = self.main_screen
        reader = screen.query_one(Reader) if screen else None
        if reader is None or reader.thread is None:
            self.notify("Open a thread first.", markup=False)
            return
        from pigeon.models import ParticipantRole

        owner = {p.contact_id for p in reader.thread.participants if p.role == ParticipantRole.OWNER}
        people: dict[str, Contact] = {}
        for message in reversed(reader.messages):
            contact_id = message.sender.contact_id if message.sender else None
            contact = self.mailbox.contacts.get(contact_id or "") or (
                message.sender.contact if message.sender else None
            )
            if contact is not None and contact.id and contact.id not in owner:
                people.setdefault(contact.id, contact)
        if not people:
            self.notify("No sender of this thread is a known contact.", markup=False)
            return
        choices = list(people.values())
        if len(choices) == 1:
            self.edit_contact(choices[0])
            return

        def chosen(index: int | None) -> None:
            if index is not None:
                self.edit_contact(choices[index])

        self.push_screen(PickScreen("Edit which contact?", [safe_line(c.name) for c in choices]), chosen)

    def contact_saved(self, contact: Contact) -> None:
        """A contact changed on the service: show the new version everywhere it appears."""
        if not contact.id:
            return
        self.mailbox.contacts[contact.id] = contact
        self.run_worker(asyncio.to_thread(self.store.put_contact, contact), group="store", exit_on_error=False)
        for messages in self.mailbox.messages.values():
            for message in messages:
                if message.sender and message.sender.contact_id == contact.id:
                    message.sender.contact = contact
        screen = self.main_screen
        if screen is not None:
            reader = screen.query_one(Reader)
            for message in reader.messages:
                if message.sender and message.sender.contact_id == contact.id:
                    message.sender.contact = contact
            if reader.thread is not None:
                reader.show(reader.thread, reader.messages, self.mailbox.contacts, progress=reader.progress)

    def action_create_inbox(self) -> None:
        from pigeon.tui.screens.dialogs import CreateInboxDialog

        def created(inbox: Inbox | None) -> None:
            if inbox is not None:
                self.mailbox.inboxes.append(inbox)
                if self.main_screen is not None:
                    self.main_screen.show_threads()
                self.notify(f"Created inbox {inbox.email}", markup=False)

        self.push_screen(CreateInboxDialog(), created)

    def action_create_webhook(self) -> None:
        from pigeon.tui.screens.dialogs import CreateWebhookDialog, SecretScreen

        def created(webhook: WebhookSubscription | None) -> None:
            if webhook is not None:
                self.push_screen(SecretScreen(webhook))

        self.push_screen(CreateWebhookDialog(), created)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)

    # --- settings -------------------------------------------------------------------------------------------------

    def watch_theme(self, theme: str) -> None:
        if getattr(self, "_theme_loaded", False) and self.save_settings and theme != self.config.ui.theme:
            self.config.ui.theme = theme
            self.run_worker(self._save(lambda data: data.setdefault("ui", {}).update(theme=theme)), group="settings")

    async def _save(self, change: Callable[[dict], None]) -> None:
        try:
            await asyncio.to_thread(update_config_file, change, self.config.path)
        except (ConfigError, OSError) as exc:
            self.notify(f"Could not save settings: {exc}", severity="warning", markup=False)


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
    factory = client_factory or default_client_factory
    return PigeonApp(
        config,
        client=client,
        token=token,
        client_factory=factory,
        remember_token=remember_token,
        save_settings=save_settings,
        clock=clock,
        login_message=login_message,
        live=live,
        poll_interval=poll_interval,
        store=store if store is not None else MailStore.for_profile(config.profile),
    )
