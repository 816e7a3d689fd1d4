"""The mail screen's hand-off part: what leaves Pigeon, all through the core. The attachments of the message under
the reader's cursor saved (``a``) or opened (``O``, asking first for a type that can run code), its links listed and
opened (``L``, asking first when a link misleads), the thread's when it has none; the message's text piped to a
command (``|``), written to a file (``w``), copied (``y``) or shown raw (``H``); and replies, forwards and new
messages written in the editor (``r R f C``; the App hands the terminal over), and the drafts kept (``D``).

Interface: :meth:`HandOffPart.save_attachment`, :meth:`open_attachment`, :meth:`show_links`, :meth:`show_raw`,
:meth:`pipe`, :meth:`write`, :meth:`copy`, :meth:`compose`, :meth:`drafts`. Up:
:class:`~pigeon.tui.messages.BrowseInTerminal`, :class:`~pigeon.tui.messages.EditDraft` and
:class:`~pigeon.tui.messages.ReviewDraft`, which the App handles."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from textual.content import Content

from pigeon.core.attachments import attachment_filename, attachments_of
from pigeon.core.links import Link, message_links, thread_links
from pigeon.core.programs import NoBrowser, ProgramFailed
from pigeon.sanitize import clean_line
from pigeon.tui.messages import BrowseInTerminal, EditDraft, ReviewDraft
from pigeon.tui.render import human_size, safe_line
from pigeon.tui.screens.links import Chosen, LinksScreen
from pigeon.tui.screens.mail.part import Part
from pigeon.tui.screens.modals import ConfirmScreen, InputScreen, PickScreen
from pigeon.tui.widgets.reader import Reader

if TYPE_CHECKING:
    from pigeon.models import ContentBlock, Message


class HandOffPart(Part):
    """Attachments, links and drafts, handed to the user's own programs; a message's text to a command, a file or
    the clipboard."""

    last_command = ""
    """The command the last message was piped to (offered again, for this session)."""

    # --- attachments ------------------------------------------------------------------------------------------

    def _message(self) -> Message | None:
        """The message under the reader's cursor (after a note to open a thread first, when there is none)."""
        shown = self.screen.query_one(Reader).current_message
        if shown is None:
            self.screen.notify("Open a thread first.", markup=False)
        return shown

    def _pick_attachment(self, verb: str, then: Callable[[ContentBlock], object]) -> None:
        """The message's attachment (asking which, when it has several); when it has none, the thread's, saying so."""
        reader = self.screen.query_one(Reader)
        shown = reader.current_message
        attachments = attachments_of([shown]) if shown is not None else []  # (the thread's read only if need be)
        title = f"{verb} which attachment?"
        if len(attachments) == 1:
            then(attachments[0][1])
            return
        if not attachments:  # the thread's, always asked (they are not the message's)
            attachments, title = reader.attachments, f"This message has no attachments. {verb} which of the thread's?"
        if not attachments:
            self.screen.notify("This thread has no attachments.", markup=False)
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

        self.ask(PickScreen(title, items), chosen)

    def save_attachment(self) -> None:
        """Save the attachment of the message under the reader's cursor (asks which, when it has several)."""
        self._pick_attachment("Save", self._save)

    def open_attachment(self) -> None:
        """Open the attachment of the message under the reader's cursor with its program (asks which, when it has
        several)."""
        self._pick_attachment("Open", self._check_and_open)

    def _save(self, block: ContentBlock, overwrite: bool = False) -> None:
        self.run(self._save_now, block, overwrite, group="save", description="saving the attachment")

    async def _save_now(self, block: ContentBlock, overwrite: bool) -> None:
        handoff = self.core.handoff
        try:
            path = await handoff.save_attachment(block, overwrite=overwrite)
        except FileExistsError as exc:  # (the real place named, not a link on the way to it)
            name = attachment_filename(block.filename)
            where = safe_line(str(Path(exc.filename or handoff.download_dir).parent))
            question = Content.assemble("Replace ", safe_line(name, style="bold"), " in ", where, "?")

            def answer(yes: bool | None) -> None:
                if yes:
                    self._save(block, overwrite=True)

            self.ask(ConfirmScreen(question, yes="Replace", no="Keep"), answer)
            return
        except OSError as exc:
            said = clean_line(exc.strerror or exc)
            self.screen.notify(f"Could not save the attachment: {said}", severity="error", markup=False)
            return
        self.screen.notify(f"Saved {clean_line(str(path))}", title="Attachment saved", markup=False)

    def _check_and_open(self, block: ContentBlock) -> None:
        self.run(self._check, block, group="open", description="checking the attachment")

    async def _check(self, block: ContentBlock) -> None:
        """Open with its program; a type that can run code asks first, saying why (its contents are read in a
        thread: a large attachment never holds up the keys)."""
        from pigeon.core.runs_code import risky

        why = await asyncio.to_thread(risky, block)
        if not why:
            self._open(block)
            return
        name = safe_line(attachment_filename(block.filename), style="bold")
        question = Content.assemble("Open ", name, Content(f"? Careful: {why}. Open it only if you expected it."))

        def answer(yes: bool | None) -> None:
            if yes:
                self._open(block)

        self.ask(ConfirmScreen(question, yes="Open", no="Cancel"), answer)

    def _open(self, block: ContentBlock) -> None:
        self.run(self._open_now, block, group="open", description="opening the attachment")

    async def _open_now(self, block: ContentBlock) -> None:
        try:
            path = await self.core.handoff.open_attachment(block)
        except (ProgramFailed, OSError) as exc:
            self.screen.notify(f"Could not open the attachment: {exc}", severity="error", markup=False)
            return
        self.screen.notify(f"Opened {path.name}", markup=False, timeout=3)

    # --- links ------------------------------------------------------------------------------------------------

    def show_links(self) -> None:
        """List the links of the message under the reader's cursor (the thread's, when it has none), to open or
        copy one."""
        self.run(self._show_links, group="links", description="listing the links", exclusive=True)

    async def _show_links(self) -> None:
        reader = self.screen.query_one(Reader)
        shown = self._message()
        if shown is None:
            return
        messages = reader.messages  # (a long thread's pages are read in the worker below, not here)
        links = await asyncio.to_thread(message_links, messages, shown)
        title = ""
        if not links:
            links = await asyncio.to_thread(thread_links, messages)
            title = f"This message has no links. The thread's ({len(links)}):"
        if not links:
            self.screen.notify("This thread has no links.", markup=False)
            return
        self.ask(LinksScreen(links, title), self._link_chosen)

    def _link_chosen(self, chosen: Chosen | None) -> None:
        if chosen is None:
            return
        what, link = chosen
        if what == "copy":
            self.screen.app.copy_to_clipboard(link.target)
            self.screen.notify(f"Copied {clean_line(link.target, limit=300)}", markup=False, timeout=3)
        elif link.caution:
            question = Content.assemble(
                "Careful: ",
                Content.styled(clean_line(link.caution), "bold $text-warning"),
                ". Open ",
                safe_line(link.target, limit=200, style="bold"),
                "?",
            )

            def answer(yes: bool | None) -> None:
                if yes:
                    self._open_link(link)

            self.ask(ConfirmScreen(question, yes="Open", no="Cancel"), answer)
        else:
            self._open_link(link)

    def _open_link(self, link: Link) -> None:
        self.run(self._open_link_now, link, group="open", description="opening the link")

    async def _open_link_now(self, link: Link) -> None:
        """In the browser; a console browser gets the terminal while the app is suspended; with none, the link is
        copied and shown."""
        try:
            command = await self.core.handoff.open_link(link.target)
        except NoBrowser as exc:
            self.screen.app.copy_to_clipboard(link.target)
            shown = clean_line(link.target, limit=300)
            self.screen.notify(f"Not opened ({exc}). Copied the link: {shown}", severity="warning", markup=False)
            return
        except ProgramFailed as exc:
            self.screen.notify(f"Could not open the link: {exc}", severity="warning", markup=False)
            return
        if command:
            self.screen.post_message(BrowseInTerminal(command, link.target))
            return
        self.screen.notify(f"Opened {clean_line(link.target, limit=300)}", markup=False, timeout=3)

    # --- a message's text -----------------------------------------------------------------------------------

    def show_raw(self) -> None:
        """Every field the service sent for the message under the reader's cursor, in a screen of its own."""
        shown = self._message()
        if shown is not None:
            self.run(self._show_raw, shown, group="raw", description="showing the raw message", exclusive=True)

    async def _show_raw(self, message: Message) -> None:
        from pigeon.tui.screens.message_out import RawScreen

        self.screen.app.push_screen(RawScreen(await self.core.handoff.raw_message(message)))

    def copy(self) -> None:
        """The readable text of the message under the reader's cursor to the clipboard."""
        shown = self._message()
        if shown is not None:
            self.run(self._copy, shown, group="copy", description="copying the message", exclusive=True)

    async def _copy(self, message: Message) -> None:
        """Through the terminal (OSC 52) and, where there is one, the desktop's clipboard program (not every
        terminal lets a program set its clipboard)."""
        text = await self.core.handoff.readable_text(message)
        self.screen.app.copy_to_clipboard(text)
        lines = len(text.splitlines())
        self.screen.notify(f"Copied the message ({lines} line{'s' if lines != 1 else ''})", markup=False, timeout=3)
        try:
            await self.core.handoff.copy_to_desktop(text)
        except ProgramFailed as exc:
            self.screen.notify(f"Copied through the terminal only: {exc}", severity="warning", markup=False)

    def pipe(self) -> None:
        """Ask for a command (the last one given, as a start) and give it the message under the reader's cursor on
        its standard input; what it says is shown."""
        shown = self._message()
        if shown is None:
            return
        hint = "Split into words as a shell would, run without one; the message on its standard input."

        def chosen(command: str | None) -> None:
            if command:
                self.last_command = command
                self.run(self._pipe, command, shown, group="pipe", description="piping the message")

        self.ask(InputScreen("Pipe the message to a command", hint, self.last_command), chosen)

    async def _pipe(self, command: str, message: Message) -> None:
        from pigeon.tui.screens.message_out import PipedScreen

        try:
            piped = await self.core.handoff.pipe_message(command, message, self.screen.query_one(Reader).contacts)
        except ProgramFailed as exc:
            self.screen.notify(f"Could not pipe the message: {exc}", severity="error", markup=False)
            return
        self.screen.app.push_screen(PipedScreen(command, piped.code, piped.output, piped.dropped))

    def write(self) -> None:
        """Ask for a path (the download folder and a name from the subject, as a start) and write the message under
        the reader's cursor there as mail text."""
        shown = self._message()
        if shown is None:
            return
        start = str(self.core.handoff.write_path(shown))
        hint = "~ is your home folder; a name alone goes in the download folder."

        def chosen(where: str | None) -> None:
            if where:
                self._write(where, shown)

        self.ask(InputScreen("Write the message to a file", hint, start), chosen)

    def _write(self, where: str, message: Message, overwrite: bool = False) -> None:
        self.run(self._write_now, where, message, overwrite, group="write", description="writing the message")

    async def _write_now(self, where: str, message: Message, overwrite: bool) -> None:
        contacts = self.screen.query_one(Reader).contacts
        try:
            path = await self.core.handoff.write_message(where, message, contacts, overwrite=overwrite)
        except FileExistsError as exc:
            question = Content.assemble("Replace ", safe_line(exc.filename or where, style="bold"), "?")

            def answer(yes: bool | None) -> None:
                if yes:
                    self._write(where, message, overwrite=True)

            self.ask(ConfirmScreen(question, yes="Replace", no="Keep", safe_first=True), answer)
            return
        except OSError as exc:
            said = clean_line(exc.strerror or exc)
            self.screen.notify(f"Could not write the message: {said}", severity="error", markup=False)
            return
        self.screen.notify(f"Wrote {clean_line(str(path))}", markup=False, timeout=3)

    # --- replies ----------------------------------------------------------------------------------------------

    def compose(self, kind: str, thread_id: str, inbox_id: str | None, message_id: str | None = None) -> None:
        """Reply (all) to or forward the message ``message_id`` of the thread ``thread_id`` (none given: its latest
        from someone else), or write anew: the draft goes to the editor, then to the send command."""
        self.run(
            self._compose,
            kind,
            thread_id,
            inbox_id,
            message_id,
            group="compose",
            description="writing the draft",
            exclusive=True,
        )

    async def _compose(self, kind: str, thread_id: str, inbox_id: str | None, message_id: str | None) -> None:
        from pigeon.core.compose import KINDS

        chosen = next(k for k in KINDS if k == kind)
        if chosen != "new" and not thread_id:
            self.screen.notify("No thread to answer.", markup=False)
            return
        core = self.core
        thread, messages = await core.stored_thread(thread_id) if chosen != "new" else (None, [])
        if chosen != "new" and not messages:
            self.screen.notify(
                "This thread's messages are not here yet; open it first.", severity="warning", markup=False
            )
            return
        draft = await core.handoff.start_draft(
            chosen, thread, messages, core.inboxes, core.contacts, inbox_id=inbox_id, message_id=message_id
        )
        self.screen.post_message(EditDraft(draft))

    def drafts(self) -> None:
        """The drafts kept unsent (postponed, or not sent), to pick one to review: and from there edit, send or
        discard it."""
        self.run(self._drafts, group="drafts", description="reading the drafts", exclusive=True)

    async def _drafts(self) -> None:
        kept = await self.core.handoff.kept()
        if not kept:
            self.screen.notify("No drafts kept: a message postponed, or not sent, is listed here.", markup=False)
            return
        items = [
            Content.assemble(
                safe_line(subject or "(no subject)", limit=60),
                Content.styled(
                    f"  to {clean_line(to, limit=40) or 'nobody yet'} · {clean_line(status, limit=60)}", "dim"
                ),
            )
            for _, to, subject, status in kept
        ]

        def chosen(index: int | None) -> None:
            if index is not None:
                self.screen.post_message(ReviewDraft(kept[index][0]))

        self.ask(PickScreen(f"Drafts ({len(kept)})", items), chosen)
