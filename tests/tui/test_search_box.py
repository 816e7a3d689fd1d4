"""The search box takes OR and -, and refuses an operator with no value where it is typed: the box says why and
the list keeps its last good result. A search starts at once, and the next letter stops it where it is."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from textual import events
from textual.widgets import Input

from pigeon.tui.screens.mail import MainScreen
from tests.server.conftest import Service
from tests.tui.conftest import SIZE, FirstReadHeld, on_screen, pigeon_for, screen_text, settle
from tests.tui.test_triage import synced


async def test_an_operator_with_no_value_is_said_at_the_box_and_the_list_keeps_its_last_result(
    service: Service,
) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await synced(pilot, app)
        await pilot.press("s", "j", "s")  # two starred
        await pilot.press("slash", *"is:starred")
        await settle(pilot, app, lambda: len(threads.source) == 2)
        box = app.screen.query_one("#filter", Input)
        box.value = "is:starred from:"  # (typed, "from" would be searched for on the way, and shown)
        box.cursor_position = len(box.value)
        await settle(pilot, app, lambda: box.has_class("-invalid"))
        assert "from: needs a value, as in from:ada" in str(box.border_subtitle)
        assert "from: needs a value" in screen_text(app)
        assert len(threads.source) == 2  # the last good result stays
        await pilot.press("backspace", "backspace", "backspace", "backspace", "backspace", "backspace")
        await settle(pilot, app, lambda: not box.has_class("-invalid"))
        assert not box.border_subtitle


async def test_or_and_dash_in_the_box(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await synced(pilot, app)
        await pilot.press("s")  # one starred
        await settle(pilot, app, lambda: threads.current is not None and threads.current.starred)
        await pilot.press("j", "e")  # and another done
        await settle(pilot, app, lambda: len(threads.source) == 24)
        await pilot.press("slash", *"-is:starred")
        await settle(pilot, app, lambda: threads.title.plain == "Threads · Search")
        assert len(threads.source) == 24  # all mail but the starred one
        box = app.screen.query_one("#filter", Input)
        box.value = "is:starred OR is:done"
        await settle(pilot, app, lambda: len(threads.source) == 2)
        box.value = "is:starred OR is:done -is:starred"
        await settle(pilot, app, lambda: len(threads.source) == 1)
        assert on_screen(app, MainScreen).status.startswith("1 thread")


async def test_the_next_letter_stops_the_search_still_reading_and_its_own_results_are_shown(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await synced(pilot, app)
        word = threads.source.row(0).subject.split()[0]
        store = app.core.store
        held = FirstReadHeld(store, store.count)  # the first search: a read of many seconds
        monkeypatch.setattr(store, "count", held)
        await pilot.press("slash")
        box = app.screen.query_one("#filter", Input)
        box.value = word[:-1]
        await asyncio.wait_for(held.reading.wait(), 15)
        box.value = word  # the next letter
        await settle(pilot, app, lambda: len(held.said) > 1)
        assert held.said == ["reading", "SQLITE_INTERRUPT"]
        await settle(pilot, app, lambda: threads.title.plain == "Threads · Search" and len(threads.source) < 25)
        assert all(word.lower() in threads.source.row(i).subject.lower() for i in range(len(threads.source)))


async def test_a_one_letter_word_is_searched_for_only_once_typing_pauses(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its prefix matches most of a big mailbox, in a read that cannot be stopped midway: the next letter, come
    before the pause ends, makes it moot before it reads anything. A longer word is searched for at once."""
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await synced(pilot, app)
        word = threads.source.row(0).subject.split()[0]
        store, count = app.core.store, app.core.store.count
        searched: list[list[str]] = []

        def recording(view: str, query: Any = None, **kwargs: Any) -> int:
            if query is not None and query.searching:
                searched.append(query.text)
            return count(view, query, **kwargs)

        monkeypatch.setattr(store, "count", recording)
        await pilot.press("slash")
        for letter in word[:2]:  # in one burst: the second letter comes before the pause ends
            app.post_message(events.Key(letter, letter))
        await settle(pilot, app, lambda: threads.title.plain == "Threads · Search")
        assert searched == [[word[:2]]]
        searched.clear()
        await pilot.press("backspace")  # one letter again: searched for once the pause is over
        await settle(pilot, app, lambda: searched == [[word[:1]]])


async def test_typing_a_search_counts_no_view(service: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    """A search changes no view's count: counting them again at each letter filled the threads that reads run in
    (a count cannot be stopped), so in a big mailbox the last letter's search waited behind them."""
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await synced(pilot, app)
        word = threads.source.row(0).subject.split()[0]
        counted: list[str] = []
        view_counts = app.core.view_counts

        def counting() -> tuple[dict[str, int], dict[str, int]]:
            counted.append(app.screen.query_one("#filter", Input).value)
            return view_counts()

        monkeypatch.setattr(app.core, "view_counts", counting)
        await pilot.press("slash", *word)
        await settle(pilot, app, lambda: threads.title.plain == "Threads · Search" and "matching" in screen_text(app))
        await pilot.press("escape")
        await settle(pilot, app, lambda: threads.title.plain != "Threads · Search")
        assert counted == []
        await pilot.press("s")  # a change does count them again
        await settle(pilot, app, lambda: len(counted) == 1)
