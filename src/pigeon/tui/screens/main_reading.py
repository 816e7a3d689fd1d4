"""The mail screen's reader side: reading ahead the thread under the cursor, opening a thread (store first, the
service when it has more), marking it read, saving its attachments and editing its sender."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on, work
from textual.timer import Timer

from pigeon.core.errors import PigeonError
from pigeon.tui.messages import ContactSaved, EditContact
from pigeon.tui.render import safe_line
from pigeon.tui.screens.main_list import MailList
from pigeon.tui.screens.modals import PickScreen
from pigeon.tui.widgets.reader import Reader
from pigeon.tui.widgets.thread_list import ThreadList

if TYPE_CHECKING:
    from collections.abc import Callable

    from pigeon.models import Message as MailMessage

LOADING_DELAY = 0.1
MARK_READ_DELAY = 0.25
PREVIEW_DELAY = 0.12  # the cursor rests this long: the reader shows its thread (holding j never waits on it)


class Reading(MailList):
    """The mail screen's reader side (on top of its thread list)."""

    _preview_timer: Timer | None
    _left_at: int  # where the cursor was when the open thread left the view
    after_focus_frame: Callable[[Callable[[], object]], None]  # (QuickFrames's, mixed into the same screen)

    @on(ThreadList.Highlighted)
    def _highlighted(self, event: ThreadList.Highlighted) -> None:
        """Preview the highlighted thread once the cursor rests on it: read and laid out, so Enter only moves the
        focus. A preview does not mark the thread read."""
        if self._preview_timer is not None:
            self._preview_timer.stop()
        thread_id = event.row.id
        reader = self.query_one(Reader)
        # In the reader the cursor moves because a thread is being opened (J, K, after e): a preview then would
        # replace that opening (one worker group) and leave the thread unread.
        if self.reading or (reader.thread is not None and reader.thread.id == thread_id):
            return
        self._preview_timer = self.set_timer(PREVIEW_DELAY, lambda: self.preview(thread_id))

    def preview(self, thread_id: str) -> None:
        current = self.query_one(ThreadList).current
        reader = self.query_one(Reader)
        if current is not None and current.id == thread_id and not (reader.thread and reader.thread.id == thread_id):
            self.load_thread(thread_id, mark_read=False)

    @property
    def reading(self) -> bool:
        """The user is in the reader (it has the focus, or fills the screen)."""
        return self.focused is self.query_one(Reader) or self.has_class("zoomed")

    def targets(self) -> list[str]:
        """In the reader, the open thread (a selection in the list is left alone); else the list's targets."""
        reader = self.query_one(Reader)
        if self.reading and reader.thread is not None and reader.thread.id:
            return [reader.thread.id]
        return super().targets()

    def on_reader_step(self, event: Reader.Step) -> None:
        """J/K in the reader: the next or previous thread of the list opens."""
        thread_list = self.query_one(ThreadList)
        index = thread_list.cursor + event.delta
        if not 0 <= index < len(thread_list.source):
            self.notify("No more threads." if event.delta > 0 else "This is the first thread.", markup=False)
            return
        thread_list.cursor = index
        if thread_list.current is not None:
            self.open_thread(thread_list.current.id)

    def follow_triage(self) -> None:
        """The open thread left the view: open the next thread (or the previous, or go back to the list, as
        ``after_triage`` says); at the end of the list the previous one, in an empty list the list."""
        thread_list = self.query_one(ThreadList)
        size = len(thread_list.source)
        how = self.core.config.ui.after_triage
        if size == 0 or how == "list":
            self.query_one(Reader).clear()
            self.remove_class("zoomed")
            self.set_focus(thread_list)
            return
        index = self._left_at - 1 if how == "previous" and self._left_at > 0 else self._left_at
        thread_list.cursor = max(0, min(index, size - 1))
        if thread_list.current is not None:
            self.open_thread(thread_list.current.id)

    @on(ThreadList.Opened)
    def _opened(self, event: ThreadList.Opened) -> None:
        self.open_thread(event.row.id)

    def open_thread(self, thread_id: str) -> None:
        """Show the thread in the reader and move there. Messages in the store appear with the move, in one frame;
        "Loading…" shows only if they take longer than ``LOADING_DELAY`` (the service has them)."""
        if self._preview_timer is not None:
            self._preview_timer.stop()
        reader = self.query_one(Reader)
        shown = reader.thread
        if shown is not None and shown.id == thread_id and not reader.progress and reader.messages:
            # The preview has it laid out already: Enter only moves the focus (one small frame) and marks it read.
            self.set_focus(reader)  # (now: Widget.focus would wait a turn of the app's queue)
            self.set_timer(MARK_READ_DELAY, lambda: self.mark_opened(thread_id))
            self.after_focus_frame(self.read_neighbours)  # (its worker's messages would come before the frame)
            return
        self.load_thread(thread_id, mark_read=True, focus=True)

    @work(exclusive=True, group="reader", exit_on_error=False, description="loading the thread")
    async def load_thread(self, thread_id: str, *, mark_read: bool = True, focus: bool = False) -> None:
        reader = self.query_one(Reader)
        core = self.core
        thread = None

        def show(messages: list[MailMessage], progress: str = "") -> None:
            if thread is not None:
                reader.show(
                    thread, messages, core.contacts, progress=progress, unreadable=core.unreadable_in(thread_id)
                )
            if focus and self.focused is not reader:
                self.set_focus(reader)

        waiting = self.set_timer(LOADING_DELAY, lambda: show([], "Loading messages…")) if focus else None
        try:
            thread, cached = await core.stored_thread(thread_id)
        finally:
            if waiting is not None:
                waiting.stop()
        if thread is None:
            return
        total = thread.message_count or 0
        if mark_read:  # after the messages are painted: the list's bookkeeping never delays reading
            self.set_timer(MARK_READ_DELAY, lambda: self.mark_opened(thread_id))
        if cached and len(cached) + len(core.unreadable_in(thread_id)) >= total:  # (unreadable ones count)
            core.keep(thread_id, cached)
            show(cached)
            if focus:
                self.read_neighbours()
            return
        if focus:
            show(list(cached), "Loading messages…")
        loaded: list[MailMessage] = []
        try:
            async for loaded, more in core.fetch_thread(thread_id):
                progress = f"Loading messages… {len(loaded)} of {max(total, len(loaded))}" if more else ""
                reader.show(thread, loaded, core.contacts, progress=progress, unreadable=core.unreadable_in(thread_id))
        except PigeonError:
            if cached or loaded:
                reader.show(
                    thread, loaded or cached, core.contacts, progress="Some messages could not be loaded (ctrl+r)"
                )
            raise

    @work(exclusive=True, group="read-ahead", exit_on_error=False, description="reading ahead")
    async def read_neighbours(self) -> None:
        """The threads either side of the open one, into memory: the one e or J opens next shows at once."""
        thread_list = self.query_one(ThreadList)
        for index in (thread_list.cursor + 1, thread_list.cursor - 1):
            if 0 <= index < len(thread_list.source):
                await self.core.read_ahead(thread_list.source.row(index).id)

    @work(group="mark-read", exit_on_error=False, description="marking the thread read")
    async def mark_opened(self, thread_id: str) -> None:
        await self.change_list([thread_id], self.core.mark_opened)

    def on_contact_saved(self, event: ContactSaved) -> None:
        reader = self.query_one(Reader)
        for message in reader.messages:
            if message.sender and message.sender.contact_id == event.contact.id:
                message.sender.contact = event.contact
        if reader.thread is not None:
            reader.show(reader.thread, reader.messages, self.core.contacts, progress=reader.progress)

    # --- the reader's actions ---------------------------------------------------------------------------------

    def on_reader_edit_sender(self, event: Reader.EditSender) -> None:
        """Edit the person who wrote the open thread (asks which one when several did)."""
        reader = self.query_one(Reader)
        if reader.thread is None:
            self.notify("Open a thread first.", markup=False)
            return
        choices = self.core.senders(reader.thread, reader.messages)
        if not choices:
            self.notify("No sender of this thread is a known contact.", markup=False)
        elif len(choices) == 1:
            self.post_message(EditContact(choices[0]))
        else:

            def chosen(index: int | None) -> None:
                if index is not None:
                    self.post_message(EditContact(choices[index]))

            self.app.push_screen(PickScreen("Edit which contact?", [safe_line(c.name) for c in choices]), chosen)
