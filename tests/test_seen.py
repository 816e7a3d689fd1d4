"""Seen: who has read a thread whose last message is the user's, from the service's ``participants[].last_read_at``
(never a tracking pixel), in the store's rows, the command line's JSON and words, at fixed clock times."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from pigeon.api import PigeonClient
from pigeon.config import load_config
from pigeon.core.mail import MailCore
from pigeon.core.seen import Reader, ago, readers, seen_words
from pigeon.models import Thread
from pigeon.store.mailstore import MailStore
from pigeon_service.db import iso
from tests.command_line import run
from tests.server.conftest import NOW, Service, make_service

OWNER, ADA, BOB, CAROL = "own", "ada", "bob", "carol"


def thread_read(**read_at: datetime | None) -> Thread:
    """A thread whose participants read it at ``read_at`` (the owner's named ``own``)."""
    return Thread.model_validate(
        {
            "id": "t1",
            "participants": [
                {"contact_id": who, "role": "OWNER" if who == OWNER else "MEMBER", "last_read_at": at}
                for who, at in read_at.items()
            ],
        }
    )


def test_readers_are_those_who_read_since_the_users_message_latest_first_then_the_rest() -> None:
    sent = NOW - timedelta(hours=2)
    thread = thread_read(
        own=NOW, ada=NOW - timedelta(minutes=3), bob=NOW - timedelta(days=3), carol=NOW - timedelta(hours=1)
    )
    found = readers(thread, sent)
    assert found == [
        Reader(ADA, NOW - timedelta(minutes=3), True),
        Reader(CAROL, NOW - timedelta(hours=1), True),
        Reader(BOB, NOW - timedelta(days=3), False),
    ]
    names = {ADA: "Ada", BOB: "Bob", CAROL: "Carol"}.__getitem__
    assert seen_words(found, names, NOW) == [
        "Seen by Ada 3 min ago, Carol 1 h ago",
        "Not seen yet by Bob (read 3 days ago)",
    ]
    assert seen_words(readers(thread, NOW + timedelta(minutes=1)), names, NOW) == [
        "Not seen yet by Ada (read 3 min ago), Bob (read 3 days ago), Carol (read 1 h ago)"
    ]


def test_a_service_that_says_of_no_one_when_they_read_says_nothing() -> None:
    assert readers(thread_read(own=NOW, ada=None, bob=None), NOW - timedelta(hours=1)) == []
    assert readers(thread_read(own=NOW), NOW - timedelta(hours=1)) == []  # the owner's own read is not "seen"
    partly = readers(thread_read(ada=NOW, bob=None), NOW - timedelta(hours=1))
    assert seen_words(partly, str.title, NOW) == ["Seen by Ada just now", "Not seen yet by Bob"]


@pytest.mark.parametrize(
    ("before", "said"),
    [
        (timedelta(seconds=59), "just now"),
        (timedelta(minutes=59), "59 min ago"),
        (timedelta(hours=23), "23 h ago"),
        (timedelta(hours=30), "yesterday"),
        (timedelta(days=6), "6 days ago"),
        (timedelta(days=8), "on 24 Oct 2026"),
        (-timedelta(minutes=5), "just now"),  # a reader's clock ahead of ours
    ],
)
def test_how_long_ago_is_said(before: timedelta, said: str) -> None:
    assert ago(NOW - before, NOW) == said


@pytest.fixture
async def synced(tmp_path: Path) -> AsyncIterator[tuple[Service, MailCore]]:
    service = make_service()
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=service.app))
    client = PigeonClient("http://s.test", service.alice.token, http_client=http, max_retries=0)
    core = MailCore(
        load_config(base_url="http://s.test"), MailStore(tmp_path / "s.sqlite3"), client=client, save_settings=False
    )
    core.clock = lambda: NOW
    yield service, core
    await core.close()
    service.db.close()


def members(service: Service, thread_id: str) -> tuple[str, list[str]]:
    """The thread's owner and other participants, as the service has them."""
    row = service.db.row("SELECT participants FROM threads WHERE id = ?", (thread_id,))
    assert row is not None
    participants = json.loads(row[0])
    owner = next(p["contact_id"] for p in participants if p["role"] == "OWNER")
    return owner, [p["contact_id"] for p in participants if p["role"] != "OWNER"]


def the_user_replies(service: Service, thread_id: str, sent: datetime) -> tuple[str, list[str]]:
    """The user's delivered reply to the thread's last message, sent at ``sent``; the thread's owner and others."""
    owner, others = members(service, thread_id)
    last = service.db.last_message(thread_id)
    assert last is not None
    service.add_message(
        service.alice,
        thread_id,
        direction="MESSAGE_DIRECTION_OUTBOUND",
        status="MESSAGE_STATUS_DELIVERED",
        sender_contact_id=owner,
        sender_address="me@pigeon.example",
        created_at=iso(sent),
        parent_id=last["id"],
    )
    return owner, others


def with_two_others(service: Service) -> str:
    """The newest of alice's threads with two or more participants besides her."""
    threads, _ = service.db.list_threads(service.alice.id, page_size=500, page_token=None)
    return next(t.id for t in threads if t.id and len(members(service, t.id)[1]) >= 2)


def read_by(service: Service, thread_id: str, contact_id: str, at: datetime) -> None:
    with service.db.transaction() as conn:
        service.db.read_by(conn, thread_id, contact_id, iso(at))


async def test_a_row_names_who_read_the_users_last_message_since_and_only_while_it_is_last(
    synced: tuple[Service, MailCore],
) -> None:
    service, core = synced
    thread_id = with_two_others(service)
    sent = NOW - timedelta(hours=1)
    owner, (first, second, *_) = the_user_replies(service, thread_id, sent)
    read_by(service, thread_id, owner, NOW)  # the user's own read is not "seen"
    read_by(service, thread_id, first, sent + timedelta(minutes=20))
    read_by(service, thread_id, second, sent - timedelta(minutes=5))  # before the message: not seen
    await core.sync()
    row = next(t for t in core.store.list_threads("waiting", limit=500, now=NOW) if t.id == thread_id)
    name = core.store.rows("SELECT name FROM contacts WHERE id = ?", (first,))[0][0]
    assert (row.seen_by, row.seen_at) == ((name,), sent + timedelta(minutes=20))

    read_by(service, thread_id, second, sent + timedelta(minutes=40))
    await core.sync()
    row = next(t for t in core.store.list_threads("waiting", limit=500, now=NOW) if t.id == thread_id)
    assert len(row.seen_by) == 2
    assert row.seen_at == sent + timedelta(minutes=40)  # the latest reader first

    service.add_message(service.alice, thread_id, created_at=iso(NOW - timedelta(minutes=1)))  # an answer
    await core.sync()
    row = next(t for t in core.store.list_threads("all", limit=500, now=NOW) if t.id == thread_id)
    assert (row.seen_by, row.seen_at) == ((), None)


def test_the_command_line_says_who_has_seen_what_the_user_wrote_last(running: Service) -> None:
    assert run("sync")[0] == 0
    waiting = json.loads(run("search", "--json", "--view", "waiting")[1])["threads"]
    seen = [t for t in waiting if t["seen_by"]]
    assert seen  # the demo's replies were mostly read
    for thread in seen:
        at = datetime.fromisoformat(thread["seen_at"])
        assert at >= datetime.fromisoformat(thread["last_message_at"])
        row = running.db.row("SELECT participants FROM threads WHERE id = ?", (thread["id"],))
        assert row is not None
        readers = [p for p in json.loads(row[0]) if p["role"] != "OWNER" and p["last_read_at"]]
        assert at.astimezone(UTC) in {datetime.fromisoformat(p["last_read_at"]).astimezone(UTC) for p in readers}
        names = {c.name for p in readers if (c := running.db.get_contact(running.alice.id, p["contact_id"]))}
        assert thread["seen_by"]
        assert set(thread["seen_by"]) <= names  # the readers' names, as their contacts have them
    unseen = [t for t in waiting if not t["seen_by"]]
    assert all(t["seen_at"] is None for t in unseen)
