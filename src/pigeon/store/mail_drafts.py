"""Mail drafts: replies, forwards and new messages written in the user's editor, kept on disk until the send
command has taken them (a failure keeps them, with its reason, for ``pigeon drafts``).

One ``<id>.eml`` per message under ``<data dir>/drafts/mail/`` (the text the editor edits: headers, a blank line,
the body) and a ``<id>.json`` beside it (which thread it answers, when it was written, why it was not sent, the
files it carries). Each attached file is kept as ``<id>.<n>.part`` beside them, its bytes as they will be sent. All
are written atomically, readable only by the user (0600 in a 0700 folder). A draft is read whole only to be sent,
and only up to :data:`MAX_DRAFT_BYTES`; a list reads the headers alone, up to :data:`HEADER_BYTES`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from pigeon import locations
from pigeon.files import write_private
from pigeon.sanitize import clean_line

_SAFE_ID = re.compile(r"^[0-9]{8}-[0-9]{6}-[0-9a-f]{6}$")
_PART = re.compile(r"^([0-9]{8}-[0-9]{6}-[0-9a-f]{6})\.([0-9]{1,4})\.part$")
_MIME = re.compile(r"^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}/[a-z0-9][a-z0-9!#$&^_.+-]{0,63}$")

MAX_DRAFT_BYTES = 5 * 1024 * 1024
"""The largest draft Pigeon sends (a typed message with quotes is far smaller; a bigger file is refused, kept)."""
HEADER_BYTES = 64 * 1024
"""How much of a draft a list reads for its headers."""
MAX_ATTACHED_BYTES = 20 * 1024 * 1024
"""The most a draft's attached files may weigh together (many mail servers refuse a message of 25 MiB once
encoded, and base64 makes 20 MiB into about 27)."""
MAX_FILES = 100


class UnknownDraft(Exception):
    """No draft has that id."""


class DraftTooBig(Exception):
    """The draft is larger than :data:`MAX_DRAFT_BYTES`; it is kept as it is."""


class AttachedTooBig(Exception):
    """The draft's files would weigh more than :data:`MAX_ATTACHED_BYTES` together; the message says so."""


class NewFile(NamedTuple):
    """A file to attach: its name as sent, its MIME type, its bytes."""

    name: str
    mime: str
    data: bytes


@dataclass(frozen=True)
class DraftFile:
    """A file a draft carries, kept beside it."""

    name: str
    mime: str
    path: Path
    size: int


@dataclass(frozen=True)
class MailDraft:
    id: str
    path: Path
    kind: str
    thread_id: str
    saved_at: datetime
    error: str = ""
    size: int = 0
    files: tuple[DraftFile, ...] = ()

    @property
    def too_big(self) -> bool:
        return self.size > MAX_DRAFT_BYTES

    @property
    def attached_bytes(self) -> int:
        return sum(f.size for f in self.files)


def mime_type(value: str | None) -> str:
    """``value`` as a MIME type to send (parameters dropped), or ``application/octet-stream`` when it is not one."""
    kind = (value or "").split(";")[0].strip().lower()
    whole = kind.startswith(("multipart/", "message/")) and kind != "message/rfc822"  # (parts Pigeon would not make)
    return kind if _MIME.match(kind) and not whole else "application/octet-stream"


def size_words(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MiB" if size >= 1024 * 1024 else f"{max(size, 1) / 1024:.0f} KiB"


def too_many_bytes(total: int) -> AttachedTooBig:
    return AttachedTooBig(
        f"the attached files would weigh {size_words(total)} together, and Pigeon sends up to "
        f"{size_words(MAX_ATTACHED_BYTES)}: remove one, or send the file from your mail program"
    )


class MailDrafts:
    """The folder of mail drafts not sent yet."""

    def __init__(self, folder: Path | None = None) -> None:
        self._folder = folder

    @property
    def folder(self) -> Path:
        return self._folder or locations.data_dir() / "drafts" / "mail"

    def _paths(self, draft_id: str) -> tuple[Path, Path]:
        if not _SAFE_ID.match(draft_id):
            raise UnknownDraft(f"no draft {draft_id!r} (see `pigeon drafts`)")
        return self.folder / f"{draft_id}.eml", self.folder / f"{draft_id}.json"

    def write(
        self,
        text: str,
        *,
        kind: str,
        thread_id: str = "",
        now: datetime | None = None,
        files: tuple[NewFile, ...] | list[NewFile] = (),
    ) -> MailDraft:
        """Keep a new draft (with ``files``, within :data:`MAX_ATTACHED_BYTES`); its file is what the editor
        opens."""
        when = now or datetime.now(UTC)
        draft_id = f"{when:%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"
        eml, _ = self._paths(draft_id)
        write_private(eml, text.encode())
        draft = MailDraft(draft_id, eml, kind, thread_id, when)
        self._note(draft)
        for file in files:
            draft = self.attach(draft, file)
        return draft

    def _note(self, draft: MailDraft) -> None:
        _, about = self._paths(draft.id)
        note: dict[str, Any] = {
            "kind": draft.kind,
            "thread_id": draft.thread_id,
            "saved_at": draft.saved_at.isoformat(),
        }
        if draft.error:
            note["error"] = draft.error
        if draft.files:
            note["files"] = [{"name": f.name, "mime": f.mime, "part": f.path.name, "size": f.size} for f in draft.files]
        write_private(about, json.dumps(note).encode())

    def attach(self, draft: MailDraft, file: NewFile) -> MailDraft:
        """The draft with ``file`` added (kept beside it); :class:`AttachedTooBig` past the limit, nothing
        written."""
        total = draft.attached_bytes + len(file.data)
        if total > MAX_ATTACHED_BYTES:
            raise too_many_bytes(total)
        if len(draft.files) >= MAX_FILES:
            raise AttachedTooBig(f"a draft carries up to {MAX_FILES} files")
        taken = {f.path.name for f in draft.files}
        number = next(n for n in range(MAX_FILES + 1) if f"{draft.id}.{n}.part" not in taken)
        path = self.folder / f"{draft.id}.{number}.part"
        write_private(path, file.data)
        changed = replace(draft, files=(*draft.files, DraftFile(file.name, mime_type(file.mime), path, len(file.data))))
        self._note(changed)
        return changed

    def detach(self, draft: MailDraft, index: int) -> MailDraft:
        """The draft without its file ``index`` (whose bytes are removed)."""
        gone = draft.files[index]
        changed = replace(draft, files=tuple(f for n, f in enumerate(draft.files) if n != index))
        self._note(changed)
        gone.path.unlink(missing_ok=True)
        return changed

    def file_bytes(self, file: DraftFile) -> bytes:
        """A kept file's bytes (no more than the limit is read: a file grown since is refused)."""
        with file.path.open("rb") as handle:
            data = handle.read(MAX_ATTACHED_BYTES + 1)
        if len(data) > MAX_ATTACHED_BYTES:
            raise too_many_bytes(len(data))
        return data

    def _files(self, draft_id: str, listed: object) -> tuple[DraftFile, ...]:
        """The files a note lists, each checked: a part of this draft's, in this folder (a damaged or hostile note
        names nothing else)."""
        found = []
        for entry in listed if isinstance(listed, list) else []:
            if not isinstance(entry, dict):
                continue
            part = _PART.match(str(entry.get("part", "")))
            if part is None or part.group(1) != draft_id:
                continue
            path = self.folder / part.group()
            try:
                size = path.lstat().st_size if path.is_file() and not path.is_symlink() else -1
            except OSError:
                size = -1
            if size >= 0:
                name = clean_line(str(entry.get("name") or ""), limit=240) or "attachment"  # (it becomes a header)
                found.append(DraftFile(name, mime_type(str(entry.get("mime", ""))), path, size))
        return tuple(found)

    def get(self, draft_id: str) -> MailDraft:
        eml, about = self._paths(draft_id)
        if not eml.is_file():
            raise UnknownDraft(f"no draft {draft_id!r} (see `pigeon drafts`)")
        size = eml.stat().st_size
        try:
            with about.open("rb") as note:  # (a note is a few hundred bytes; a bigger one is not Pigeon's)
                data = json.loads(note.read(HEADER_BYTES))
        except (OSError, ValueError):  # a lost or damaged note: the message is what counts
            data = {}
        if not isinstance(data, dict):
            data = {}
        try:  # (what of the note can be read is kept: a bad time does not lose the files)
            saved = datetime.fromisoformat(str(data.get("saved_at")))
        except (ValueError, TypeError):
            saved = datetime.fromtimestamp(eml.stat().st_mtime, UTC)
        return MailDraft(
            draft_id,
            eml,
            str(data.get("kind", "")),
            str(data.get("thread_id", "")),
            saved,
            str(data.get("error", "")),
            size,
            self._files(draft_id, data.get("files")),
        )

    def text(self, draft: MailDraft) -> str:
        """The whole draft, to send it; :class:`DraftTooBig` (nothing read past the limit) over
        :data:`MAX_DRAFT_BYTES`."""
        with draft.path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            data = handle.read(MAX_DRAFT_BYTES + 1) if size <= MAX_DRAFT_BYTES else b""
        if size > MAX_DRAFT_BYTES or len(data) > MAX_DRAFT_BYTES:  # (it may have grown since)
            raise DraftTooBig(max(size, len(data)))
        return data.decode("utf-8", errors="replace")

    def headers(self, draft: MailDraft) -> str:
        """The draft's headers (up to the blank line), read no further than :data:`HEADER_BYTES`."""
        with draft.path.open("rb") as handle:
            data = handle.read(HEADER_BYTES)
        text = data.decode("utf-8", errors="replace").replace("\r\n", "\n")
        return text.partition("\n\n")[0] + "\n"

    def rewrite(self, draft: MailDraft, text: str) -> None:
        """Replace the draft's text (the review changed a header)."""
        write_private(draft.path, text.encode())

    def fingerprint(self, draft: MailDraft) -> str:
        """A digest of the draft's bytes, read in pieces (whether the editor changed it, whatever its size)."""
        digest = hashlib.sha256()
        with draft.path.open("rb") as handle:
            while chunk := handle.read(HEADER_BYTES):
                digest.update(chunk)
        return digest.hexdigest()

    def note_failure(self, draft: MailDraft, error: str) -> None:
        """Why the draft was not sent (``pigeon drafts`` shows it)."""
        self._note(replace(draft, error=error))

    def discard(self, draft: MailDraft) -> None:
        parts = self.folder.glob(f"{draft.id}.*.part") if self.folder.is_dir() else iter(())
        for part in [*parts, *(f.path for f in draft.files)]:
            part.unlink(missing_ok=True)
        for path in self._paths(draft.id):
            path.unlink(missing_ok=True)

    def all(self) -> list[MailDraft]:
        """Every draft, oldest first."""
        if not self.folder.is_dir():
            return []
        return [self.get(path.stem) for path in sorted(self.folder.glob("*.eml")) if _SAFE_ID.match(path.stem)]
