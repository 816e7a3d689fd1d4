"""A start without the service: the app checks again by itself (soon, then less often) and recovers as soon as the
service answers; ctrl+r meanwhile makes no second schedule of checks."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from pigeon.api import PigeonClient
from pigeon.config import load_config
from pigeon.tui.app import make_app
from pigeon.tui.screens.mail import MainScreen
from pigeon.tui.widgets.thread_list import ThreadList
from tests.server.conftest import Service
from tests.tui.conftest import BASE, SIZE, Notes, frozen_clock, on_screen, settle


class Switch(httpx.AsyncBaseTransport):
    """The service behind a switch: while ``down``, every connection is refused; each sync's start is timed."""

    def __init__(self, service: Service) -> None:
        self.inner = httpx.ASGITransport(app=service.app)
        self.down = True
        self.broken = False  # up, but answering every request with a server error
        self.syncs: list[float] = []  # when each sync asked for the inboxes (its first request)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/inboxes" and request.method == "GET":
            self.syncs.append(time.monotonic())
        if self.down:
            raise httpx.ConnectError("connection refused", request=request)
        if self.broken:
            return httpx.Response(500, json={"error": {"code": "internal", "message": "broken"}}, request=request)
        return await self.inner.handle_async_request(request)


def factory(switch: Switch) -> Callable[[str, str], PigeonClient]:
    def make(base_url: str, token: str) -> PigeonClient:
        return PigeonClient(base_url, token, http_client=httpx.AsyncClient(transport=switch), max_retries=0)

    return make


async def test_a_start_without_the_service_recovers_by_itself(service: Service) -> None:
    switch = Switch(service)
    app = make_app(
        load_config(base_url=BASE),
        token=service.alice.token,
        client_factory=factory(switch),
        clock=frozen_clock,
        poll_interval=0.3,
    )
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        screen = on_screen(app, MainScreen)
        await settle(pilot, app, lambda: screen.offline)
        await settle(pilot, app, lambda: len(switch.syncs) >= 3)  # it tries again by itself, more than once
        assert screen.offline
        assert [n.title for n in notes].count("Offline") == 1  # said once: the banner stays meanwhile
        assert "again in" in str(screen.status)
        switch.down = False  # the service comes up: no key pressed
        threads = screen.query_one(ThreadList)
        await settle(pilot, app, lambda: not screen.offline and len(threads.source) > 0, within=30)
        assert not screen.query_one("#offline").has_class("shown")
        assert screen.check_delay == 0.3  # back to the regular check


async def test_retries_wait_longer_each_time_and_ctrl_r_makes_no_second_schedule(service: Service) -> None:
    switch = Switch(service)
    app = make_app(
        load_config(base_url=BASE),
        token=service.alice.token,
        client_factory=factory(switch),
        clock=frozen_clock,
        poll_interval=2.0,  # the first retry comes after 2 s, the next after 4 s
    )
    async with app.run_test(size=SIZE) as pilot:
        screen = on_screen(app, MainScreen)
        await settle(pilot, app, lambda: screen.offline and screen.check_delay == 2.0)
        assert len(switch.syncs) == 1
        await pilot.press("ctrl+r")  # before the retry that is due: it replaces it, and fails too
        await settle(pilot, app, lambda: len(switch.syncs) == 2 and screen.check_delay == 4.0)
        await settle(pilot, app, lambda: len(switch.syncs) >= 3, within=30)
        # The retry the start scheduled was called off: the next check came a whole doubled delay after ctrl+r.
        assert switch.syncs[2] - switch.syncs[1] >= 4.0 - 0.05
        assert len(switch.syncs) == 3


async def test_a_check_that_fails_on_the_disk_is_tried_again_too(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    switch = Switch(service)
    switch.down = False
    app = make_app(
        load_config(base_url=BASE),
        token=service.alice.token,
        client_factory=factory(switch),
        clock=frozen_clock,
        poll_interval=0.3,
    )
    attempts: list[int] = []
    synced: list[int] = []
    real_sync = app.core.sync

    async def full_disk(*args: Any, **kwargs: Any) -> Any:
        attempts.append(1)
        if len(attempts) < 3:
            raise OSError(28, "No space left on device")
        result = await real_sync(*args, **kwargs)
        synced.append(1)
        return result

    monkeypatch.setattr(app.core, "sync", full_disk)
    async with app.run_test(size=SIZE) as pilot:
        screen = on_screen(app, MainScreen)
        threads = screen.query_one(ThreadList)
        # (until the third check has ended: while it runs, the delay is still the longer one after a failure)
        await settle(pilot, app, lambda: bool(synced) and len(threads.source) > 0, within=30)
        await settle(pilot, app)
        assert len(attempts) >= 3
        assert screen.check_delay == 0.3


async def test_the_status_line_says_the_next_try_until_a_check_succeeds(service: Service) -> None:
    """Once a check failed, the status line, said afresh by whatever changes the list, still says when the next
    check is (not how mail comes when all is well) until one succeeds."""
    switch = Switch(service)
    switch.down = False
    app = make_app(
        load_config(base_url=BASE), token=service.alice.token, client_factory=factory(switch), clock=frozen_clock
    )
    async with app.run_test(size=SIZE) as pilot:
        screen = on_screen(app, MainScreen)
        await settle(pilot, app, lambda: screen.synced and "checking every" in str(screen.status))
        switch.down = True
        await pilot.press("ctrl+r")
        await settle(pilot, app, lambda: "Could not check for mail" in str(screen.status))
        await pilot.press("s")  # a change: the status line is said afresh
        threads = screen.query_one(ThreadList)
        await settle(pilot, app, lambda: threads.current is not None and threads.current.starred)
        await settle(pilot, app, lambda: "not checked · again in" in str(screen.status))
        switch.down = False
        await pilot.press("ctrl+r")
        well = lambda: "checking every" in str(screen.status) and "again in" not in str(screen.status)  # noqa: E731
        await settle(pilot, app, well)


async def test_a_failing_service_is_said_once_while_the_checks_go_on(service: Service) -> None:
    switch = Switch(service)
    switch.down, switch.broken = False, True
    app = make_app(
        load_config(base_url=BASE),
        token=service.alice.token,
        client_factory=factory(switch),
        clock=frozen_clock,
        poll_interval=0.3,
    )
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        screen = on_screen(app, MainScreen)
        await settle(pilot, app, lambda: len(switch.syncs) >= 4)
        assert len([n for n in notes if n.severity == "error"]) == 1
        assert "again in" in str(screen.status)
        switch.broken = False
        threads = screen.query_one(ThreadList)
        await settle(pilot, app, lambda: len(threads.source) > 0 and screen.check_delay == 0.3, within=30)


async def test_mail_a_run_left_unindexed_is_found_by_a_search_after_a_start_without_the_service(
    service: Service, tmp_path: Path
) -> None:
    from pigeon.store.mailstore import MailStore
    from pigeon.store.sync import sync

    path = tmp_path / "store.sqlite3"
    store = MailStore(path)
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=service.app))
    async with PigeonClient(BASE, service.alice.token, http_client=http) as client:
        await sync(client, store)  # rows and messages stored; the run ended before their words were indexed
    subject = store.list_threads("all", limit=1)[0].subject
    word = next(w for w in subject.split() if w.isalpha() and len(w) > 3)
    assert store.pending_index() > 0
    assert store.count("all", word) == 0
    store.close()
    dead = PigeonClient("http://127.0.0.1:9", service.alice.token, max_retries=0, timeout=2)
    app = make_app(load_config(base_url=BASE), client=dead, clock=frozen_clock, store=MailStore(path))
    async with app.run_test(size=SIZE) as pilot:
        screen = on_screen(app, MainScreen)
        await pilot.press("slash", *word)  # typed at once, while the words may still be going in
        threads = screen.query_one(ThreadList)
        await settle(pilot, app, lambda: screen.offline and f'matching "{word}"' in screen.threads.status)
        await settle(pilot, app, lambda: any(word in threads.source.row(i).subject for i in range(len(threads.source))))
    assert MailStore(path).pending_index() == 0
