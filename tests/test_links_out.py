"""Links leaving Pigeon: which browser (never one that takes the app's terminal beside it), whole targets, and
links that mislead by their host or user part ask first."""

from __future__ import annotations

from pathlib import Path

import pytest

from pigeon.core import programs
from pigeon.core.links import Link, target_caution, thread_links
from pigeon.core.programs import NoBrowser
from pigeon.models import ContentBlock, Message
from tests.conftest import Recorded, recording_program

LONG = "https://example.com/?q=" + "a" * 100_000


@pytest.fixture
def bare_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A machine over SSH: no $BROWSER, no display, and only the programs put in the returned folder."""
    folder = tmp_path / "path"
    folder.mkdir()
    for name in ("BROWSER", "DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", str(folder))
    monkeypatch.setattr("sys.platform", "linux")
    return folder


def test_with_no_browser_at_all_nothing_starts_and_it_says_so(bare_machine: Path) -> None:
    with pytest.raises(NoBrowser, match="no browser was found here; set \\$BROWSER"):
        programs.open_link("https://example.com/")


def test_a_console_browser_is_handed_back_to_run_in_the_terminal_not_started(
    bare_machine: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, record = recording_program(bare_machine, "w3m", monkeypatch)
    command = programs.open_link("https://example.com/a")
    assert command == ["w3m", "https://example.com/a"]
    assert record.runs() == []  # nothing drew on the app's terminal beside it
    programs.run_in_terminal(command)
    assert record.urls() == ["https://example.com/a"]


def test_a_console_browser_named_by_browser_is_run_in_the_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lynx, record = recording_program(tmp_path / "bin", "lynx", monkeypatch)
    monkeypatch.setenv("BROWSER", f"no-such-browser:{lynx} -accept_all_cookies %s")
    assert programs.open_link("https://example.com/b") == [str(lynx), "-accept_all_cookies", "https://example.com/b"]
    assert record.runs() == []


def test_without_a_desktop_any_browser_named_by_browser_gets_the_terminal(
    bare_machine: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, record = recording_program(bare_machine, "sensible-browser", monkeypatch)
    monkeypatch.setenv("BROWSER", "sensible-browser")
    assert programs.open_link("https://example.com/d") == ["sensible-browser", "https://example.com/d"]
    assert record.runs() == []
    monkeypatch.setenv("DISPLAY", ":0")  # with a desktop, a program not known to draw in the terminal runs apart
    assert programs.open_link("https://example.com/d") == []
    assert record.urls() == ["https://example.com/d"]


def test_with_a_desktop_the_desktop_handler_opens_it_away_from_the_terminal(
    bare_machine: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, record = recording_program(bare_machine, "xdg-open", monkeypatch)
    monkeypatch.setenv("DISPLAY", ":0")
    assert programs.open_link("https://example.com/c") == []
    assert record.urls() == ["https://example.com/c"]


def test_a_100000_character_link_reaches_the_browser_whole(browser: Recorded) -> None:
    body = f"See {LONG} for more."
    message = Message(id="m1", content_blocks=[ContentBlock(mime_type="text/plain", content=body)])
    html = Message(id="m2", content_blocks=[ContentBlock(mime_type="text/html", content=f'<a href="{LONG}h">x</a>')])
    links = thread_links([html, message])
    assert [link.target for link in links] == [LONG + "h", LONG]
    assert programs.open_link(links[1].target) == []
    assert browser.urls() == [LONG]


@pytest.mark.parametrize(
    ("target", "said"),
    [
        ("https://раураl.com/login", "its host раураl.com mixes Cyrillic and Latin letters: it is xn--l-7sba6dbr.com"),
        ("https://аррӏе.com/", "is not written in plain letters: it is xn--"),
        ("https://bank.example@evil.example/", "it starts with bank.example@ but goes to evil.example"),
        ("https://user:pw@example.com/", "it starts with user:pw@ but goes to example.com"),
        ("https://evil.example\\@bank.example/", "it reads as bank.example but goes to evil.example"),
        ("mailto:support@раураl.com", "its host раураl.com mixes Cyrillic and Latin letters: it is xn--l-7sba6dbr.com"),
        ("http://0x7f.1/admin", "its host 0x7f.1 is the address 127.0.0.1 written otherwise"),
        ("http://3232235777/", "its host 3232235777 is the address 192.168.1.1 written otherwise"),
    ],
)
def test_a_link_that_misleads_by_its_host_or_user_part_asks_first(target: str, said: str) -> None:
    assert said in Link(1, target, "").caution


@pytest.mark.parametrize(
    "target",
    [
        "https://example.com/a@b",
        "https://www.example.com/?next=@x",
        "mailto:ann@example.com",
        "http://a.b",
        "http://192.168.1.1/",
        "https://deadbeef.example/",
    ],
)
def test_an_honest_link_does_not_ask(target: str) -> None:
    assert target_caution(target) == ""
