"""The main screen: inboxes, thread list and reader."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.reactive import Reactive
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, OptionList, Static
from textual.worker import Worker

from pigeon import locations
from pigeon.api import PigeonError
from pigeon.sanitize import clean_line
from pigeon.store.mailstore import MailStore
from pigeon.store.search import QueryError, parse_query
from pigeon.store.sync import recipients_of, sync, who_of
from pigeon.store.times import parse_when, presets
from pigeon.tui.mailbox import ALL_INBOXES
from pigeon.tui.render import attachment_bytes, human_size, load_readers, safe_line, sender_name
from pigeon.tui.screens.modals import ConfirmScreen, HelpScreen, InputScreen, PickScreen
from pigeon.tui.sources import StoreSource
from pigeon.tui.widgets.inbox_list import InboxList
from pigeon.tui.widgets.key_bar import KeyBar
from pigeon.tui.widgets.reader import Reader
from pigeon.tui.widgets.thread_list import ThreadList

if TYPE_CHECKING:  # pydantic and the models load after the first screen, when mail is first read or synced
    from pigeon.models import ContentBlock
    from pigeon.models import Message as MailMessage
    from pigeon.tui.app import PigeonApp

log = logging.getLogger("pigeon.tui")

NARROW_WIDTH = 120
PREFETCH_CONCURRENCY = 4
LIVE_DEBOUNCE = 0.3
MARK_READ_DELAY = 0.25
BACKGROUND_START_DELAY = 0.05
LOADING_DELAY = 0.1
READ_AHEAD_DELAY = 0.05
READ_AHEAD_KEPT = 16
PROGRESS_INTERVAL = 0.2  # seconds between two sync progress figures
SEARCH_DELAY = 0.15  # a word search starts once typing pauses this long


def is_loopback(base_url: str) -> bool:
    host = (urlsplit(base_url).hostname or "").lower()
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

    # Textual repaints the whole screen when focus moves; the widgets whose look depends on focus repaint
    # themselves (their styles change), so opening a thread (focus to the reader) redraws only what changed.
    focused: Reactive[Widget | None] = Reactive(None, repaint=False)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="main.back", tooltip="Back to the list; clear the filter"),
        Binding("r", "refresh", "Refresh", id="main.refresh", tooltip="Load inboxes and threads again"),
        # priority: the app runs it before it hands on the keys typed after it, so those reach the search box
        Binding(
            "slash",
            "filter",
            "Search",
            id="main.filter",
            tooltip="Search as you type (from: to: is: label: ...)",
            priority=True,
        ),
        Binding("f", "zoom", "Zoom", id="main.zoom", tooltip="Reader full screen (again to go back)"),
        Binding("b", "app.contacts", "Contacts", id="main.contacts", tooltip="Every contact seen in mail"),
        Binding("e", "done", "Done", id="triage.done", tooltip="Out of the inbox until new mail (in Done: back)"),
        Binding("s", "star", "Star", id="triage.star", tooltip="Star or unstar"),
        Binding("m", "read", "Read", id="triage.read", show=False, tooltip="Mark read"),
        Binding("U", "unread", "Unread", id="triage.unread", show=False, tooltip="Mark unread"),
        Binding("z", "snooze", "Snooze", id="triage.snooze", tooltip="Hide until a time or new mail"),
        Binding("l", "label", "Label", id="triage.label", show=False, tooltip="Add or remove a label"),
        Binding("M", "mute", "Mute", id="triage.mute", show=False, tooltip="Keep out of the inbox for good"),
        Binding("x", "select", "Select", id="triage.select", show=False, tooltip="Select for bulk actions"),
        Binding("J", "select(1)", "Select down", id="triage.select_down", show=False),
        Binding("K", "select(-1)", "Select up", id="triage.select_up", show=False),
        Binding("u", "undo", "Undo", id="triage.undo", tooltip="Take back the last action"),
        Binding("o", "sort", "Sort", id="main.sort", show=False, tooltip="By date, sender or subject"),
        Binding("1", "view('inbox')", "Inbox", id="view.inbox", show=False),
        Binding("2", "view('unread')", "Unread", id="view.unread", show=False),
        Binding("3", "view('starred')", "Starred", id="view.starred", show=False),
        Binding("4", "view('snoozed')", "Snoozed", id="view.snoozed", show=False),
        Binding("5", "view('done')", "Done view", id="view.done", show=False),
        Binding("6", "view('all')", "All mail", id="view.all", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.view = "inbox"
        self.inbox_id: str | None = None
        self.sort = "date"
        self.filter_text = ""
        self.selected: set[str] = set()
        self.label_views: list[str] = []
        self._sidebar_shown: Any = None
        self.synced = False
        self.live_mode = ""
        self._live_started = False
        self._receiver: Any = None
        self._live_timer = None
        self._progress_timer = None
        self._read_ahead_timer: Any = None
        self._ahead: dict[str, tuple[Any, list[MailMessage]]] = {}  # thread id -> (thread, its stored messages)
        self._status = Content()
        self._list_version = 0  # counts the lists shown: a search that ends after a newer list is dropped

    @property
    def pigeon(self) -> PigeonApp:
        return self.app  # type: ignore[return-value]

    @property
    def store(self) -> MailStore:
        return self.pigeon.store

    def compose(self) -> ComposeResult:
        yield Static("", id="offline", markup=False)
        with Horizontal(id="panes"):
            yield InboxList(id="inboxes")
            with Vertical(id="list-pane"):
                yield Input(
                    placeholder="Search: words, from: to: subject: is:unread has:attachment label: before: after:",
                    id="filter",
                )
                yield ThreadList(id="threads", clock=self.pigeon.clock)
            yield Reader(id="reader")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#inboxes").border_title = "Views"
        self.query_one(ThreadList).border_title = "Threads"
        self.query_one("#reader").border_title = "Message"
        self.watch(self.pigeon, "offline", self._offline_changed)
        self.show_threads()  # the list's rows, from the store at once: nothing else is read before the first frame
        self.set_interval(60, self.show_threads)  # snoozes come due
        self.call_after_refresh(self.after_first_frame)

    def after_first_frame(self) -> None:
        """What the first frame does not need: saved inboxes and contacts (pydantic models), then the sync
        (httpx). Both load modules for a few hundred milliseconds, in threads; they start a moment after the
        first frame so that the terminal has all of it first."""
        self.set_timer(BACKGROUND_START_DELAY, self.load_saved)
        self.set_timer(BACKGROUND_START_DELAY, self.refresh_mail)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.pigeon.on_worker_state_changed(event)

    @work(group="saved", exit_on_error=False, description="reading saved inboxes and contacts")
    async def load_saved(self) -> None:
        mailbox = self.pigeon.mailbox
        inboxes = await asyncio.to_thread(self.store.inboxes)
        if not self.synced:  # a sync that finished first has the fresher list
            mailbox.inboxes = inboxes
            self.refresh_sidebar()
        for contact in await asyncio.to_thread(self.store.contacts):
            if contact.id:
                mailbox.contacts.setdefault(contact.id, contact)
        await asyncio.to_thread(load_readers)
        self.pigeon.start_up_stage_done()  # the models and the body renderers are loaded

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.width < NARROW_WIDTH, "narrow")

    # --- loading ---------------------------------------------------------------------------------------------

    def action_refresh(self) -> None:
        self.refresh_mail()

    def refresh_mail(self) -> None:
        threads = self.query_one(ThreadList)
        if not len(threads.source):
            threads.loading = True
        self.set_status(Content.styled("Checking for mail…", "italic"))
        self.load_mail()

    @work(exclusive=True, group="load", exit_on_error=False, description="loading your mail")
    async def load_mail(self) -> None:
        """Sync the store with the service (only what changed), showing progress as threads arrive."""

        last_shown = 0.0

        def progress(done: int, total: int) -> None:
            nonlocal last_shown
            if done < total and time.monotonic() - last_shown < PROGRESS_INTERVAL:
                return  # a big first sync reports every thread: the list is drawn a few times a second, no more
            last_shown = time.monotonic()
            self.set_status(Content.styled(f"Syncing {done} of {total}…", "italic"))
            if self._progress_timer is None:
                self._progress_timer = self.set_timer(0.5, self._progress_refresh)

        try:
            report = await sync(await self.pigeon.connect(), self.store, on_progress=progress)
        except PigeonError:
            self.show_threads()  # the threads saved before the failure (the thread list comes first) are listed
            self.set_status(Content.styled("Could not check for mail · r to retry", "$warning"))
            raise
        finally:
            self.query_one(ThreadList).loading = False
            if self._progress_timer is not None:  # the list is shown whole now: no progress view after it
                self._progress_timer.stop()
                self._progress_timer = None
        mailbox = self.pigeon.mailbox
        mailbox.inboxes = list(report.inbox_list)
        mailbox.set_threads(list(report.thread_list))
        for thread_id in report.changed:
            mailbox.messages.pop(thread_id, None)
            self._ahead.pop(thread_id, None)
        self.pigeon.offline = False
        self.synced = True
        self.show_threads()
        reader = self.query_one(Reader)
        if reader.thread is not None and reader.thread.id in report.changed:
            self.load_thread(reader.thread.id or "", mark_read=self.focused is reader)
        if self.pigeon.live and not self._live_started:
            self._live_started = True
            self.start_live()

    def _progress_refresh(self) -> None:
        self._progress_timer = None
        self.show_threads()

    def show_threads(self, *, keep: bool = True) -> None:
        """Show the list for the current view, filter and sort, the cursor on the same thread if ``keep`` (else
        on the first). Rows come from the store at once, in this frame; a word search reads its matches in a
        worker (in a big mailbox its first letters match most of it)."""
        try:
            query = parse_query(self.filter_text)
        except QueryError as exc:
            self.set_status(Content.styled(clean_line(str(exc)), "$warning"))
            return
        self._list_version += 1
        make = functools.partial(
            StoreSource,
            self.store,
            view=self.view,
            query=query,
            inbox_id=self.inbox_id,
            sort=self.sort,
            now=self.pigeon.clock(),
            selected=self.selected.__contains__,
        )
        if query.fts():
            self.set_status(Content.styled("Searching…", "italic"))
            self.search(make, self._list_version, keep=keep)
        else:
            self._show_source(make(), cursor=None if keep else 0)

    @work(exclusive=True, group="search", exit_on_error=False, description="searching")
    async def search(self, make: Callable[[], StoreSource], version: int, *, keep: bool) -> None:
        await asyncio.sleep(SEARCH_DELAY)  # typing on: this search is replaced before it reads anything
        thread_list = self.query_one(ThreadList)
        current = thread_list.current if keep and len(thread_list.source) else None
        near = thread_list.cursor if keep else 0

        def read() -> tuple[StoreSource, int | None]:
            source = make()
            if len(source) and version == self._list_version:  # (a newer list makes the rest moot)
                source.stored(0)  # the first page of rows, and where the cursor's thread went: both off the UI's path
            found = ThreadList.find(source, current.id, near=near) if current else None
            return source, found

        source, found = await asyncio.to_thread(read)
        if version == self._list_version:  # nothing newer was shown meanwhile
            self._show_source(source, cursor=found if found is not None else near)

    def _show_source(self, source: StoreSource, *, cursor: int | None = None) -> None:
        thread_list = self.query_one(ThreadList)
        if cursor is not None:
            thread_list.set_source(source, cursor=cursor)
        else:
            current = thread_list.current if len(thread_list.source) else None
            thread_list.set_source(source, keep=current.id if current else None)
        self.update_status(len(source))
        self.refresh_sidebar()

    @work(exclusive=True, group="sidebar", exit_on_error=False, description="counting the views")
    async def refresh_sidebar(self) -> None:
        """The views' counts, computed off the UI's path (a COUNT over a big mailbox takes a while)."""
        now = self.pigeon.clock()
        counts = await asyncio.to_thread(self.store.view_counts, now)
        unread = await asyncio.to_thread(self.store.unread_by_inbox, now)
        self.label_views = [view for view in counts if view.startswith("label:")]
        selected = f"inbox:{self.inbox_id}" if self.inbox_id else f"view:{self.view}"
        shown = (counts, [i.id for i in self.pigeon.mailbox.inboxes], unread, selected)
        if shown == self._sidebar_shown:  # nothing changed: no relayout
            return
        self._sidebar_shown = shown
        self.query_one(InboxList).show_sidebar(counts, self.pigeon.mailbox.inboxes, unread, selected)

    def update_status(self, shown: int | None = None) -> None:
        thread_list = self.query_one(ThreadList)
        shown = len(thread_list.source) if shown is None else shown
        parts = [f"{shown} thread{'s' if shown != 1 else ''}"]
        if self.filter_text:
            parts.append(f'matching "{clean_line(self.filter_text, limit=30)}"')
        if self.selected:
            parts.append(f"{len(self.selected)} selected")
        if self.sort != "date":
            parts.append(f"by {self.sort}")
        if self.live_mode:
            parts.append(self.live_mode)
        self.set_status(Content.styled(" · ".join(parts), "dim"))

    def set_status(self, status: Content) -> None:
        """The list's status line: its count, filter and sort, or what is going on (in the list's bottom border)."""
        shown = self._status  # (Content's == compares the text alone: a warning may share a plain status's words)
        if status.plain != shown.plain or status.spans != shown.spans:  # the list is drawn again: only on a change
            self._status = status
            self.query_one(ThreadList).border_subtitle = status

    @property
    def status(self) -> str:
        """The list's status line, as plain text."""
        return self._status.plain

    # --- the list ---------------------------------------------------------------------------------------------

    @on(ThreadList.Highlighted)
    def _highlighted(self, event: ThreadList.Highlighted) -> None:
        """Read the highlighted thread from the store once the cursor rests on it, so that Enter shows it at
        once (no trip to a thread and back while the key waits)."""
        if self._read_ahead_timer is not None:
            self._read_ahead_timer.stop()
        thread_id = event.row.id
        if thread_id not in self._ahead and thread_id not in self.pigeon.mailbox.messages:
            self._read_ahead_timer = self.set_timer(READ_AHEAD_DELAY, lambda: self.read_ahead(thread_id))

    @work(exclusive=True, group="read-ahead", exit_on_error=False, description="reading ahead")
    async def read_ahead(self, thread_id: str) -> None:
        store = self.store

        def read() -> tuple[Any, list[MailMessage]]:
            return store.thread(thread_id), store.messages(thread_id)

        thread, messages = await asyncio.to_thread(read)
        if thread is None or thread_id in self.pigeon.mailbox.messages:  # gone, or opened while it was read
            return
        self._ahead[thread_id] = (thread, messages)
        while len(self._ahead) > READ_AHEAD_KEPT:
            self._ahead.pop(next(iter(self._ahead)))

    @on(ThreadList.Opened)
    def _opened(self, event: ThreadList.Opened) -> None:
        self.open_thread(event.row.id)

    def open_thread(self, thread_id: str) -> None:
        """Show the thread in the reader and move there. Messages in the store appear with the move, in one frame;
        "Loading…" shows only if they take longer than ``LOADING_DELAY`` (the service has them)."""
        self.load_thread(thread_id, mark_read=True, focus=True)

    @work(exclusive=True, group="reader", exit_on_error=False, description="loading the thread")
    async def load_thread(self, thread_id: str, *, mark_read: bool = True, focus: bool = False) -> None:
        reader = self.query_one(Reader)
        mailbox = self.pigeon.mailbox
        store = self.store
        ahead_thread, ahead_messages = self._ahead.pop(thread_id, (None, []))
        thread = mailbox.thread(thread_id) or ahead_thread or await asyncio.to_thread(store.thread, thread_id)
        if thread is None:
            return

        def show(messages: list[MailMessage], progress: str = "") -> None:
            reader.show(thread, messages, mailbox.contacts, progress=progress)
            if focus and self.focused is not reader:
                reader.focus()

        waiting = self.set_timer(LOADING_DELAY, lambda: show([], "Loading messages…")) if focus else None
        try:
            cached = (
                mailbox.messages.get(thread_id) or ahead_messages or await asyncio.to_thread(store.messages, thread_id)
            )
        finally:
            if waiting is not None:
                waiting.stop()
        total = thread.message_count or 0
        if mark_read:  # after the messages are painted: the list's bookkeeping never delays reading
            self.set_timer(MARK_READ_DELAY, lambda: self.mark_opened(thread_id))
        if cached and len(cached) >= total:
            mailbox.learn(cached)
            mailbox.messages[thread_id] = cached
            show(cached)
            return
        if focus:
            show(list(cached or []), "Loading messages…")
        loaded: list[MailMessage] = []
        try:
            client = await self.pigeon.connect()
            async for page in client.messages.iter_pages(thread_id, page_size=100):
                loaded += page.items
                mailbox.learn(page.items)
                progress = f"Loading messages… {len(loaded)} of {max(total, len(loaded))}" if page.has_next_page else ""
                reader.show(thread, list(loaded), mailbox.contacts, progress=progress)
        except PigeonError:
            if cached or loaded:
                reader.show(
                    thread, loaded or cached, mailbox.contacts, progress="Some messages could not be loaded (r)"
                )
            raise
        mailbox.messages[thread_id] = loaded
        await asyncio.to_thread(
            store.put_messages, thread_id, loaded, who=who_of(loaded), recipients=recipients_of(loaded)
        )

    @work(group="mark-read", exit_on_error=False, description="marking the thread read")
    async def mark_opened(self, thread_id: str) -> None:
        await self._change_list([thread_id], lambda ids: self.store.mark_read(ids, record=False))

    async def _change_list(
        self, targets: list[str] | Callable[[], list[str]], change: Callable[[list[str]], Any]
    ) -> Any:
        """Run ``change`` on threads ``targets`` (or those a function of them names) in a thread, then show the
        list as it is now. The new list is made in that thread too, counted from the old one (how many of the
        threads the view held before and holds after), with its screen of rows read and the cursor's thread
        found: the UI only swaps it in."""
        thread_list = self.query_one(ThreadList)
        old = thread_list.source
        version = self._list_version
        current = thread_list.current if len(old) else None
        near, shown = thread_list.cursor, thread_list.visible_range()

        def run() -> tuple[Any, StoreSource | None, int | None]:
            ids = targets() if callable(targets) else targets
            if not isinstance(old, StoreSource):
                return change(ids), None, None
            before = old.members(ids)
            result = change(ids)
            fresh = old.changed(old.members(ids) - before)
            fresh.prefetch(shown)
            found = ThreadList.find(fresh, current.id, near=near) if current else None
            return result, fresh, found

        result, fresh, found = await asyncio.to_thread(run)
        if fresh is not None and version == self._list_version:  # the list is still the one this changed
            self._list_version += 1
            if thread_list.cursor == near:
                self._show_source(fresh, cursor=found if found is not None else near)
            else:  # a key moved the cursor meanwhile: keep the thread it is on now
                self._show_source(fresh)
        else:
            self.show_threads()
        return result

    @on(OptionList.OptionHighlighted, "#inboxes")
    def _sidebar_chosen(self, event: OptionList.OptionHighlighted) -> None:
        chosen = event.option.id or "view:inbox"
        if chosen.startswith("view:"):
            self.view, self.inbox_id = chosen.removeprefix("view:"), None
        elif chosen.startswith("inbox:"):
            self.view, self.inbox_id = "inbox", chosen.removeprefix("inbox:")
        self.selected.clear()
        self.show_threads()

    def select_inbox(self, inbox_id: str) -> None:
        self.view, self.inbox_id = "inbox", (None if inbox_id == ALL_INBOXES else inbox_id)
        self.show_threads()
        self.set_focus(self.query_one(ThreadList))

    def action_view(self, view: str) -> None:
        self.view, self.inbox_id = view, None
        self.selected.clear()
        self.show_threads()
        self.set_focus(self.query_one(ThreadList))

    def action_sort(self) -> None:
        order = ["date", "sender", "subject"]
        self.sort = order[(order.index(self.sort) + 1) % len(order)]
        self.show_threads()

    # --- triage ----------------------------------------------------------------------------------------------

    def targets(self) -> list[str]:
        """The selected threads, or else the one under the cursor."""
        if self.selected:
            return sorted(self.selected)
        current = self.query_one(ThreadList).current
        return [current.id] if current else []

    def triage(self, change: Callable[[list[str]], str]) -> None:
        ids = self.targets()
        if not ids:
            self.notify("No thread to act on.", markup=False)
            return
        self._triage(ids, change)

    @work(group="triage", exit_on_error=False, description="changing the threads")
    async def _triage(self, ids: list[str], change: Callable[[list[str]], str]) -> None:
        said = await self._change_list(ids, change)
        self.selected.clear()
        self.query_one(ThreadList).refresh_rows()  # the marks of the selection go, and its count in the status
        self.update_status()
        self.notify(f"{said} — u to undo", markup=False, timeout=4)

    def action_done(self) -> None:
        self.triage(lambda ids: self.store.done(ids, on=self.view != "done"))

    def action_star(self) -> None:
        thread_list = self.query_one(ThreadList)
        current = thread_list.current
        on = not (current and current.starred and not self.selected)
        self.triage(lambda ids: self.store.star(ids, on=on))

    def action_read(self) -> None:
        self.triage(lambda ids: self.store.mark_read(ids, read=True))

    def action_unread(self) -> None:
        self.triage(lambda ids: self.store.mark_read(ids, read=False))

    def action_mute(self) -> None:
        current = self.query_one(ThreadList).current
        on = not (current is not None and self.view == "all" and self._is_muted(current.id))
        self.triage(lambda ids: self.store.mute(ids, on=on))

    def _is_muted(self, thread_id: str) -> bool:
        source = self.query_one(ThreadList).source
        if isinstance(source, StoreSource):
            index = self.query_one(ThreadList).cursor
            return source.stored(index).muted
        return False

    def action_snooze(self) -> None:
        ids = self.targets()
        if not ids:
            return
        choices = presets(self.pigeon.clock())
        items = [Content(f"{label}  ({when:%a %d %b %H:%M})") for label, when in choices]
        items.append(Content("Pick a date and time…"))

        def typed(text: str | None) -> None:
            if not text:
                return
            try:
                when = parse_when(text, self.pigeon.clock())
            except ValueError as exc:
                self.notify(str(exc), severity="warning", markup=False)
                return
            self._triage(ids, lambda chosen: self.store.snooze(chosen, when))

        def picked(index: int | None) -> None:
            if index is None:
                return
            if index < len(choices):
                when = choices[index][1]
                self._triage(ids, lambda chosen: self.store.snooze(chosen, when))
            else:
                self.app.push_screen(
                    InputScreen(
                        "Snooze until", "A date and time like 2026-11-23 09:00, or later / tomorrow / next-week"
                    ),
                    typed,
                )

        self.app.push_screen(PickScreen("Snooze until…", items), picked)

    def action_label(self) -> None:
        ids = self.targets()
        if not ids:
            return

        def typed(text: str | None) -> None:
            if not text:
                return
            name, on = (text[1:], False) if text.startswith("-") else (text, True)
            try:
                self._triage(ids, lambda chosen: self.store.label(chosen, name, on=on))
            except ValueError as exc:
                self.notify(str(exc), severity="warning", markup=False)

        self.app.push_screen(InputScreen("Label", "A label to add; -label removes it"), typed)

    def action_select(self, move: int = 0) -> None:
        current = self.query_one(ThreadList).current
        if current is None:
            return
        if current.id in self.selected and move == 0:
            self.selected.discard(current.id)
        else:
            self.selected.add(current.id)
        thread_list = self.query_one(ThreadList)
        thread_list.refresh_rows()
        if move:
            thread_list.cursor += move
            if move and thread_list.current:
                self.selected.add(thread_list.current.id)
                thread_list.refresh_rows()
        self.update_status()

    def action_undo(self) -> None:
        self._undo()

    @work(group="triage", exit_on_error=False, description="undoing")
    async def _undo(self) -> None:
        said = await self._change_list(self.store.undo_targets, lambda _: self.store.undo())
        self.notify(f"Undone: {said}" if said else "Nothing to undo.", markup=False, timeout=4)

    # --- filter, back, zoom -----------------------------------------------------------------------------------

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        if box.has_focus:  # a / typed in the search (the binding comes first, being a priority one)
            box.insert_text_at_cursor("/")
            return
        box.add_class("shown")
        self.set_focus(box)  # at once, before the keys typed after it are handed on: they are the search's

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.filter_text = event.value.strip()
        # new results start at the first; a cleared search keeps the thread it was on, now in the whole list
        self.show_threads(keep=not self.filter_text)

    @on(Input.Submitted, "#filter")
    def _filter_kept(self, event: Input.Submitted) -> None:
        if not event.value.strip():
            self.query_one("#filter", Input).remove_class("shown")
        self.set_focus(self.query_one(ThreadList))

    def action_back(self) -> None:
        box = self.query_one("#filter", Input)
        if box.has_focus or (self.filter_text and self.focused is self.query_one(ThreadList)):
            box.value = ""
            box.remove_class("shown")
            self.set_focus(self.query_one(ThreadList))
        elif self.has_class("zoomed"):
            self.remove_class("zoomed")
            self.set_focus(self.query_one(Reader))
        elif self.focused is not self.query_one(ThreadList):
            self.set_focus(self.query_one(ThreadList))

    def action_zoom(self) -> None:
        self.toggle_class("zoomed")
        if self.has_class("zoomed"):
            self.set_focus(self.query_one(Reader))

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
        from pigeon.api.receiver import WebhookReceiver  # only when live updates are on
        from pigeon.models import EventKind

        client = await self.pigeon.connect()
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
        from pydantic import ValidationError

        from pigeon.api.receiver import event_message
        from pigeon.models import EventKind, MessageDirection
        from pigeon.models import Message as MailMessage

        raw = event_message(event.data)
        try:
            message = MailMessage.model_validate(raw) if raw else None
        except ValidationError:
            return
        if message is None or not message.thread_id:
            return
        if event.data.get("type") == EventKind.MESSAGE_CREATED:
            if message.direction != MessageDirection.OUTBOUND:
                who = clean_line(sender_name(message, self.pigeon.mailbox.contacts), limit=40)
                what = clean_line(message.subject or "(no subject)", limit=60)
                self.notify(f"{who}: {what}", title="New mail", timeout=4, markup=False)
            if self._live_timer is not None:
                self._live_timer.stop()
            self._live_timer = self.set_timer(LIVE_DEBOUNCE, self.live_refresh)
        else:
            self.update_message(message)

    def live_refresh(self) -> None:
        self.load_mail()

    def update_message(self, message: MailMessage) -> None:
        """A message changed (delivery status): show the new version where it is shown."""
        mailbox = self.pigeon.mailbox
        self._ahead.pop(message.thread_id or "", None)
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
                    f"Offline: cannot reach {self.pigeon.service_url}. What was loaded stays readable. "
                    "Press r to retry.",
                    "bold",
                )
            )
