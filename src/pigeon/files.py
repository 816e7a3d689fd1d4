"""Writing the user's own files: atomically (a reader sees the old file or the new one, never half of one) and
readable by the user alone (0600, in a 0700 folder). No Textual here."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from pathlib import Path

FILE_MODE = 0o600
FOLDER_MODE = 0o700


def private_folders(folder: Path, mode: int = FOLDER_MODE) -> Path:
    """``folder``, made if missing together with every missing folder above it, each with ``mode`` (0700: the XDG
    rule for folders an app makes; ``mkdir(parents=True)`` would give the ones above the umask's mode). Folders that
    exist are left as they are."""
    missing: list[Path] = []
    at = folder
    while not os.path.lexists(at) and at != at.parent:
        missing.append(at)
        at = at.parent
    for made in reversed(missing):
        try:
            made.mkdir(mode=mode)
        except FileExistsError:  # (made meanwhile by another process: theirs, left as it is)
            continue
        made.chmod(mode)  # (a umask may have taken bits the user needs, e.g. 0277)
    if not folder.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "not a folder", str(folder))
    return folder


def private_file(path: Path, *, create: bool = True) -> None:
    """``path`` made empty (0600) if missing and ``create``; one that is there, a file of this user's (not a link),
    loses what it let others do (older versions left the umask's mode; the user's own bits stay: 0444 is 0400)."""
    if create:
        with contextlib.suppress(FileExistsError):  # (O_EXCL: never through a link)
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
    try:
        info = path.lstat()
    except FileNotFoundError:
        return
    uid = getattr(os, "getuid", lambda: None)()
    if stat.S_ISREG(info.st_mode) and info.st_uid == uid and stat.S_IMODE(info.st_mode) & 0o077:
        with contextlib.suppress(OSError):  # (a read-only disk: it is read as it is)
            path.chmod(stat.S_IMODE(info.st_mode) & 0o700)


def write_private(path: Path, payload: bytes) -> None:
    """Replace ``path`` with ``payload``, mode 0600, through a temporary file in the same folder."""
    private_folders(path.parent)
    fd, temp = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
