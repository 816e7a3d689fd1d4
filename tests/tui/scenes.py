"""The scenes of the app that the README shows: the demo data at a fixed size and a fixed time.

They drive the snapshot tests (tests/tui/test_snapshots.py), and ``scripts/screenshots.py`` renders them into
screenshots/*.svg, so what the README shows is what the tests check.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from textual.command import CommandList
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import DataTable, Input
from textual.worker import WorkerCancelled, WorkerFailed

from pigeon.api import PigeonClient
from pigeon.config import Config, UIConfig, load_config
from pigeon.store.mailstore import MailStore
from pigeon.tui.app import PigeonApp, make_app
from pigeon.tui.screens.contacts.book import ContactBook
from pigeon.tui.screens.contacts.editor import ContactEditor
from pigeon.tui.screens.dialogs import CreateInboxDialog, CreateWebhookDialog
from pigeon.tui.screens.mail import MainScreen
from pigeon.tui.screens.modals import PickScreen
from pigeon.tui.widgets.pane import Pane
from pigeon.tui.widgets.reader import Reader
from pigeon.tui.widgets.thread_list import ThreadList
from pigeon_service.app import ServerSettings, create_app
from pigeon_service.db import Database
from pigeon_service.demo_mail import demo_database

SIZE = (160, 45)
NOW = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)
SEED = 20261120
THREADS = 120
BASE = "http://demo.pigeon"
INBOX_NAMES = ("You", "Team", "Billing", "Alerts (old)")
OUT = Path(__file__).resolve().parents[2] / "screenshots"


def frozen_clock() -> datetime:
    return NOW


SERVICES: dict[int, Database] = {}
"""The demo service's database of each scene's app (by the app's id), for scenes that bring new mail."""


def scene_app(*, logged_in: bool = True) -> PigeonApp:
    """The app on a fresh, seeded demo service reached in-process; nothing is read from or written to disk."""
    db, token = demo_database(threads=THREADS, seed=SEED, now=NOW)
    service = create_app(db, ServerSettings(deliver_webhooks=False))

    def factory(base_url: str, value: str) -> PigeonClient:
        return PigeonClient(base_url, value, http_client=httpx.AsyncClient(transport=httpx.ASGITransport(app=service)))

    base = load_config(base_url=BASE)
    config = Config(base.path, base.profile, BASE, "screenshots", UIConfig(), base.settings)
    if not logged_in:  # the login screen as a person with a keyring sees it (a keyring in memory: nothing is kept)
        import keyring

        from tests.keyrings import MemoryKeyring

        keyring.set_keyring(MemoryKeyring())
    app = make_app(
        config,
        token=token if logged_in else None,
        client_factory=factory,
        remember_token=not logged_in,
        save_settings=False,
        clock=frozen_clock,
        store=MailStore(":memory:"),
    )
    SERVICES[id(app)] = db
    return app


def pigeon_app(pilot: Pilot[None]) -> PigeonApp:
    """The app a scene runs on."""
    assert isinstance(pilot.app, PigeonApp)
    return pilot.app


def editor_ready(app: PigeonApp) -> bool:
    """The contact editor is shown and has put the focus on its first field (its form is mounted)."""
    focused = app.focused
    return isinstance(app.screen, ContactEditor) and focused is not None and focused.id == "first_name"


async def settle(pilot: Pilot[None], until: Callable[[], bool] = lambda: True, within: float = 20.0) -> None:
    """Let the workers finish and the screen catch up until ``until()`` holds; ``RuntimeError`` after ``within``
    seconds (a state that timers bring, such as marking an opened thread read, is waited for too)."""
    app = pilot.app
    deadline = time.monotonic() + within
    while True:
        with contextlib.suppress(WorkerFailed, WorkerCancelled):  # failures are the app's to report
            await app.workers.wait_for_complete()
        await pilot.pause()
        if until():
            return
        if time.monotonic() > deadline:
            raise RuntimeError("the scene did not settle")
        await asyncio.sleep(0.005)  # a timer's turn


async def mail_loaded(pilot: Pilot[None]) -> None:
    """The first sync is over, the way new mail comes is known, and the whole list is drawn (not a list shown
    while the sync was going on)."""
    app = pigeon_app(pilot)
    screen = app.screen
    await settle(pilot, lambda: getattr(screen, "synced", False) and bool(getattr(screen, "live_mode", "")))
    threads = screen.query_one(ThreadList)
    await settle(pilot, lambda: len(threads.source) == THREADS and not threads.loading)
    await pilot.wait_for_scheduled_animations()
    await previewed(pilot)
    await scrollbars_styled(pilot)


async def previewed(pilot: Pilot[None]) -> None:
    """Settle until the reader shows the highlighted thread: it is previewed once the cursor has rested on it for a
    moment (a timer), so a test that began before would see the reader fill, and its scrollbar appear, under it."""
    screen = pilot.app.screen
    threads, reader = screen.query_one(ThreadList), screen.query_one(Reader)

    def shown() -> bool:
        current, thread = threads.current, reader.thread
        return current is not None and thread is not None and thread.id == current.id and not reader.rendering

    await settle(pilot, shown)


async def mail_screen(pilot: Pilot[None]) -> tuple[MainScreen, ThreadList, Reader]:
    """The mail screen once its mail is loaded and drawn (:func:`mail_loaded`), with its thread list and reader."""
    await mail_loaded(pilot)
    await settle(pilot)  # (what the last frames of loading asked for is drawn too)
    screen = pilot.app.screen
    assert isinstance(screen, MainScreen)
    return screen, screen.query_one(ThreadList), screen.query_one(Reader)


async def scrollbars_styled(pilot: Pilot[None]) -> None:
    """Settle until each pane's scrollbar has its style and has handled what that asked of it: it is styled just
    after the frame that first shows it (a layout of its own), and the reader's comes with the thread shown last.

    A scrollbar is not among the screen's children, whose queues ``Pilot.pause`` waits for: the layout its styling
    asks for could otherwise reach the screen in the middle of the next test step."""
    screen = pilot.app.screen
    panes = list(screen.query(Pane))

    def styled() -> bool:
        return all(p._styled_scrollbar is p._vertical_scrollbar for p in panes if p.show_vertical_scrollbar)

    def handled() -> bool:
        bars = [bar for p in panes for bar in (p._vertical_scrollbar, p._horizontal_scrollbar) if bar is not None]
        return not screen._layout_required and all(quiet(widget) for widget in [screen, *bars])

    await settle(pilot, styled)
    await settle(pilot, handled)


def quiet(widget: Widget) -> bool:
    """``widget`` has nothing waiting in its queue and no refresh it has not passed on to the screen."""
    return widget._message_queue.empty() and not (
        widget._layout_required or widget._repaint_required or widget._scroll_required
    )


async def open_thread(pilot: Pilot[None], pick: Callable[[PigeonApp], str]) -> None:
    app = pigeon_app(pilot)
    await mail_loaded(pilot)
    threads = app.screen.query_one(ThreadList)
    wanted = pick(app)
    threads.cursor = next(i for i in range(len(threads.source)) if threads.source.row(i).id == wanted)
    await pilot.press("enter")
    reader = app.screen.query_one(Reader)
    await settle(pilot, lambda: bool(reader.messages) and not reader.progress)
    # Opening marks the thread read just after its messages are painted: wait for that, and for the counts.
    await settle(pilot, lambda: threads.current is not None and not threads.current.unread)
    await scrollbars_styled(pilot)


def longest_conversation(app: PigeonApp) -> str:
    return max(app.core.store.list_threads("all", limit=30, now=NOW), key=lambda t: t.message_count).id


def newsletter(app: PigeonApp) -> str:
    for thread in app.core.store.list_threads("all", limit=40, now=NOW):
        if any(b.mime_type == "text/html" for m in app.core.store.messages(thread.id) for b in m.content_blocks):
            return thread.id
    raise LookupError("no newsletter among the newest threads")


async def main_view(pilot: Pilot[None]) -> None:
    await open_thread(pilot, longest_conversation)


async def light(pilot: Pilot[None]) -> None:
    """The main screen in a light theme, at the smallest size a person uses."""
    pilot.app.theme = "textual-light"
    await open_thread(pilot, longest_conversation)


async def reader_html(pilot: Pilot[None]) -> None:
    await open_thread(pilot, newsletter)


async def help_screen(pilot: Pilot[None]) -> None:
    await mail_loaded(pilot)
    await pilot.press("question_mark")
    await pilot.pause()


async def palette(pilot: Pilot[None]) -> None:
    await mail_loaded(pilot)
    await pilot.press("ctrl+p", *"inbox")

    seen = [-1]

    def searched() -> bool:  # the palette searches in the background: wait for its answer to stop growing
        screen = pilot.app.screen
        found = screen.query(CommandList)
        busy = bool(screen.query("LoadingIndicator.--visible"))
        count = found.first().option_count if found else -1
        done = not busy and count >= len(INBOX_NAMES) and count == seen[0]
        seen[0] = count
        return done

    await settle(pilot, searched)


async def login(pilot: Pilot[None]) -> None:
    await settle(pilot)
    for box in pilot.app.screen.query(Input):
        box.cursor_blink = False
    await pilot.pause()


async def contacts(pilot: Pilot[None]) -> None:
    app = pigeon_app(pilot)
    await mail_loaded(pilot)
    await pilot.press("b")
    await settle(pilot, lambda: isinstance(app.screen, ContactBook) and len(app.screen.shown) > 40)
    await settle(pilot)
    for box in app.screen.query(Input):  # a steady cursor: a blink timer's turn would decide the picture
        box.cursor_blink = False
    app.screen.query_one(DataTable).move_cursor(row=2)
    await pilot.pause()


async def editor_error(pilot: Pilot[None]) -> None:
    app = pigeon_app(pilot)
    await open_thread(pilot, longest_conversation)
    await pilot.press("c")
    await settle(pilot, lambda: isinstance(app.screen, PickScreen))  # several people wrote it: which one
    await pilot.press("enter")
    await settle(pilot, lambda: editor_ready(app))
    editor = app.screen
    editor.query(".entry-value").first(Input).value = "not-an-address"
    for box in editor.query(Input):
        box.cursor_blink = False
    await pilot.press("ctrl+s")
    await settle(pilot)


async def dialog(pilot: Pilot[None], action: str, dialog_type: type[Screen[Any]], field: str, value: str) -> None:
    """The mail, then a create dialog opened by the app's ``action`` with ``field`` filled in."""
    app = pigeon_app(pilot)
    await mail_loaded(pilot)
    await app.run_action(action)
    await settle(pilot, lambda: isinstance(app.screen, dialog_type))
    app.screen.query_one(f"#{field}", Input).value = value
    for box in app.screen.query(Input):
        box.cursor_blink = False
    await settle(pilot)


async def create_inbox(pilot: Pilot[None]) -> None:
    await dialog(pilot, "create_inbox", CreateInboxDialog, "email", "sales@pigeon.example")


async def create_webhook(pilot: Pilot[None]) -> None:
    await dialog(pilot, "create_webhook", CreateWebhookDialog, "url", "https://hooks.example.com/pigeon")


async def triaged(pilot: Pilot[None]) -> None:
    """Some threads starred, done, labelled and snoozed, three selected: the views and their counts."""
    app = pigeon_app(pilot)
    await mail_loaded(pilot)
    threads = [t.id for t in app.core.store.list_threads("all", limit=12, now=NOW)]
    app.core.store.star(threads[0:3])
    app.core.store.done(threads[3:6])
    app.core.store.label(threads[0:2] + threads[6:8], "clients")
    app.core.store.snooze(threads[8:9], NOW + timedelta(days=1))
    app.core.store.mark_read(threads[9:12])
    screen = app.screen
    assert isinstance(screen, MainScreen)
    screen.show_threads()
    await settle(pilot)
    await pilot.press("j", "x", "shift+down", "shift+down")
    threads_list, reader = screen.query_one(ThreadList), screen.query_one(Reader)

    def previewed() -> bool:  # the cursor rests on the last thread selected: the reader shows it
        current = threads_list.current
        return current is not None and reader.thread is not None and reader.thread.id == current.id

    await settle(pilot, previewed)


async def screener(pilot: Pilot[None]) -> None:
    """First-time senders in the Screener after the first sync, and why one of them is there."""
    from pigeon.tui.screens.why import WhyScreen
    from pigeon_service.demo_newcomers import NEWCOMERS, newcomer_thread

    app = pigeon_app(pilot)
    screen, threads, _ = await mail_screen(pilot)
    service = SERVICES[id(app)]
    account = service.account_ids()[0]
    for n, spec in enumerate(NEWCOMERS):
        newcomer_thread(service, None, account, spec, at=NOW - timedelta(minutes=5 * n + 2))
    await pilot.press("ctrl+r")
    await settle(pilot, lambda: screen.synced and app.core.store.view_counts(NOW)["screener"] == len(NEWCOMERS))
    await pilot.press("S")
    await settle(pilot, lambda: screen.view == "screener" and len(threads.source) == len(NEWCOMERS))
    await previewed(pilot)
    # The new mail's note, given a moment after the sync, then taken away: on a busy machine it came before the
    # picture, on a quiet one after it (held while the dialog is open).
    await settle(pilot, lambda: "New\xa0mail" in html.unescape(app.export_screenshot()))
    app.clear_notifications()
    await pilot.press("W")
    await settle(pilot, lambda: isinstance(app.screen, WhyScreen))


@dataclass(frozen=True)
class Scene:
    run_before: Callable[[Pilot[None]], Awaitable[None]]
    logged_in: bool = True
    size: tuple[int, int] = SIZE


SCENES: dict[str, Scene] = {
    "main": Scene(main_view),
    "light": Scene(light, size=(80, 24)),
    "reader-html": Scene(reader_html),
    "help": Scene(help_screen),
    "palette": Scene(palette),
    "login": Scene(login, logged_in=False),
    "narrow": Scene(main_view, size=(110, 40)),
    "triage": Scene(triaged),
    "screener": Scene(screener),
    "contacts": Scene(contacts),
    "contact-editor": Scene(editor_error),
    "create-inbox": Scene(create_inbox),
    "create-webhook": Scene(create_webhook),
}


async def render(name: str, scene: Scene, folder: Path = OUT) -> Path:
    """The scene as ``folder/<name>.svg``."""
    app = scene_app(logged_in=scene.logged_in)
    async with app.run_test(size=scene.size, notifications=True) as pilot:  # (as the snapshot tests run it)
        await scene.run_before(pilot)
        folder.mkdir(exist_ok=True)
        path = folder / f"{name}.svg"
        app.save_screenshot(filename=path.name, path=str(folder))
    return path
