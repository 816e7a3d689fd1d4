"""The mail screen's reader part: reading ahead the thread under the cursor, opening a thread (store first, the
service when it has more), J/K to the next one, following the list when the open thread leaves it, and the
sender's contact.

Interface: :meth:`ReaderPart.highlighted` (the list's cursor rests on a thread), :meth:`open` (Enter, the
palette), :meth:`step` (J/K), :meth:`follow` (after a change took the open thread away), :meth:`reload` (a sync
changed threads), :attr:`active` / :attr:`open_id`. Up: :class:`ThreadOpened` (to be marked read)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.worker import get_current_worker

from pigeon.core import paged
from pigeon.core.errors import PigeonError
from pigeon.core.mail import MailCore
from pigeon.tui.messages import EditContact
from pigeon.tui.render import safe_line
from pigeon.tui.screens.mail.part import Part
from pigeon.tui.screens.modals import PickScreen
from pigeon.tui.widgets.reader import Reader
from pigeon.tui.widgets.thread_ahead import Stopped, lay_out_ahead
from pigeon.tui.widgets.thread_list import ThreadList
from pigeon.tui.widgets.thread_window import WHOLE

if TYPE_CHECKING:
    from pigeon.models import Contact
    from pigeon.models import Message as MailMessage

LOADING_DELAY = 0.1
MARK_READ_DELAY = 0.25
DRAWN_WITHIN = 0.5  # an open holds the sync until its frame is out, or this long at most
PREVIEW_DELAY = 0.12  # the cursor rests this long: the reader shows its thread (holding j never waits on it)
TYPING = 0.4  # moves closer together than this are keys typed in a row; a preview waits at most this long
EMPTY_LIST = "No thread here."  # the reader while the list shows none (an empty view, a search that found none)


def preview_wait(pace: float | None) -> float:
    """How long the cursor rests before the reader previews its thread, given the time between the last two moves:
    twice that while keys come in a row, so that a preview's frame does not land just before the next key (which
    would wait for it); else ``PREVIEW_DELAY``."""
    if pace is None or pace >= TYPING:
        return PREVIEW_DELAY
    return min(max(PREVIEW_DELAY, 2 * pace), TYPING)


class ThreadOpened(Message, bubble=False):
    """A thread was opened to be read, its messages painted: it is to be marked read."""

    def __init__(self, thread_id: str) -> None:
        super().__init__()
        self.thread_id = thread_id


class ReaderPart(Part):
    """The reader: which thread it shows, and how it gets there."""

    def __init__(
        self, screen: Screen[None], core: MailCore, after_focus_frame: Callable[[Callable[[], object]], None]
    ) -> None:
        super().__init__(screen, core)
        self._after_focus_frame = after_focus_frame  # the screen's: runs once a focus move's frame is out
        self._preview_timer: Timer | None = None
        self._moved_at: float | None = None  # when the cursor last moved (the pace of keys typed in a row)
        self._loading: tuple[str, bool, bool] | None = None  # the load under way: thread, mark read, focus

    @property
    def widget(self) -> Reader:
        return self.screen.query_one(Reader)

    @property
    def active(self) -> bool:
        """The user is in the reader (it has the focus, or fills the screen)."""
        return self.screen.focused is self.widget or self.screen.has_class("zoomed")

    @property
    def open_id(self) -> str | None:
        """The thread the user is reading, if in the reader."""
        thread = self.widget.thread
        return (thread.id or None) if self.active and thread is not None else None

    def highlighted(self, thread_id: str | None) -> None:
        """Preview the highlighted thread once the cursor rests on it: read and laid out, so Enter only moves the
        focus. A preview does not mark the thread read. An empty list (None) leaves nothing in the reader."""
        if self._preview_timer is not None:
            self._preview_timer.stop()
        now = time.monotonic()
        pace = None if self._moved_at is None else now - self._moved_at
        self._moved_at = now
        reader = self.widget
        # In the reader the cursor moves because a thread is being opened (J, K, after e): a preview then would
        # replace that opening (one worker group) and leave the thread unread.
        if self.active:
            return
        if self._loading is not None and not self._loading[2] and self._loading[0] != thread_id:
            self.screen.workers.cancel_group(self.screen, "reader")  # a preview under way is no longer wanted
            self._loading = None
        if thread_id is None:  # an empty list: not another view's thread, which would be taken for this one's
            if reader.thread is not None or reader.progress != EMPTY_LIST:
                reader.clear(EMPTY_LIST)
            return
        if reader.thread is not None and reader.thread.id == thread_id:
            return
        self._preview_timer = self.screen.set_timer(preview_wait(pace), lambda: self.preview(thread_id))

    def preview(self, thread_id: str) -> None:
        current = self.screen.query_one(ThreadList).current
        reader = self.widget
        if current is not None and current.id == thread_id and not (reader.thread and reader.thread.id == thread_id):
            self.load(thread_id, mark_read=False)

    def step(self, delta: int) -> None:
        """J/K in the reader: the next or previous thread of the list opens."""
        thread_list = self.screen.query_one(ThreadList)
        at = thread_list.cursor
        index = at + delta
        if index >= len(thread_list.source) and not thread_list.exact:  # the end of a first page: count first
            thread_list.when_counted(lambda: self.step(delta) if thread_list.cursor == at and self.active else None)
            return
        if not 0 <= index < len(thread_list.source):
            self.screen.notify("No more threads." if delta > 0 else "This is the first thread.", markup=False)
            return
        thread_list.cursor = index
        if thread_list.current is not None:
            self.open(thread_list.current.id)

    def follow(self, left_at: int) -> None:
        """The open thread left the view (the cursor was at ``left_at``): open the next thread (or the previous,
        or go back to the list, as ``after_triage`` says); at the end of the list the previous one, in an empty
        list the list."""
        thread_list = self.screen.query_one(ThreadList)
        size = len(thread_list.source)
        how = self.core.config.ui.after_triage
        shown = self.open_id
        if how == "next" and left_at >= size and not thread_list.exact and shown is not None:
            # the next may be beyond the first page: once counted, unless the user has moved on
            thread_list.when_counted(lambda: self.follow(left_at) if self.open_id == shown else None)
            return
        if size == 0 or how == "list":
            self.widget.clear()
            self.screen.remove_class("zoomed")
            self.screen.set_focus(thread_list)
            return
        index = left_at - 1 if how == "previous" and left_at > 0 else left_at
        thread_list.cursor = max(0, min(index, size - 1))
        if thread_list.current is not None:
            self.open(thread_list.current.id)

    def open(self, thread_id: str) -> None:
        """Show the thread in the reader and move there. Messages in the store appear with the move, in one frame;
        "Loading…" shows only if they take longer than ``LOADING_DELAY`` (the service has them)."""
        if self._preview_timer is not None:
            self._preview_timer.stop()
        reader = self.widget
        shown = reader.thread
        if shown is not None and shown.id == thread_id and not reader.progress and reader.messages:
            # The preview has it laid out already: Enter only moves the focus (one small frame) and marks it read.
            self.screen.set_focus(reader)  # (now: Widget.focus would wait a turn of the app's queue)
            self._mark_read_soon(thread_id)
            self._after_focus_frame(self.read_neighbours)  # (its worker's messages would come before the frame)
            return
        self.load(thread_id, mark_read=True, focus=True)

    def reload(self, changed: Iterable[str]) -> None:
        """A sync changed these threads: the open one is read again from the store. A load of it under way (an
        open the user asked for) is replaced by this one, which does what that one was to do."""
        thread = self.widget.thread
        if thread is None or not thread.id or thread.id not in set(changed):
            return
        mark_read, focus = self.screen.focused is self.widget, False
        if self._loading is not None and self._loading[0] == thread.id:
            mark_read, focus = mark_read or self._loading[1], self._loading[2]
        self.load(thread.id, mark_read=mark_read, focus=focus)

    def load(self, thread_id: str, *, mark_read: bool = True, focus: bool = False) -> None:
        """Read the thread into the reader (replacing a load under way); ``focus`` moves there, ``mark_read``
        marks it read once painted."""
        self._loading = (thread_id, mark_read, focus)
        self.run(
            self._load,
            thread_id,
            mark_read,
            focus,
            group="reader",
            description="loading the thread",
            exclusive=True,
        )

    async def _load(self, thread_id: str, mark_read: bool, focus: bool) -> None:
        try:
            with self.core.foreground() if focus else contextlib.nullcontext():  # (a preview is not waited for)
                await self._read(thread_id, mark_read=mark_read, focus=focus)
                if focus:
                    await self._drawn()
        finally:
            if self._loading == (thread_id, mark_read, focus):
                self._loading = None

    async def _drawn(self) -> None:
        """Return once the reader's next frame is out (at most ``DRAWN_WITHIN`` seconds): the sync waits till then."""
        painted = asyncio.Event()
        self.widget.call_after_refresh(painted.set)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(painted.wait(), DRAWN_WITHIN)

    async def _read(self, thread_id: str, *, mark_read: bool, focus: bool) -> None:
        reader = self.widget
        core = self.core
        screen = self.screen
        thread = None

        read_at = None

        def show(messages: Sequence[MailMessage], progress: str = "") -> None:
            if thread is not None:
                unreadable = core.unreadable_in(thread_id)
                reader.show(thread, messages, core.contacts, progress=progress, unreadable=unreadable, read_at=read_at)
            if focus and screen.focused is not reader:
                screen.set_focus(reader)

        def waited() -> None:  # a long read from the store: no other thread's text shown meanwhile
            if reader.thread is None or reader.thread.id != thread_id:  # (the thread shown again stays as it is)
                reader.clear("Loading messages…")
            show([])  # (an opening moves to the reader at once)

        waiting = screen.set_timer(LOADING_DELAY, waited)
        try:
            thread, cached = await core.stored_thread(thread_id)
        finally:
            if waiting is not None:
                waiting.stop()
        if thread is None:
            if reader.thread is None:
                reader.clear()  # (not "Loading" for ever)
            return
        read_at = await core.last_read(thread)  # before this opening marks it read
        total = thread.message_count or 0
        if mark_read:  # after the messages are painted: the list's bookkeeping never delays reading
            self._mark_read_soon(thread_id)
        if cached and len(cached) + len(core.unreadable_in(thread_id)) >= total:  # (unreadable ones count)
            core.keep(thread_id, cached)
            shown = reader.thread is not None and reader.thread.id == thread_id and reader.messages is cached
            if focus and not shown and len(cached) <= WHOLE:
                show(cached)  # a thread of ordinary length opens in this frame
            elif not shown:
                # A preview, or a long thread: its view made and laid out off the UI thread (keys are answered
                # meanwhile), then shown; one the cursor or the user left is dropped.
                worker = get_current_worker()
                try:
                    view = await asyncio.to_thread(
                        lay_out_ahead,
                        thread,
                        cached,
                        core.contacts,
                        unreadable=core.unreadable_in(thread_id),
                        read_at=read_at,
                        width=reader.text_width,
                        height=reader.thread_layout.height,
                        show_quotes=reader.show_quotes,
                        stop=lambda: worker.is_cancelled,
                        clock=core.clock,
                    )
                except Stopped:
                    return
                reader.show(
                    thread, cached, core.contacts, unreadable=core.unreadable_in(thread_id), read_at=read_at, view=view
                )
            if focus:
                if screen.focused is not reader:
                    screen.set_focus(reader)
                self.read_neighbours()
            return
        if focus:
            show(cached, "Loading messages…")
        loaded: list[MailMessage] = []
        try:
            async for loaded, more in core.fetch_thread(thread_id):
                progress = f"Loading messages… {len(loaded)} of {max(total, len(loaded))}" if more else ""
                show(loaded, progress)
        except PigeonError:
            if cached or loaded:
                reader.show(
                    thread, loaded or cached, core.contacts, progress="Some messages could not be loaded (ctrl+r)"
                )
            raise

    def _mark_read_soon(self, thread_id: str) -> None:
        self.screen.set_timer(MARK_READ_DELAY, lambda: self.screen.post_message(ThreadOpened(thread_id)))

    def read_neighbours(self) -> None:
        """The threads either side of the open one, into memory: the one e or J opens next shows at once."""
        self.run(self._read_neighbours, group="read-ahead", description="reading ahead", exclusive=True)

    async def _read_neighbours(self) -> None:
        thread_list = self.screen.query_one(ThreadList)
        for index in (thread_list.cursor + 1, thread_list.cursor - 1):
            if 0 <= index < len(thread_list.source):
                await self.core.read_ahead(thread_list.source.row(index).id)

    def contact_saved(self, contact: Contact) -> None:
        """A contact changed: the open thread's senders who are that contact are shown anew."""
        reader = self.widget
        for message in paged.loaded(reader.messages):  # (of a long thread, those read: the others are named anew)
            if message.sender and message.sender.contact_id == contact.id:
                message.sender.contact = contact
        reader.redraw()

    def edit_sender(self) -> None:
        """Edit the person who wrote the open thread (asks which one when several did)."""
        reader = self.widget
        if reader.thread is None:
            self.screen.notify("Open a thread first.", markup=False)
            return
        choices = self.core.senders(reader.thread, reader.messages)
        if not choices:
            self.screen.notify("No sender of this thread is a known contact.", markup=False)
        elif len(choices) == 1:
            self.screen.post_message(EditContact(choices[0]))
        else:

            def chosen(index: int | None) -> None:
                if index is not None:
                    self.screen.post_message(EditContact(choices[index]))

            self.ask(PickScreen("Edit which contact?", [safe_line(c.name) for c in choices]), chosen)
