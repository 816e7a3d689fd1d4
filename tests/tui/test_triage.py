"""Triage in the app: keys, toasts, undo, views with counts, search, and state that outlives the app."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pytest
from textual.pilot import Pilot

from pigeon.api import PigeonClient
from pigeon.config import load_config
from pigeon.store.mailstore import Change, MailStore, store_path
from pigeon.tui.app import PigeonApp, make_app
from pigeon.tui.screens.mail import MainScreen
from pigeon.tui.screens.modals import InputScreen
from pigeon.tui.screens.pickers import SnoozePicker
from pigeon.tui.widgets.inbox_list import InboxList
from pigeon.tui.widgets.reader import Reader
from pigeon.tui.widgets.thread_list import ThreadList
from tests.server.conftest import Service
from tests.tui.conftest import (
    BASE,
    SIZE,
    Notes,
    current_id,
    frozen_clock,
    on_screen,
    palette_hits,
    pigeon_for,
    screen_text,
    settle,
)
from tests.tui.test_key_path import until  # (waits for a state, not for the workers: one waits for the index)


async def synced(pilot: Pilot[None], app: PigeonApp) -> ThreadList:
    screen = app.screen
    await settle(pilot, app, lambda: getattr(screen, "synced", False))
    return screen.query_one(ThreadList)


def sidebar(app: PigeonApp) -> dict[str, str]:
    pane = app.screen.query_one(InboxList)
    return {
        pane.get_option_at_index(i).id or "": str(pane.get_option_at_index(i).prompt) for i in range(pane.option_count)
    }


async def test_done_star_read_with_toasts_and_undo(service: Service) -> None:
    app = pigeon_for(service)
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        threads = await synced(pilot, app)
        assert len(threads.source) == 25
        first = current_id(threads)
        await pilot.press("e")
        await settle(pilot, app, lambda: len(threads.source) == 24)
        assert "Done: 1 thread — u to undo" in notes.text
        assert first not in [threads.source.row(i).id for i in range(24)]
        assert sidebar(app)["view:done"].endswith("1")
        await pilot.press("u")
        await settle(pilot, app, lambda: len(threads.source) == 25)
        assert "Undone: Done: 1 thread" in notes.text
        await pilot.press("s")
        await settle(pilot, app, lambda: threads.current is not None and threads.current.starred)
        await pilot.press("m")
        await settle(pilot, app, lambda: threads.current is not None and not threads.current.unread)
        await pilot.press("U")
        await settle(pilot, app, lambda: threads.current is not None and threads.current.unread)


async def test_undo_puts_the_cursor_back_on_the_thread_it_brought_back(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await synced(pilot, app)
        await pilot.press("j")
        await settle(pilot, app, lambda: threads.cursor == 1)
        done = current_id(threads)
        await pilot.press("e")
        await settle(pilot, app, lambda: len(threads.source) == 24)
        await pilot.press("j", "j")  # on to other threads before taking it back
        await settle(pilot, app, lambda: threads.cursor == 3)
        await pilot.press("u")
        await settle(pilot, app, lambda: len(threads.source) == 25)
        assert current_id(threads) == done


async def test_bulk_selection_then_one_action_and_one_undo(service: Service) -> None:
    app = pigeon_for(service)
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        threads = await synced(pilot, app)
        await pilot.press("x", "shift+down", "shift+down")
        screen = on_screen(app, MainScreen)
        assert len(screen.selected) == 3
        assert "3 selected" in screen_text(app)
        await pilot.press("e")
        await settle(pilot, app, lambda: len(threads.source) == 22)
        assert "Done: 3 threads — u to undo" in notes.text
        assert not screen.selected
        assert screen.status == "22 threads · checking every 60 s"  # the selection's count went with it
        assert "selected" not in screen_text(app)
        await pilot.press("u")
        await settle(pilot, app, lambda: len(threads.source) == 25)


async def test_an_action_that_keeps_threads_in_view_keeps_the_selection(service: Service) -> None:
    app = pigeon_for(service)
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        threads = await synced(pilot, app)
        await pilot.press("x", "shift+down", "shift+down")
        screen = on_screen(app, MainScreen)
        chosen = set(screen.selected)
        assert len(chosen) == 3
        await pilot.press("s")  # starring keeps them in the inbox: still selected
        await settle(pilot, app, lambda: "Starred: 3 threads" in notes.text)
        assert screen.selected == chosen
        assert "3 selected" in screen.status
        await pilot.press("e")  # the next action acts on all three, and takes them out: the selection goes
        await settle(pilot, app, lambda: len(threads.source) == 22)
        assert "Done: 3 threads" in notes.text
        assert not screen.selected


async def test_snooze_and_label_from_their_pickers(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await synced(pilot, app)
        target = current_id(threads)
        await pilot.press("z")
        await settle(pilot, app, lambda: isinstance(app.screen, SnoozePicker))
        await pilot.press("down", "enter")  # tomorrow morning
        await settle(pilot, app, lambda: len(threads.source) == 24)
        await pilot.press("4")
        await settle(pilot, app, lambda: len(threads.source) == 1)
        assert current_id(threads) == target
        await pilot.press("1", "l")
        await settle(pilot, app, lambda: isinstance(app.screen, InputScreen))
        await pilot.press(*"clients", "enter")
        await settle(pilot, app, lambda: "view:label:clients" in sidebar(app))
        current = threads.current
        assert current is not None
        assert "clients" in current.labels


async def test_views_switch_by_key_and_count_in_the_sidebar(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await synced(pilot, app)
        await pilot.press("s", "j", "s")
        await pilot.press("3")
        await settle(pilot, app, lambda: len(threads.source) == 2)
        assert sidebar(app)["view:starred"].endswith("2")
        await pilot.press("6")
        await settle(pilot, app, lambda: len(threads.source) == 25)
        await pilot.press("2")
        await settle(pilot, app, lambda: len(threads.source) == 25)  # nothing opened yet: all unread


async def test_the_views_are_counted_one_at_a_time_and_the_last_change_is_counted(service: Service) -> None:
    """A count under way cannot be stopped: changes made meanwhile make one more count after it, not one each in
    threads of their own (piled up, they held back the reads the user waits for)."""
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await synced(pilot, app)
        view_counts, release, lock = app.core.view_counts, threading.Event(), threading.Lock()
        loop, began = asyncio.get_running_loop(), asyncio.Event()
        counts = {"started": 0, "running": 0, "most": 0}

        def held() -> tuple[dict[str, int], dict[str, int]]:
            with lock:
                counts["started"] += 1
                counts["running"] += 1
                counts["most"] = max(counts["most"], counts["running"])
            loop.call_soon_threadsafe(began.set)
            release.wait(10)
            try:
                return view_counts()
            finally:
                with lock:
                    counts["running"] -= 1

        with patch.object(app.core, "view_counts", held):
            await pilot.press("s")
            await asyncio.wait_for(began.wait(), 10)  # the first star's count, held
            await pilot.press("j", "s", "j", "s")
            await until(pilot, lambda: threads.cursor == 2 and threads.current is not None and threads.current.starred)
            assert counts["started"] == 1  # the other stars asked while it ran: they wait for it
            release.set()
            await settle(pilot, app, lambda: sidebar(app)["view:starred"].endswith("3"))
            assert counts["started"] == 2  # one more count saw the other two stars
            assert counts["most"] == 1


async def test_an_empty_view_leaves_no_other_views_thread_in_the_reader(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await synced(pilot, app)
        reader = app.screen.query_one(Reader)
        await settle(pilot, app, lambda: reader.thread is not None)  # the thread under the cursor, previewed
        await pilot.press("4")  # Snoozed: nothing there
        await settle(pilot, app, lambda: len(threads.source) == 0 and "Snoozed" in threads.title.plain)
        assert reader.thread is None
        await settle(pilot, app, lambda: "No thread here." in reader.text)  # not "Select a thread to read it."
        await pilot.press("1")  # the Inbox again: its thread previewed
        await settle(pilot, app, lambda: reader.thread is not None and reader.thread.id == current_id(threads))


async def test_search_with_operators_narrows_the_list(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await synced(pilot, app)
        await pilot.press("s")
        await pilot.press("slash", *"is:starred")
        await settle(pilot, app, lambda: len(threads.source) == 1)
        await pilot.press("escape")
        await settle(pilot, app, lambda: len(threads.source) == 25)
        await pilot.press("slash", *"is:sleepy")
        await settle(pilot, app)
        assert "is: takes" in screen_text(app)
        assert isinstance(app.screen, MainScreen)


async def test_a_search_covers_all_mail_says_where_each_thread_is_and_in_narrows_it(service: Service) -> None:
    from textual.widgets import Input

    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await synced(pilot, app)
        done = threads.current
        assert done is not None
        await pilot.press("e")
        await settle(pilot, app, lambda: len(threads.source) == 24)
        subject = done.subject
        app.screen.query_one("#filter", Input).value = f'subject:"{subject}"'  # from the Inbox view
        await settle(pilot, app, lambda: any(threads.source.row(i).id == done.id for i in range(len(threads.source))))
        found = next(threads.source.row(i) for i in range(len(threads.source)) if threads.source.row(i).id == done.id)
        assert found.where == "done"
        assert "in all mail" in on_screen(app, MainScreen).status
        assert threads.title.plain == "Threads · Search"  # not the Inbox it was typed from
        await settle(pilot, app)
        assert "done" in screen_text(app)
        app.screen.query_one("#filter", Input).value = f'subject:"{subject}" in:inbox'
        await settle(pilot, app, lambda: all(threads.source.row(i).id != done.id for i in range(len(threads.source))))
        box = app.screen.query_one("#filter", Input)
        box.value = "is:bogus"
        await settle(pilot, app, lambda: box.has_class("-invalid"))
        assert "is: takes one of" in on_screen(app, MainScreen).status
        box.value = "is:unread"
        await settle(pilot, app, lambda: not box.has_class("-invalid"))
        box.value = ""
        await settle(pilot, app, lambda: threads.title.plain == "Threads · Inbox")


async def test_an_operator_typed_after_words_stays_refused_when_the_word_search_ends(service: Service) -> None:
    from textual.widgets import Input

    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await synced(pilot, app)
        screen = on_screen(app, MainScreen)
        box = app.screen.query_one("#filter", Input)
        box.value = "is"  # a word: its search reads the store in a worker, after a pause for typing
        box.value = "is:bogus"  # typed on before that search ended
        await settle(pilot, app, lambda: box.has_class("-invalid"))
        await pilot.app.workers.wait_for_complete()
        await settle(pilot, app)
        assert box.has_class("-invalid")
        assert "is: takes one of" in screen.status  # not the finished word search's count


async def test_a_search_with_too_many_terms_is_refused_at_the_search_box(service: Service) -> None:
    from textual.widgets import Input

    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await synced(pilot, app)
        box = app.screen.query_one("#filter", Input)
        box.value = " ".join(["in:all"] * 250)
        await settle(pilot, app, lambda: box.has_class("-invalid"))
        assert "a search takes at most 100 words and operators, not 250" in on_screen(app, MainScreen).status
        assert len(threads.source) == 25  # the list left as it was, not "0 threads"


async def test_a_word_search_made_while_new_mail_is_indexed_says_so_and_runs_again_once_it_is(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    from textual.widgets import Input

    from pigeon.core import mail
    from pigeon.store import sync as store_sync

    gate = asyncio.Event()
    index_stored = store_sync.index_stored

    async def held(store: MailStore) -> int:
        await gate.wait()
        return await index_stored(store)

    monkeypatch.setattr(mail, "index_stored", held)
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        threads = screen.query_one(ThreadList)
        await until(pilot, lambda: getattr(screen, "synced", False) and len(threads.source) > 0, within=10)
        word = (threads.current.subject if threads.current else "").split()[0]
        screen.query_one("#filter", Input).value = word
        await until(pilot, lambda: "new mail still being indexed" in on_screen(app, MainScreen).status)
        assert len(threads.source) == 0  # the index has nothing yet
        gate.set()
        await settle(pilot, app, lambda: len(threads.source) > 0)
        assert "still being indexed" not in on_screen(app, MainScreen).status
        assert f'matching "{word}"' in on_screen(app, MainScreen).status


async def test_triage_survives_an_app_restart(service: Service, isolated_environment: Path) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await synced(pilot, app)
        starred = current_id(threads)
        await pilot.press("s", "j", "e")
        await settle(pilot, app, lambda: len(threads.source) == 24)
    assert store_path("default").exists()
    again = pigeon_for(service)
    async with again.run_test(size=SIZE) as pilot:
        threads = again.screen.query_one(ThreadList)
        assert len(threads.source) == 24  # painted from the store before any sync
        assert threads.source.row(0).id == starred
        assert threads.source.row(0).starred
        await pilot.press("u")
        await settle(pilot, again, lambda: len(threads.source) == 25)  # the undo stack outlived the app


async def test_with_the_service_down_cached_mail_stays_readable(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await synced(pilot, app)
    dead = PigeonClient("http://127.0.0.1:9", service.alice.token, max_retries=0, timeout=2)
    offline = make_app(
        load_config(base_url=BASE), client=dead, clock=frozen_clock, store=MailStore.for_profile("default")
    )
    notes = Notes()
    async with offline.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        threads = offline.screen.query_one(ThreadList)
        await settle(pilot, offline, lambda: on_screen(offline, MainScreen).offline)
        assert len(threads.source) == 25
        assert "Offline" in screen_text(offline)
        subject = threads.source.row(3).subject
        await pilot.press("enter")
        reader = offline.screen.query_one(Reader)
        await settle(pilot, offline, lambda: bool(reader.messages) and "Loading" not in reader.text)
        assert reader.text.count("UTC") >= 1
        await pilot.press("escape", "ctrl+p", *subject.split()[0])  # the palette finds what the store holds
        await settle(pilot, offline, lambda: f"Open {subject}" in palette_hits(offline))


async def test_views_and_triage_are_offered_in_the_palette(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await synced(pilot, app)
        await pilot.press("s")
        await pilot.press("ctrl+p", *"View: Starred")
        await settle(pilot, app, lambda: palette_hits(app)[:1] == ["View: Starred"])
        await pilot.press("enter")
        await settle(pilot, app, lambda: isinstance(app.screen, MainScreen) and len(threads.source) == 1)
        assert on_screen(app, MainScreen).view == "starred"
        await pilot.press("ctrl+p", *"Undo")
        await settle(pilot, app, lambda: palette_hits(app)[:1] == ["Undo"])
        await pilot.press("enter")
        await settle(pilot, app, lambda: isinstance(app.screen, MainScreen) and len(threads.source) == 0)


async def test_changing_the_sort_keeps_the_cursor_on_its_thread_wherever_it_lands(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pigeon.tui.widgets import thread_list

    monkeypatch.setattr(thread_list, "KEEP_SEARCH", 1)  # only the cursor's own row: the store says where it went
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await synced(pilot, app)
        await pilot.press("j", "j", "j")
        kept = current_id(threads)
        for _ in range(3):  # sender, subject, back to date
            await pilot.press("o")
            await settle(pilot, app)
            assert current_id(threads) == kept
        assert threads.cursor == 3


async def test_a_triage_key_counts_the_threads_it_changed_not_the_view(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await synced(pilot, app)
        await settle(pilot, app)
        store = app.core.store
        counts: list[object] = []
        count = store.count

        def recording_count(*args: Any, **kwargs: Any) -> int:
            counts.append(kwargs.get("among"))
            return count(*args, **kwargs)

        monkeypatch.setattr(store, "count", recording_count)
        screen = on_screen(app, MainScreen)
        for keys, view in [(("e",), "inbox"), (("x", "j", "x", "e"), "inbox"), (("u",), "inbox"), (("s",), "inbox")]:
            counts.clear()
            await pilot.press(*keys)
            await settle(pilot, app, lambda: not screen.selected)
            await settle(pilot, app)
            assert counts, keys
            assert all(among is not None for among in counts), keys  # lookups by id, no COUNT of the whole view
            assert len(threads.source) == count(view, now=threads.source.now)  # type: ignore[attr-defined]
        await pilot.press("3")  # starred: unstarring takes the thread out of this view
        await settle(pilot, app)
        assert len(threads.source) == 1
        await pilot.press("s")
        await settle(pilot, app, lambda: len(threads.source) == 0)


async def test_keys_pressed_while_a_change_is_made_are_not_undone_by_it(service: Service) -> None:
    import threading

    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await synced(pilot, app)
        await settle(pilot, app)
        screen = on_screen(app, MainScreen)
        gate = threading.Event()

        def slow_star(ids: list[str]) -> Change:
            gate.wait(5)
            return app.core.store.star(ids, on=True)

        screen.triage.run_change(screen.targets(), slow_star)
        await pilot.press("j", "j")  # while the star is being saved
        moved_to = current_id(threads)
        gate.set()
        await settle(pilot, app, lambda: threads.source.row(0).starred)
        assert threads.cursor == 2
        assert current_id(threads) == moved_to
