"""Writing the user's own files: atomically (a reader sees the old file or the new one, never half of one) and
readable by the user alone (0600, in a 0700 folder). No Textual here."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

FILE_MODE = 0o600
FOLDER_MODE = 0o700


def write_private(path: Path, payload: bytes) -> None:
    """Replace ``path`` with ``payload``, mode 0600, through a temporary file in the same folder."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=FOLDER_MODE)
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
