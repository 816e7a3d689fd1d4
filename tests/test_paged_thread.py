"""A long thread read a page at a time: its outline is stored with its messages, opening it reads the outline and
the pages it shows, and it reads and lays out as the same thread read whole does (order, depths, what is new,
attachment and footnote numbers); a thread stored before outlines were is read whole once, then outlined."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from unittest.mock import patch

from pigeon.core.attachments import attachments_of
from pigeon.core.conversation import first_new
from pigeon.core.paged import (
    GONE_TEXT,
    LONG,
    PAGE,
    UNREADABLE_TEXT,
    PagedMessages,
    latest_by_writer,
    stored_messages,
    with_attachments,
)
from pigeon.models import Contact, ContentBlock, Message, Sender, Thread
from pigeon.store.mailstore import MailStore
from pigeon.tui.widgets.thread_view import ThreadView
from pigeon.tui.widgets.thread_window import Layout, assemble

NOW = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
SIZE = LONG + 3 * PAGE + 7
WRITERS = [Contact(id=f"c{n}", first_name=name, updated_at=NOW) for n, name in enumerate(["Ada", "Bob", "Cy"])]


def message(n: int) -> Message:
    blocks = [ContentBlock(type="CONTENT_TYPE_TEXT", mime_type="text/plain", content=f"Body {n} says hello.")]
    if n % 97 == 5:  # now and then a file, and a page of HTML with a link: numbered across the thread
        blocks.append(ContentBlock(filename=f"file-{n}.pdf", mime_type="application/pdf", content="x", size=1))
    if n % 131 == 7:
        blocks = [ContentBlock(mime_type="text/html", content=f'<p>See <a href="https://example.com/{n}">this</a></p>')]
    writer = WRITERS[n % 3]
    return Message(
        id=f"m{n:04d}",
        thread_id="t-long",
        direction="MESSAGE_DIRECTION_OUTBOUND" if n % 10 == 3 else "MESSAGE_DIRECTION_INBOUND",
        created_at=NOW + timedelta(minutes=n),
        parent_id=f"m{(n - 1) // 2:04d}" if n else None,  # a reply tree, not a line
        sender=Sender(contact_id=writer.id, contact=writer, raw_address=f"{writer.first_name}@example.com"),
        content_blocks=blocks,
    )


def long_thread(tmp_path: Path) -> tuple[MailStore, Thread, list[Message]]:
    store = MailStore(tmp_path / "store.sqlite3")
    thread = Thread(id="t-long", subject="Long", message_count=SIZE)
    store.put_threads([thread])
    messages = [message(n) for n in range(SIZE)]
    store.put_messages("t-long", messages, who="Ada, Bob, Cy", recipients="")
    return store, thread, messages


def test_a_long_thread_opens_from_its_outline_and_reads_only_the_pages_asked_for(tmp_path: Path) -> None:
    store, thread, messages = long_thread(tmp_path)
    paged = stored_messages(store, thread)
    assert isinstance(paged, PagedMessages)
    assert len(paged) == SIZE
    view = ThreadView(thread, paged, {})
    read_at = NOW + timedelta(minutes=SIZE - 20)
    cursor = first_new([head for head, _ in view.order], read_at)
    layout = Layout(100, frozenset(), cursor, True, height=40)
    assemble(view, layout, "")
    assert paged.reads <= 3  # the pages of the cursor's window, as shown: not the thread
    assert paged[SIZE - 1].id == messages[-1].id
    assert paged[-1] is paged[SIZE - 1]  # a message read once is the same object after
    reads = paged.reads
    assert paged[SIZE - 2].id == messages[-2].id
    assert paged.reads == reads  # read with the page beside it
    assert [m.id for m in paged[PAGE - 2 : PAGE + 2]] == [m.id for m in messages[PAGE - 2 : PAGE + 2]]


def test_a_paged_thread_reads_and_lays_out_as_the_whole_thread_does(tmp_path: Path) -> None:
    store, thread, _ = long_thread(tmp_path)
    paged, whole = stored_messages(store, thread), store.messages("t-long")
    assert isinstance(paged, PagedMessages)
    by_pages, read_whole = ThreadView(thread, paged, {}), ThreadView(thread, whole, {})
    assert by_pages.keys == read_whole.keys
    assert [depth for _, depth in by_pages.order] == [depth for _, depth in read_whole.order]
    read_at = NOW + timedelta(minutes=SIZE // 2)
    assert first_new([h for h, _ in by_pages.order], read_at) == first_new([m for m, _ in read_whole.order], read_at)
    far = [n for n in range(SIZE) if n % 97 == 5 or n % 131 == 7][-4:]  # files and footnotes far into the thread
    for cursor in (0, SIZE // 2, SIZE - 1, *(read_whole.keys.index(f"m{n:04d}") for n in far)):
        layout = Layout(100, frozenset(), cursor, True, height=40)
        assert assemble(by_pages, layout, "").texts == assemble(read_whole, layout, "").texts
    files = [(m.id, b.filename) for m, b in attachments_of(with_attachments(paged))]
    assert files == [(m.id, b.filename) for m, b in attachments_of(whole)]
    assert len(files) == len([n for n in range(SIZE) if n % 97 == 5 and n % 131 != 7])


def test_a_paged_threads_attachments_and_writers_read_only_their_messages(tmp_path: Path) -> None:
    store, thread, messages = long_thread(tmp_path)
    paged = stored_messages(store, thread)
    assert isinstance(paged, PagedMessages)
    files = attachments_of(with_attachments(paged))
    with_files = {m.id for m in messages if any(b.attached for b in m.content_blocks)}
    assert {m.id for m, _ in files} == with_files
    assert {m.id for m in paged.loaded()} == with_files  # in one trip, not the pages around each
    assert paged.reads == 1
    writers = list(latest_by_writer(paged))
    assert [m.id for m in writers] == [m.id for m in messages[-len(WRITERS) :]][::-1]  # each one's newest


def test_each_writer_is_held_once_across_pages(tmp_path: Path) -> None:
    store, thread, _ = long_thread(tmp_path)
    paged = stored_messages(store, thread)
    writers = {id(m.sender.contact) for m in paged if m.sender and m.sender.contact}
    assert len(writers) == len(WRITERS)


def test_a_damaged_row_is_shown_in_its_place_and_the_rest_reads(tmp_path: Path) -> None:
    store, thread, messages = long_thread(tmp_path)
    with store.transaction() as conn:
        conn.execute("UPDATE messages SET data = '{\"created_at\": 5' WHERE id = 'm0060'")
    paged = stored_messages(store, thread)
    assert isinstance(paged, PagedMessages)
    damaged = paged[60]
    assert damaged.id == "m0060"
    assert damaged.content_blocks[0].content == UNREADABLE_TEXT
    assert [m.id for m in paged[55:65]] == [m.id for m in messages[55:65]]
    assert paged[61].content_blocks == messages[61].content_blocks


def test_a_thread_stored_before_outlines_is_read_whole_once_then_outlined(tmp_path: Path) -> None:
    store, thread, messages = long_thread(tmp_path)
    with store.transaction() as conn:  # as a store of the version before keeps it
        conn.execute("DELETE FROM outlines")
    assert store.outline("t-long") is None
    first = stored_messages(store, thread)
    assert not isinstance(first, PagedMessages)
    assert [m.id for m in first] == [m.id for m in messages]
    again = stored_messages(store, thread)
    assert isinstance(again, PagedMessages)
    assert [(h.id, h.parent_id, h.created_at) for h in again.outline] == [
        (m.id, m.parent_id, m.created_at) for m in messages
    ]


def test_a_short_thread_is_read_whole(tmp_path: Path) -> None:
    store = MailStore(tmp_path / "store.sqlite3")
    thread = Thread(id="t-short", subject="Short", message_count=LONG)
    store.put_threads([thread])
    store.put_messages("t-short", [message(n) for n in range(LONG)], who="Ada", recipients="")
    assert isinstance(stored_messages(store, thread), list)
    assert store.outline("t-short") is None  # (a short thread keeps no outline)


def test_an_outline_that_does_not_match_the_messages_is_not_used(tmp_path: Path) -> None:
    store, thread, messages = long_thread(tmp_path)
    with store.transaction() as conn:  # well formed, one message short: as if written for another version
        data = json.loads(conn.execute("SELECT data FROM outlines").fetchone()[0])
        conn.execute("UPDATE outlines SET data = ?", (json.dumps({k: v[:-1] for k, v in data.items()}),))
    assert store.outline("t-long") is None
    read = stored_messages(store, thread)
    assert [m.id for m in read] == [m.id for m in messages]  # read whole, every message there


def test_an_outline_that_cannot_be_written_leaves_the_thread_readable(tmp_path: Path) -> None:
    store, thread, messages = long_thread(tmp_path)
    with store.transaction() as conn:
        conn.execute("DELETE FROM outlines")
    with patch.object(MailStore, "fill_outline", side_effect=sqlite3.OperationalError("database is locked")):
        read = stored_messages(store, thread)
    assert [m.id for m in read] == [m.id for m in messages]


def test_a_message_gone_since_the_outline_was_read_says_so(tmp_path: Path) -> None:
    store, thread, messages = long_thread(tmp_path)
    paged = stored_messages(store, thread)
    assert isinstance(paged, PagedMessages)
    with store.transaction() as conn:  # (as a sync rewriting the thread meanwhile might leave it)
        conn.execute("DELETE FROM messages WHERE id = 'm0300'")
    assert paged[300].content_blocks[0].content == GONE_TEXT
    assert paged[301].id == messages[301].id


def test_an_html_block_the_outline_did_not_count_is_still_shown(tmp_path: Path) -> None:
    store, thread, _ = long_thread(tmp_path)
    with store.transaction() as conn:
        data = json.loads(conn.execute("SELECT data FROM outlines").fetchone()[0])
        data["html"] = [0] * len(data["html"])
        conn.execute("UPDATE outlines SET data = ?", (json.dumps(data),))
    paged = stored_messages(store, thread)
    view = ThreadView(thread, paged, {})
    index = view.keys.index("m0007")  # an HTML message
    text = assemble(view, Layout(100, frozenset(), index, True, height=40), "").texts
    assert any("See this" in line for line in text)


async def test_a_long_thread_fetched_from_the_service_opens_again_a_page_at_a_time(tmp_path: Path) -> None:
    """Opened before a sync stored it, a long thread is fetched whole; once stored it is not held in memory, so
    the next open reads its pages from the store."""
    import httpx

    from pigeon.api import PigeonClient
    from pigeon.config import load_config
    from pigeon.core.mail import MailCore
    from tests.conversation import add_conversation
    from tests.server.conftest import make_service

    service = make_service()
    conversation = add_conversation(service, size=SIZE)
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=service.app))
    client = PigeonClient("http://s.test", service.alice.token, http_client=http)
    store = MailStore(tmp_path / "s.sqlite3")
    store.put_threads([Thread(id=conversation.thread_id, subject="Long", message_count=SIZE)])  # listed, not fetched
    core = MailCore(load_config(base_url="http://s.test"), store, client=client, save_settings=False)
    fetched = [loaded async for loaded, more in core.fetch_thread(conversation.thread_id) if not more]
    assert len(fetched[0]) == SIZE
    _, messages = await core.stored_thread(conversation.thread_id)
    assert isinstance(messages, PagedMessages)
    assert [m.id for m in messages[:3]] == conversation.ids[:3]
    await core.close()


def test_a_long_subject_wraps_and_keeps_its_message_count_whole() -> None:
    subject = "Quarterly numbers for the regional offices, with the notes from every review"
    thread = Thread(id="t-short", subject=subject, message_count=12)
    messages = [message(n).model_copy(update={"thread_id": "t-short"}) for n in range(12)]
    view = ThreadView(thread, messages, {})
    for width in (30, 50, 72, 78, 100):
        rows = [row.plain for row in assemble(view, Layout(width, frozenset(), 0, True, height=40), "").rows]
        counted = [row for row in rows if "12 of 12" in row]
        assert len(counted) == 1, (width, rows[:4])  # whole on one line, never "12 of" / "12"
        assert all(len(row) <= width for row in rows[:3])
        assert " ".join(r.strip() for r in rows[: rows.index(counted[0]) + 1]).startswith(subject)
