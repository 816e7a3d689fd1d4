"""Rules in the app: a rule left out is said once at start, the palette tries the rules (changing nothing), new mail
is ruled after a sync with a note, one `u` takes a rule's changes back, and "why is this here?" names the rule."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from pigeon.config import load_config
from pigeon.tui.app import PigeonApp
from pigeon.tui.screens.mail import MainScreen
from pigeon.tui.screens.why import WhyScreen
from pigeon_service.demo_newcomers import NEWCOMERS, newcomer_thread
from tests.server.conftest import NOW, Service
from tests.tui.conftest import BASE, SIZE, Notes, on_screen, palette_hits, pigeon_for, screen_text, settle
from tests.tui.test_triage import synced

NEWSLETTER = NEWCOMERS[0]
RULES = """
[[rules]]
name = "tidepool"
match = "from:hello@tidepool.example"
label = "news"
star = true

[[rules]]
name = "typo"
match = "frm:someone"
done = true
"""


async def tried(pilot: Pilot[None], app: PigeonApp) -> None:
    """The palette's Try rules, chosen: the rules tried are shown."""
    await pilot.press("ctrl+p", *"Try rules")
    await settle(pilot, app, lambda: palette_hits(app)[:1] == ["Try rules"])
    await pilot.press("enter")
    await settle(pilot, app, lambda: isinstance(app.screen, WhyScreen))


async def test_rules_in_the_app_tried_run_on_new_mail_undone_and_explained(service: Service, tmp_path: Path) -> None:
    file = tmp_path / "config.toml"
    file.write_text(RULES)
    app = pigeon_for(service, config=load_config(file, base_url=BASE))
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        threads = await synced(pilot, app)
        await settle(pilot, app, lambda: "A rule is left out: rule 2 ('typo'): match: 'frm:someone'" in notes.text)
        assert notes.text.count("left out") == 1

        newcomer_thread(service.db, None, service.alice.id, NEWSLETTER)
        await tried(pilot, app)
        text = screen_text(app)
        assert "Rules, tried" in text
        assert "Rule 'tidepool' (label news, star) would change 0 threads" in text  # (not synced yet)
        assert "Nothing was changed." in text
        await pilot.press("escape")

        await pilot.press("ctrl+r")
        await settle(pilot, app, lambda: "Rules: 'tidepool' changed 1 thread" in notes.text)
        screen = on_screen(app, MainScreen)
        ruled = [t for t in app.core.store.list_threads("all", limit=100, now=NOW) if t.labels == ("news",)]
        assert len(ruled) == 1
        assert ruled[0].starred
        await pilot.press("S")  # (a new sender: in the Screener)
        await settle(pilot, app, lambda: screen.view == "screener" and len(threads.source) == 1)
        await pilot.press("W")
        await settle(pilot, app, lambda: isinstance(app.screen, WhyScreen))
        assert "Changed by the rule 'tidepool' (label news, star; match:" in screen_text(app)
        await pilot.press("escape")
        await settle(pilot, app, lambda: isinstance(app.screen, MainScreen))
        await pilot.press("u")
        await settle(pilot, app, lambda: "Undone: Rule 'tidepool': 1 thread" in notes.text)
        again = app.core.store.list_threads("all", limit=100, now=NOW, among=[ruled[0].id])
        assert (again[0].labels, again[0].starred) == ((), False)

        await tried(pilot, app)  # (the mail is stored now, and as it was before the rule)
        text = screen_text(app)
        assert "Rule 'tidepool' (label news, star) would change 1 thread" in text
        assert f"· {ruled[0].who} — {ruled[0].subject[:20]}" in text  # (the line is cut at the dialog's width)
        assert "Nothing was changed." in text
        assert app.core.store.list_threads("all", limit=100, now=NOW, among=[ruled[0].id])[0].labels == ()


async def test_rules_written_while_the_app_runs_are_read_when_tried_and_run_after(
    service: Service, tmp_path: Path
) -> None:
    file = tmp_path / "config.toml"
    file.write_text("")  # no rules at start
    app = pigeon_for(service, config=load_config(file, base_url=BASE))
    notes = Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        await synced(pilot, app)
        file.write_text(RULES.split("[[rules]]\nname = \"typo\"")[0])  # the user adds a rule, the app running
        await tried(pilot, app)
        assert "Rule 'tidepool' (label news, star) would change 0 threads" in screen_text(app)
        await pilot.press("escape")
        newcomer_thread(service.db, None, service.alice.id, NEWSLETTER)
        await pilot.press("ctrl+r")  # the rule tried is the rule run
        await settle(pilot, app, lambda: "Rules: 'tidepool' changed 1 thread" in notes.text)
        file.write_text("[[rules]\n")  # a file that cannot be read: the rules there were stay, and it is said
        await tried(pilot, app)
        text = screen_text(app)
        assert "could not be read again" in text
        assert "Rule 'tidepool'" in text
