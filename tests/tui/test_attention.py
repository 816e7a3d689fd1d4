"""What needs you, in the app: the lanes and the Screener by key with counts in the sidebar, a new sender let in
with one key and kept out with another, "why is this here?" with its moves, and a sender taught a lane."""

from __future__ import annotations

from textual.pilot import Pilot

from pigeon.tui.app import PigeonApp
from pigeon.tui.screens.mail import MainScreen
from pigeon.tui.screens.modals import PickScreen
from pigeon.tui.screens.why import WhyScreen
from pigeon.tui.widgets.thread_list import ThreadList
from pigeon_service.demo_newcomers import NEWCOMERS, newcomer_thread
from tests.server.conftest import Service
from tests.tui.conftest import SIZE, Notes, current_id, on_screen, palette_hits, pigeon_for, screen_text, settle
from tests.tui.test_triage import sidebar, synced

NEWSLETTER, PERSON, _, ALERT = NEWCOMERS


async def newcomers(pilot: Pilot[None], app: PigeonApp, service: Service, *specs: dict[str, str]) -> list[str]:
    """New threads from first-time senders, synced (the first sync has let the mailbox's senders in)."""
    screen = on_screen(app, MainScreen)
    await settle(pilot, app, lambda: screen.synced)
    made = [newcomer_thread(service.db, None, service.alice.id, spec) for spec in specs]
    await pilot.press("ctrl+r")
    await settle(pilot, app, lambda: sidebar(app)["view:screener"].endswith(str(len(specs))))
    return [m.thread_id or "" for m in made if m is not None]


async def test_a_new_sender_waits_in_the_screener_and_one_key_lets_them_in(service: Service) -> None:
    app = pigeon_for(service)
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        threads = await synced(pilot, app)
        waiting = await newcomers(pilot, app, service, NEWSLETTER, PERSON)
        assert len(threads.source) == 25  # the inbox: the new senders' mail is not in it
        await pilot.press("S")
        await settle(pilot, app, lambda: len(threads.source) == 2)
        assert "Threads · Screener" in screen_text(app)
        let_in = current_id(threads)
        await pilot.press("I")
        await settle(pilot, app, lambda: len(threads.source) == 1)
        assert let_in in waiting
        assert sidebar(app)["view:screener"].endswith("1")
        assert "Let in: " in notes.text
        await pilot.press("X")
        await settle(pilot, app, lambda: len(threads.source) == 0)
        assert "Kept out: " in notes.text
        assert sidebar(app)["view:kept-out"].endswith("1")
        await pilot.press("1")
        await settle(pilot, app, lambda: len(threads.source) == 26)


async def test_lanes_switch_by_key_and_split_the_inbox(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await synced(pilot, app)
        bar = sidebar(app)
        counts = {}
        for key, view in (("7", "people"), ("8", "newsletters"), ("9", "notifications"), ("0", "receipts")):
            await pilot.press(key)
            await settle(pilot, app, lambda view=view: on_screen(app, MainScreen).view == view)  # type: ignore[misc]
            await settle(pilot, app, lambda: not app.screen.query_one(ThreadList).loading)
            counts[view] = len(threads.source)
            shown = bar[f"view:{view}"]
            assert shown.strip().endswith(str(counts[view])) or counts[view] == 0
        assert sum(counts.values()) == 25  # every thread of the inbox, in one lane each
        assert counts["people"] > 0
        assert counts["newsletters"] > 0


async def test_why_names_the_signals_and_moving_a_lane_teaches_the_sender(service: Service) -> None:
    app = pigeon_for(service)
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        threads = await synced(pilot, app)
        await newcomers(pilot, app, service, NEWSLETTER)
        await pilot.press("S")
        await settle(pilot, app, lambda: len(threads.source) == 1)
        await pilot.press("W")
        await settle(pilot, app, lambda: isinstance(app.screen, WhyScreen))
        text = screen_text(app)
        assert "In the Screener: hello@tidepool.example is new to you" in text
        assert "it has an unsubscribe link" in text
        await pilot.press("enter")  # "Move to another lane…"
        await settle(pilot, app, lambda: isinstance(app.screen, PickScreen))
        await pilot.press("enter")  # People
        await settle(pilot, app, lambda: "To People: hello@tidepool.example" in notes.text)
        await pilot.press("I")
        await settle(pilot, app, lambda: len(threads.source) == 0)
        await pilot.press("7")
        await settle(pilot, app, lambda: on_screen(app, MainScreen).view == "people")
        await settle(
            pilot,
            app,
            lambda: any(threads.source.row(i).subject.startswith("Tidepool") for i in range(len(threads.source))),
        )


async def test_the_palette_offers_the_screeners_decisions_and_the_new_views(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await synced(pilot, app)
        await newcomers(pilot, app, service, ALERT)
        await pilot.press("ctrl+p", *"View: Screener")
        await settle(pilot, app, lambda: palette_hits(app)[:1] == ["View: Screener"])
        await pilot.press("enter")
        await settle(pilot, app, lambda: isinstance(app.screen, MainScreen) and len(threads.source) == 1)
        await pilot.press("ctrl+p", *"Keep out domain")
        await settle(pilot, app, lambda: palette_hits(app)[:1] == ["Keep out domain"])
        await pilot.press("enter")
        await settle(pilot, app, lambda: isinstance(app.screen, MainScreen) and len(threads.source) == 0)
        assert sidebar(app)["view:kept-out"].endswith("1")


async def test_t_on_a_thread_you_wrote_last_sets_a_reminder(service: Service) -> None:
    from pigeon.tui.screens.pickers import SnoozePicker

    app = pigeon_for(service)
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        threads = await synced(pilot, app)
        await pilot.press("ctrl+p", *"View: Waiting")
        await settle(pilot, app, lambda: palette_hits(app)[:1] == ["View: Waiting"])
        await pilot.press("enter")
        await settle(pilot, app, lambda: isinstance(app.screen, MainScreen) and app.screen.view == "waiting")
        waiting = len(threads.source)
        assert waiting > 0
        await pilot.press("T")
        await settle(pilot, app, lambda: isinstance(app.screen, SnoozePicker))
        assert "Back in the inbox, if no answer, on…" in screen_text(app)
        await pilot.press("enter")
        await settle(pilot, app, lambda: "if no answer comes: 1 thread" in notes.text)
        assert len(threads.source) == waiting  # still waiting for the answer
        await pilot.press("1")
        await settle(pilot, app, lambda: on_screen(app, MainScreen).view == "inbox")
        await settle(pilot, app, lambda: len(threads.source) == 24)  # away until it is due
