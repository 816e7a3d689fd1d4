"""Seen, in the app: the row of a thread the user wrote last says who read it since and when; the reader says it
under the user's last message, with its delivery status, for each participant."""

from __future__ import annotations

import socket
from datetime import timedelta
from typing import Any

import pytest

from pigeon_service.db import iso
from tests.server.conftest import NOW, Service
from tests.test_seen import read_by, the_user_replies, with_two_others
from tests.tui.conftest import SIZE, current_id, pigeon_for, screen_text, settle
from tests.tui.test_triage import synced


def sent_and_read(service: Service) -> tuple[str, str, str]:
    """The user's reply, ten minutes ago, in the newest thread of two or more others: one of them read it five
    minutes ago, one an hour before it. Returns the thread and the two readers' names."""
    thread_id = with_two_others(service)
    sent = NOW - timedelta(minutes=10)
    _, (first, second, *_) = the_user_replies(service, thread_id, sent)
    read_by(service, thread_id, first, NOW - timedelta(minutes=5))
    read_by(service, thread_id, second, sent - timedelta(hours=1))
    names = [service.db.get_contact(service.alice.id, who) for who in (first, second)]
    assert all(names)
    return thread_id, *(c.name for c in names if c)  # type: ignore[return-value]


async def test_the_row_and_the_reader_say_who_has_seen_the_users_last_message(service: Service) -> None:
    thread_id, ada, bob = sent_and_read(service)
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await synced(pilot, app)
        assert current_id(threads) == thread_id  # (the newest)
        row = screen_text(app).splitlines()
        assert any(f"seen by {ada.split()[0]} 5m" in line for line in row)  # the first name, as the senders
        await pilot.press("enter")
        await settle(pilot, app, lambda: "[delivered]" in screen_text(app))
        await pilot.press("G")  # (it opens at the first unread message; the user's reply is the last)
        await settle(pilot, app, lambda: f"Seen by {ada} 5 min ago" in screen_text(app))
        text = screen_text(app)
        assert f"Not seen yet by {bob} (read 1 h ago)" in text
        assert "[delivered]" in text  # the delivery status, as before


async def test_an_html_message_with_a_tracking_pixel_opens_without_any_request_for_it(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str] = []
    real_lookup, real_connect = socket.getaddrinfo, socket.socket.connect

    def lookup(host: Any, *args: Any, **kwargs: Any) -> Any:
        asked.append(str(host))
        return real_lookup(host, *args, **kwargs)

    def connect(self: socket.socket, address: Any) -> Any:
        asked.append(str(address))
        return real_connect(self, address)

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    monkeypatch.setattr(socket.socket, "connect", connect)
    threads, _ = service.db.list_threads(service.alice.id, page_size=1, page_token=None)
    pixel = '<p>Our news</p><img src="http://tracker.test/open.gif?u=alice" width="1" height="1">'
    service.add_message(
        service.alice,
        threads[0].id or "",
        content_blocks=[{"type": "CONTENT_TYPE_TEXT", "mime_type": "text/html", "content": pixel, "sequence": 0}],
        created_at=iso(NOW - timedelta(minutes=1)),
    )
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await synced(pilot, app)
        await pilot.press("enter", "G")
        await settle(pilot, app, lambda: "Our news" in screen_text(app))
    assert not [host for host in asked if "tracker" in host]
    assert "tracker.test" not in " ".join(asked)
