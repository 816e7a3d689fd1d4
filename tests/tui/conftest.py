"""The app against the reference service in-process, with a frozen clock."""

from __future__ import annotations

import asyncio
import html
import re
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any, TypeVar
from unittest.mock import patch

import httpx
import pytest
from textual.app import App
from textual.notifications import Notification, Notify
from textual.pilot import Pilot
from textual.screen import Screen

from pigeon.api import PigeonClient
from pigeon.config import Config, load_config
from pigeon.store.mailstore import StoredThread
from pigeon.tui.app import PigeonApp, make_app
from pigeon.tui.widgets.thread_list import ThreadList
from tests.server.conftest import NOW, Service, make_service
from tests.test_store import LONG_READ
from tests.tui.scenes import settle as settle_scene

SIZE = (160, 45)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "fast_path: asserts the fast path's own frames (left out of CI's stock-path run, PIGEON_STOCK_FRAMES=1)",
    )


BASE = "http://service.test"


def frozen_clock() -> datetime:
    return NOW


def asgi_factory(service: Service) -> Callable[[str, str], PigeonClient]:
    def factory(base_url: str, token: str) -> PigeonClient:
        http = httpx.AsyncClient(transport=httpx.ASGITransport(app=service.app))
        return PigeonClient(base_url, token, http_client=http, max_retries=0)

    return factory


def pigeon_for(service: Service, *, token: str | None = None, config: Config | None = None, **kwargs: Any) -> PigeonApp:
    """The app on ``service``: logged in as alice unless ``token=""`` (then it opens on login)."""
    config = config or load_config(base_url=BASE)
    token = service.alice.token if token is None else token
    return make_app(config, token=token or None, client_factory=asgi_factory(service), clock=frozen_clock, **kwargs)


@pytest.fixture
def service() -> Iterator[Service]:
    made = make_service()
    yield made
    made.db.close()


async def settle(
    pilot: Pilot[None], app: PigeonApp, until: Callable[[], bool] | None = None, within: float = 20.0
) -> None:
    """Let workers finish and the screen catch up; with ``until``, keep going until it holds (the screenshot
    scenes' own helper, so tests and screenshots wait the same way)."""
    assert pilot.app is app
    try:
        await settle_scene(pilot, until or (lambda: True), within=within)
    except RuntimeError as exc:
        raise AssertionError("the app did not reach the expected state") from exc


@contextmanager
def searches_held(app: PigeonApp) -> Iterator[None]:
    """Word searches (read in workers) wait until the block ends: what a letter does before its results come."""
    release, count = threading.Event(), app.core.store.count

    def held(*args: Any, **kwargs: Any) -> int:
        if threading.current_thread() is not threading.main_thread():
            release.wait(10)
        return count(*args, **kwargs)

    with patch.object(app.core.store, "count", held):
        try:
            yield
        finally:
            release.set()


S = TypeVar("S", bound=Screen[Any])


def on_screen(app: App[Any], kind: type[S]) -> S:
    """The screen the app shows, which must be a ``kind``."""
    screen = app.screen
    assert isinstance(screen, kind), f"{type(screen).__name__} is shown, not {kind.__name__}"
    return screen


def current_id(threads: ThreadList) -> str:
    """The id of the thread the list's cursor is on (there must be one)."""
    assert threads.current is not None, "the cursor is on no thread"
    return threads.current.id


def palette_hits(app: PigeonApp) -> list[str]:
    """The names of what the open command palette lists (plain text, without their help), the highlighted first."""
    from textual.command import CommandList

    found = app.screen.query(CommandList)
    if not found:
        return []
    hits = found.first()
    order = list(range(hits.option_count))
    if hits.highlighted is not None:
        order.insert(0, order.pop(hits.highlighted))
    prompts = (hits.get_option_at_index(i).prompt for i in order)
    return [str(getattr(p, "plain", p)).split("\n", 1)[0] for p in prompts]


def stored_threads(app: PigeonApp) -> list[StoredThread]:
    """Every thread the app's store holds, newest first."""
    return app.core.store.list_threads("all", limit=10_000, now=NOW)


class FirstReadHeld:
    """A read of the store wrapped: its first call in a worker's thread first reads for many seconds (as in a huge
    mailbox); ``said`` records it, then how that read ended ("SQLITE_INTERRUPT": stopped, or "read to its end")."""

    def __init__(self, store: Any, inner: Callable[..., Any]) -> None:
        self.store, self.inner = store, inner
        self.loop, self.reading = asyncio.get_running_loop(), asyncio.Event()
        self.said: list[str] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not self.said and threading.current_thread() is not threading.main_thread():
            self.said.append("reading")
            self.loop.call_soon_threadsafe(self.reading.set)
            try:
                self.store.rows(LONG_READ)
            except sqlite3.OperationalError as exc:
                self.said.append(exc.sqlite_errorname)
                raise
            self.said.append("read to its end")
        return self.inner(*args, **kwargs)


async def loaded(pilot: Pilot[None], app: PigeonApp) -> ThreadList:
    threads = app.screen.query_one(ThreadList)
    await settle(pilot, app, lambda: len(threads.source) > 0)
    return threads


_TEXT = re.compile(r'<text[^>]*\by="([0-9.]+)"[^>]*>(.*?)</text>', re.DOTALL)


class Notes(list[Notification]):
    """The notifications an app showed, caught through ``run_test(message_hook=...)``."""

    def __call__(self, message: object) -> None:
        if isinstance(message, Notify):
            self.append(message.notification)

    @property
    def text(self) -> str:
        return "\n".join(f"{n.title}: {n.message}" for n in self)


def screen_text(app: App[Any]) -> str:
    """Everything on screen as plain text, one line per row, read from Textual's own screenshot export."""
    rows: dict[float, list[str]] = {}
    for y, chunk in _TEXT.findall(app.export_screenshot()):
        rows.setdefault(float(y), []).append(html.unescape(re.sub(r"<[^>]+>", "", chunk)))
    return "\n".join("".join(parts).replace("\xa0", " ") for _, parts in sorted(rows.items()))
