"""A busy service (429 with Retry-After) is waited out with a word to the user, not in silence."""

from __future__ import annotations

import re

import httpx
from starlette.types import Receive, Scope, Send

from pigeon.api import PigeonClient
from pigeon.config import load_config
from pigeon.tui.app import make_app
from tests.server.conftest import Service
from tests.tui.conftest import BASE, SIZE, Notes, frozen_clock, loaded, settle


async def test_the_app_says_until_when_it_waits_on_a_busy_service(service: Service) -> None:
    busy = [True]

    async def first_answer_busy(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET" and busy[0]:
            busy[0] = False
            await send({"type": "http.response.start", "status": 429, "headers": [(b"retry-after", b"30")]})
            await send({"type": "http.response.body", "body": b""})
            return
        await service.app(scope, receive, send)

    waits: list[float] = []

    async def no_wait(seconds: float) -> None:  # the test does not wait the 30 s it is asked to
        waits.append(seconds)

    def factory(base_url: str, token: str) -> PigeonClient:
        http = httpx.AsyncClient(transport=httpx.ASGITransport(app=first_answer_busy))
        return PigeonClient(base_url, token, http_client=http, sleep=no_wait)

    config = load_config(base_url=BASE)
    app = make_app(config, token=service.alice.token, client_factory=factory, clock=frozen_clock)
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        await loaded(pilot, app)
        await settle(pilot, app, lambda: "busy" in notes.text)
    assert waits == [30.0]
    said = [note for note in notes if "busy" in note.message]
    assert len(said) == 1
    assert re.fullmatch(r"The service is busy \(429\); waiting 30 s, until \d\d:\d\d:\d\d…", said[0].message)
    assert said[0].severity == "warning"
