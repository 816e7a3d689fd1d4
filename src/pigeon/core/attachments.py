"""Attachments: which blocks are attachments, their bytes, safe file names, and saving them into the download
folder without ever writing outside it or following a link. No Textual here."""

from __future__ import annotations

import base64
import binascii
import os
from pathlib import Path
from typing import TYPE_CHECKING

from pigeon.sanitize import clean_line

if TYPE_CHECKING:
    from pigeon.models import ContentBlock, Message

NAME_LIMIT = 200


def is_attachment(block: ContentBlock) -> bool:
    """A block shown as an attachment: one with a filename, or a MIME type that is not text."""
    if block.filename:
        return True
    mime = (block.mime_type or "text/plain").split(";")[0].strip().lower()
    return not (mime.startswith("text/") or mime in {"", "application/json"})


def sequence_of(block: ContentBlock) -> int:
    return block.sequence if block.sequence is not None else 1 << 30


def attachments_of(messages: list[Message]) -> list[tuple[Message, ContentBlock]]:
    """Every attachment of a thread's messages, in the order the reader shows them."""
    return [(m, b) for m in messages for b in sorted(m.content_blocks, key=sequence_of) if is_attachment(b)]


def attachment_bytes(block: ContentBlock) -> bytes:
    """The attachment's bytes: base64 when the block's metadata says so, else the text itself."""
    content = block.content or ""
    if (block.metadata or {}).get("encoding") == "base64":
        try:
            return base64.b64decode(content, validate=False)
        except (binascii.Error, ValueError):
            pass
    return content.encode()


def attachment_filename(name: str | None) -> str:
    """A safe file name for an attachment: its base name only, cleaned; never a path."""
    base = clean_line(name or "").replace("\\", "/").rsplit("/", 1)[-1].replace("\x00", "").strip()
    if base in {"", ".", ".."}:
        return "attachment"
    return base[:NAME_LIMIT]


def save_into(folder: Path, name: str | None, data: bytes, *, overwrite: bool) -> Path:
    """Write ``data`` as ``folder/<safe name>``; refuses any path outside ``folder``; ``FileExistsError`` if the
    file exists and ``overwrite`` is false."""
    folder.mkdir(parents=True, exist_ok=True)
    root = folder.resolve()
    safe_name = attachment_filename(name)
    target = root / safe_name
    # The name is a bare base name, so the target sits in the folder itself; links are never followed:
    # O_EXCL refuses an existing file or link, O_NOFOLLOW a link, and overwriting removes the entry first.
    if target.parent != root or os.sep in safe_name or (os.altsep and os.altsep in safe_name):
        raise PermissionError(f"{safe_name} would land outside the download folder")
    if overwrite and (target.exists() or target.is_symlink()):
        target.unlink()
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(target, flags, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    return target


# --- opening (which types ask first: :mod:`pigeon.core.runs_code`) --------------------------------------------


def open_folder(root: Path) -> Path:
    """The private folder attachments are opened from (0700), made if missing; refuses one another user owns."""
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    uid = getattr(os, "getuid", lambda: None)()
    if root.is_symlink() or (uid is not None and root.stat().st_uid != uid):
        raise PermissionError(f"{root} is not a folder of this user's")
    root.chmod(0o700)
    return root


def place_for_opening(root: Path, block: ContentBlock) -> Path:
    """The attachment written into the private folder, readable by the user alone and not executable (0600),
    under its safe name; an older copy of that name is replaced."""
    return save_into(open_folder(root), block.filename, attachment_bytes(block), overwrite=True)
