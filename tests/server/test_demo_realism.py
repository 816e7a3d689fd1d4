"""The demo's mail reads like mail: a reply greets the person it is written to, and live traffic writes in
conversations, never under a newsletter or a stranger's phishing."""

from __future__ import annotations

import itertools
import random
import re

from pigeon.models import Message, MessageDirection, ParticipantRole, RecipientType
from pigeon_service.db import Database
from pigeon_service.demo_traffic import new_message
from tests.server.demo import every_message
from tests.server.test_demo_conversation import demo

GREETING = re.compile(r"^(?:(?:Hi|Hello|Hey|Morning) )?([A-Z][\w'-]*),$")


def first_name_of_first_to(db: Database, account: str, message: Message) -> str | None:
    to = next((r for r in message.recipients or [] if r.type == RecipientType.TO.value), None)
    contact = db.get_contact(account, to.contact_id) if to is not None and to.contact_id else None
    return contact.first_name if contact is not None else None


def test_a_reply_you_wrote_greets_the_person_it_is_to() -> None:
    db, account, threads = demo(seed=11)
    greeted = 0
    for thread in threads:
        assert thread.id
        for message in every_message(db, account, thread.id):
            if message.direction != MessageDirection.OUTBOUND.value or not message.content_blocks:
                continue
            found = GREETING.match((message.content_blocks[0].content or "").split("\n", 1)[0])
            if found is None:
                continue
            assert found.group(1) == first_name_of_first_to(db, account, message), message.content_blocks[0].content
            greeted += 1
    assert greeted >= 20  # (the demo's replies were read, not skipped)


def test_live_traffic_writes_in_conversations_not_under_newsletters_or_phishing() -> None:
    db, account, _ = demo(seed=5)
    rng = random.Random(9)
    for _ in range(100):
        message = new_message(db, None, account, rng)
        assert message is not None
        assert message.thread_id
        before = every_message(db, account, message.thread_id)[:-1]
        assert any(
            m.direction == MessageDirection.OUTBOUND.value or (m.sender is not None and m.sender.contact_id)
            for m in before
        ), [m.sender for m in before]


ATTRIBUTION = re.compile(r"^On (\w{3}, \d{2} \w{3} \d{4} at \d{2}:\d{2}), (.+) wrote:$", re.MULTILINE)


def test_a_reply_quotes_the_message_before_it_at_the_time_it_was_written() -> None:
    db, account, threads = demo(seed=11)
    quoted = 0
    for thread in threads:
        assert thread.id
        messages = every_message(db, account, thread.id)
        if len(messages) > 10:  # (the long conversation is a tree: its replies quote their parents)
            continue
        for before, message in itertools.pairwise(messages):
            found = ATTRIBUTION.search(message.content_blocks[0].content or "") if message.content_blocks else None
            if found is None or before.created_at is None:
                continue
            assert found.group(1) == before.created_at.strftime("%a, %d %b %Y at %H:%M")
            quoted += 1
    assert quoted >= 20


def test_live_traffic_writes_as_you_only_where_you_take_part() -> None:
    from pigeon_service.demo_newcomers import NEWCOMERS, newcomer_thread

    db, account, threads = demo(seed=5)
    me = next(p.contact_id for p in threads[0].participants or [] if p.role == ParticipantRole.OWNER.value)
    for newcomer in NEWCOMERS:
        newcomer_thread(db, None, account, newcomer)
    rng = random.Random(4)
    written = [message for _ in range(300) if (message := new_message(db, None, account, rng)) is not None]
    mine = [m for m in written if m.direction == MessageDirection.OUTBOUND.value]
    assert len(mine) >= 20
    assert all(m.sender is not None and m.sender.contact_id == me for m in mine), [m.sender for m in mine]
