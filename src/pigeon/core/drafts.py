"""Mail drafts from written to sent: a reply, forward or new message written for the user's editor, then given to
``send_command`` (or, without one, to the mail handler as a ``mailto:`` link). The draft stays on disk
(:mod:`pigeon.store.mail_drafts`) until that succeeds; a failure keeps it with its reason, and ``pigeon drafts``
lists and sends it again. Used alike by the TUI (through the mail core's hand-off) and the CLI. No Textual here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from pigeon.config import Config
from pigeon.core import programs
from pigeon.core.brief import ATTRIBUTION
from pigeon.core.compose import (
    FORWARDS,
    BadDraft,
    Kind,
    answered,
    draft_text,
    mailto_url,
    message_to_send,
    with_addresses,
)
from pigeon.core.programs import ProgramFailed
from pigeon.sanitize import clean_line
from pigeon.store.mail_drafts import (
    MAX_ATTACHED_BYTES,
    MAX_DRAFT_BYTES,
    AttachedTooBig,
    DraftTooBig,
    MailDraft,
    MailDrafts,
    NewFile,
    UnknownDraft,
    size_words,
)

if TYPE_CHECKING:
    from pigeon.models import Contact, Inbox, Message, Thread

__all__ = [
    "MAX_DRAFT_BYTES",
    "AttachedTooBig",
    "Drafts",
    "Edited",
    "MailDraft",
    "Review",
    "SendFailed",
    "UnknownDraft",
    "size_words",
]
REVIEW_LINES = 8
"""How many lines of the body's own text (not what it quotes) the review shows."""

SENT_AS_WRITTEN = {"text/plain"}
PLAIN_CHARSETS = {"utf-8", "utf8", "us-ascii", "ascii"}
PLAIN_ENCODINGS = {"7bit", "8bit", "binary"}


class SendFailed(Exception):
    """The message did not leave; the draft is kept (the message says why, and where)."""


@dataclass(frozen=True)
class Review:
    """What the review step shows of a draft, every value cleaned to one line."""

    sender: str
    to: str
    cc: str
    subject: str
    body: tuple[str, ...]
    """The first lines of what the user wrote: what the body quotes is left out, wherever they wrote."""
    files: tuple[tuple[str, int], ...]
    """Each attached file's name and size in bytes."""
    more: int = 0
    """Lines of the user's own text after those shown."""
    quoted: int = 0
    """Lines the body quotes (the attribution before them counted)."""


@dataclass(frozen=True)
class Edited:
    """How the editor left a draft: ``changed`` (ready to send), or why not (``said``)."""

    changed: bool
    said: str = ""


class Drafts:
    """The user's mail drafts: start one, edit it, send it; list, find and discard those kept."""

    def __init__(
        self, config: Config, stored: MailDrafts | None = None, clock: Callable[[], datetime] | None = None
    ) -> None:
        self.config = config
        self.stored = stored or MailDrafts()
        self.clock = clock or (lambda: datetime.now(UTC))

    def start(
        self,
        kind: Kind,
        thread: Thread | None,
        messages: Sequence[Message],
        inboxes: Sequence[Inbox],
        contacts: dict[str, Contact],
        *,
        inbox_id: str | None = None,
        message_id: str | None = None,
    ) -> MailDraft:
        """Write the draft of a reply (all), forward or new message (to the message ``message_id`` when given),
        kept until it is sent. A forward carries the message's files (as many as the limit allows; the others are
        named in the body), a forward as attachment the message itself."""
        from pigeon.core.forwarding import as_rfc822, files_of

        files: list[NewFile] = []
        left_out: list[str] = []
        message = answered(messages, message_id) if kind in FORWARDS else None
        if message is not None:
            for file in files_of(message) if kind == "forward" else [as_rfc822(message, contacts)]:
                if sum(len(f.data) for f in files) + len(file.data) <= MAX_ATTACHED_BYTES:
                    files.append(file)
                else:
                    left_out.append(file.name)
        text = draft_text(
            kind, thread, messages, inboxes, contacts, inbox_id=inbox_id, message_id=message_id, left_out=left_out
        )
        thread_id = (thread.id or "") if thread else ""
        return self.stored.write(text, kind=kind, thread_id=thread_id, now=self.clock(), files=files)

    def edit(self, draft: MailDraft, *, drop_unchanged: bool = True) -> Edited:
        """Open the draft in the user's editor (in this terminal: the caller has handed it over) and wait. A new
        draft left as it was is dropped, as mutt drops an unchanged message (a kept one stays)."""
        before = self.stored.fingerprint(draft)
        code = programs.edit(str(draft.path.resolve()))
        if code != 0:
            return Edited(False, f"The editor exited with code {code}; the draft is kept: pigeon drafts")
        if self.stored.fingerprint(draft) == before:
            if drop_unchanged:
                self.stored.discard(draft)
                return Edited(False, "The draft was not changed: nothing sent.")
            return Edited(False, "The draft was not changed: it is kept, not sent.")
        return Edited(True)

    def send(self, draft: MailDraft) -> str:
        """Hand the edited draft on; what happened, in one line. :class:`SendFailed` (the draft kept, with the
        reason noted for ``pigeon drafts``) if it could not be."""
        command = self.config.compose.send_command
        try:
            draft = self.stored.get(draft.id)  # (as kept now: the review may have changed its files)
        except UnknownDraft:
            raise SendFailed(f"Not sent: the draft {draft.id} is gone from {self.folder}") from None
        try:
            try:
                text = self.stored.text(draft)
            except DraftTooBig as exc:
                raise BadDraft(too_big_words(int(exc.args[0]), draft.id)) from None
            refuse_unsendable(text)
            if draft.files and not command:
                raise BadDraft(
                    'a mailto: link cannot carry files: set send_command in the [compose] table (e.g. ["msmtp", '
                    '"-t"]), or remove the attached files'
                )
            files = [NewFile(f.name, f.mime, self.stored.file_bytes(f)) for f in draft.files]
            message = message_to_send(text, now=self.clock(), needs_recipient=bool(command), files=files)
            if command:
                programs.send(command, message.as_bytes())
                said = f"Sent with {clean_line(Path(command[0]).name, limit=40)}."
            else:
                try:
                    programs.open_with(self.config.ui.open_command, mailto_url(message))
                except ProgramFailed as exc:  # (say how to send, not only how to open)
                    raise ProgramFailed(  # (the advice first: a long cause is what gets cut)
                        'no send_command is set: set send_command in the [compose] table (e.g. ["msmtp", "-t"]), '
                        f"or open_command in [ui] for the mailto: link, which could not be opened: {exc}"
                    ) from None
                said = "Handed to the mail program (no send_command in [compose])."
        except (BadDraft, ProgramFailed, AttachedTooBig, OSError) as exc:
            reason = clean_line(str(exc), limit=300)
            with contextlib.suppress(OSError):  # (the draft itself is what must not be lost)
                self.stored.note_failure(draft, reason)
            raise SendFailed(f"Not sent: {reason}. The draft is kept: pigeon drafts send {draft.id}") from None
        self.stored.discard(draft)
        return said

    # --- the review: what it shows and what it changes ------------------------------------------------------------

    def review(self, draft: MailDraft) -> Review:
        """What the review shows of ``draft`` as kept now. :class:`UnknownDraft` if it is gone; ``OSError``."""
        from email import policy
        from email.parser import Parser

        draft = self.stored.get(draft.id)
        try:
            text = self.stored.text(draft)
        except DraftTooBig as exc:
            text = self.stored.headers(draft) + "\n" + too_big_words(int(exc.args[0]), draft.id)
        head, _, body = text.replace("\r\n", "\n").partition("\n\n")
        headers = Parser(policy=policy.default).parsestr(head + "\n\n", headersonly=True)

        def header(name: str) -> str:
            try:
                value = str(headers.get(name, "") or "")  # (encoded words decoded, as a mail program shows them)
            except (ValueError, IndexError, TypeError):  # (a header the email package cannot read: as written)
                value = next((str(v) for k, v in headers.raw_items() if k.lower() == name.lower()), "")
            return clean_line(" ".join(value.split()), limit=300)

        own, quoted = own_text(body)
        lines = tuple(clean_line(line, limit=200) for line in own[:REVIEW_LINES])
        files = tuple((clean_line(f.name, limit=80), f.size) for f in draft.files)
        more = max(len(own) - REVIEW_LINES, 0)
        return Review(header("From"), header("To"), header("Cc"), header("Subject"), lines, files, more, quoted)

    def set_addresses(self, draft: MailDraft, name: str, value: str) -> None:
        """Set the draft's To or Cc to the addresses of ``value``; :class:`BadDraft` (nothing changed) when one
        cannot be read."""
        if name not in {"To", "Cc"}:
            raise ValueError(name)
        try:
            text = self.stored.text(draft)
        except DraftTooBig as exc:
            raise BadDraft(too_big_words(int(exc.args[0]), draft.id)) from None
        self.stored.rewrite(draft, with_addresses(text, name, value))

    def attach_file(self, draft: MailDraft, typed: str) -> MailDraft:
        """The draft with the file at the path ``typed`` attached: it must be there, a regular file this user can
        read, within the limit. :class:`AttachedTooBig` or ``OSError`` (a one-line reason naming the path)."""
        import mimetypes
        import os

        from pigeon.core.attachments import attachment_filename

        draft = self.stored.get(draft.id)
        shown = clean_line(typed.strip(), limit=120)
        path = Path(typed.strip()).expanduser()
        if not typed.strip():
            raise FileNotFoundError("type the path of a file to attach")
        if not path.exists():
            raise FileNotFoundError(f"no file at {shown}")
        if not path.is_file():
            raise IsADirectoryError(f"{shown} is not a regular file")
        if not os.access(path, os.R_OK):
            raise PermissionError(f"{shown} cannot be read (permission denied)")
        total = draft.attached_bytes + path.stat().st_size
        if total > MAX_ATTACHED_BYTES:
            raise AttachedTooBig(f"{shown} is too big: {_too_big(total)}")
        with path.open("rb") as handle:
            data = handle.read(MAX_ATTACHED_BYTES + 1)
        name = attachment_filename(path.name)
        mime = mimetypes.guess_type(name)[0] or "application/octet-stream"
        return self.stored.attach(draft, NewFile(name, mime, data))

    def detach(self, draft: MailDraft, index: int) -> MailDraft:
        """The draft without its attached file ``index`` (of the files as kept now)."""
        draft = self.stored.get(draft.id)
        if not 0 <= index < len(draft.files):
            raise IndexError(index)
        return self.stored.detach(draft, index)

    def get(self, draft_id: str) -> MailDraft:
        """A draft by its id or a unique beginning of it; :class:`UnknownDraft` otherwise."""
        found = [d for d in self.stored.all() if d.id.startswith(draft_id.strip())] if draft_id.strip() else []
        exact = [d for d in found if d.id == draft_id.strip()]
        if exact or len(found) == 1:
            return (exact or found)[0]
        why = "names several drafts; give more of the id" if found else "names no draft"
        raise UnknownDraft(f"{clean_line(draft_id, limit=40)!r} {why} (see `pigeon drafts`)")

    def all(self) -> list[MailDraft]:
        return self.stored.all()

    @property
    def folder(self) -> Path:
        """Where the drafts are kept (for messages that name it)."""
        return self.stored.folder

    def discard(self, draft: MailDraft) -> None:
        self.stored.discard(draft)

    def summary(self, draft: MailDraft) -> tuple[str, str]:
        """A draft's To and Subject, cleaned, for a list (its headers alone are read)."""
        from email import policy
        from email.parser import Parser

        try:
            headers = Parser(policy=policy.default).parsestr(self.stored.headers(draft), headersonly=True)
            to, subject = str(headers.get("To", "") or ""), str(headers.get("Subject", "") or "")
        except (OSError, ValueError, IndexError):
            to, subject = "", "(unreadable)"
        return clean_line(to, limit=60), clean_line(subject, limit=80)

    def status(self, draft: MailDraft) -> str:
        """Where a kept draft stands, in one line: too big to send, why it was not sent, or not tried yet."""
        if draft.too_big:
            return too_big_words(draft.size, draft.id)
        return clean_line(draft.error or "not sent yet: postponed, or left unsent in the editor or the review")


def _too_big(total: int) -> str:
    from pigeon.store.mail_drafts import too_many_bytes

    return str(too_many_bytes(total))


def too_big_words(size: int, draft_id: str) -> str:
    limit = MAX_DRAFT_BYTES // (1024 * 1024)
    return (
        f"too big to send: {size / (1024 * 1024):.1f} MiB, and Pigeon sends drafts up to {limit} MiB; "
        f"shorten it (pigeon drafts edit {draft_id}) or send the file from your mail program"
    )


def refuse_unsendable(text: str) -> None:
    """:class:`BadDraft` naming the header, when the draft asks for a message Pigeon does not make: Pigeon sends
    the body as UTF-8 plain text, so a multipart type, another charset or an encoding would go out wrong or empty."""
    from email import policy
    from email.parser import Parser

    headers = Parser(policy=policy.default).parsestr(text, headersonly=True)
    kind = headers.get_content_type()
    if "Content-Type" in headers and kind not in SENT_AS_WRITTEN:
        raise BadDraft(
            f"the Content-Type header asks for {clean_line(kind, limit=60)}, and Pigeon sends the body as plain "
            "text: remove that header (attach files from your mail program)"
        )
    charset = headers.get_content_charset()
    if charset and charset.lower() not in PLAIN_CHARSETS:
        raise BadDraft(
            f"the Content-Type header names the charset {clean_line(charset, limit=40)}, and Pigeon sends UTF-8: "
            "remove the charset"
        )
    encoding = " ".join(str(headers.get("Content-Transfer-Encoding", "") or "").split()).lower()
    if encoding and encoding not in PLAIN_ENCODINGS:
        raise BadDraft(
            f"the Content-Transfer-Encoding header says {clean_line(encoding, limit=40)}, and Pigeon sends the body "
            "as written: remove that header"
        )


def own_text(body: str) -> tuple[list[str], int]:
    """The lines of ``body`` the user wrote (quoted lines and the attribution before them left out, blank runs made
    one, none at either end), and how many lines it quotes: a reply's words may be above or below the quote."""
    lines = body.replace("\r\n", "\n").split("\n")
    own: list[str] = []
    quoted = 0
    for n, line in enumerate(lines):
        quoting = line.startswith(">") or (
            ATTRIBUTION.match(line.strip()) is not None and n + 1 < len(lines) and lines[n + 1].startswith(">")
        )
        if quoting:
            quoted += 1
        elif line.strip() or (own and own[-1].strip()):
            own.append(line.rstrip())
    while own and not own[-1].strip():
        own.pop()
    return own, quoted
