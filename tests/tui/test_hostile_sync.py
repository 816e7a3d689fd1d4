"""A sync that fails in a way no one planned for (a hostile answer that makes Python itself give up) is said in one
line, once, and the app goes on checking for mail by itself."""

from __future__ import annotations

import httpx

from pigeon.api import PigeonClient
from pigeon.config import load_config
from pigeon.tui.app import make_app
from pigeon.tui.screens.mail import MainScreen
from pigeon.tui.widgets.thread_list import ThreadList
from tests.server.conftest import Service
from tests.tui.conftest import BASE, SIZE, Notes, frozen_clock, on_screen, settle


class Hostile(httpx.AsyncBaseTransport):
    """The reference service, whose thread list makes the client fail with a RecursionError ``failures`` times."""

    def __init__(self, service: Service, failures: int) -> None:
        self.inner = httpx.ASGITransport(app=service.app)
        self.failures = failures
        self.lists = 0  # thread lists asked for

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/threads":
            self.lists += 1
            if self.lists <= self.failures:
                raise RecursionError("maximum recursion depth exceeded")
        return await self.inner.handle_async_request(request)


async def test_an_unexpected_error_during_a_sync_is_said_once_and_the_checks_go_on(service: Service) -> None:
    hostile = Hostile(service, failures=3)

    def factory(base_url: str, token: str) -> PigeonClient:
        return PigeonClient(base_url, token, http_client=httpx.AsyncClient(transport=hostile), max_retries=0)

    app = make_app(
        load_config(base_url=BASE),
        token=service.alice.token,
        client_factory=factory,
        clock=frozen_clock,
        poll_interval=0.3,
    )
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        screen = on_screen(app, MainScreen)
        await settle(pilot, app, lambda: hostile.lists >= 2 and "Could not check for mail" in str(screen.status))
        threads = screen.query_one(ThreadList)
        # No key pressed: it checked again, and once that check ended (its rows show before), went back to the
        # regular check.
        await settle(pilot, app, lambda: len(threads.source) > 0 and screen.check_delay == 0.3, within=30)
        assert hostile.lists > 3
        errors = [n for n in notes if n.severity == "error"]
        assert len(errors) == 1  # said at the first failure, not at every retry
        assert "\n" not in errors[0].message
        assert isinstance(app.screen, MainScreen)
