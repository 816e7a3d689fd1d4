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


# --- opening: types that can run code ask first -----------------------------------------------------------------

# (lists of words, split once: a frozenset of 80 quoted strings would fill a screen)
_PROGRAMS = "exe com scr pif msi msix msp appx appimage apk app dmg pkg deb rpm run bin elf out jar cpl dll sys"
_SCRIPTS = (
    "bat cmd ps1 psm1 vbs vbe js jse mjs wsf wsh hta sh bash zsh fish csh ksh command py pyw pl rb php lua tcl "
    "desktop lnk url reg inf scf iso img vhd vhdx"
)
_MACROS_AND_PAGES = (  # office files that may carry macros, and pages that run scripts when opened
    "doc dot docm dotm xls xlt xlsm xltm xlam xlsb ppt pot pps pptm potm ppsm ppam sldm one rtf html htm xhtml svg"
)
RISKY_EXTENSIONS = frozenset(f"{_PROGRAMS} {_SCRIPTS} {_MACROS_AND_PAGES}".split())
_RISKY_TYPES = (
    "application/x-msdownload application/x-msdos-program application/x-executable application/x-elf "
    "application/vnd.microsoft.portable-executable application/x-msi application/x-ms-installer "
    "application/x-apple-diskimage application/vnd.debian.binary-package application/x-rpm "
    "application/vnd.android.package-archive application/java-archive application/x-java-archive "
    "application/x-sh application/x-shellscript text/x-shellscript application/x-csh application/javascript "
    "text/javascript application/x-python text/x-python application/x-perl text/x-perl application/x-ruby "
    "application/hta application/x-ms-shortcut application/x-iso9660-image application/msword "
    "application/vnd.ms-excel application/vnd.ms-powerpoint application/rtf text/rtf text/html "
    "application/xhtml+xml image/svg+xml"
)
RISKY_TYPES = frozenset(_RISKY_TYPES.split())


def risky(block: ContentBlock) -> str:
    """Why opening this attachment could run code ("" when nothing says so), from its name and its MIME type: a
    name that ends in ``.pdf.exe`` is a program whatever its type says."""
    name = attachment_filename(block.filename).lower()
    extension = name.rsplit(".", 1)[-1] if "." in name else ""
    mime = (block.mime_type or "").split(";")[0].strip().lower()
    if extension in RISKY_EXTENSIONS:
        return f"a .{extension} file can run code when opened"
    if mime in RISKY_TYPES or "macroenabled" in mime:
        return f"a {clean_line(mime, limit=60)} file can run code when opened"
    return ""


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
