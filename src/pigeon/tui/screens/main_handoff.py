"""The mail screen's hand-offs to the user's own programs, all through the core: attachments saved (``a``) or
opened (``O``, asking first for a type that can run code), links listed and opened (``L``, asking first when a
link misleads), and replies, forwards and new messages written in the editor (``r R f C``; the
App hands the terminal over)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from textual import work
from textual.content import Content

from pigeon.core.attachments import attachment_filename
from pigeon.core.links import Link, thread_links
from pigeon.core.programs import NoBrowser, ProgramFailed
from pigeon.sanitize import clean_line
from pigeon.tui.messages import BrowseInTerminal, EditDraft
from pigeon.tui.render import human_size, safe_line
from pigeon.tui.screens.links import Chosen, LinksScreen
from pigeon.tui.screens.main_reading import Reading
from pigeon.tui.screens.modals import ConfirmScreen, PickScreen
from pigeon.tui.widgets.reader import Reader
from pigeon.tui.widgets.thread_list import ThreadList

if TYPE_CHECKING:
    from pigeon.models import ContentBlock


class HandsOff(Reading):
    """Mixed into the mail screen: what leaves Pigeon."""

    # --- attachments ------------------------------------------------------------------------------------------

    def _pick_attachment(self, verb: str, then: Callable[[ContentBlock], object]) -> None:
        attachments = self.query_one(Reader).attachments
        if not attachments:
            self.notify("This thread has no attachments.", markup=False)
            return
        if len(attachments) == 1:
            then(attachments[0][1])
            return
        items = [
            Content.assemble(
                safe_line(b.filename or "(unnamed)", limit=60), Content.styled(f"  {human_size(b.size)}", "dim")
            )
            for _, b in attachments
        ]

        def chosen(index: int | None) -> None:
            if index is not None:
                then(attachments[index][1])

        self.app.push_screen(PickScreen(f"{verb} which attachment?", items), chosen)

    def on_reader_save_attachment(self, event: Reader.SaveAttachment) -> None:
        self._pick_attachment("Save", self.save_attachment)

    def on_reader_open_attachment(self, event: Reader.OpenAttachment) -> None:
        self._pick_attachment("Open", self.open_attachment)

    @work(group="save", exit_on_error=False, description="saving the attachment")
    async def save_attachment(self, block: ContentBlock, overwrite: bool = False) -> None:
        handoff = self.core.handoff
        try:
            path = await handoff.save_attachment(block, overwrite=overwrite)
        except FileExistsError as exc:  # (the real place named, not a link on the way to it)
            name = attachment_filename(block.filename)
            where = safe_line(str(Path(exc.filename or handoff.download_dir).parent))
            question = Content.assemble("Replace ", safe_line(name, style="bold"), " in ", where, "?")

            def answer(yes: bool | None) -> None:
                if yes:
                    self.save_attachment(block, overwrite=True)

            self.app.push_screen(ConfirmScreen(question, yes="Replace", no="Keep"), answer)
            return
        except OSError as exc:
            said = clean_line(exc.strerror or exc)
            self.notify(f"Could not save the attachment: {said}", severity="error", markup=False)
            return
        self.notify(f"Saved {clean_line(str(path))}", title="Attachment saved", markup=False)

    @work(group="open", exit_on_error=False, description="checking the attachment")
    async def open_attachment(self, block: ContentBlock) -> None:
        """Open with its program; a type that can run code asks first, saying why (its contents are read in a
        thread: a large attachment never holds up the keys)."""
        from pigeon.core.runs_code import risky

        why = await asyncio.to_thread(risky, block)
        if not why:
            self.run_open_attachment(block)
            return
        name = safe_line(attachment_filename(block.filename), style="bold")
        question = Content.assemble("Open ", name, Content(f"? Careful: {why}. Open it only if you expected it."))

        def answer(yes: bool | None) -> None:
            if yes:
                self.run_open_attachment(block)

        self.app.push_screen(ConfirmScreen(question, yes="Open", no="Cancel"), answer)

    @work(group="open", exit_on_error=False, description="opening the attachment")
    async def run_open_attachment(self, block: ContentBlock) -> None:
        try:
            path = await self.core.handoff.open_attachment(block)
        except (ProgramFailed, OSError) as exc:
            self.notify(f"Could not open the attachment: {exc}", severity="error", markup=False)
            return
        self.notify(f"Opened {path.name}", markup=False, timeout=3)

    # --- links ------------------------------------------------------------------------------------------------

    @work(group="links", exclusive=True, exit_on_error=False, description="listing the links")
    async def on_reader_show_links(self, event: Reader.ShowLinks) -> None:
        reader = self.query_one(Reader)
        if reader.thread is None:
            self.notify("Open a thread first.", markup=False)
            return
        links = await asyncio.to_thread(thread_links, list(reader.messages))
        if not links:
            self.notify("This thread has no links.", markup=False)
            return
        self.app.push_screen(LinksScreen(links), self._link_chosen)

    def _link_chosen(self, chosen: Chosen | None) -> None:
        if chosen is None:
            return
        what, link = chosen
        if what == "copy":
            self.app.copy_to_clipboard(link.target)
            self.notify(f"Copied {clean_line(link.target, limit=300)}", markup=False, timeout=3)
        elif link.caution:
            question = Content.assemble(
                "Careful: ",
                Content.styled(clean_line(link.caution), "bold $warning"),
                ". Open ",
                safe_line(link.target, limit=200, style="bold"),
                "?",
            )

            def answer(yes: bool | None) -> None:
                if yes:
                    self.open_link(link)

            self.app.push_screen(ConfirmScreen(question, yes="Open", no="Cancel"), answer)
        else:
            self.open_link(link)

    @work(group="open", exit_on_error=False, description="opening the link")
    async def open_link(self, link: Link) -> None:
        """In the browser; a console browser gets the terminal while the app is suspended; with none, the link is
        copied and shown."""
        try:
            command = await self.core.handoff.open_link(link.target)
        except NoBrowser as exc:
            self.app.copy_to_clipboard(link.target)
            shown = clean_line(link.target, limit=300)
            self.notify(f"Not opened ({exc}). Copied the link: {shown}", severity="warning", markup=False)
            return
        except ProgramFailed as exc:
            self.notify(f"Could not open the link: {exc}", severity="warning", markup=False)
            return
        if command:
            self.post_message(BrowseInTerminal(command, link.target))
            return
        self.notify(f"Opened {clean_line(link.target, limit=300)}", markup=False, timeout=3)

    # --- replies ----------------------------------------------------------------------------------------------

    @work(group="compose", exclusive=True, exit_on_error=False, description="writing the draft")
    async def action_compose(self, kind: str) -> None:
        """Reply (all) to or forward the open thread (in the list: the one under the cursor), or write anew: the
        draft goes to the editor, then to the send command."""
        from pigeon.core.compose import KINDS

        chosen = next(k for k in KINDS if k == kind)
        thread_id = ""
        if chosen != "new":
            reader, current = self.query_one(Reader), self.query_one(ThreadList).current
            open_id = reader.thread.id if self.reading and reader.thread is not None else None
            thread_id = open_id or (current.id if current else "")
            if not thread_id:
                self.notify("No thread to answer.", markup=False)
                return
        core = self.core
        thread, messages = await core.stored_thread(thread_id) if thread_id else (None, [])
        if chosen != "new" and not messages:
            self.notify("This thread's messages are not here yet; open it first.", severity="warning", markup=False)
            return
        draft = await core.handoff.start_draft(
            chosen, thread, messages, core.inboxes, core.contacts, inbox_id=self.inbox_id
        )
        self.post_message(EditDraft(draft))
