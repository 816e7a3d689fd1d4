"""Mail drafts: replies, forwards and new messages written in the user's editor, kept on disk until the send
command has taken them (a failure keeps them, with its reason, for ``pigeon drafts``).

One ``<id>.eml`` per message under ``<data dir>/drafts/mail/`` (the text the editor edits: headers, a blank line,
the body) and a ``<id>.json`` beside it (which thread it answers, when it was written, why it was not sent). Both
are written atomically, readable only by the user (0600 in a 0700 folder). A draft is read whole only to be sent,
and only up to :data:`MAX_DRAFT_BYTES`; a list reads the headers alone, up to :data:`HEADER_BYTES`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pigeon import locations
from pigeon.files import write_private

_SAFE_ID = re.compile(r"^[0-9]{8}-[0-9]{6}-[0-9a-f]{6}$")

MAX_DRAFT_BYTES = 5 * 1024 * 1024
"""The largest draft Pigeon sends (a typed message with quotes is far smaller; a bigger file is refused, kept)."""
HEADER_BYTES = 64 * 1024
"""How much of a draft a list reads for its headers."""


class UnknownDraft(Exception):
    """No draft has that id."""


class DraftTooBig(Exception):
    """The draft is larger than :data:`MAX_DRAFT_BYTES`; it is kept as it is."""


@dataclass(frozen=True)
class MailDraft:
    id: str
    path: Path
    kind: str
    thread_id: str
    saved_at: datetime
    error: str = ""
    size: int = 0

    @property
    def too_big(self) -> bool:
        return self.size > MAX_DRAFT_BYTES


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

    def write(self, text: str, *, kind: str, thread_id: str = "", now: datetime | None = None) -> MailDraft:
        """Keep a new draft; its file is what the editor opens."""
        when = now or datetime.now(UTC)
        draft_id = f"{when:%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"
        eml, about = self._paths(draft_id)
        write_private(eml, text.encode())
        write_private(about, json.dumps({"kind": kind, "thread_id": thread_id, "saved_at": when.isoformat()}).encode())
        return MailDraft(draft_id, eml, kind, thread_id, when)

    def get(self, draft_id: str) -> MailDraft:
        eml, about = self._paths(draft_id)
        if not eml.is_file():
            raise UnknownDraft(f"no draft {draft_id!r} (see `pigeon drafts`)")
        size = eml.stat().st_size
        try:
            with about.open("rb") as note:  # (a note is a few hundred bytes; a bigger one is not Pigeon's)
                data = json.loads(note.read(HEADER_BYTES))
            saved = datetime.fromisoformat(str(data.get("saved_at")))
        except (OSError, ValueError, TypeError, AttributeError):  # a lost or damaged note: the message is what counts
            data, saved = {}, datetime.fromtimestamp(eml.stat().st_mtime, UTC)
        if not isinstance(data, dict):
            data = {}
        return MailDraft(
            draft_id,
            eml,
            str(data.get("kind", "")),
            str(data.get("thread_id", "")),
            saved,
            str(data.get("error", "")),
            size,
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

    def fingerprint(self, draft: MailDraft) -> str:
        """A digest of the draft's bytes, read in pieces (whether the editor changed it, whatever its size)."""
        digest = hashlib.sha256()
        with draft.path.open("rb") as handle:
            while chunk := handle.read(HEADER_BYTES):
                digest.update(chunk)
        return digest.hexdigest()

    def note_failure(self, draft: MailDraft, error: str) -> None:
        """Why the draft was not sent (``pigeon drafts`` shows it)."""
        _, about = self._paths(draft.id)
        note = {"kind": draft.kind, "thread_id": draft.thread_id, "saved_at": draft.saved_at.isoformat()}
        write_private(about, json.dumps({**note, "error": error}).encode())

    def discard(self, draft: MailDraft) -> None:
        for path in self._paths(draft.id):
            path.unlink(missing_ok=True)

    def all(self) -> list[MailDraft]:
        """Every draft, oldest first."""
        if not self.folder.is_dir():
            return []
        return [self.get(path.stem) for path in sorted(self.folder.glob("*.eml")) if _SAFE_ID.match(path.stem)]
