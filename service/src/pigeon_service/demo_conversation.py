"""The demo's long conversation: one thread of a few hundred messages among several people, with a real reply tree
(side discussions, answers to older messages), real files attached, and its latest messages not read yet.

It has a random generator of its own, seeded from the demo's seed, so it is the same for a seed however the rest of
the demo mail is made.
"""

from __future__ import annotations

import random
import sqlite3
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from pigeon.models import ContentType, MessageDirection, MessageStatus, RecipientType
from pigeon_service.db import Database, iso
from pigeon_service.demo_files import attachment_block, pdf, png
from pigeon_service.demo_text import CLOSERS, CONVERSATION_LINES, CONVERSATION_SUBJECT, DAYS, PROJECTS

CONVERSATION_MESSAGES = 200
UNREAD = 12  # the latest messages, newer than when the owner last read the thread
CAST = 6  # people besides the owner


def message_id_metadata(message_id: str, sender_address: str) -> dict[str, str]:
    """The ``metadata`` of a demo message: its ``Message-ID``, as the sender's mail system would have made it."""
    domain = sender_address.rpartition("@")[2] or "pigeon.example"
    return {"message_id": f"<{uuid.UUID(message_id).hex[:24]}@mail.{domain}>"}


@dataclass(frozen=True)
class Place:
    """Where the conversation happens: the account, its inbox and own contact, the people who may take part, and
    when its last message came."""

    account_id: str
    inbox_id: str
    inbox_address: str
    owner_id: str
    people: Sequence[dict[str, Any]]
    last_at: datetime


@dataclass
class _Said:
    id: str
    author: dict[str, Any] | None  # None: the owner
    text: str
    when: datetime


def add_conversation(db: Database, conn: sqlite3.Connection, place: Place, *, size: int, seed: int) -> int:
    """Insert the conversation of ``size`` messages; the number of messages inserted."""
    rng = random.Random(f"{seed}:conversation")  # noqa: S311  (reproducible demo data, not security)

    def new_id() -> str:
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))

    cast = rng.sample(list(place.people), min(CAST, len(place.people)))
    project = rng.choice(PROJECTS)
    gaps = [timedelta(minutes=rng.randint(10, 240)) for _ in range(size - 1)]
    moments = [place.last_at - sum(gaps[n:], timedelta()) for n in range(size)]
    subject = CONVERSATION_SUBJECT.format(project=project)
    thread_id = db.insert_thread(
        conn,
        place.account_id,
        {
            "id": new_id(),
            "inbox_id": place.inbox_id,
            "subject": subject,
            "created_at": iso(moments[0]),
            "participants": [
                {"contact_id": place.owner_id, "role": "OWNER", "last_read_at": iso(_last_read(moments))},
                *({"contact_id": c["id"], "role": "MEMBER", "last_read_at": None} for c in cast),
            ],
        },
    )
    said: list[_Said] = []
    leaves: list[int] = []  # the messages nobody has answered yet: the ends of the branches
    current = 0
    files = {size - 3: _line_with("summary"), size - 2: _line_with("dashboard")}  # among the unread: to forward
    for position, when in enumerate(moments):
        parent = _parent(rng, position, current, leaves)
        author = _author(
            rng, cast, said[parent].author if parent is not None else None, unread=position >= size - UNREAD
        )
        line = CONVERSATION_LINES[files[position]] if position in files else rng.choice(CONVERSATION_LINES)
        message = _Said(new_id(), author, _text(rng, project, cast, said, parent, author, line), when)
        _insert(db, conn, place, thread_id, subject, message, said[parent] if parent is not None else None, cast, rng)
        said.append(message)
        if parent in leaves:
            leaves.remove(parent)
        leaves.append(position)
        current = position
    return size


def _last_read(moments: list[datetime]) -> datetime:
    """Just after the message before the unread ones: the client opens the thread at the first of those."""
    if len(moments) <= UNREAD:
        return moments[0] - timedelta(minutes=1)
    return moments[-UNREAD - 1] + timedelta(minutes=1)


def _parent(rng: random.Random, position: int, current: int, leaves: list[int]) -> int | None:
    """Which earlier message this one answers: mostly the latest of the branch being discussed; now and then an
    older message (a side discussion starts), or the end of another branch (the talk goes back to it)."""
    if position == 0:
        return None
    roll = rng.random()
    if roll < 0.15 and position > 3:
        return rng.randrange(max(0, position - 30), position - 1)
    if roll < 0.27 and len(leaves) > 1:
        return rng.choice(leaves)
    return current


def _author(
    rng: random.Random, cast: list[dict[str, Any]], answered: dict[str, Any] | None, *, unread: bool
) -> dict[str, Any] | None:
    """Someone other than the author of the message answered; the owner now and then, never among the unread."""
    if not unread and answered is not None and rng.random() < 0.2:
        return None
    return rng.choice([person for person in cast if person is not answered] or cast)


def _text(
    rng: random.Random,
    project: str,
    cast: list[dict[str, Any]],
    said: list[_Said],
    parent: int | None,
    author: dict[str, Any] | None,
    line: str,
) -> str:
    to = said[parent].author if parent is not None else None
    greeting = f"Hi {to['first_name']}," if to else ("Hi all," if parent is None else "Hi,")
    values = {
        "project": project,
        "city": rng.choice(["Lisbon", "Berlin", "Osaka", "Toronto"]),
        "number": rng.randint(1000, 99999),
        "day": rng.choice(DAYS),
        "hour": rng.randint(9, 17),
        "other": rng.choice(cast)["first_name"],
    }
    signature = author["first_name"] if author else "You"
    return f"{greeting}\n\n{line.format(**values)}\n\n{rng.choice(CLOSERS)}\n{signature}"


def _line_with(word: str) -> int:
    return next(n for n, line in enumerate(CONVERSATION_LINES) if word in line)


def _insert(
    db: Database,
    conn: sqlite3.Connection,
    place: Place,
    thread_id: str,
    subject: str,
    message: _Said,
    answered: _Said | None,
    cast: list[dict[str, Any]],
    rng: random.Random,
) -> None:
    outbound = message.author is None
    address = place.inbox_address if message.author is None else message.author["emails"][0]["email"]
    if outbound:
        to = answered.author if answered and answered.author else cast[0]
        recipients = [{"contact_id": to["id"], "raw_address": to["emails"][0]["email"], "type": RecipientType.TO.value}]
    else:
        recipients = [
            {"contact_id": place.owner_id, "raw_address": place.inbox_address, "type": RecipientType.TO.value}
        ]
    for other in rng.sample(cast, 2):
        if other is not message.author and all(r["contact_id"] != other["id"] for r in recipients):
            recipients.append(
                {"contact_id": other["id"], "raw_address": other["emails"][0]["email"], "type": RecipientType.CC.value}
            )
    body = message.text
    if answered is not None:
        who = answered.author["display_name"] if answered.author else "You"
        quoted = "\n".join(f"> {line}" if line else ">" for line in answered.text.splitlines())
        body += f"\n\nOn {answered.when.strftime('%a, %d %b %Y at %H:%M')}, {who} wrote:\n{quoted}"
    blocks = [{"type": ContentType.TEXT.value, "mime_type": "text/plain", "content": body, "sequence": 0}]
    blocks += _files(rng, answered is None, message.text)
    db.insert_message(
        conn,
        place.account_id,
        {
            "id": message.id,
            "thread_id": thread_id,
            "inbox_id": place.inbox_id,
            "direction": (MessageDirection.OUTBOUND if outbound else MessageDirection.INBOUND).value,
            "status": (MessageStatus.DELIVERED if outbound else MessageStatus.RECEIVED).value,
            "parent_id": answered.id if answered else None,
            "subject": subject if answered is None else f"Re: {subject}",
            "sender_contact_id": message.author["id"] if message.author else place.owner_id,
            "sender_address": address,
            "recipients": recipients,
            "content_blocks": blocks,
            "metadata": message_id_metadata(message.id, address),
            "created_at": iso(message.when),
            "sent_at": iso(message.when) if outbound else None,
            "received_at": None if outbound else iso(message.when),
        },
    )


def _files(rng: random.Random, first: bool, text: str) -> list[dict[str, Any]]:
    """The plan as a PDF on the first message; a PNG of the dashboard, a PDF summary, on the messages that speak
    of them."""
    files: list[tuple[str, str, bytes]] = []
    if first:
        files.append(("launch-plan.pdf", "application/pdf", pdf(["Launch plan", "Scope, dates, owners", "Risks"])))
    if "dashboard" in text:
        colour = (rng.randint(0, 200), rng.randint(0, 200), rng.randint(0, 200))
        files.append(("dashboard.png", "image/png", png(48, 32, colour)))
    if "summary" in text:
        files.append(("customer-summary.pdf", "application/pdf", pdf(["Customer summary", "What changes for you"])))
    return [attachment_block(name, mime, data, n) for n, (name, mime, data) in enumerate(files, start=1)]
