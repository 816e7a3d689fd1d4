"""Opening a link from the app: a console browser gets the terminal only while the app is suspended, no browser
means the link is copied and shown, and a look-alike host or a user part asks first."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from pigeon.tui.app import PigeonApp
from pigeon.tui.screens.links import LinksScreen
from pigeon.tui.screens.modals import ConfirmScreen
from pigeon.tui.widgets.reader import Reader
from tests.conftest import Recorded, recording_program
from tests.server.conftest import Service, first_thread
from tests.tui.conftest import SIZE, Notes, on_screen, pigeon_for, settle


def newest_with_link(service: Service, target: str) -> None:
    html = f'<p><a href="{target}">the plan</a></p>'
    thread_id = first_thread(service, service.alice)  # the newest
    blocks = [{"type": "CONTENT_TYPE_HTML", "mime_type": "text/html", "content": html}]
    service.add_message(service.alice, thread_id, sender_address="ann@example.com", content_blocks=blocks)


async def open_first_link(pilot: Pilot[None], app: PigeonApp) -> None:
    screen = app.screen
    await settle(pilot, app, lambda: getattr(screen, "synced", False))
    await pilot.press("enter")
    reader = screen.query_one(Reader)
    await settle(pilot, app, lambda: "the plan [1]" in reader.text)
    await pilot.press("L")
    await settle(pilot, app, lambda: isinstance(app.screen, LinksScreen))
    await pilot.press("1")


@pytest.fixture
def over_ssh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No $BROWSER, no display; only the programs put in the returned folder (and Python) on the path."""
    folder = tmp_path / "path"
    folder.mkdir()
    for name in ("BROWSER", "DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", str(folder))
    monkeypatch.setattr("sys.platform", "linux")
    return folder


async def test_with_no_browser_the_link_is_copied_and_shown(service: Service, over_ssh: Path) -> None:
    newest_with_link(service, "https://docs.example.com/q4")
    app, notes = pigeon_for(service), Notes()
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        await open_first_link(pilot, app)
        await settle(pilot, app, lambda: app.clipboard == "https://docs.example.com/q4")
        await settle(pilot, app, lambda: "Copied the link: https://docs.example.com/q4" in notes.text)
        assert "no browser was found here" in notes.text


async def test_a_console_browser_runs_in_the_terminal_handed_over(
    service: Service, over_ssh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, record = recording_program(over_ssh, "w3m", monkeypatch)
    newest_with_link(service, "https://docs.example.com/q4")
    app = pigeon_for(service)
    handed: list[list[str]] = []
    original = app.core.handoff.browse_in_terminal

    def browse(command: list[str]) -> int:
        handed.append(command)
        return original(command)

    monkeypatch.setattr(app.core.handoff, "browse_in_terminal", browse)
    async with app.run_test(size=SIZE) as pilot:
        await open_first_link(pilot, app)
        await settle(pilot, app, lambda: record.urls() == ["https://docs.example.com/q4"])
        assert handed == [["w3m", "https://docs.example.com/q4"]]  # through the App's hand-over, not beside it


@pytest.mark.parametrize(
    ("target", "said"),
    [
        ("https://раураl.com/login", "xn--l-7sba6dbr.com"),
        ("https://bank.example@evil.example/", "it starts with bank.example@ but goes to evil.example"),
    ],
)
async def test_a_look_alike_host_or_a_user_part_asks_first(
    service: Service, browser: Recorded, target: str, said: str
) -> None:
    newest_with_link(service, target)
    app = pigeon_for(service)
    async with app.run_test(size=SIZE) as pilot:
        await open_first_link(pilot, app)
        await settle(pilot, app, lambda: isinstance(app.screen, ConfirmScreen))
        assert said in on_screen(app, ConfirmScreen).question.plain
        assert browser.runs() == []
        await pilot.press("y")
        await settle(pilot, app, lambda: len(browser) == 1)
        assert browser.urls() == [target]
