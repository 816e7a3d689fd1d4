"""The demo's long conversation: a reply tree among several people, its latest messages unread, real files to
forward; and a Message-ID on every demo message."""

from __future__ import annotations

import base64
import random
import re
import struct
import zlib
from datetime import UTC, datetime

import pytest

from pigeon.models import Message, MessageDirection, ParticipantRole, Thread
from pigeon_service.db import Database
from pigeon_service.demo_conversation import CONVERSATION_MESSAGES, UNREAD
from pigeon_service.demo_mail import populate
from pigeon_service.demo_traffic import new_message
from tests.server.demo import every_message

NOW = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)
MESSAGE_ID = re.compile(r"<[^<>@\s]+@[^<>@\s]+>")


def demo(seed: int = 3, *, conversation: int = CONVERSATION_MESSAGES) -> tuple[Database, str, list[Thread]]:
    db = Database(":memory:")
    account = db.ensure_account("x")
    populate(db, account, threads=40, contacts=30, seed=seed, now=NOW, conversation=conversation)
    return db, account, db.list_threads(account, page_size=500, page_token=None)[0]


@pytest.fixture(scope="module")
def conversation() -> tuple[Thread, list[Message], list[Thread]]:
    db, account, threads = demo()
    thread = threads[1]
    assert thread.id
    return thread, every_message(db, account, thread.id), threads


def test_the_second_newest_thread_is_a_conversation_of_two_hundred(
    conversation: tuple[Thread, list[Message], list[Thread]],
) -> None:
    thread, messages, threads = conversation
    assert len(threads) == 40  # one of the threads asked for, not one more
    assert thread.message_count == len(messages) == CONVERSATION_MESSAGES == 200
    assert thread.subject
    assert "launch" in thread.subject
    assert [m.created_at for m in messages] == sorted(m.created_at for m in messages if m.created_at)
    assert {m.inbox_id for m in messages} == {thread.inbox_id}
    people = {m.sender.contact_id for m in messages if m.sender}
    assert len(people) >= 5  # several people and the owner
    assert {m.direction for m in messages} == {
        MessageDirection.INBOUND.value,
        MessageDirection.OUTBOUND.value,
    }


def test_the_conversation_is_a_reply_tree_with_side_discussions(
    conversation: tuple[Thread, list[Message], list[Thread]],
) -> None:
    _, messages, _ = conversation
    place = {m.id: n for n, m in enumerate(messages)}
    assert [m.parent_id for m in messages].count(None) == 1  # one root, the first message
    assert messages[0].parent_id is None
    assert all(place[m.parent_id] < n for n, m in enumerate(messages) if m.parent_id)  # answers come after
    replies: dict[str, int] = {}
    for m in messages:
        if m.parent_id:
            replies[m.parent_id] = replies.get(m.parent_id, 0) + 1
    assert sum(1 for count in replies.values() if count > 1) >= 5  # branches: side discussions
    older = [n for n, m in enumerate(messages) if m.parent_id and place[m.parent_id] < n - 5]
    assert len(older) >= 5  # answers to messages well back in the thread
    quoted = messages[-1].content_blocks[0].content or ""
    parent = messages[place[messages[-1].parent_id or ""]].content_blocks[0].content or ""
    assert "> " + parent.splitlines()[2] in quoted  # a reply quotes what it answers, not the message before it


def test_the_owner_read_all_but_the_latest_dozen(conversation: tuple[Thread, list[Message], list[Thread]]) -> None:
    thread, messages, threads = conversation
    owner = next(p for p in thread.participants if p.role == ParticipantRole.OWNER)
    assert owner.last_read_at is not None
    new = [m for m in messages if m.created_at and m.created_at > owner.last_read_at]
    assert new == messages[-UNREAD:]
    assert UNREAD == 12
    assert {m.direction for m in new} == {MessageDirection.INBOUND.value}  # others wrote them: unread indeed
    others = [
        p.last_read_at for t in threads if t is not thread for p in t.participants if p.role == ParticipantRole.OWNER
    ]
    assert 0 < sum(1 for moment in others if moment) < len(others)  # some other threads were read, not all


def test_the_latest_messages_carry_a_pdf_and_a_png_to_forward(
    conversation: tuple[Thread, list[Message], list[Thread]],
) -> None:
    _, messages, _ = conversation
    files = {
        (n, b.filename): (b.mime_type, base64.b64decode(b.content or ""), b.size)
        for n, m in enumerate(messages)
        for b in m.content_blocks
        if b.filename
    }
    mime, data, size = files[(len(messages) - 3, "customer-summary.pdf")]  # the third from last
    assert (mime, size) == ("application/pdf", len(data))
    assert data.startswith(b"%PDF-1.4\n")
    assert data.endswith(b"%%EOF\n")
    start = int(data.rsplit(b"startxref\n", 1)[1].split()[0])
    assert data[start:].startswith(b"xref\n")  # the cross-reference table is where the trailer says
    mime, data, size = files[(len(messages) - 2, "dashboard.png")]
    assert (mime, size) == ("image/png", len(data))
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    width, height, depth, kind = struct.unpack(">IIBB", data[16:26])
    pixels = zlib.decompress(data[41 : 41 + struct.unpack(">I", data[33:37])[0]])
    assert len(pixels) == height * (1 + width * 3)
    assert depth == 8
    assert kind == 2
    assert files[(0, "launch-plan.pdf")][0] == "application/pdf"


def test_every_demo_message_has_a_message_id_stable_for_its_seed() -> None:
    def ids(seed: int) -> list[str]:
        db, account, threads = demo(seed)
        found = [
            (m.metadata or {}).get("message_id") for t in threads if t.id for m in every_message(db, account, t.id)
        ]
        live = new_message(db, None, account, random.Random(1))
        assert live is not None
        assert MESSAGE_ID.fullmatch((live.metadata or {})["message_id"])
        return [str(found_id) for found_id in found]

    first = ids(3)
    assert all(MESSAGE_ID.fullmatch(found) for found in first)
    assert len(set(first)) == len(first)
    assert ids(3) == first
    assert set(ids(4)).isdisjoint(first)


def test_a_demo_without_the_conversation_has_only_short_threads() -> None:
    _, _, threads = demo(conversation=0)
    assert len(threads) == 40
    assert max(t.message_count or 0 for t in threads) <= 10
