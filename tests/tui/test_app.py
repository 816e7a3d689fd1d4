"""The app driven with Pilot against the reference service in-process."""

from __future__ import annotations

import asyncio
import gc
import re
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from textual.command import CommandPalette
from textual.content import Content
from textual.widgets import Input

from pigeon.api import PigeonClient
from pigeon.config import load_config
from pigeon.models import Message, Thread
from pigeon.tui.app import make_app
from pigeon.tui.screens.login import LoginScreen
from pigeon.tui.screens.mail import MainScreen
from pigeon.tui.screens.modals import HelpScreen
from pigeon.tui.widgets.inbox_list import InboxList
from pigeon.tui.widgets.reader import Reader
from pigeon.tui.widgets.thread_list import ThreadList
from tests.keyrings import MemoryKeyring
from tests.server.conftest import Service, first_thread
from tests.tui.conftest import (
    BASE,
    SIZE,
    Notes,
    asgi_factory,
    current_id,
    frozen_clock,
    loaded,
    on_screen,
    palette_hits,
    pigeon_for,
    screen_text,
    searches_held,
    settle,
    stored_threads,
)


async def test_open_an_inbox_then_a_thread_then_read_it(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await loaded(pilot, app)
        assert len(threads.source) == 25
        screen: MainScreen = app.screen  # type: ignore[assignment]
        # The rows show while the first sync is still under way; the sidebar lists the inboxes when it is over.
        await settle(pilot, app, lambda: screen.synced)
        await settle(pilot, app)
        inboxes = app.screen.query_one(InboxList)

        def listed() -> list[str | None]:
            return [inboxes.get_option_at_index(i).id for i in range(inboxes.option_count)]

        # (the inboxes come in a request of their own, which may end after the threads are listed)
        await settle(pilot, app, lambda: len([i for i in listed() if i and i.startswith("inbox:")]) >= 4)
        ids = listed()
        views = ["inbox", "people", "newsletters", "notifications", "receipts", "owed", "waiting", "screener"]
        views += ["unread", "starred", "snoozed", "done", "kept-out", "all"]
        assert ids[: len(views)] == [f"view:{view}" for view in views]
        assert len([i for i in ids if i and i.startswith("inbox:")]) == 4
        team = next(i for i in app.core.inboxes if i.display_name == "Team")
        screen = on_screen(app, MainScreen)
        screen.select_inbox(team.id or "")  # what the palette's "Go to inbox" runs
        await settle(pilot, app)
        assert 0 < len(threads.source) < 25
        in_team = {
            t.id
            for t in service.db.list_threads(service.alice.id, page_size=100, page_token=None)[0]
            if t.inbox_id == team.id
        }
        assert all(threads.source.row(i).id in in_team for i in range(len(threads.source)))
        await pilot.press("j", "enter")
        reader = app.screen.query_one(Reader)
        await settle(pilot, app, lambda: bool(reader.messages) and not reader.progress)
        opened = reader.thread
        assert opened is not None
        assert opened.id == current_id(threads)
        assert len(reader.messages) == opened.message_count
        assert app.focused is reader
        first = reader.messages[0]
        assert first.sender is not None
        contact = first.sender.contact
        sender = contact.name if contact and contact.name else first.sender.raw_address
        assert sender
        assert sender in reader.text
        # opening marks read just after the messages are painted
        await settle(pilot, app, lambda: threads.current is not None and not threads.current.unread)
        await pilot.press("escape")
        assert threads.has_focus


async def test_a_thread_of_250_messages_shows_them_all(service: Service) -> None:
    threads_now, _ = service.db.list_threads(service.alice.id, page_size=500, page_token=None)
    big = threads_now[0]
    for n in range((big.message_count or 0), 250):
        service.add_message(service.alice, big.id or "", subject=f"message {n}")
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await loaded(pilot, app)
        index = next(i for i in range(len(threads.source)) if threads.source.row(i).id == big.id)
        threads.cursor = index
        await pilot.press("enter")
        reader = app.screen.query_one(Reader)
        await settle(pilot, app, lambda: len(reader.messages) == 250 and not reader.progress)
        assert len({m.id for m in reader.messages}) == 250
        assert "250 of 250" in reader.text


async def test_filter_narrows_as_you_type_keeps_on_enter_clears_on_escape(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await loaded(pilot, app)
        word = threads.source.row(0).subject.split()[0]
        with searches_held(app):
            await pilot.press("slash", *word)
            assert "Searching" in on_screen(app, MainScreen).status  # a word search reads in a worker
        await settle(pilot, app, lambda: len(threads.source) < 25)
        narrowed = len(threads.source)
        assert 0 < narrowed < 25
        assert all(word.lower() in threads.source.row(i).subject.lower() for i in range(narrowed))
        await pilot.press("enter")
        assert app.focused is threads
        assert len(threads.source) == narrowed
        await pilot.press("escape")
        await settle(pilot, app)
        assert len(threads.source) == 25


async def test_a_word_search_reads_off_the_event_loop_and_a_newer_list_wins(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await loaded(pilot, app)
        await settle(pilot, app, lambda: on_screen(app, MainScreen).synced)
        word = threads.source.row(0).subject.split()[0]
        counted_on: list[threading.Thread] = []
        count = app.core.store.count
        loop, reading, release = asyncio.get_running_loop(), asyncio.Event(), threading.Event()

        def recording_count(*args: Any, **kwargs: Any) -> int:
            counted_on.append(threading.current_thread())
            if len(counted_on) == 1:  # the search still reads when it is cleared
                loop.call_soon_threadsafe(reading.set)
                release.wait(10)
            return count(*args, **kwargs)

        monkeypatch.setattr(app.core.store, "count", recording_count)
        await pilot.press("slash")
        app.screen.query_one("#filter", Input).value = word  # (one search, for the whole word)
        await asyncio.wait_for(reading.wait(), 15)
        await pilot.press("escape")  # the whole list, shown while that search reads
        release.set()
        await settle(pilot, app)
        assert len(threads.source) == 25
        assert on_screen(app, MainScreen).status == "25 threads · checking every 60 s"
        counted_on.clear()
        threads.focus()
        await pilot.press("j", "j", "j")
        await pilot.press("slash", *word)
        await settle(pilot, app, lambda: len(threads.source) < 25)
        assert counted_on
        assert threading.main_thread() not in counted_on
        assert threads.cursor == 0  # new results start at the first
        await pilot.press("enter", "j")  # to the results, one down
        assert app.focused is threads
        assert threads.cursor == 1
        chosen = current_id(threads)
        await pilot.press("escape")  # the search is cleared: the whole list, still on the chosen thread
        await settle(pilot, app, lambda: len(threads.source) == 25)
        assert current_id(threads) == chosen


async def test_keys_typed_right_after_slash_go_into_the_search(service: Service) -> None:
    from textual import events

    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        screen = on_screen(app, MainScreen)
        await settle(pilot, app, lambda: screen.synced)
        for key, character in [("slash", "/"), ("b", "b"), ("u", "u")]:  # in one burst (a paste, a slow link)
            app.post_message(events.Key(key, character))
        await settle(pilot, app)
        assert app.screen is screen  # b went into the search, it did not open the contacts
        assert screen.query_one("#filter", Input).value == "bu"
        await pilot.press("slash", "x")  # a / in the search is a character of it
        assert screen.query_one("#filter", Input).value == "bu/x"


async def test_keys_move_the_cursor_and_the_mouse_selects(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await loaded(pilot, app)
        await pilot.press("j", "j", "j")
        assert threads.cursor == 3
        await pilot.press("k")
        assert threads.cursor == 2
        await pilot.press("G")
        assert threads.cursor == 24
        await pilot.press("g", "g")
        assert threads.cursor == 0
        await pilot.click(ThreadList, offset=(10, 6))  # the sixth row: the list's border is its first line
        assert threads.cursor == 5
        await pilot.click(ThreadList, offset=(10, 7), times=2)
        reader = app.screen.query_one(Reader)
        await settle(pilot, app, lambda: reader.thread is not None)
        assert reader.thread is not None
        assert reader.thread.id == threads.source.row(6).id


async def test_help_lists_the_keys_of_the_focused_context(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        ids = {binding_id for _, _, binding_id in app.screen.rows}
        assert {"list.down", "list.open", "main.filter", "app.quit"} <= ids
        assert "reader.quotes" not in ids
        assert app.screen.context == "thread list"
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)
        await pilot.press("enter")
        await settle(pilot, app)
        await pilot.press("question_mark")
        assert {"reader.quotes", "reader.save"} <= {binding_id for _, _, binding_id in on_screen(app, HelpScreen).rows}


async def test_the_palette_offers_actions_and_jumps_to_an_inbox(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await pilot.press("ctrl+p")
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"inbox Billing")
        await settle(pilot, app, lambda: palette_hits(app)[:1] == ["Go to inbox Billing"])
        await pilot.press("enter")
        await settle(pilot, app)
        billing = next(i for i in app.core.inboxes if i.display_name == "Billing")
        assert isinstance(app.screen, MainScreen)
        assert app.screen.inbox_id == billing.id


async def test_the_palette_finds_an_action_by_its_command_word(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await pilot.press("ctrl+p")
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"sync")  # `pigeon sync` is the CLI's word for what the palette calls Refresh
        await settle(pilot, app, lambda: palette_hits(app)[:1] == ["Refresh"])
        thread_id = first_thread(service, service.alice)

        def messages() -> int:
            return next(t.message_count for t in stored_threads(app) if t.id == thread_id)

        before = messages()
        service.add_message(service.alice, thread_id, subject="Re: after the palette")
        await pilot.press("enter")  # the refresh runs: the new message is fetched
        await settle(pilot, app, lambda: messages() == before + 1)
        assert isinstance(app.screen, MainScreen)


async def test_a_keymap_in_the_config_remaps_keys(service: Service, isolated_environment: Path) -> None:
    path = isolated_environment / "config" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text('[ui.keymap]\n"list.down" = "n"\n"main.refresh" = "ctrl+r"\n')
    app = pigeon_for(service, config=load_config(base_url=BASE))
    async with app.run_test(size=SIZE) as pilot:
        threads = await loaded(pilot, app)
        await pilot.press("n", "n")
        assert threads.cursor == 2
        await pilot.press("j")
        assert threads.cursor == 2  # j no longer moves: the binding was remapped


async def test_login_checks_the_token_and_keeps_it_in_the_keyring(
    service: Service, memory_keyring: MemoryKeyring, isolated_environment: Path
) -> None:
    app = pigeon_for(service, token="")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert isinstance(app.screen, LoginScreen)
        await pilot.click("#token")
        await pilot.press(*"wrong-token", "enter")
        await settle(pilot, app, lambda: "refused" in screen_text(app))
        assert isinstance(app.screen, LoginScreen)
        assert memory_keyring.secrets == {}
        app.screen.query_one("#token", Input).value = service.alice.token
        await pilot.press("enter")
        await settle(pilot, app, lambda: isinstance(app.screen, MainScreen))
        await loaded(pilot, app)
    assert memory_keyring.secrets == {("pigeon", "default"): service.alice.token}
    config_text = (isolated_environment / "config" / "config.toml").read_text()
    assert BASE in config_text
    assert service.alice.token not in config_text


async def test_q_typed_past_the_login_fields_does_not_quit(service: Service) -> None:
    app = pigeon_for(service, token="")
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        await settle(pilot, app)
        assert isinstance(app.screen, LoginScreen)
        await pilot.press(*"half-a-tok", "tab")  # on to the Log in button, and typing on
        await pilot.press("q")
        await settle(pilot, app, lambda: "Escape quits" in notes.text)
        assert isinstance(app.screen, LoginScreen)
        assert app.screen.query_one("#token", Input).value == "half-a-tok"
        await pilot.press("escape")
        await settle(pilot, app, lambda: not app.is_running)


async def test_a_rejected_token_sends_the_user_to_login(service: Service) -> None:
    app = pigeon_for(service, token="pgn_expired")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, lambda: isinstance(app.screen, LoginScreen))
        assert "refused the token" in screen_text(app)


async def test_a_500_is_a_notification_and_the_app_keeps_working(service: Service) -> None:
    failing = {"on": True}

    async def flaky(request: httpx.Request) -> httpx.Response:
        if failing["on"] and request.url.path == "/v1/threads":
            return httpx.Response(500, json={"title": "Internal Server Error", "status": 500, "detail": "db on fire"})
        transport = httpx.ASGITransport(app=service.app)
        return await transport.handle_async_request(request)

    client = PigeonClient(
        BASE, service.alice.token, http_client=httpx.AsyncClient(transport=httpx.MockTransport(flaky)), max_retries=0
    )
    app = make_app(load_config(base_url=BASE), client=client, clock=frozen_clock)
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        await settle(pilot, app, lambda: bool(notes))
        assert "500" in notes.text
        assert "db on fire" in notes.text
        assert "Could not check for mail" in screen_text(app)
        assert isinstance(app.screen, MainScreen)
        failing["on"] = False
        await pilot.press("ctrl+r")
        threads = await loaded(pilot, app)
        assert len(threads.source) == 25


async def test_a_sync_that_fails_part_way_shows_the_threads_it_saved(service: Service) -> None:
    served = {"messages": 0}

    async def failing_later(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/messages":
            served["messages"] += 1
            if served["messages"] > 6:
                return httpx.Response(500, json={"title": "Internal Server Error", "status": 500})
        return await httpx.ASGITransport(app=service.app).handle_async_request(request)

    client = PigeonClient(
        BASE,
        service.alice.token,
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(failing_later)),
        max_retries=0,
    )
    app = make_app(load_config(base_url=BASE), client=client, clock=frozen_clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = on_screen(app, MainScreen)
        await settle(pilot, app, lambda: "Could not check for mail" in screen.status)
        threads = screen.query_one(ThreadList)
        assert served["messages"] > 6  # it failed part way
        assert len(threads.source) == 25  # what was saved before the failure (the service's thread list) is listed
        assert "Could not check for mail" in screen.status


async def test_a_dead_server_shows_an_offline_notice_and_keeps_loaded_mail(service: Service) -> None:
    app = pigeon_for(service)
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        threads = await loaded(pilot, app)
        await pilot.press("enter")
        reader = app.screen.query_one(Reader)
        await settle(pilot, app, lambda: app.focused is reader and bool(reader.messages))
        dead = PigeonClient("http://127.0.0.1:9", service.alice.token, max_retries=0, timeout=2)
        app.core._client = dead
        await pilot.press("escape", "ctrl+r")
        await settle(pilot, app, lambda: on_screen(app, MainScreen).offline)
        assert "Offline: cannot reach http://127.0.0.1:9" in screen_text(app)
        assert "ctrl+r to retry" in notes.text
        assert len(threads.source) == 25  # what was loaded stays
        await pilot.press("j", "enter")
        await settle(pilot, app)
        assert isinstance(app.screen, MainScreen)  # still answering keys, no traceback
        await dead.aclose()


async def test_theme_choice_is_remembered_in_the_config(service: Service, isolated_environment: Path) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        app.theme = "nord"
        await settle(pilot, app)
    assert load_config().ui.theme == "nord"
    again = pigeon_for(service, config=load_config(base_url=BASE))
    assert again.theme == "nord"


async def test_narrow_terminals_stack_the_list_above_the_reader_and_zoom_works(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=(100, 40)) as pilot:
        await loaded(pilot, app)
        assert app.screen.has_class("narrow")
        threads, reader = app.screen.query_one("#list-pane"), app.screen.query_one(Reader)
        assert threads.region.y < reader.region.y
        assert threads.region.x == reader.region.x
        await pilot.press("Z")
        await settle(pilot, app)
        assert app.screen.has_class("zoomed")
        assert reader.region.width >= 95
        assert app.focused is reader
        await pilot.press("escape")
        assert not app.screen.has_class("zoomed")


@pytest.mark.parametrize("width", [160, 119])
async def test_resizing_keeps_every_pane_visible(service: Service, width: int) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=(width, 40)) as pilot:
        await loaded(pilot, app)
        for selector in ("#inboxes", "#list-pane", "#reader"):
            region = app.screen.query_one(selector).region
            assert region.width > 10
            assert region.height > 5


async def test_without_a_keyring_login_works_for_the_session_and_says_so(service: Service) -> None:
    import keyring
    from keyring.backends import fail

    from pigeon.credentials import NO_BACKEND_HELP

    keyring.set_keyring(fail.Keyring())
    app = pigeon_for(service, token="", login_message=NO_BACKEND_HELP)
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        await settle(pilot, app)
        assert "No usable OS keyring" in screen_text(app)
        app.screen.query_one("#token", Input).value = service.alice.token
        await pilot.press("enter")
        await settle(pilot, app, lambda: isinstance(app.screen, MainScreen))
        await loaded(pilot, app)
        assert "this session only" in notes.text


async def test_a_keyring_that_writes_a_plain_file_keeps_the_login_for_the_session_only(
    service: Service, plain_file_keyring: MemoryKeyring
) -> None:
    app = pigeon_for(service, token="")
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        await settle(pilot, app, lambda: isinstance(app.screen, LoginScreen))
        app.screen.query_one("#token", Input).value = service.alice.token
        await pilot.press("enter")
        await settle(pilot, app, lambda: isinstance(app.screen, MainScreen))
        await loaded(pilot, app)
        assert "this session only" in notes.text
        assert "keyring_pass.cfg" in notes.text
    assert plain_file_keyring.secrets == {}


async def test_the_client_is_made_once_and_off_the_event_loop(service: Service) -> None:
    """Making the client loads httpx, TLS and anyio (about 0.3 s): a thread does it while the screen paints."""
    made_in: list[threading.Thread] = []
    factory = asgi_factory(service)

    def recording_factory(base_url: str, token: str) -> PigeonClient:
        made_in.append(threading.current_thread())
        return factory(base_url, token)

    app = make_app(
        load_config(base_url=BASE), token=service.alice.token, client_factory=recording_factory, clock=frozen_clock
    )
    async with app.run_test(size=SIZE) as pilot:
        threads = await loaded(pilot, app)
        assert len(threads.source) == 25  # the sync used the client
        first = await app.core.connect()
        assert await app.core.connect() is first
        assert len(made_in) == 1
        assert made_in[0] is not threading.main_thread()


async def test_the_collector_is_back_on_after_the_first_frame_with_start_up_frozen(service: Service) -> None:
    """``pigeon`` turns the cyclic collector off for start-up; the app turns it back on once the first frame is
    on screen, with start-up's objects in the permanent generation and full collections left to the app."""
    from pigeon.tui.memory import NO_AUTOMATIC_FULL_COLLECTION

    thresholds = gc.get_threshold()
    gc.disable()
    try:
        app = pigeon_for(service)
        async with app.run_test(size=SIZE) as pilot:
            await loaded(pilot, app)
            assert gc.isenabled()
            assert gc.get_freeze_count() > 0
            assert gc.get_threshold()[2] == NO_AUTOMATIC_FULL_COLLECTION
    finally:
        gc.enable()
        gc.unfreeze()
        gc.set_threshold(*thresholds)


async def test_an_app_made_with_the_collector_on_leaves_it_alone(service: Service) -> None:
    thresholds, frozen = gc.get_threshold(), gc.get_freeze_count()
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        assert not app.manages_collector
        assert (gc.get_threshold(), gc.get_freeze_count()) == (thresholds, frozen)


async def test_a_stored_thread_opens_in_one_step_without_a_loading_stage(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        reader = app.screen.query_one(Reader)
        shown: list[tuple[int, str]] = []
        show = reader.show

        def recording_show(
            thread: Thread, messages: list[Message], *more: Any, progress: str = "", **named: Any
        ) -> None:
            shown.append((len(messages), progress))
            show(thread, messages, *more, progress=progress, **named)

        monkeypatch.setattr(reader, "show", recording_show)
        text_width = reader.query_one("#reader-content").size.width
        threads = app.screen.query_one(ThreadList)
        longest = max(range(len(threads.source)), key=lambda i: threads.source.row(i).count)
        threads.cursor = longest  # long enough to scroll: its scrollbar must not narrow the text after the fact
        await pilot.press("enter")
        await settle(pilot, app, lambda: app.focused is reader and bool(reader.messages))
        await pilot.pause()
        assert len(shown) == 1
        assert shown[0][0] > 0
        assert shown[0][1] == ""
        assert reader.max_scroll_y > 0
        assert reader.query_one("#reader-content").size.width == text_width  # no second layout, narrower


async def test_the_palette_jump_opens_the_thread(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await loaded(pilot, app)
        wanted = threads.source.row(3)
        screen = on_screen(app, MainScreen)
        screen.open_thread(wanted.id)  # what the palette's "Open <subject>" runs
        reader = app.screen.query_one(Reader)
        await settle(pilot, app, lambda: reader.thread is not None and bool(reader.messages))
        assert reader.thread is not None
        assert reader.thread.id == wanted.id


async def test_the_lists_status_is_in_its_border_and_a_fast_sync_does_not_redraw_it_per_thread(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    import types

    from pigeon.tui.screens.mail import live

    monkeypatch.setattr(live, "time", types.SimpleNamespace(monotonic=lambda: 100.0))  # every report in one instant
    shown: list[str] = []
    set_status = MainScreen.set_status

    def recording(self: MainScreen, status: Content) -> None:
        shown.append(status.plain)
        set_status(self, status)

    monkeypatch.setattr(MainScreen, "set_status", recording)
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await loaded(pilot, app)
        screen = on_screen(app, MainScreen)
        await settle(pilot, app, lambda: screen.synced)
        total = app.core.stored_threads()
        assert total > 2
        said = [s for n, s in enumerate(shown) if n == 0 or shown[n - 1] != s]  # (drawn only on a change)
        syncing = [s for s in said if s.startswith("Syncing")]
        assert syncing == [f"Syncing 0 of {total}…", f"Syncing {total} of {total}…"]  # 0: the rows, at once
        await settle(pilot, app, lambda: bool(screen.live_mode))
        assert screen.status == f"{len(threads.source)} threads · checking every 60 s"
        assert f"{len(threads.source)} threads" in screen_text(app)  # drawn in the list's bottom border
        screen.set_status(Content.styled("Could not check", "dim"))
        screen.set_status(Content.styled("Could not check", "$warning"))  # the same words in another style
        assert "$warning" in (threads.border_subtitle or "")


async def test_help_lists_every_key_of_an_action_j_and_k_too(service: Service) -> None:
    from pigeon.tui.screens.modals import HelpScreen

    app = pigeon_for(service)
    async with app.run_test(size=(120, 60)) as pilot:
        await loaded(pilot, app)
        await pilot.press("question_mark")
        await settle(pilot, app, lambda: isinstance(app.screen, HelpScreen))
        lines = screen_text(app).splitlines()
        for keys, what in (("j", "Down"), ("k", "Up"), ("G", "Bottom")):
            row = next((line for line in lines if what in line and "list." in line), "")
            assert re.search(rf"\b{keys}\b", row.split(what)[0]), (keys, row)


async def test_the_lists_title_names_the_view_it_shows(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=(80, 24)) as pilot:  # the sidebar folded away: the title is what says it
        threads = await loaded(pilot, app)
        assert "Threads · Inbox" in screen_text(app)
        await pilot.press("5")
        await settle(pilot, app, lambda: threads.title.plain == "Threads · Done")
        assert "Threads · Done" in screen_text(app)


async def test_the_palette_offers_quit_once_and_pigeons_help_not_textuals_keys(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert "Theme" in titles  # Textual's other entries stay
        assert not {"Quit", "Keys"} & set(titles)  # Pigeon's Quit and Help stand for them
        await pilot.press("ctrl+p")
        await pilot.press(*"quit")
        await settle(pilot, app, lambda: "Quit" in palette_hits(app))
        assert palette_hits(app).count("Quit") == 1  # Pigeon's (which asks first with an unsaved edit)


async def test_the_lists_help_says_what_a_rows_marks_mean_and_the_readers_does_not(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await pilot.press("question_mark")
        await settle(pilot, app, lambda: isinstance(app.screen, HelpScreen))
        legend = " ".join(screen_text(app).split())
        assert "● unread ★ starred + files (3) its messages ▌ selected" in legend
        await pilot.press("escape", "enter")
        reader = on_screen(app, MainScreen).query_one(Reader)
        await settle(pilot, app, lambda: app.focused is reader)
        await pilot.press("question_mark")
        await settle(pilot, app, lambda: isinstance(app.screen, HelpScreen))
        assert "● unread" not in screen_text(app)
