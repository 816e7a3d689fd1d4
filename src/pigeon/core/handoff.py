"""The hand-off: what leaves Pigeon for the user's own programs and folders (attachments saved or opened, links
opened, drafts written in the editor and handed to the send command). The mail core holds one (``core.handoff``);
the screens ask it, never a program or the filesystem. Blocking work runs in threads here; the editor alone runs in
the caller's terminal (:meth:`HandOff.edit`, while the app is suspended). No Textual here.
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from pigeon import locations
from pigeon.config import Config
from pigeon.core import programs
from pigeon.core.attachments import attachment_bytes, place_for_opening, save_into
from pigeon.core.compose import Kind, message_text
from pigeon.core.drafts import Drafts, Edited, MailDraft, Review
from pigeon.core.message_out import file_name, mail_text, raw_text, write_text

if TYPE_CHECKING:
    from pigeon.models import Contact, ContentBlock, Inbox, Message, Thread


class HandOff:
    """The one way from the core to the user's programs and folders (:mod:`pigeon.core.programs` runs them)."""

    def __init__(self, config: Config, clock: Callable[[], datetime]) -> None:
        self.config = config
        self.drafts = Drafts(config, clock=clock)

    # --- attachments ------------------------------------------------------------------------------------------

    @property
    def download_dir(self) -> Path:
        return locations.download_dir()

    async def save_attachment(self, block: ContentBlock, *, overwrite: bool = False) -> Path:
        """Save into the download folder; ``FileExistsError`` if a file has that name and ``overwrite`` is false."""
        return await asyncio.to_thread(
            save_into, self.download_dir, block.filename, attachment_bytes(block), overwrite=overwrite
        )

    async def open_attachment(self, block: ContentBlock) -> Path:
        """Write the attachment into the private folder (0600, not executable) and open it with ``open_command``
        or the system's handler, the file as one argument. :class:`ProgramFailed` if that fails."""

        def run() -> Path:
            path = place_for_opening(locations.opened_dir(), block)
            programs.open_with(self.config.ui.open_command, str(path.resolve()))
            return path

        return await asyncio.to_thread(run)

    # --- links ------------------------------------------------------------------------------------------------

    async def open_link(self, target: str) -> list[str]:
        """Open a link of the mail (http, https, mailto): :class:`ProgramFailed` if it cannot be
        (:class:`~pigeon.core.programs.NoBrowser` if no browser can start here). A console browser is not started:
        its command comes back, for :meth:`browse_in_terminal` while the app is suspended."""
        return await asyncio.to_thread(programs.open_link, target, self.config.ui.open_command)

    def browse_in_terminal(self, command: list[str]) -> int:
        """A console browser in this terminal (blocks until it exits): its exit code."""
        return programs.run_in_terminal(command)

    # --- replies ----------------------------------------------------------------------------------------------

    async def start_draft(
        self,
        kind: Kind,
        thread: Thread | None,
        messages: Sequence[Message],
        inboxes: list[Inbox],
        contacts: dict[str, Contact],
        *,
        inbox_id: str | None = None,
        message_id: str | None = None,
    ) -> MailDraft:
        return await asyncio.to_thread(
            self.drafts.start, kind, thread, messages, inboxes, contacts, inbox_id=inbox_id, message_id=message_id
        )

    def edit(self, draft: MailDraft, *, again: bool = False) -> Edited:
        """The editor on the draft, in this terminal (blocks until it exits). ``again`` (from the review): a draft
        left as it was is kept."""
        return self.drafts.edit(draft, drop_unchanged=not again)

    @property
    def reviews(self) -> bool:
        """Whether a draft is reviewed after the editor (``[compose] review``) rather than sent at once."""
        return self.config.compose.review

    async def send(self, draft: MailDraft) -> str:
        """Hand the draft on (:class:`pigeon.core.drafts.SendFailed` keeps it)."""
        return await asyncio.to_thread(self.drafts.send, draft)

    async def review(self, draft: MailDraft) -> Review:
        """What the review shows of the draft as kept now."""
        return await asyncio.to_thread(self.drafts.review, draft)

    async def set_addresses(self, draft: MailDraft, name: str, value: str) -> None:
        """The draft's To or Cc set to ``value`` (:class:`pigeon.core.compose.BadDraft` names a bad address)."""
        await asyncio.to_thread(self.drafts.set_addresses, draft, name, value)

    async def attach_file(self, draft: MailDraft, path: str) -> MailDraft:
        """The file at ``path`` attached, checked (``OSError`` or ``AttachedTooBig``: the reason in one line)."""
        return await asyncio.to_thread(self.drafts.attach_file, draft, path)

    async def detach(self, draft: MailDraft, index: int) -> MailDraft:
        return await asyncio.to_thread(self.drafts.detach, draft, index)

    async def discard(self, draft: MailDraft) -> None:
        await asyncio.to_thread(self.drafts.discard, draft)

    async def kept(self) -> list[tuple[MailDraft, str, str, str]]:
        """The drafts kept unsent, the newest first, each with its To, its Subject and where it stands."""

        def read() -> list[tuple[MailDraft, str, str, str]]:
            drafts = self.drafts
            return [(d, *drafts.summary(d), drafts.status(d)) for d in reversed(drafts.all())]

        return await asyncio.to_thread(read)

    # --- a message's text -------------------------------------------------------------------------------------

    async def pipe_message(self, command: str, message: Message, contacts: dict[str, Contact]) -> programs.Piped:
        """Run ``command`` (split as a shell splits words, never run by one) with the message as mail text on its
        standard input; :class:`ProgramFailed` (one line) if it cannot be read, started or finished in time."""
        try:
            words = shlex.split(command)
        except ValueError as exc:
            raise programs.ProgramFailed(f"the command cannot be read: {exc}") from None
        if not words:
            raise programs.ProgramFailed("no command was given")
        data = await asyncio.to_thread(mail_text, message, contacts)
        return await asyncio.to_thread(programs.pipe, words, data.encode())

    def write_path(self, message: Message) -> Path:
        """Where the message's text is written unless the user says otherwise: the download folder, a name made
        from the subject."""
        return self.download_dir / file_name(message)

    async def write_message(
        self, where: str, message: Message, contacts: dict[str, Contact], *, overwrite: bool = False
    ) -> Path:
        """Write the message as mail text to ``where`` (``~`` expanded; a relative path is taken in the download
        folder); ``FileExistsError`` when a file is there and ``overwrite`` is false, ``OSError`` otherwise."""

        def run() -> Path:
            path = Path(where.strip()).expanduser()
            path = path if path.is_absolute() else self.download_dir / path
            write_text(path, mail_text(message, contacts), overwrite=overwrite)
            return path

        return await asyncio.to_thread(run)

    async def raw_message(self, message: Message) -> str:
        """Every field the service sent for the message, as JSON (cleaned; long attachments cut)."""
        return await asyncio.to_thread(raw_text, message)

    async def readable_text(self, message: Message) -> str:
        """The message's readable text, cleaned (what copying it gives)."""
        return await asyncio.to_thread(message_text, message)

    async def copy_to_desktop(self, text: str) -> str:
        """``text`` to the desktop's clipboard program too, where there is one: its name, or ""
        (:class:`ProgramFailed` if it fails)."""
        return await asyncio.to_thread(programs.copy_to_desktop, text)
