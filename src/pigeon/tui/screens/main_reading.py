"""The mail screen's reader side: reading ahead the thread under the cursor, opening a thread (store first, the
service when it has more), marking it read, saving its attachments and editing its sender."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on, work
from textual.content import Content
from textual.timer import Timer

from pigeon.core.attachments import attachment_filename
from pigeon.core.errors import PigeonError
from pigeon.tui.messages import ContactSaved, EditContact
from pigeon.tui.render import human_size, safe_line
from pigeon.tui.screens.main_list import MailList
from pigeon.tui.screens.modals import ConfirmScreen, PickScreen
from pigeon.tui.widgets.reader import Reader
from pigeon.tui.widgets.thread_list import ThreadList

if TYPE_CHECKING:
    from pigeon.models import ContentBlock
    from pigeon.models import Message as MailMessage

LOADING_DELAY = 0.1
MARK_READ_DELAY = 0.25
READ_AHEAD_DELAY = 0.05


class Reading(MailList):
    """The mail screen's reader side (on top of its thread list)."""

    _read_ahead_timer: Timer | None

    @on(ThreadList.Highlighted)
    def _highlighted(self, event: ThreadList.Highlighted) -> None:
        """Read the highlighted thread from the store once the cursor rests on it, so that Enter shows it at
        once (no trip to a thread and back while the key waits)."""
        if self._read_ahead_timer is not None:
            self._read_ahead_timer.stop()
        thread_id = event.row.id
        if not self.core.holds(thread_id):
            self._read_ahead_timer = self.set_timer(READ_AHEAD_DELAY, lambda: self.read_ahead(thread_id))

    @work(exclusive=True, group="read-ahead", exit_on_error=False, description="reading ahead")
    async def read_ahead(self, thread_id: str) -> None:
        await self.core.read_ahead(thread_id)

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
        core = self.core
        thread = None

        def show(messages: list[MailMessage], progress: str = "") -> None:
            if thread is not None:
                reader.show(thread, messages, core.contacts, progress=progress)
            if focus and self.focused is not reader:
                reader.focus()

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
        if cached and len(cached) >= total:
            core.keep(thread_id, cached)
            show(cached)
            return
        if focus:
            show(list(cached), "Loading messages…")
        loaded: list[MailMessage] = []
        try:
            async for loaded, more in core.fetch_thread(thread_id):
                progress = f"Loading messages… {len(loaded)} of {max(total, len(loaded))}" if more else ""
                reader.show(thread, loaded, core.contacts, progress=progress)
        except PigeonError:
            if cached or loaded:
                reader.show(thread, loaded or cached, core.contacts, progress="Some messages could not be loaded (r)")
            raise

    @work(group="mark-read", exit_on_error=False, description="marking the thread read")
    async def mark_opened(self, thread_id: str) -> None:
        await self.change_list([thread_id], self.core.mark_opened)

    def show_message(self, message: MailMessage) -> None:
        """A message changed (its delivery status): show the new version if its thread is open."""
        self.core.update_message(message)
        reader = self.query_one(Reader)
        if reader.thread is not None and reader.thread.id == message.thread_id:
            updated = [message if m.id == message.id else m for m in reader.messages]
            reader.show(reader.thread, updated, self.core.contacts, progress=reader.progress)

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

    def on_reader_save_attachment(self, event: Reader.SaveAttachment) -> None:
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

    @work(group="save", exit_on_error=False, description="saving the attachment")
    async def save_attachment(self, block: ContentBlock, overwrite: bool = False) -> None:
        try:
            path = await self.core.save_attachment(block, overwrite=overwrite)
        except FileExistsError:
            name = attachment_filename(block.filename)
            question = Content.assemble("Replace ", safe_line(name, style="bold"), f" in {self.core.download_dir}?")

            def answer(yes: bool | None) -> None:
                if yes:
                    self.save_attachment(block, overwrite=True)

            self.app.push_screen(ConfirmScreen(question, yes="Replace", no="Keep"), answer)
            return
        except OSError as exc:
            self.notify(f"Could not save the attachment: {exc.strerror or exc}", severity="error", markup=False)
            return
        self.notify(f"Saved {path}", title="Attachment saved", markup=False)
