"""The key bar: the focused context's keys on one line, clickable, help and the palette's key always at the right."""

from __future__ import annotations

from pathlib import Path

from textual.binding import Binding

from pigeon.config import load_config
from pigeon.tui.screens.mail import MainScreen
from pigeon.tui.screens.modals import HelpScreen
from pigeon.tui.widgets.key_bar import KeyBar
from pigeon.tui.widgets.reader import Reader
from tests.server.conftest import Service
from tests.tui.conftest import BASE, SIZE, Notes, loaded, on_screen, pigeon_for, screen_text, settle


def bar_text(bar: KeyBar) -> str:
    return bar.render().plain


async def test_the_bar_follows_focus_and_a_click_presses_the_key(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        bar = app.screen.query_one(KeyBar)
        shown = bar_text(bar)
        assert " Open " in screen_text(app).splitlines()[-1]  # what is drawn, not only a fresh render
        assert " e Done " in shown
        assert "Quotes" not in shown
        assert shown.rstrip().endswith("^p palette")
        await pilot.press("enter")
        reader = app.screen.query_one(Reader)
        await settle(pilot, app, lambda: app.focused is reader)
        # the reader's own keys come first, its back key (h) among them, not the screen's escape
        assert bar_text(bar).startswith(" n Next msg  J Next thread  h Back  L Links ")
        assert "esc" not in bar_text(bar)
        start = bar_text(bar).index(" ? Help ")
        await pilot.click(KeyBar, offset=(start + 1, 0))
        await settle(pilot, app, lambda: isinstance(app.screen, HelpScreen))


async def test_a_narrow_bar_shows_whole_keys_and_keeps_help_and_the_palette(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=(70, 30)) as pilot:
        await loaded(pilot, app)
        bar = app.screen.query_one(KeyBar)
        shown = bar_text(bar)
        assert len(shown) == 70
        assert shown.rstrip().endswith("▏ ^p")  # short of room: the palette by its key alone
        keys = shown.split("▏")[0].rstrip()
        assert keys.endswith(" ? Help")  # the way to every key that did not fit stays, beside the palette
        assert keys.count("Help") == 1
        hints, _palette = bar.hints()
        drawn = [hint for hint in hints if f" {hint.display} {hint.description} " in shown]
        assert drawn  # some keys fit, each whole; the others are left out whole (no part of them is drawn)
        left_out = [hint for hint in hints if hint not in drawn]
        assert left_out
        assert not [hint for hint in left_out if f" {hint.display} {hint.description.split()[0]}" in shown]


async def test_back_is_in_the_bar_only_with_somewhere_to_go_back_from(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await loaded(pilot, app)
        bar = app.screen.query_one(KeyBar)
        assert "esc Back" not in bar_text(bar)  # the whole list, nothing to clear: no dead key
        await pilot.press("slash", *"budget", "enter")  # a search, kept: escape clears it
        await settle(pilot, app, lambda: app.focused is threads and "esc Back" in bar_text(bar))
        await pilot.press("escape")
        await settle(pilot, app, lambda: "esc Back" not in bar_text(bar))
        assert app.focused is threads


async def test_a_keymap_value_that_is_no_key_is_refused_with_a_word_and_never_shown_raw(
    service: Service, isolated_environment: Path
) -> None:
    path = isolated_environment / "config" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text('[ui.keymap]\n"list.open" = "\\u001b]2;pwned\\u0007"\n"list.down" = "i"\n')
    app = pigeon_for(service, config=load_config(base_url=BASE))
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        threads = await loaded(pilot, app)
        shown = bar_text(app.screen.query_one(KeyBar))
        assert " ⏎ Open " in shown  # the entry was left out: enter still opens
        assert "pwned" not in shown
        await pilot.press("i")
        assert threads.cursor == 1  # the good entry of the same table is used
        warnings = [note.message for note in notes if note.title == "Keymap"]
        assert warnings == ["[ui.keymap] \"list.open\" = '\\x1b]2;pwned\\x07' is not a key name; ignored."]
        await pilot.press("question_mark")
        await settle(pilot, app, lambda: isinstance(app.screen, HelpScreen))
        rows = [line for line in screen_text(app).splitlines() if "list.open" in line and "Open" in line]
        assert len(rows) == 1
        assert "⏎" in rows[0]
        assert "pwned" not in rows[0]


async def test_a_key_is_shown_cleaned_whatever_it_holds(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        shown = app.get_key_display(Binding("x", "noop", key_display="\x1b]2;pwned\x07x"))
        assert "\x1b" not in shown
        assert "\x07" not in shown


async def test_the_lists_keys_leave_while_it_loads_and_come_back_after(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        threads = await loaded(pilot, app)
        bar = app.screen.query_one(KeyBar)
        assert app.focused is threads
        threads.loading = True  # (as in a first sync: Textual runs no key of a loading widget)
        await settle(pilot, app, lambda: " Open " not in bar_text(bar))
        threads.loading = False
        await settle(pilot, app, lambda: " Open " in bar_text(bar))


async def test_in_the_done_view_the_bar_says_e_brings_threads_back(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        bar = app.screen.query_one(KeyBar)
        await pilot.press("e")  # one thread done, so the Done view has one
        await pilot.press("5")
        await settle(pilot, app, lambda: " e To inbox " in bar_text(bar))
        assert " e Done " not in bar_text(bar)
        await pilot.press("1")
        await settle(pilot, app, lambda: " e Done " in bar_text(bar))
        await pilot.press("5")
        await settle(pilot, app, lambda: " e To inbox " in bar_text(bar))
        inbox = app.core.inboxes[0].id
        assert inbox
        on_screen(app, MainScreen).select_inbox(inbox)  # (the palette's "Go to" an inbox)
        await settle(pilot, app, lambda: " e Done " in bar_text(bar))
