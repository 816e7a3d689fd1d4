"""Deterministic demo mail: inboxes, a few hundred contacts, and threads of realistic conversations.

The same seed gives the same mail (ids, names, subjects, bodies); dates are laid out backwards from ``now``.
Faker makes the people; the conversations come from templates, so that even a very large mailbox builds in seconds.
"""

from __future__ import annotations

import base64
import random
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from pigeon.models import (
    ContentType,
    EmailType,
    MessageDirection,
    MessageStatus,
    RecipientType,
)
from pigeon_service.db import Database, iso
from pigeon_service.demo_conversation import CONVERSATION_MESSAGES, Place, add_conversation, message_id_metadata
from pigeon_service.demo_files import attachment_block
from pigeon_service.demo_people import new_person
from pigeon_service.demo_text import (
    ATTACHMENTS,
    BODIES,
    BRANDS,
    CITIES,
    CLOSERS,
    DAYS,
    HOSTILE_BODY,
    HOSTILE_SUBJECT,
    INBOXES,
    MARKDOWN_NOTE,
    MONTHS,
    NEWSLETTER,
    NEWSLETTER_TOPICS,
    OPENERS,
    OWNER_DOMAIN,
    PROJECTS,
    TOPICS,
)

DEFAULT_THREADS = 300
DEFAULT_CONTACTS = 300
DEFAULT_SEED = 1234


@dataclass(frozen=True)
class DemoSummary:
    account_id: str
    inboxes: int
    contacts: int
    threads: int
    messages: int


class _Ids:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def __call__(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))


def _fill(template: str, rng: random.Random, names: dict[str, Any]) -> str:
    values = {
        "project": rng.choice(PROJECTS),
        "q": rng.randint(1, 4),
        "number": rng.randint(1000, 99999),
        "day": rng.choice(DAYS),
        "month": rng.choice(MONTHS),
        "hour": rng.randint(9, 17),
        "city": rng.choice(CITIES),
        "brand": rng.choice(BRANDS),
        "issue": rng.randint(10, 400),
        "topic": rng.choice(NEWSLETTER_TOPICS),
        "readers": f"{rng.randint(10, 90)},{rng.randint(100, 999)}",
        "readers_before": f"{rng.randint(10, 90)},{rng.randint(100, 999)}",
        "posts": rng.randint(5, 60),
        "posts_before": rng.randint(5, 60),
        **names,
    }
    values["project_lower"] = str(values["project"]).lower()
    values["city_lower"] = str(values["city"]).lower()
    return template.format(**values)


def _attachment(rng: random.Random, sequence: int) -> dict[str, Any]:
    filename, mime = rng.choice(ATTACHMENTS)
    size = rng.randint(200, 2000)
    data = rng.randbytes(size) if not mime.startswith("text/") else ("col_a,col_b\n" * (size // 12)).encode()
    return attachment_block(filename, mime, data, sequence)


def _quote(text: str, who: str, when: datetime) -> str:
    quoted = "\n".join(f"> {line}" if line else ">" for line in text.splitlines())
    return f"\n\nOn {when.strftime('%a, %d %b %Y at %H:%M')}, {who} wrote:\n{quoted}"


def populate(
    db: Database,
    account_id: str,
    *,
    threads: int = DEFAULT_THREADS,
    contacts: int = DEFAULT_CONTACTS,
    seed: int = DEFAULT_SEED,
    now: datetime | None = None,
    hostile: bool = True,
    conversation: int = CONVERSATION_MESSAGES,
) -> DemoSummary:
    """Fill an account with demo mail. Deterministic for a given ``seed`` and ``now``, identifiers included, so
    two accounts in one database need different seeds. The second newest thread is the long conversation of
    ``conversation`` messages (none when 0); some threads were read up to a message before the last."""
    now = (now or datetime.now(UTC)).astimezone(UTC)
    rng = random.Random(seed)  # noqa: S311  (reproducible demo data, not security)
    read = random.Random(f"{seed}:read")  # noqa: S311  (which threads were read: apart, so the mail stays as it was)
    from faker import Faker  # (here: the service's process imports this module and makes no mail)

    fake = Faker("en_US", use_weighting=False)  # (names drawn evenly: weighted draws were a third of the making)
    fake.seed_instance(seed)
    new_id = _Ids(rng)
    message_count = 0

    with db.transaction() as conn:
        inbox_ids = []
        for position, spec in enumerate(INBOXES):
            opened = iso(now - timedelta(days=400 - position))
            inbox_ids.append(db.insert_inbox(conn, account_id, {**spec, "id": new_id(), "created_at": opened}))
        owner_id = db.insert_contact(
            conn,
            account_id,
            {
                "id": new_id(),
                "first_name": "You",
                "display_name": "You",
                "emails": [{"type": EmailType.WORK.value, "email": INBOXES[0]["email"]}],
                "tags": ["me"],
            },
        )
        people = [new_person(fake, rng, new_id, now) for _ in range(contacts)]
        for person in people:
            db.insert_contact(conn, account_id, person)

        # Threads from newest to oldest, so the first screen is busy and recent.
        moments = sorted((now - timedelta(minutes=rng.expovariate(1 / 4000)) for _ in range(threads)), reverse=True)
        for index, last_at in enumerate(moments):
            if conversation and index == min(1, threads - 1):
                place = Place(account_id, inbox_ids[0], INBOXES[0]["email"], owner_id, people, last_at)
                message_count += add_conversation(db, conn, place, size=conversation, seed=seed)
                continue
            inbox_index = rng.choices(range(len(inbox_ids)), weights=[60, 25, 10, 5])[0]
            inbox_id = inbox_ids[inbox_index]
            inbox_address = INBOXES[inbox_index]["email"]
            kind = "hostile" if hostile and index == 7 else rng.choices(["chat", "newsletter", "notes"], [80, 12, 8])[0]
            cast = rng.sample(people, rng.randint(1, 4))
            count = (
                1
                if kind in {"newsletter", "hostile"}
                else rng.choices(range(1, 11), [30, 20, 14, 10, 8, 6, 4, 3, 3, 2])[0]
            )
            lead = cast[0]
            names = {  # one project, newsletter and issue per thread, so subject and bodies agree
                "name": lead["first_name"],
                "other": rng.choice(people)["first_name"],
                "company": lead["company"],
                "title": lead["title"],
                "project": rng.choice(PROJECTS),
                "brand": rng.choice(BRANDS),
                "issue": rng.randint(10, 400),
            }
            subject = {
                "newsletter": _fill("{brand} #{issue}", rng, names),
                "notes": _fill("{project}: weekly notes", rng, names),
                "hostile": HOSTILE_SUBJECT,
            }.get(kind) or _fill(
                rng.choice(TOPICS),
                rng,
                names | {"name": lead["display_name"], "other": rng.choice(people)["display_name"]},
            )

            spacing = [timedelta(minutes=rng.randint(5, 60 * 30)) for _ in range(count - 1)]
            started = last_at - sum(spacing, timedelta())
            read_up_to = read.randrange(count) if count > 1 and read.random() < 0.3 else None  # messages read
            last_read = started + sum(spacing[:read_up_to], timedelta(minutes=1)) if read_up_to is not None else None
            thread_id = db.insert_thread(
                conn,
                account_id,
                {
                    "id": new_id(),
                    "inbox_id": inbox_id,
                    "subject": subject,
                    "created_at": iso(started),
                    "participants": [
                        {"contact_id": owner_id, "role": "OWNER", "last_read_at": last_read and iso(last_read)}
                    ]
                    + [{"contact_id": c["id"], "role": "MEMBER", "last_read_at": None} for c in cast],
                },
            )

            when = started
            parent: str | None = None
            previous_text = ""
            previous_who = ""
            previous_when = started
            for position in range(count):
                if position:
                    when += spacing[position - 1]
                outbound = kind == "chat" and position % 2 == 1 and rng.random() < 0.8
                author = rng.choice(cast)
                author_address = author["emails"][0]["email"]
                if kind == "newsletter":
                    sender_contact, sender_address = (
                        None,
                        f"newsletter@{names['company'].split()[0].lower().strip(',')}.example",
                    )
                elif outbound:
                    sender_contact, sender_address = owner_id, inbox_address
                else:
                    sender_contact, sender_address = author["id"], author_address

                recipients: list[dict[str, Any]] = []
                if outbound:
                    recipients.append(
                        {"contact_id": author["id"], "raw_address": author_address, "type": RecipientType.TO.value}
                    )
                else:
                    recipients.append(
                        {"contact_id": owner_id, "raw_address": inbox_address, "type": RecipientType.TO.value}
                    )
                for other in cast[1:3]:
                    if other is not author and rng.random() < 0.5:
                        recipients.append(
                            {
                                "contact_id": other["id"],
                                "raw_address": other["emails"][0]["email"],
                                "type": RecipientType.CC.value,
                            }
                        )
                if outbound and rng.random() < 0.1:
                    recipients.append(
                        {"contact_id": None, "raw_address": f"archive@{OWNER_DOMAIN}", "type": RecipientType.BCC.value}
                    )

                opener = (
                    _fill(rng.choice(OPENERS), rng, names | {"name": author["first_name"]})  # (whom it is to)
                    if outbound
                    else rng.choice(["Hi,", "Hello,", "Hey there,", "Good morning,", "Hi all,"])
                )
                if kind == "newsletter":
                    blocks = [
                        {
                            "type": ContentType.TEXT.value,
                            "mime_type": "text/html",
                            "content": _fill(NEWSLETTER, rng, names),
                            "sequence": 0,
                        }
                    ]
                elif kind == "notes":
                    blocks = [
                        {
                            "type": ContentType.TEXT.value,
                            "mime_type": "text/markdown",
                            "content": _fill(MARKDOWN_NOTE, rng, names),
                            "sequence": 0,
                        }
                    ]
                elif kind == "hostile":
                    blocks = [
                        {
                            "type": ContentType.TEXT.value,
                            "mime_type": "text/plain",
                            "content": HOSTILE_BODY,
                            "sequence": 0,
                        },
                        {
                            "type": ContentType.ATTACHMENT.value,
                            "mime_type": "application/octet-stream",
                            "filename": "../../.bashrc",
                            "content": base64.b64encode(b"echo pwned\n").decode(),
                            "size": 11,
                            "sequence": 1,
                            "metadata": {"encoding": "base64"},
                        },
                    ]
                    sender_contact, sender_address = None, "security@paypa1.example"
                else:
                    text = "\n\n".join(
                        [
                            opener,
                            _fill(rng.choice(BODIES), rng, names),
                            f"{rng.choice(CLOSERS)}\n{'You' if outbound else author['first_name']}",
                        ]
                    )
                    body = text + (
                        _quote(previous_text, previous_who, previous_when) if previous_text else ""
                    )
                    blocks = [
                        {"type": ContentType.TEXT.value, "mime_type": "text/plain", "content": body, "sequence": 0}
                    ]
                    previous_text, previous_who = text, ("You" if outbound else author["display_name"])
                    previous_when = when
                    if rng.random() < 0.12:
                        blocks.append(_attachment(rng, 1))
                        if rng.random() < 0.3:
                            blocks.append(_attachment(rng, 2))

                status = (
                    rng.choices([MessageStatus.DELIVERED, MessageStatus.SENT, MessageStatus.FAILED], [85, 10, 5])[0]
                    if outbound
                    else MessageStatus.RECEIVED
                )
                message_id = new_id()
                db.insert_message(
                    conn,
                    account_id,
                    {
                        "id": message_id,
                        "thread_id": thread_id,
                        "inbox_id": inbox_id,
                        "direction": (MessageDirection.OUTBOUND if outbound else MessageDirection.INBOUND).value,
                        "status": status.value,
                        "parent_id": parent,
                        "subject": subject if position == 0 else f"Re: {subject}",
                        "sender_contact_id": sender_contact,
                        "sender_address": sender_address,
                        "recipients": recipients,
                        "content_blocks": blocks,
                        "metadata": message_id_metadata(message_id, sender_address),
                        "created_at": iso(when),
                        "sent_at": iso(when) if outbound else None,
                        "received_at": None if outbound else iso(when),
                    },
                )
                parent = message_id
                message_count += 1
            if outbound and status is MessageStatus.DELIVERED and index % 4:  # most replies were read by now
                db.read_by(conn, thread_id, author["id"], iso(min(when + timedelta(minutes=3 + index % 90), now)))

    return DemoSummary(account_id, len(inbox_ids), contacts + 1, threads, message_count)


def ensure_demo_mail(db: Database, *, threads: int = DEFAULT_THREADS, seed: int = DEFAULT_SEED) -> list[DemoSummary]:
    """Give every account that has no mail yet a full set of demo mail, creating a ``demo`` account if none exist."""
    if not db.account_ids():
        db.ensure_account("demo")
    # Accounts are listed oldest first, so each keeps its own seed however many are added later.
    return [
        populate(db, account_id, threads=threads, seed=seed + position)
        for position, account_id in enumerate(db.account_ids())
        if not db.has_mail(account_id)
    ]


def demo_mailbox(*, threads: int = DEFAULT_THREADS, seed: int | None = None, now: datetime | None = None) -> Database:
    """An in-memory database with one ``demo`` account full of demo mail, and no token yet."""
    db = Database(":memory:")
    account_id = db.ensure_account("demo")
    if seed is None:
        populate(db, account_id, threads=threads, now=now)
    else:
        populate(db, account_id, threads=threads, now=now, seed=seed)
    return db


def demo_database(
    *, threads: int = DEFAULT_THREADS, seed: int | None = None, now: datetime | None = None
) -> tuple[Database, str]:
    """:func:`demo_mailbox`, and a new token for its account."""
    db = demo_mailbox(threads=threads, seed=seed, now=now)
    return db, db.create_token(db.account_ids()[0])
