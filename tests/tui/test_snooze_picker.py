"""The snooze picker reads a typed phrase and says the moment it understood before it is chosen; its example is one
to come. The app's clock is frozen on Sunday 1 Nov 2026 12:00 UTC (the tests' zone)."""

from __future__ import annotations

from textual.pilot import Pilot
from textual.widgets import Input

from pigeon.tui.app import PigeonApp
from pigeon.tui.screens.pickers import SnoozePicker
from pigeon.tui.widgets.thread_list import ThreadList
from tests.server.conftest import Service
from tests.tui.conftest import SIZE, Notes, frozen_clock, on_screen, pigeon_for, screen_text, settle
from tests.tui.test_triage import synced


async def picking(pilot: Pilot[None], app: PigeonApp) -> tuple[ThreadList, SnoozePicker]:
    """Synced, then z on the thread under the cursor: the list, and the picker open."""
    threads = await synced(pilot, app)
    await pilot.press("z")
    await settle(pilot, app, lambda: isinstance(app.screen, SnoozePicker))
    return threads, on_screen(app, SnoozePicker)


async def test_a_typed_phrase_shows_its_moment_as_it_is_typed_and_snoozes_until_it(service: Service) -> None:
    from pigeon.core.when import moment

    app = pigeon_for(service)
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        threads, _ = await picking(pilot, app)
        await pilot.press("end", "enter")  # "Pick a date and time…"
        box = app.screen.query_one("#answer", Input)
        await settle(pilot, app, lambda: app.focused is box)
        phrase = box.placeholder.split(" (")[0]
        assert moment(phrase, frozen_clock()) > frozen_clock()  # the example is never in the past
        assert "friday 9am (Fri 06 Nov 09:00)" in screen_text(app)
        await pilot.press(*"tomorrow 14")
        await settle(pilot, app, lambda: "not a time" in screen_text(app))  # not yet a time: said quietly
        await pilot.press(*":00")
        await settle(pilot, app, lambda: "→ Mon 02 Nov 14:00" in screen_text(app))  # before it is chosen
        assert isinstance(app.screen, SnoozePicker)
        await pilot.press("enter")
        await settle(pilot, app, lambda: len(threads.source) == 24)
        assert "Snoozed until Mon 02 Nov 14:00: 1 thread" in notes.text


async def test_a_phrase_that_cannot_be_read_keeps_the_picker_open_with_the_reason(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads, _ = await picking(pilot, app)
        await pilot.press("end", "enter", *"friday 9xm", "enter")
        await settle(pilot, app, lambda: '"9xm" in "friday 9xm" is not understood' in screen_text(app))
        assert isinstance(app.screen, SnoozePicker)
        assert len(threads.source) == 25


async def test_j_and_k_move_through_the_choices_as_the_arrows_do(service: Service) -> None:
    from pigeon.tui.widgets.choices import Choices

    app = pigeon_for(service)
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        threads, picker = await picking(pilot, app)
        choices = picker.query_one(Choices)
        assert choices.highlighted == 0
        await pilot.press("j", "j", "k")
        assert choices.highlighted == 1
        wanted = picker.choices[1][1]
        await pilot.press("enter")
        await settle(pilot, app, lambda: len(threads.source) == 24)
        assert f"Snoozed until {wanted:%a %d %b %H:%M}: 1 thread" in notes.text
