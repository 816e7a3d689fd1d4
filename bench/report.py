"""docs/performance.md is written by hand and by the benches: each bench owns one block of it, between two marker
lines, and rewrites only that block (``--write``), so a run never erases the write-ups around it.

    <!-- bench: side-by-side -->
    ... what bench/side_by_side.py wrote ...
    <!-- /bench: side-by-side -->
"""

from __future__ import annotations

import os
import platform
from datetime import UTC, datetime
from pathlib import Path

REPORT = Path(__file__).resolve().parent.parent / "docs" / "performance.md"


def markers(name: str) -> tuple[str, str]:
    return f"<!-- bench: {name} -->", f"<!-- /bench: {name} -->"


def replace_block(text: str, name: str, block: str) -> str:
    """``text`` with the block ``name`` holding ``block``; a block not there yet is added at the end."""
    begin, end = markers(name)
    inside = f"{begin}\n{block.strip()}\n{end}"
    start = text.find(begin)
    if start < 0:
        return text.rstrip("\n") + "\n\n" + inside + "\n"
    stop = text.find(end, start)
    if stop < 0:
        raise ValueError(f"{begin} has no {end} after it")
    return text[:start] + inside + text[stop + len(end) :]


def write_block(name: str, block: str, path: Path = REPORT) -> None:
    path.write_text(replace_block(path.read_text() if path.exists() else "# Performance\n", name, block))


def machine() -> str:
    """Today's date and this machine, for the line that opens each block."""
    return (
        f"{datetime.now(UTC):%Y-%m-%d}, {platform.platform()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}"
    )
