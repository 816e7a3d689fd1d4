"""Messages on their way out: replies and forwards written in the user's editor, kept on disk until the send
command has taken them (a failure keeps them, with its reason, for ``pigeon drafts``).

One ``<id>.eml`` per message under ``<data dir>/drafts/mail/`` (the text the editor edits: headers, a blank line,
the body) and a ``<id>.json`` beside it (which thread it answers, when it was written, why it was not sent). Both
are written atomically, readable only by the user (0600 in a 0700 folder).
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pigeon import locations
from pigeon.files import write_private

_SAFE_ID = re.compile(r"^[0-9]{8}-[0-9]{6}-[0-9a-f]{6}$")


class UnknownDraft(Exception):
    """No draft has that id."""


@dataclass(frozen=True)
class OutgoingDraft:
    id: str
    path: Path
    kind: str
    thread_id: str
    saved_at: datetime
    error: str = ""


class Outgoing:
    """The folder of messages not sent yet."""

    def __init__(self, folder: Path | None = None) -> None:
        self._folder = folder

    @property
    def folder(self) -> Path:
        return self._folder or locations.data_dir() / "drafts" / "mail"

    def _paths(self, draft_id: str) -> tuple[Path, Path]:
        if not _SAFE_ID.match(draft_id):
            raise UnknownDraft(f"no draft {draft_id!r} (see `pigeon drafts`)")
        return self.folder / f"{draft_id}.eml", self.folder / f"{draft_id}.json"

    def write(self, text: str, *, kind: str, thread_id: str = "", now: datetime | None = None) -> OutgoingDraft:
        """Keep a new draft; its file is what the editor opens."""
        when = now or datetime.now(UTC)
        draft_id = f"{when:%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"
        eml, about = self._paths(draft_id)
        write_private(eml, text.encode())
        write_private(about, json.dumps({"kind": kind, "thread_id": thread_id, "saved_at": when.isoformat()}).encode())
        return OutgoingDraft(draft_id, eml, kind, thread_id, when)

    def get(self, draft_id: str) -> OutgoingDraft:
        eml, about = self._paths(draft_id)
        if not eml.is_file():
            raise UnknownDraft(f"no draft {draft_id!r} (see `pigeon drafts`)")
        try:
            data = json.loads(about.read_text(encoding="utf-8"))
            saved = datetime.fromisoformat(str(data.get("saved_at")))
        except (OSError, ValueError, TypeError, AttributeError):  # a lost or damaged note: the message is what counts
            data, saved = {}, datetime.fromtimestamp(eml.stat().st_mtime, UTC)
        if not isinstance(data, dict):
            data = {}
        return OutgoingDraft(
            draft_id, eml, str(data.get("kind", "")), str(data.get("thread_id", "")), saved, str(data.get("error", ""))
        )

    def text(self, draft: OutgoingDraft) -> str:
        return draft.path.read_text(encoding="utf-8", errors="replace")

    def note_failure(self, draft: OutgoingDraft, error: str) -> None:
        """Why the draft was not sent (``pigeon drafts`` shows it)."""
        _, about = self._paths(draft.id)
        note = {"kind": draft.kind, "thread_id": draft.thread_id, "saved_at": draft.saved_at.isoformat()}
        write_private(about, json.dumps({**note, "error": error}).encode())

    def discard(self, draft: OutgoingDraft) -> None:
        for path in self._paths(draft.id):
            path.unlink(missing_ok=True)

    def all(self) -> list[OutgoingDraft]:
        """Every draft, oldest first."""
        if not self.folder.is_dir():
            return []
        return [self.get(path.stem) for path in sorted(self.folder.glob("*.eml")) if _SAFE_ID.match(path.stem)]
