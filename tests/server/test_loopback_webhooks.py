"""`pigeon serve` on loopback accepts Pigeon's loopback receiver; bound wider, it still refuses it."""

from __future__ import annotations

import asyncio
import io
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from pigeon.api import PigeonClient
from pigeon.cli import main
from pigeon.core.live import Live, MemoryVault
from pigeon.models.events import WebhookEvent
from pigeon_service import run
from pigeon_service.app import ServerSettings, create_app
from pigeon_service.db import Database
from pigeon_service.demo_traffic import new_message


@dataclass
class Served:
    """What `pigeon serve` would have served: its database, its settings and the token of an account."""

    db: Database
    settings: ServerSettings
    token: str


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """`pigeon serve ARGS` through the CLI, stopped where it would start listening."""
    made: list[Served] = []

    def serve_as(*args: str) -> Served:
        path = str(tmp_path / "service.sqlite3")
        token_out = io.StringIO()
        assert main(["serve", "token", "create", "--db", path, "--account", "alice"], out=token_out) == 0
        caught: dict[str, Any] = {}

        def listen(db: Database, settings: ServerSettings, **where: Any) -> None:
            caught.update(db=db, settings=settings, **where)

        monkeypatch.setattr(run, "serve", listen)
        assert main(["serve", "--db", path, *args], out=io.StringIO()) == 0
        made.append(Served(caught["db"], caught["settings"], token_out.getvalue().strip()))
        return made[-1]

    yield serve_as
    for one in made:
        one.db.close()


async def create_webhook(served: Served, url: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=create_app(served.db, served.settings))
    async with httpx.AsyncClient(transport=transport, base_url="http://s.test") as http:
        return await http.post(
            "/v1/webhooks",
            json={"url": url, "events": ["message.created"]},
            headers={"Authorization": f"Bearer {served.token}"},
        )


@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "localhost"])
@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:8931/hook", "http://127.8.9.10:8931/hook", "http://localhost:8931/h"]
)
async def test_a_service_on_loopback_accepts_loopback_receivers(served: Any, host: str, url: str) -> None:
    response = await create_webhook(served("--host", host), url)
    assert response.status_code == 201, response.text


@pytest.mark.parametrize(
    "url",
    [
        "http://10.1.2.3/hook",
        "http://192.168.0.10/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://[fd00::1]/hook",
        "http://100.64.0.1/hook",
        "http://0.0.0.0/hook",
        "http://api.internal/hook",
    ],
)
async def test_a_service_on_loopback_still_refuses_private_and_metadata_addresses(served: Any, url: str) -> None:
    response = await create_webhook(served("--host", "127.0.0.1"), url)
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == "url"


async def test_a_service_on_loopback_behind_a_proxy_can_refuse_loopback_receivers(served: Any) -> None:
    response = await create_webhook(served("--no-loopback-webhooks"), "http://127.0.0.1:8931/hook")
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == "url"


@pytest.mark.parametrize("url", ["http://127.0.0.1:8931/hook", "http://localhost:8931/hook"])
async def test_a_service_bound_wider_refuses_loopback_receivers(served: Any, url: str) -> None:
    response = await create_webhook(served("--host", "0.0.0.0"), url)  # noqa: S104  (never listens: serve is caught)
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == "url"
    allowed = await create_webhook(served("--host", "0.0.0.0", "--allow-private-webhooks"), url)  # noqa: S104
    assert allowed.status_code == 201


async def test_the_readme_live_path_gets_webhooks_without_extra_flags(served: Any) -> None:
    """`pigeon serve --demo-data --live` on its default host: Pigeon's receiver subscribes and hears new mail."""
    settings = served("--demo-data")
    settings.settings.background = []  # new mail is made below, when the receiver listens
    app = create_app(settings.db, settings.settings)
    service = run.start_in_thread(app, db=settings.db)
    heard: asyncio.Queue[WebhookEvent] = asyncio.Queue()
    try:
        async with PigeonClient(service.base_url, settings.token) as client:
            live = Live(MemoryVault(), "default webhook")
            mode = await live.start(client, heard.put_nowait)
            assert mode.webhooks, mode.why
            [account] = settings.db.account_ids()
            new_message(settings.db, app.state.deliverer, account, random.Random(1), outbound=False)
            async with asyncio.timeout(15):
                event = await heard.get()
            assert event.type == "message.created"
            await live.stop()
    finally:
        service.stop()
