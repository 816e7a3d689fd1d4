"""Replies, forwards and new messages as RFC 5322 drafts for the user's editor, and the message a send command
gets from an edited draft. The service has no send operation: Pigeon writes the draft and hands it on.

Every value taken from mail is cleaned to one line before it becomes a header (a subject holding a newline cannot
add a header), and addresses are parsed and written back by the ``email`` package, so a display name cannot carry
another address. No Textual here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Literal
from urllib.parse import quote

from pigeon.core.attachments import is_attachment, sequence_of
from pigeon.core.message_ids import threading_headers
from pigeon.sanitize import clean, clean_line

if TYPE_CHECKING:
    from email.message import EmailMessage

    from pigeon.models import Contact, Inbox, Message, Thread
    from pigeon.store.mail_drafts import NewFile

# The email package loads when a draft is written or sent, not at start-up: the CLI's parser and the app import
# this module, and loading the package would delay the first frame.

Kind = Literal["reply", "reply_all", "forward", "forward_attached", "new"]
KINDS: tuple[Kind, ...] = ("reply", "reply_all", "forward", "forward_attached", "new")
FORWARDS = ("forward", "forward_attached")
ADDRESS_HEADERS = ("From", "To", "Cc", "Bcc", "Reply-To")
KEPT_HEADERS = (*ADDRESS_HEADERS, "Subject", "In-Reply-To", "References")


_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class BadDraft(ValueError):
    """An edited draft that cannot be sent as it is (no recipient, an unreadable address); the message says why."""


def _address(name: str, address: str) -> str:
    """``Name <address>`` written by the email package (quoted as needed), or "" when ``address`` is not one."""
    from email.headerregistry import Address

    address = clean_line(address).strip()
    if not address or any(c in address for c in ' <>,;"()[]\\') or address.count("@") != 1:
        return ""
    try:
        return str(Address(display_name=clean_line(name).strip(), addr_spec=address))
    except (ValueError, IndexError):
        return ""


def _parse(raw: str) -> tuple[str, str]:
    """A raw address as mail gives it ("Name <a@b>" or "a@b"), as ``(name, address)``; ``("", "")`` unless it is
    one address written as such (a value that smuggles in a second one, or that the parser had to glue together
    from pieces, is left out)."""
    from email.utils import getaddresses

    text = clean_line(_CONTROLS.sub(" ", raw)).strip()
    pairs = getaddresses([text])
    if len(pairs) != 1 or not pairs[0][1] or pairs[0][1] not in text:
        return ("", "")
    return pairs[0]


def _contact_address(contact: Contact | None) -> str:
    if contact is None:
        return ""
    return next((e.email for e in contact.emails if e.email), "")


def sender_of(message: Message, contacts: dict[str, Contact]) -> str:
    sender = message.sender
    if sender is None:
        return ""
    contact = contacts.get(sender.contact_id or "") or sender.contact
    name, address = _parse(sender.raw_address or "")
    address = address or _contact_address(contact)
    return _address(name or (contact.name if contact else ""), address)


def recipients_of(message: Message, contacts: dict[str, Contact], kinds: set[str]) -> list[str]:
    found = []
    for recipient in message.recipients:
        kind = str(recipient.type or "RECIPIENT_TYPE_TO").removeprefix("RECIPIENT_TYPE_")
        if kind not in kinds:
            continue
        contact = contacts.get(recipient.contact_id or "")
        name, address = _parse(recipient.raw_address or "")
        written = _address(name or (contact.name if contact else ""), address or _contact_address(contact))
        if written:
            found.append(written)
    return found


def own_addresses(inboxes: Sequence[Inbox], thread: Thread | None, contacts: dict[str, Contact]) -> set[str]:
    """The user's own addresses, lower-cased: every inbox's, and the emails of the contact the thread names as its
    owner participant (a reply-all leaves them out)."""
    from pigeon.models import ParticipantRole

    own = {i.email.lower() for i in inboxes if i.email}
    for participant in thread.participants if thread else []:
        contact = contacts.get(participant.contact_id or "")
        if participant.role == ParticipantRole.OWNER and contact is not None:
            own |= {e.email.lower() for e in contact.emails if e.email}
    return own


def _bare(written: str) -> str:
    return _parse(written)[1].lower()


def _unique(addresses: Sequence[str], leave_out: set[str]) -> list[str]:
    seen, kept = set(leave_out), []
    for written in addresses:
        bare = _bare(written)
        if bare and bare not in seen:
            seen.add(bare)
            kept.append(written)
    return kept


def base_subject(subject: str | None) -> str:
    """A subject without its "Re:"/"Fwd:" prefixes, cleaned to one line."""
    value = clean_line(subject or "").strip()
    while value[:3].lower() in {"re:", "fw:"} or value[:4].lower() == "fwd:":
        value = value.split(":", 1)[1].strip()
    return value


def message_text(message: Message) -> str:
    """The readable text of a message (HTML as the reader shows it, links as footnotes), cleaned."""
    from pigeon.htmltext import readable

    parts = []
    for block in sorted(message.content_blocks, key=sequence_of):
        if is_attachment(block):
            continue
        mime = (block.mime_type or "text/plain").split(";")[0].strip().lower()
        raw = block.content or ""
        parts.append(readable(raw) if mime == "text/html" else clean(raw))
    text = "\n\n".join(part.strip("\n") for part in parts if part.strip())
    return "\n".join(line.rstrip() for line in text.splitlines())  # (HTML tables pad their lines)


def answered(messages: Sequence[Message], message_id: str | None = None) -> Message | None:
    """The message a reply answers: the one named by ``message_id`` (the reader's message cursor), else the latest
    one someone else sent, else the latest."""
    from pigeon.models import MessageDirection

    chosen_one = next((m for m in messages if message_id and m.id == message_id), None)
    if chosen_one is not None:
        return chosen_one
    inbound = [m for m in messages if m.direction != MessageDirection.OUTBOUND]
    chosen = inbound or list(messages)
    return chosen[-1] if chosen else None


def draft_text(
    kind: Kind,
    thread: Thread | None,
    messages: Sequence[Message],
    inboxes: Sequence[Inbox],
    contacts: dict[str, Contact],
    *,
    inbox_id: str | None = None,
    message_id: str | None = None,
    left_out: Sequence[str] = (),
) -> str:
    """The draft the editor opens: headers (a reply's threading headers among them), a blank line, the body
    (quoted text under an attribution line). It answers the message ``message_id`` of ``messages`` when given (see
    :func:`answered`); a forward names the files ``left_out`` (over the size limit)."""
    from pigeon.models import MessageDirection

    message = answered(messages, message_id) if kind != "new" else None
    where = (message.inbox_id if message else None) or (thread.inbox_id if thread else None) or inbox_id
    inbox = next((i for i in inboxes if i.id == where), inboxes[0] if inboxes else None)
    own = own_addresses(inboxes, thread, contacts)
    sender = _address(inbox.display_name or "", inbox.email) if inbox else ""
    to: list[str] = []
    cc: list[str] = []
    subject = ""
    body = ""
    threading: list[str] = []
    if message is not None:
        outbound = message.direction == MessageDirection.OUTBOUND
        base = base_subject(message.subject or (thread.subject if thread else ""))
        if kind in FORWARDS:
            subject = f"Fwd: {base}" if base else "Fwd:"
            body = _forwarded(message, contacts, left_out) if kind == "forward" else f"\n{_left_out(left_out)}"
        else:
            in_reply_to, references = threading_headers(message, messages)
            if in_reply_to:
                threading = [f"In-Reply-To: {in_reply_to}", f"References: {references}"]
            subject = f"Re: {base}" if base else "Re:"
            listed = recipients_of(message, contacts, {"TO", "UNSPECIFIED"})
            # (a reply to what the user sent goes to the same people again)
            to = listed if outbound else [sender_of(message, contacts), *(listed if kind == "reply_all" else [])]
            if kind == "reply_all":
                cc = recipients_of(message, contacts, {"CC"})
            to = _unique(to, own) or _unique(to, set())  # (a message to oneself is answered to oneself)
            cc = _unique(cc, own | {_bare(a) for a in to})
            body = _quoted(message, contacts)
    lines = [f"From: {sender}", f"To: {', '.join(to)}"]
    if cc:
        lines.append(f"Cc: {', '.join(cc)}")
    lines += [f"Subject: {subject}", *threading, "", body]
    return "\n".join(lines)


def _when(message: Message) -> str:
    return f"{message.created_at:%a, %d %b %Y at %H:%M} UTC" if message.created_at else "an unknown date"


def _quoted(message: Message, contacts: dict[str, Contact]) -> str:
    who = sender_of(message, contacts) or "someone"
    quoted = "\n".join(f"> {line}" if line else ">" for line in message_text(message).splitlines())
    return f"\n\nOn {_when(message)}, {who} wrote:\n{quoted}\n"


def _forwarded(message: Message, contacts: dict[str, Contact], left_out: Sequence[str]) -> str:
    lines = [
        "",
        "",
        "---------- Forwarded message ----------",
        f"From: {sender_of(message, contacts)}",
        f"Date: {_when(message)}",
        f"Subject: {clean_line(message.subject or '')}",
        f"To: {', '.join(recipients_of(message, contacts, {'TO', 'UNSPECIFIED'}))}",
        "",
        message_text(message),
    ]
    if left_out:
        lines += ["", _left_out(left_out)]
    return "\n".join(lines) + "\n"


def _left_out(names: Sequence[str]) -> str:
    if not names:
        return ""
    listed = ", ".join(clean_line(name, limit=60) for name in names)
    return f"(not attached, over the size limit: {listed}; save with a, send from your mail program)\n"


# --- the edited draft -------------------------------------------------------------------------------------------


def message_to_send(
    text: str, *, now: datetime, needs_recipient: bool = True, files: Sequence[NewFile] = ()
) -> EmailMessage:
    """The message to send from an edited draft: its headers as the user left them (From, To, Cc, Bcc, Reply-To,
    Subject and threading headers), a date, a message id and the body as UTF-8 text, then ``files`` as MIME parts
    (a ``message/rfc822`` one as a message). :class:`BadDraft` when it names nobody to send to (if
    ``needs_recipient``) or an address cannot be read."""
    from email import policy
    from email.message import EmailMessage
    from email.parser import Parser
    from email.utils import format_datetime, getaddresses, make_msgid

    edited = Parser(policy=policy.default).parsestr(text)
    out = EmailMessage()
    for name in KEPT_HEADERS:
        value = " ".join(str(edited.get(name, "") or "").split())
        if not value:
            continue
        if name in ADDRESS_HEADERS and any(not address for _, address in getaddresses([value])):
            raise BadDraft(f"the {name} header holds an address that cannot be read: {clean_line(value, limit=80)}")
        out[name] = value
    if needs_recipient and not any(out.get(name) for name in ("To", "Cc", "Bcc")):
        raise BadDraft("the draft names no recipient: fill in To")
    body = edited.get_payload()
    out["Date"] = format_datetime(now)
    domain = _parse(str(out.get("From", "")))[1].rpartition("@")[2] or None
    out["Message-ID"] = make_msgid(domain=domain)
    out.set_content(body if isinstance(body, str) else "", charset="utf-8")
    for file in files:
        _attach(out, file)
    return out


def _attach(out: EmailMessage, file: NewFile) -> None:
    from email import message_from_bytes, policy

    maintype, _, subtype = file.mime.partition("/")
    if file.mime == "message/rfc822":
        out.add_attachment(message_from_bytes(file.data, policy=policy.default), filename=file.name)
    else:
        out.add_attachment(file.data, maintype=maintype, subtype=subtype, filename=file.name)


def with_addresses(text: str, name: str, value: str) -> str:
    """The draft ``text`` with its header ``name`` (To, Cc) set to the addresses of ``value``, each written by the
    email package; an empty ``value`` empties To and removes Cc. :class:`BadDraft` naming an address that cannot
    be read."""
    from email.utils import getaddresses

    written = []
    for shown, address in getaddresses([clean_line(value)]):
        one = _address(shown, address)
        if not one:
            raise BadDraft(f"{clean_line(address or shown or value, limit=80)!r} is not an address")
        written.append(one)
    head, _, body = text.replace("\r\n", "\n").partition("\n\n")
    kept, skipping = [], False
    for line in head.split("\n"):
        if skipping and line[:1] in {" ", "\t"}:  # (the rest of a folded header)
            continue
        skipping = line.partition(":")[0].strip().lower() == name.lower()
        if not skipping:
            kept.append(line)
    if written or name == "To":
        after = next((n + 1 for n, line in enumerate(kept) if line.lower().startswith("to:")), min(1, len(kept)))
        kept.insert(min(1, len(kept)) if name == "To" else after, f"{name}: {', '.join(written)}")
    return "\n".join(kept) + "\n\n" + body


def mailto_url(message: EmailMessage) -> str:
    """The message as a ``mailto:`` link, for a mail program to send (To in the path; Cc, Subject, body after)."""
    from email.utils import getaddresses

    to = ",".join(address for _, address in getaddresses([str(message.get("To", ""))]) if address)
    fields = []
    for name in ("Cc", "Bcc"):
        value = ",".join(address for _, address in getaddresses([str(message.get(name, ""))]) if address)
        if value:
            fields.append(f"{name.lower()}={quote(value, safe='@,')}")
    fields.append(f"subject={quote(str(message.get('Subject', '')), safe='')}")
    content = message.get_content() if not message.is_multipart() else ""
    fields.append(f"body={quote(str(content), safe='')}")
    return f"mailto:{quote(to, safe='@,')}?{'&'.join(fields)}"
