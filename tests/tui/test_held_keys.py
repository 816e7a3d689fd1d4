"""A key held down (or keys typed faster than frames are drawn) acts once for each press: the presses waiting in the
queue together are none of them lost."""

from __future__ import annotations

from textual import events
from textual.containers import VerticalScroll

from pigeon.tui.screens.modals import HelpScreen
from pigeon.tui.widgets.reader import Reader
from tests.server.conftest import Service
from tests.tui.conftest import SIZE, loaded, on_screen, pigeon_for, settle

PRESSES = 10


async def test_each_press_of_a_held_j_scrolls_the_reader_a_line_and_space_or_page_up_a_page(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await loaded(pilot, app)
        threads.cursor = max(range(len(threads.source)), key=lambda i: threads.source.row(i).count)
        await pilot.press("enter")
        reader = app.screen.query_one(Reader)
        await settle(pilot, app, lambda: app.focused is reader and bool(reader.messages))
        await settle(pilot, app)
        reader.scroll_to(y=0, animate=False, immediate=True)
        page = reader.scrollable_content_region.height
        assert reader.max_scroll_y > PRESSES + 2 * page
        for _ in range(PRESSES):  # all in the queue before the first is handled, as a held key's are
            app.post_message(events.Key("j", "j"))
        await settle(pilot, app, lambda: reader.scroll_target_y != 0)
        await settle(pilot, app)
        assert reader.scroll_target_y == PRESSES
        for _ in range(2):
            app.post_message(events.Key("space", " "))
        await settle(pilot, app)
        assert reader.scroll_target_y == PRESSES + 2 * page
        for _ in range(2):
            app.post_message(events.Key("pageup", None))
        await settle(pilot, app)
        assert reader.scroll_target_y == PRESSES


async def test_each_press_of_a_held_j_scrolls_the_help_a_line(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await pilot.press("question_mark")
        keys = on_screen(app, HelpScreen).query_one("#help-keys", VerticalScroll)
        await settle(pilot, app)
        assert keys.max_scroll_y > PRESSES
        for _ in range(PRESSES):
            app.post_message(events.Key("j", "j"))
        await settle(pilot, app, lambda: keys.scroll_target_y != 0)
        await settle(pilot, app)
        assert keys.scroll_target_y == PRESSES
