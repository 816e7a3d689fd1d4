"""What the CLI prints: exit codes, one-line errors, aligned tables of cleaned text, and JSON for scripts."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

from pigeon.sanitize import clean_line

if TYPE_CHECKING:
    from pigeon.models import Message, Resource

EXIT_OK = 0
EXIT_SERVICE = 1
EXIT_USAGE = 2
CELL_LIMIT = 60


class UsageError(Exception):
    """A problem the user can fix by calling differently or setting things up (exit code 2)."""


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain, aligned text table; every cell is cleaned of control characters and kept to one line."""
    cells = [[clean_line(c, limit=CELL_LIMIT) for c in row] for row in rows]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    return "\n".join(lines)


def print_json(data: Any, out: TextIO) -> None:
    # ensure_ascii keeps hostile text (C1 controls, bidi overrides) escaped when a script prints it to a terminal.
    out.write(json.dumps(data, indent=2, ensure_ascii=True) + "\n")


def wire(items: Sequence[Resource]) -> list[dict[str, Any]]:
    return [item.to_wire() for item in items]


def when(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M") if value else ""


def enum(value: Any) -> str:
    return str(value.value if hasattr(value, "value") else value or "")


def sender(message: Message) -> str:
    from pigeon.core.mail import sender_label

    return sender_label(message) or (message.sender.contact_id or "" if message.sender else "")


def fail(message: str, code: int) -> int:
    sys.stderr.write(f"pigeon: error: {clean_line(message)}\n")
    return code
