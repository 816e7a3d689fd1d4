"""Contact drafts: edits of a contact that have not reached the service yet, kept on disk until they are saved or
discarded.

One JSON file per contact under ``<data dir>/drafts/contacts/<id>.json``, written atomically and readable only by the
user. A failed save never loses what was typed, even if the app is closed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pigeon import locations
from pigeon.files import write_private

_SAFE_ID = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")
MAX_BYTES = 1024 * 1024
"""The largest draft file read (a contact's fields are a few kilobytes; a bigger file is not one Pigeon wrote)."""


@dataclass(frozen=True)
class ContactDraft:
    id: str
    fields: dict[str, Any]
    saved_at: datetime
    reason: str = ""


class ContactDrafts:
    """The folder of contact drafts, one file per contact id."""

    def __init__(self, folder: Path | None = None) -> None:
        self._folder = folder

    @property
    def folder(self) -> Path:
        return self._folder or locations.data_dir() / "drafts" / "contacts"

    def _path(self, contact_id: str) -> Path:
        if not _SAFE_ID.match(contact_id) or contact_id in {".", ".."}:
            raise ValueError(f"bad draft id {contact_id!r}")
        return self.folder / f"{contact_id}.json"

    def save(self, contact_id: str, fields: dict[str, Any], *, reason: str = "") -> ContactDraft:
        draft = ContactDraft(contact_id, fields, datetime.now(UTC), reason)
        path = self._path(contact_id)
        payload = {"fields": fields, "saved_at": draft.saved_at.isoformat(), "reason": reason}
        write_private(path, json.dumps(payload, ensure_ascii=False, indent=1).encode())
        return draft

    def load(self, contact_id: str) -> ContactDraft | None:
        """The draft of ``contact_id``, or ``None`` (also when the file is unreadable or over :data:`MAX_BYTES`: it is
        then left for a human)."""
        try:
            with self._path(contact_id).open("rb") as handle:
                raw = handle.read(MAX_BYTES + 1)
            if len(raw) > MAX_BYTES:
                return None
            data = json.loads(raw.decode("utf-8"))
            return ContactDraft(
                contact_id,
                dict(data["fields"]),
                datetime.fromisoformat(data["saved_at"]),
                reason if isinstance(reason := data.get("reason"), str) else "",
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def discard(self, contact_id: str) -> bool:
        try:
            self._path(contact_id).unlink()
        except FileNotFoundError:
            return False
        return True

    def ids(self) -> list[str]:
        if not self.folder.is_dir():
            return []
        return sorted(p.stem for p in self.folder.glob("*.json"))
