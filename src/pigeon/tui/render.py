"""Turning untrusted mail into screen content.

Everything from the service reaches a widget through :func:`safe` (or :func:`safe_line`): the text is cleaned by
:func:`pigeon.sanitize.clean` (escape sequences, C0/C1 controls and bidi overrides removed) and wrapped in a
``Content`` object, which Textual shows literally: ``[@click=app.quit]`` in a subject is just text.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from textual.content import Content
from textual.markup import escape

from pigeon.sanitize import clean, clean_line

if TYPE_CHECKING:
    from pigeon.models import Contact, Message, Recipient

BODY_LIMIT = 200_000
"""Characters of one text block shown; the rest is summarised (a huge body stays responsive)."""


def safe(text: object, *, style: str = "") -> Content:
    """Untrusted text as literal content, cleaned of control sequences."""
    return Content.styled(clean(text), style) if style else Content(clean(text))


def safe_line(text: object, *, limit: int | None = None, style: str = "") -> Content:
    """One line of untrusted text as literal content."""
    value = clean_line(text, limit=limit)
    return Content.styled(value, style) if style else Content(value)


def safe_markup(text: object, *, limit: int | None = None) -> str:
    """One line of untrusted text for the few places Textual reads as markup (the palette's help): cleaned, and
    its square brackets escaped so that nothing in it is a tag."""
    return escape(clean_line(text, limit=limit))


# --- times and sizes ---------------------------------------------------------------------------------------


def relative_time(moment: datetime | None, now: datetime) -> str:
    """A short, human time: ``now``, ``5m``, ``3h``, ``Mon``, ``Nov 3``, ``2024``."""
    if moment is None:
        return ""
    moment = moment.astimezone(UTC)
    delta = now - moment
    if delta < timedelta(minutes=1):
        return "now"
    if delta < timedelta(hours=1):
        return f"{int(delta.total_seconds() // 60)}m"
    if delta < timedelta(hours=24):
        return f"{int(delta.total_seconds() // 3600)}h"
    if delta < timedelta(days=6):
        return moment.strftime("%a")
    if moment.year == now.year:
        return f"{moment.strftime('%b')} {moment.day}"
    return str(moment.year)


def full_time(moment: datetime | None) -> str:
    return moment.astimezone(UTC).strftime("%a %d %b %Y %H:%M UTC") if moment else ""


def human_size(size: int | None) -> str:
    """A size in bytes for people; an odd one (below zero) is shown as the service sent it."""
    if size is None:
        return "size unknown"
    if size < 0:
        return f"size unknown ({size})"
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"


# --- people ------------------------------------------------------------------------------------------------


def contact_name(contact: Contact | None, fallback: str | None = None) -> str:
    if contact is not None and contact.name:
        return contact.name
    return fallback or ""


def sender_name(message: Message, contacts: dict[str, Contact] | None = None) -> str:
    sender = message.sender
    if sender is None:
        return "(unknown sender)"
    # The contacts the app knows are fresher than the copy a message carried when it was fetched.
    contact = (contacts or {}).get(sender.contact_id or "") or sender.contact
    return contact_name(contact, sender.raw_address or sender.contact_id) or "(unknown sender)"


def sender_address(message: Message, contacts: dict[str, Contact] | None = None) -> str:
    """The address the mail really came from, when the name shown is not that address ("" otherwise): a display
    name can say anything ("PayPal Security <service@paypal.com>"), so the reader shows the address too."""
    address = clean_line(message.sender.raw_address if message.sender else "")
    return address if address and address != clean_line(sender_name(message, contacts)) else ""


@functools.cache
def recipient_labels() -> dict[str, str]:
    from pigeon.models import RecipientType  # pydantic loads after the first screen, not before

    return {RecipientType.TO: "To", RecipientType.CC: "Cc", RecipientType.BCC: "Bcc", RecipientType.UNSPECIFIED: "To"}


def recipients_by_type(recipients: list[Recipient], contacts: dict[str, Contact]) -> list[tuple[str, list[str]]]:
    """``[("To", [names]), ("Cc", [...]), ...]`` in a stable order; unknown types keep their own label."""
    groups: dict[str, list[str]] = {}
    for recipient in recipients:
        label = recipient_labels().get(recipient.type) if recipient.type else "To"
        label = label or clean_line(str(recipient.type).removeprefix("RECIPIENT_TYPE_").title())
        name = contact_name(contacts.get(recipient.contact_id or ""), recipient.raw_address or recipient.contact_id)
        groups.setdefault(label, []).append(name or "(unknown)")
    order = {"To": 0, "Cc": 1, "Bcc": 2}
    return sorted(groups.items(), key=lambda item: order.get(item[0], 3))


# --- bodies ------------------------------------------------------------------------------------------------


def load_readers() -> None:
    """Import what turns mail bodies into text (inscriptis for HTML, Rich's Markdown): a pause that would otherwise
    land on the first HTML or Markdown message opened. Called in a thread after the first frame."""
    import rich.markdown  # noqa: F401

    from pigeon.htmltext import load

    load()


@dataclass(frozen=True)
class Quoted:
    """A run of quoted lines (``> ...``) with the attribution line before it, if any."""

    lines: list[str]


def split_quotes(text: str) -> list[str | Quoted]:
    """Text split into plain runs and quoted runs, so the reader can fold the quotes."""
    parts: list[str | Quoted] = []
    plain: list[str] = []
    quoted: list[str] = []
    lines = text.splitlines()
    for index, line in enumerate(lines):
        is_quote = line.startswith(">")
        attribution = (
            not is_quote
            and line.rstrip().endswith("wrote:")
            and index + 1 < len(lines)
            and lines[index + 1].startswith(">")
        )
        if is_quote or attribution:
            if plain:
                parts.append("\n".join(plain))
                plain = []
            quoted.append(line)
        else:
            if quoted:
                parts.append(Quoted(quoted))
                quoted = []
            plain.append(line)
    if plain:
        parts.append("\n".join(plain))
    if quoted:
        parts.append(Quoted(quoted))
    return parts


QUOTE_MARKS = re.compile(r"^(?:>[ \t]?)+")
"""The marks that start a quoted line: ">", "> >", ">>"."""
QUOTE_ROOM = 10  # the least width a quoted line's words keep beside its marks


def wrapped(row: Content, width: int) -> list[Content]:
    """``row`` wrapped to ``width``; a quoted line's pieces each under its quote marks, as mail programs show them
    (a wrapped quote would otherwise go on unmarked, like text of the message's own)."""
    found = QUOTE_MARKS.match(row.plain)
    marks = len(found.group(0)) if found else 0
    if not marks or row.cell_length <= width or width - marks < QUOTE_ROOM or not row.plain[marks:].strip():
        return row.wrap(width)  # (no marks, or too many to leave room for words: wrapped as any line)
    return [Content.assemble(row[:marks], piece) for piece in row[marks:].wrap(width - marks)]


def limit_text(text: str, limit: int = BODY_LIMIT) -> tuple[str, int]:
    """``text`` cut to ``limit`` characters, and how many were left out."""
    if len(text) <= limit:
        return text, 0
    return text[:limit], len(text) - limit


def thread_depths(messages: list[Message]) -> dict[str, int]:
    """Reply depth of each message from ``parent_id`` (0 for a message whose parent is not in the thread)."""
    by_id = {m.id: m for m in messages if m.id}
    depths: dict[str, int] = {}
    for message in messages:
        depth, seen, current = 0, set(), message
        while current.parent_id and current.parent_id in by_id and current.parent_id not in seen:
            seen.add(current.parent_id)
            depth += 1
            current = by_id[current.parent_id]
        if message.id:
            depths[message.id] = depth
    return depths
