"""The search box takes OR and -, and refuses an operator with no value where it is typed: the box says why and
the list keeps its last good result."""

from __future__ import annotations

from textual.widgets import Input

from pigeon.tui.screens.mail import MainScreen
from tests.server.conftest import Service
from tests.tui.conftest import SIZE, on_screen, pigeon_for, screen_text, settle
from tests.tui.scenes import previewed
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
        await previewed(pilot)  # (a preview drawn while the next keys are typed could hold them past a word search's
        # pause: "from" would then be searched for, as it would be for a person who paused there)
        box = app.screen.query_one("#filter", Input)
        await pilot.press(*" from:")
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
