"""What a forward carries: the message's attachments as files (their bytes as the service gave them), or the whole
message as one ``message/rfc822`` file ("forward as attachment"). No Textual here."""

from __future__ import annotations

import mimetypes
from typing import TYPE_CHECKING

from pigeon.core.attachments import attachment_bytes, attachment_filename, is_attachment, sequence_of
from pigeon.core.compose import base_subject, message_text, recipients_of, sender_of
from pigeon.core.message_ids import message_id_of
from pigeon.sanitize import clean_line
from pigeon.store.mail_drafts import NewFile, mime_type

if TYPE_CHECKING:
    from pigeon.models import Contact, ContentBlock, Message


def _file(block: ContentBlock) -> NewFile:
    name = attachment_filename(block.filename)
    given = mime_type(block.mime_type)
    if given == "application/octet-stream":  # (none, or not one: the name's extension says what it is)
        given = mime_type(mimetypes.guess_type(name)[0])
    return NewFile(name, given, attachment_bytes(block))


def files_of(message: Message) -> list[NewFile]:
    """The message's attachments (blocks with a file name, or not text), in the reader's order, byte for byte."""
    return [_file(b) for b in sorted(message.content_blocks, key=sequence_of) if is_attachment(b)]


def as_rfc822(message: Message, contacts: dict[str, Contact]) -> NewFile:
    """The whole message as mail (its senders, date, subject, Message-ID, text and attachments), one file."""
    from email import policy
    from email.message import EmailMessage
    from email.utils import format_datetime

    inner = EmailMessage(policy=policy.SMTP)
    headers = {
        "From": sender_of(message, contacts),
        "To": ", ".join(recipients_of(message, contacts, {"TO", "UNSPECIFIED"})),
        "Cc": ", ".join(recipients_of(message, contacts, {"CC"})),
        "Date": format_datetime(message.created_at) if message.created_at else "",
        "Subject": clean_line(message.subject or ""),
        "Message-ID": message_id_of(message) or "",
    }
    for name, value in headers.items():
        if value:
            inner[name] = value
    texts = [b for b in sorted(message.content_blocks, key=sequence_of) if not is_attachment(b)]
    plain = [b.content or "" for b in texts if mime_type(b.mime_type) == "text/plain"]
    html = [b.content or "" for b in texts if mime_type(b.mime_type) == "text/html"]
    inner.set_content("\n\n".join(plain) if plain else message_text(message), charset="utf-8")
    if html:
        inner.add_alternative("\n".join(html), subtype="html", charset="utf-8")
    for file in files_of(message):
        maintype, _, subtype = file.mime.partition("/")
        inner.add_attachment(file.data, maintype=maintype, subtype=subtype, filename=file.name)
    name = attachment_filename(f"{base_subject(message.subject) or 'message'}.eml")
    return NewFile(name, "message/rfc822", inner.as_bytes())
