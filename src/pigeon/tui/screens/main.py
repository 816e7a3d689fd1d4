"""The main screen: inboxes, thread list and reader."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import httpx
from pydantic import ValidationError
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Input, OptionList, Static
from textual.worker import Worker

from pigeon import locations
from pigeon.api import PigeonError
from pigeon.api.receiver import WebhookReceiver, event_message
from pigeon.models import ContentBlock, EventKind, MessageDirection, Thread
from pigeon.models import Message as MailMessage
from pigeon.sanitize import clean_line
from pigeon.tui.mailbox import ALL_INBOXES
from pigeon.tui.render import attachment_bytes, human_size, safe_line, sender_name
from pigeon.tui.screens.modals import ConfirmScreen, HelpScreen, PickScreen
from pigeon.tui.widgets.inbox_list import InboxList
from pigeon.tui.widgets.reader import Reader
from pigeon.tui.widgets.thread_list import ListSource, ThreadList

if TYPE_CHECKING:
    from pigeon.tui.app import PigeonApp

log = logging.getLogger("pigeon.tui")

NARROW_WIDTH = 120
PREFETCH_CONCURRENCY = 4
LIVE_DEBOUNCE = 0.3


def is_loopback(base_url: str) -> bool:
    host = httpx.URL(base_url).host
    return host in {"localhost", "::1"} or host.startswith("127.")


def attachment_filename(name: str | None) -> str:
    """A safe file name for an attachment: its base name only, cleaned; never a path."""
    base = clean_line(name or "").replace("\\", "/").rsplit("/", 1)[-1].replace("\x00", "").strip()
    if base in {"", ".", ".."}:
        return "attachment"
    return base[:200]


def save_into(folder: Path, name: str | None, data: bytes, *, overwrite: bool) -> Path:
    """Write ``data`` as ``folder/<safe name>``; refuses any path outside ``folder``; ``FileExistsError`` if the
    file exists and ``overwrite`` is false."""
    folder.mkdir(parents=True, exist_ok=True)
    root = folder.resolve()
    safe_name = attachment_filename(name)
    target = root / safe_name
    # The name is a bare base name, so the target sits in the folder itself; links are never followed:
    # O_EXCL refuses an existing file or link, O_NOFOLLOW a link, and overwriting removes the entry first.
    if target.parent != root or os.sep in safe_name or (os.altsep and os.altsep in safe_name):
        raise PermissionError(f"{safe_name} would land outside the download folder")
    if overwrite and (target.exists() or target.is_symlink()):
        target.unlink()
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(target, flags, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    return target


class MainScreen(Screen[None]):
    class LiveEvent(Message):
        """A verified webhook event arrived."""

        def __init__(self, data: dict[str, Any]) -> None:
            super().__init__()
            self.data = data

    AUTO_FOCUS = "#threads"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="main.back", tooltip="Back to the list; clear the filter"),
        Binding("r", "refresh", "Refresh", id="main.refresh", tooltip="Load inboxes and threads again"),
        Binding("slash", "filter", "Filter", id="main.filter", tooltip="Narrow the list as you type"),
        Binding("f", "zoom", "Zoom", id="main.zoom", tooltip="Reader full screen (again to go back)"),
        Binding("b", "app.contacts", "Contacts", id="main.contacts", tooltip="Every contact seen in mail"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.inbox_id = ALL_INBOXES
        self.filter_text = ""
        self._prefetch_timer = None
        self.live_mode = ""
        self._live_started = False
        self._receiver: WebhookReceiver | None = None
        self._changed_threads: set[str] = set()
        self._live_timer = None

    @property
    def pigeon(self) -> PigeonApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield Static("", id="offline", markup=False)
        with Horizontal(id="panes"):
            yield InboxList(id="inboxes")
            with Vertical(id="list-pane"):
                yield Input(placeholder="Filter: type to narrow the list, enter to keep, esc to clear", id="filter")
                yield ThreadList(id="threads", clock=self.pigeon.clock)
                yield Static("", id="list-status", markup=False)
            yield Reader(id="reader")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#inboxes").border_title = "Inboxes"
        self.query_one("#list-pane").border_title = "Threads"
        self.query_one("#reader").border_title = "Message"
        self.watch(self.pigeon, "offline", self._offline_changed)
        self.refresh_mail()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.pigeon.on_worker_state_changed(event)

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.width < NARROW_WIDTH, "narrow")

    # --- loading ---------------------------------------------------------------------------------------------

    def action_refresh(self) -> None:
        self.refresh_mail()

    def refresh_mail(self) -> None:
        threads = self.query_one(ThreadList)
        if not len(threads.source):
            threads.loading = True
        self.query_one("#list-status", Static).update(Content.styled("Loading…", "italic"))
        self.load_mail()

    @work(exclusive=True, group="load", exit_on_error=False, description="loading your mail")
    async def load_mail(self) -> None:
        client = self.pigeon.client
        try:
            inboxes = await client.inboxes.list()
            threads = await client.threads.list()
        except PigeonError:
            self.query_one("#list-status", Static).update(
                Content.styled("Threads could not be loaded. Press r to retry.", "$warning")
            )
            raise
        finally:
            self.query_one(ThreadList).loading = False
        mailbox = self.pigeon.mailbox
        mailbox.inboxes = inboxes
        mailbox.set_threads(threads)
        self.pigeon.offline = False
        self.show_threads()
        self.schedule_prefetch()
        if self.pigeon.live and not self._live_started:
            self._live_started = True
            self.start_live()

    def show_threads(self) -> None:
        mailbox = self.pigeon.mailbox
        threads = mailbox.threads_in(self.inbox_id)
        if self.filter_text:
            needle = self.filter_text.lower()
            threads = [
                t for t in threads if needle in (t.subject or "").lower() or needle in mailbox.row(t).who.lower()
            ]
        thread_list = self.query_one(ThreadList)
        current = thread_list.current
        thread_list.set_source(ListSource(threads, mailbox.row), keep=current.id if current else None)  # type: ignore[arg-type]
        unread = {ALL_INBOXES: mailbox.unread_count(ALL_INBOXES)}
        unread |= {inbox.id: mailbox.unread_count(inbox.id) for inbox in mailbox.inboxes}
        self.query_one(InboxList).show_inboxes(mailbox.inboxes, unread, self.inbox_id)
        self.update_status(len(threads))

    def update_status(self, shown: int | None = None) -> None:
        thread_list = self.query_one(ThreadList)
        shown = len(thread_list.source) if shown is None else shown
        parts = [f"{shown} thread{'s' if shown != 1 else ''}"]
        if self.filter_text:
            parts.append(f'matching "{clean_line(self.filter_text, limit=30)}"')
        if self.live_mode:
            parts.append(self.live_mode)
        self.query_one("#list-status", Static).update(Content.styled(" · ".join(parts), "dim"))

    def schedule_prefetch(self) -> None:
        if self._prefetch_timer is not None:
            self._prefetch_timer.stop()
        self._prefetch_timer = self.set_timer(0.15, self.prefetch_visible)

    @work(exclusive=True, group="prefetch", exit_on_error=False)
    async def prefetch_visible(self) -> None:
        """Fetch the first page of the threads on screen, to name their senders and mark attachments."""
        thread_list = self.query_one(ThreadList)
        mailbox = self.pigeon.mailbox
        wanted = [thread_list.source.row(i).id for i in thread_list.visible_range()]
        wanted = [t for t in wanted if t not in mailbox.summaries]
        if not wanted:
            return
        gate = asyncio.Semaphore(PREFETCH_CONCURRENCY)
        client = self.pigeon.client

        async def one(thread_id: str) -> None:
            async with gate:
                try:
                    page = await client.messages.list(thread_id, page_size=100)
                except PigeonError as exc:  # opportunistic: the list still works without names
                    log.debug("prefetch of %s failed: %s", thread_id, exc)
                    return
            if page.has_next_page:
                mailbox.learn(page.items)
                mailbox.summaries[thread_id] = mailbox._summarise(page.items)
            else:
                mailbox.set_messages(thread_id, page.items)
            thread_list.refresh_rows()

        await asyncio.gather(*(one(t) for t in wanted))

    # --- the list ---------------------------------------------------------------------------------------------

    @on(ThreadList.Highlighted)
    def _highlighted(self, event: ThreadList.Highlighted) -> None:
        self.schedule_prefetch()

    @on(ThreadList.Opened)
    def _opened(self, event: ThreadList.Opened) -> None:
        thread = self.pigeon.mailbox.thread(event.row.id)
        if thread is not None:
            self.open_thread(thread)

    def open_thread(self, thread: Thread) -> None:
        mailbox = self.pigeon.mailbox
        mailbox.mark_read(thread)
        self.query_one(ThreadList).refresh_rows()
        cached = mailbox.messages.get(thread.id or "")
        reader = self.query_one(Reader)
        complete = cached is not None and len(cached) >= (thread.message_count or 0)
        reader.show(thread, cached or [], mailbox.contacts, progress="" if complete else "Loading messages…")
        reader.focus()
        if not complete:
            self.load_thread(thread)
        self.show_threads()

    @work(exclusive=True, group="reader", exit_on_error=False, description="loading the thread")
    async def load_thread(self, thread: Thread) -> None:
        reader = self.query_one(Reader)
        mailbox = self.pigeon.mailbox
        total = thread.message_count or 0
        loaded = []
        try:
            async for page in self.pigeon.client.messages.iter_pages(thread.id or "", page_size=100):
                loaded += page.items
                mailbox.learn(page.items)
                progress = f"Loading messages… {len(loaded)} of {max(total, len(loaded))}" if page.has_next_page else ""
                reader.show(thread, list(loaded), mailbox.contacts, progress=progress)
        except PigeonError:
            if loaded:
                reader.show(thread, list(loaded), mailbox.contacts, progress="Some messages could not be loaded (r)")
            raise
        mailbox.set_messages(thread.id or "", loaded)
        self.query_one(ThreadList).refresh_rows()

    @on(OptionList.OptionHighlighted, "#inboxes")
    def _inbox_chosen(self, event: OptionList.OptionHighlighted) -> None:
        chosen = event.option.id or ALL_INBOXES
        if chosen != self.inbox_id:
            self.inbox_id = chosen
            self.show_threads()
            self.schedule_prefetch()

    def select_inbox(self, inbox_id: str) -> None:
        self.inbox_id = inbox_id
        self.show_threads()
        self.query_one(ThreadList).focus()

    # --- filter, back, zoom -----------------------------------------------------------------------------------

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.add_class("shown")
        box.focus()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.filter_text = event.value.strip()
        self.show_threads()
        self.schedule_prefetch()

    @on(Input.Submitted, "#filter")
    def _filter_kept(self, event: Input.Submitted) -> None:
        if not event.value.strip():
            self.query_one("#filter", Input).remove_class("shown")
        self.query_one(ThreadList).focus()

    def action_back(self) -> None:
        box = self.query_one("#filter", Input)
        if box.has_focus or (self.filter_text and self.focused is self.query_one(ThreadList)):
            box.value = ""
            box.remove_class("shown")
            self.query_one(ThreadList).focus()
        elif self.has_class("zoomed"):
            self.remove_class("zoomed")
            self.query_one(Reader).focus()
        elif self.focused is not self.query_one(ThreadList):
            self.query_one(ThreadList).focus()

    def action_zoom(self) -> None:
        self.toggle_class("zoomed")
        if self.has_class("zoomed"):
            self.query_one(Reader).focus()

    def action_help(self) -> None:
        rows: list[tuple[str, str, str]] = []
        seen: set[str] = set()
        for _key, active in self.active_bindings.items():
            binding = active.binding
            label = binding.description or binding.action
            ident = binding.id or ""
            if (ident or label) in seen:
                continue
            seen.add(ident or label)
            rows.append((self.app.get_key_display(binding), label, ident))
        focused = self.focused
        context = {
            "threads": "thread list",
            "reader": "reader",
            "inboxes": "inboxes",
            "filter": "filter",
        }.get(focused.id if focused and focused.id else "", "Pigeon")
        # Pigeon's own keys first (they have ids, for the keymap), then Textual's built-in ones.
        rows.sort(key=lambda row: (not row[2], row[2] or row[1]))
        self.app.push_screen(HelpScreen(context, rows))

    # --- attachments -----------------------------------------------------------------------------------------

    def action_save_attachment(self) -> None:
        attachments = self.query_one(Reader).attachments
        if not attachments:
            self.notify("This thread has no attachments.", markup=False)
            return
        if len(attachments) == 1:
            self.save_attachment(attachments[0][1])
            return
        items = [
            Content.assemble(
                safe_line(b.filename or "(unnamed)", limit=60), Content.styled(f"  {human_size(b.size)}", "dim")
            )
            for _, b in attachments
        ]

        def chosen(index: int | None) -> None:
            if index is not None:
                self.save_attachment(attachments[index][1])

        self.app.push_screen(PickScreen("Save which attachment?", items), chosen)

    def save_attachment(self, block: ContentBlock, *, overwrite: bool = False) -> None:
        self._save(block, overwrite)

    @work(group="save", exit_on_error=False, description="saving the attachment")
    async def _save(self, block: ContentBlock, overwrite: bool) -> None:
        folder = locations.download_dir()
        try:
            path = await asyncio.to_thread(
                save_into, folder, block.filename, attachment_bytes(block), overwrite=overwrite
            )
        except FileExistsError:
            name = attachment_filename(block.filename)
            question = Content.assemble("Replace ", safe_line(name, style="bold"), f" in {folder}?")

            def answer(yes: bool | None) -> None:
                if yes:
                    self.save_attachment(block, overwrite=True)

            self.app.push_screen(ConfirmScreen(question, yes="Replace", no="Keep"), answer)
            return
        except OSError as exc:
            self.notify(f"Could not save the attachment: {exc.strerror or exc}", severity="error", markup=False)
            return
        self.notify(f"Saved {path}", title="Attachment saved", markup=False)

    # --- live updates ----------------------------------------------------------------------------------------

    @work(exclusive=True, group="live", exit_on_error=False, description="starting live updates")
    async def start_live(self) -> None:
        """Webhooks to a receiver on 127.0.0.1 when the service runs on this machine; else polling."""
        client = self.pigeon.client
        if is_loopback(client.base_url):
            receiver = WebhookReceiver(lambda data: self.post_message(self.LiveEvent(data)))
            await receiver.start()
            try:
                hook = await client.webhooks.create(
                    url=receiver.url, events=[kind.value for kind in EventKind], description="Pigeon live updates"
                )
            except PigeonError as exc:
                await receiver.stop()
                log.info("webhook subscription refused, polling instead: %s", exc)
            else:
                receiver.secret = hook.secret
                self._receiver = receiver
                self.live_mode = "live"
                self.update_status()
                return
        self.live_mode = f"checking every {self.pigeon.poll_interval:.0f} s"
        self.set_interval(self.pigeon.poll_interval, self.poll)
        self.update_status()

    def poll(self) -> None:
        self.load_mail()

    async def on_unmount(self) -> None:
        if self._receiver is not None:
            await self._receiver.stop()

    def on_main_screen_live_event(self, event: LiveEvent) -> None:
        raw = event_message(event.data)
        try:
            message = MailMessage.model_validate(raw) if raw else None
        except ValidationError:
            return
        if message is None or not message.thread_id:
            return
        if event.data.get("type") == EventKind.MESSAGE_CREATED:
            self._changed_threads.add(message.thread_id)
            if message.direction != MessageDirection.OUTBOUND:
                who = clean_line(sender_name(message, self.pigeon.mailbox.contacts), limit=40)
                what = clean_line(message.subject or "(no subject)", limit=60)
                self.notify(f"{who}: {what}", title="New mail", timeout=4, markup=False)
            if self._live_timer is not None:
                self._live_timer.stop()
            self._live_timer = self.set_timer(LIVE_DEBOUNCE, self.live_refresh)
        else:
            self.update_message(message)

    @work(exclusive=True, group="live-refresh", exit_on_error=False, description="showing new mail")
    async def live_refresh(self) -> None:
        changed, self._changed_threads = self._changed_threads, set()
        mailbox = self.pigeon.mailbox
        mailbox.set_threads(await self.pigeon.client.threads.list())
        for thread_id in changed:
            mailbox.messages.pop(thread_id, None)
            mailbox.summaries.pop(thread_id, None)
        self.show_threads()
        self.schedule_prefetch()
        reader = self.query_one(Reader)
        if reader.thread is not None and reader.thread.id in changed:
            thread = mailbox.thread(reader.thread.id)
            if thread is not None:
                mailbox.mark_read(thread)
                self.load_thread(thread)

    def update_message(self, message: MailMessage) -> None:
        """A message changed (delivery status): show the new version where it is shown."""
        mailbox = self.pigeon.mailbox
        cached = mailbox.messages.get(message.thread_id or "")
        if cached is not None:
            mailbox.messages[message.thread_id or ""] = [message if m.id == message.id else m for m in cached]
        reader = self.query_one(Reader)
        if reader.thread is not None and reader.thread.id == message.thread_id:
            updated = [message if m.id == message.id else m for m in reader.messages]
            reader.show(reader.thread, updated, mailbox.contacts, progress=reader.progress)

    # --- offline ---------------------------------------------------------------------------------------------

    def _offline_changed(self, offline: bool) -> None:
        banner = self.query_one("#offline", Static)
        banner.set_class(offline, "shown")
        if offline:
            banner.update(
                Content.styled(
                    f"Offline: cannot reach {self.pigeon.client.base_url}. What was loaded stays readable. "
                    "Press r to retry.",
                    "bold",
                )
            )
