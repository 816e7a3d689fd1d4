"""Attachments: which blocks are attachments, their bytes, safe file names, and saving them into the download
folder without ever writing outside it or following a link. No Textual here."""

from __future__ import annotations

import base64
import binascii
import contextlib
import errno
import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from pigeon.files import private_folders
from pigeon.sanitize import clean_line

if TYPE_CHECKING:
    from pigeon.models import ContentBlock, Message

NAME_BYTES = 240
"""The longest file name written, in UTF-8 bytes (file systems allow 255 bytes, not characters)."""
_EXTENSION = re.compile(r"\.[^.\s]{1,32}[.\s]*\Z")


def is_attachment(block: ContentBlock) -> bool:
    """A block shown as an attachment: one with a filename, or a MIME type that is not text."""
    return block.attached


def sequence_of(block: ContentBlock) -> int:
    return block.sequence if block.sequence is not None else 1 << 30


def attachments_of(messages: Iterable[Message]) -> list[tuple[Message, ContentBlock]]:
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
    return _cut_to_bytes(base)


def _cut_to_bytes(name: str) -> str:
    """``name`` cut to :data:`NAME_BYTES` of UTF-8, never inside a character, its extension kept (what opens it)."""
    if len(name.encode()) <= NAME_BYTES:
        return name
    found = _EXTENSION.search(name)
    tail = found.group() if found and len(found.group().encode()) <= NAME_BYTES // 4 else ""
    budget = NAME_BYTES - len(tail.encode())
    return name[: len(name) - len(tail)].encode()[:budget].decode(errors="ignore") + tail


# --- the download folder -----------------------------------------------------------------------------------------
# A folder the user names may be a link, or lie behind links (a download folder kept on another disk): those are
# followed, once, and the real place is what questions and notes name. A link another user made (in /tmp, or any
# folder others can write to) leads where that user chose, not the user: it is refused, as is a real folder another
# user owns (they could read or swap what is saved). Links of the user's own and of the system (root's) are followed.

LINK_HOPS = 40  # (as the kernel's own limit: a loop of links ends)


def _uid() -> int | None:
    return getattr(os, "getuid", lambda: None)()


def _made_by_another(link: os.stat_result) -> bool:
    """Whether a link was made by another user than this one and the system."""
    uid = _uid()
    return uid is not None and link.st_uid not in {uid, 0}


def real_folder(folder: Path) -> Path:
    """Where ``folder`` really is, every link on the way followed; ``PermissionError`` (one line) if a link another
    user made is on the way. The part that does not exist yet is kept as named (it will be made)."""
    path = Path(os.path.abspath(folder.expanduser()))
    real, pending, hops = Path(path.anchor), list(path.parts[1:]), 0
    while pending:
        part = pending.pop(0)
        if part in {"", "."}:
            continue
        if part == "..":
            real = real.parent
            continue
        step = real / part
        try:
            info = step.lstat()
        except FileNotFoundError:
            return step.joinpath(*pending)
        if not stat.S_ISLNK(info.st_mode):
            real = step
            continue
        hops += 1
        if _made_by_another(info):
            raise PermissionError(f"the download folder {folder} leads through {step}, a link another user made")
        if hops > LINK_HOPS:
            raise PermissionError(f"the download folder {folder} leads through too many links")
        target = Path(os.readlink(step))
        if target.is_absolute():
            real, pending = Path(target.anchor), [*target.parts[1:], *pending]
        else:
            pending = [*target.parts, *pending]
    return real


def open_download_folder(folder: Path) -> tuple[Path, int]:
    """The download folder resolved once and opened (made if missing): its real path and a descriptor of it, so
    what is checked is where the file lands. ``PermissionError`` (one line) for a folder the user did not choose."""
    real = real_folder(folder)
    try:
        real.mkdir(parents=True, exist_ok=True)
    except FileExistsError:  # (a file where the folder should be: not a question of replacing a download)
        raise NotADirectoryError(f"the download folder {real} is a file, not a folder") from None
    real = real_folder(real)  # (made now: nothing on the way may have become a link meanwhile)
    if not hasattr(os, "O_DIRECTORY"):  # (Windows: a folder cannot be opened; its path is used)
        return real, -1
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
    descriptor = os.open(real, flags)
    uid = _uid()
    if uid is not None and os.fstat(descriptor).st_uid != uid:
        os.close(descriptor)
        raise PermissionError(f"the download folder {real} belongs to another user")
    return real, descriptor


def save_into(folder: Path, name: str | None, data: bytes, *, overwrite: bool) -> Path:
    """Write ``data`` as ``<the real folder>/<safe name>``; refuses any path outside it and a folder the user did
    not choose; ``FileExistsError`` (its ``filename`` the real path) if the file exists and ``overwrite`` is
    false."""
    safe_name = attachment_filename(name)
    # The name is a bare base name, so the target sits in the folder itself; links are never followed:
    # O_EXCL refuses an existing file or link, O_NOFOLLOW a link, and overwriting removes the entry first.
    if os.sep in safe_name or (os.altsep and os.altsep in safe_name) or safe_name in {".", ".."}:
        raise PermissionError(f"{safe_name} would land outside the download folder")
    root, directory = open_download_folder(folder)
    target = root / safe_name
    in_folder = {"dir_fd": directory} if directory >= 0 and os.open in os.supports_dir_fd else {}
    where = safe_name if in_folder else target
    try:
        if overwrite:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(where, **in_folder)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(where, flags, 0o600, **in_folder)
        except FileExistsError:
            raise FileExistsError(errno.EEXIST, "a file of that name is there", str(target)) from None
    finally:
        if directory >= 0:
            os.close(directory)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    return target


# --- opening (which types ask first: :mod:`pigeon.core.runs_code`) --------------------------------------------


def open_folder(root: Path) -> Path:
    """The private folder attachments are opened from (0700), made if missing; refuses one another user owns."""
    private_folders(root)
    uid = getattr(os, "getuid", lambda: None)()
    if root.is_symlink() or (uid is not None and root.stat().st_uid != uid):
        raise PermissionError(f"{root} is not a folder of this user's")
    root.chmod(0o700)
    return root


def place_for_opening(root: Path, block: ContentBlock) -> Path:
    """The attachment written into the private folder, readable by the user alone and not executable (0600),
    under its safe name; an older copy of that name is replaced."""
    return save_into(open_folder(root), block.filename, attachment_bytes(block), overwrite=True)
