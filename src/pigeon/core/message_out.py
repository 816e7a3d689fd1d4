"""One message as text for the world outside Pigeon: as mail text (header lines, a blank line, its readable text)
for a command's standard input or a file, its readable text alone for the clipboard, and its record as the service
sent it (JSON, for the raw view). Every value taken from mail is cleaned: a header value to one line, the text as
:func:`pigeon.core.compose.message_text` makes it. No Textual here.
"""

from __future__ import annotations

import errno
import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pigeon.core.attachments import attachment_filename
from pigeon.core.compose import base_subject, message_text
from pigeon.files import write_private
from pigeon.sanitize import clean, clean_line

if TYPE_CHECKING:
    from pigeon.models import Contact, Message

RAW_CONTENT_LIMIT = 2_000
"""Characters of an attachment's content the raw view shows (base64 of a large file would bury the rest)."""
RAW_TEXT_LIMIT = 50_000
"""Characters of any other content the raw view shows (a huge body would hold up its layout)."""
"""Where a message's metadata may carry the ``Message-ID`` it had as mail."""

_NOT_IN_NAME = re.compile(r"[^\w.-]+")


def _written(raw: str | None, fallback_name: str = "") -> str:
    """An address as mail gives it, written back by the email package; the raw value, cleaned, when it is not one
    address (nothing taken from mail can add a line)."""
    from email.utils import formataddr, getaddresses

    text = clean_line(raw or "")
    pairs = getaddresses([text])
    if len(pairs) == 1 and pairs[0][1] and "@" in pairs[0][1]:
        name, address = pairs[0]
        return clean_line(formataddr((name or clean_line(fallback_name), address)))
    return text


def _contact_name(contact: Contact | None) -> str:
    return contact.name if contact is not None else ""


def message_id_header(message: Message) -> str:
    """The ``Message-ID`` the message goes by in mail: the one replies name too (:mod:`pigeon.core.message_ids`)."""
    from pigeon.core.message_ids import message_id_of

    return message_id_of(message) or ""


def headers(message: Message, contacts: dict[str, Contact]) -> list[tuple[str, str]]:
    """From, To, Cc, Date, Subject and Message-ID, each cleaned to one line (those the message has)."""
    from email.utils import format_datetime

    found: list[tuple[str, str]] = []
    sender = message.sender
    if sender is not None:
        contact = contacts.get(sender.contact_id or "") or sender.contact
        written = _written(sender.raw_address, _contact_name(contact))
        if written:
            found.append(("From", written))
    for label, kind in (("To", "TO"), ("Cc", "CC")):
        addresses = [
            _written(r.raw_address, _contact_name(contacts.get(r.contact_id or "")))
            for r in message.recipients
            if str(r.type or "RECIPIENT_TYPE_TO").removeprefix("RECIPIENT_TYPE_") == kind
        ]
        if any(addresses):
            found.append((label, ", ".join(a for a in addresses if a)))
    if message.created_at is not None:
        found.append(("Date", format_datetime(message.created_at)))
    found.append(("Subject", clean_line(message.subject or "")))
    message_id = message_id_header(message)
    if message_id:
        found.append(("Message-ID", message_id))
    return found


def mail_text(message: Message, contacts: dict[str, Contact]) -> str:
    """The message as mail text: its header lines, a blank line, its readable text (ending in a newline)."""
    head = "".join(f"{name}: {value}\n" for name, value in headers(message, contacts))
    body = message_text(message)
    return f"{head}\n{body}\n" if body else f"{head}\n"


def file_name(message: Message) -> str:
    """A file name for the message's text, made from its subject (``message.txt`` when that gives none)."""
    stem = _NOT_IN_NAME.sub("-", base_subject(message.subject)).strip("-._")[:60].rstrip("-._")
    return attachment_filename(f"{stem or 'message'}.txt")


def _cut(record: Any) -> Any:
    """The record with each attachment's content cut to :data:`RAW_CONTENT_LIMIT` characters (other content to
    :data:`RAW_TEXT_LIMIT`), saying how much more there was."""
    if isinstance(record, list):
        return [_cut(item) for item in record]
    if not isinstance(record, dict):
        return record
    cut = {key: _cut(value) for key, value in record.items()}
    content = cut.get("content")
    is_file = cut.get("filename") is not None or str(cut.get("type", "")).endswith("FILE")
    limit = RAW_CONTENT_LIMIT if is_file else RAW_TEXT_LIMIT
    if isinstance(content, str) and len(content) > limit:
        cut["content"] = content[:limit] + f"… ({len(content) - limit:,} more characters)"
    return cut


def _cleaned(record: Any) -> Any:
    """Every string of the record (keys too) cleaned of terminal sequences; the JSON writer escapes the rest."""
    if isinstance(record, list):
        return [_cleaned(item) for item in record]
    if isinstance(record, dict):
        return {clean(key): _cleaned(value) for key, value in record.items()}
    return clean(record) if isinstance(record, str) else record


def raw_text(message: Message) -> str:
    """Every field the service sent for the message, unknown ones and its blocks included, as indented JSON."""
    return json.dumps(_cleaned(_cut(message.to_wire())), indent=2, ensure_ascii=False)


def write_text(path: Path, text: str, *, overwrite: bool) -> None:
    """Write ``text`` to ``path`` (0600, whole or not at all; missing folders made 0700): ``FileExistsError`` if
    something is there and ``overwrite`` is false, ``IsADirectoryError`` for a folder."""
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, "that is a folder", str(path))
    if not overwrite and os.path.lexists(path):
        raise FileExistsError(errno.EEXIST, "a file is there", str(path))
    write_private(path, text.encode())
