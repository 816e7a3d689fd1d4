"""Textual's stock path: with ``PIGEON_STOCK_FRAMES=1``, an untested Textual or a private name missing, the fast
path (:mod:`pigeon.tui.fast_path`) stands aside, says why in one log line, and the app works as plain Textual."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from importlib.metadata import version

import pytest
from textual.app import App
from textual.scrollbar import ScrollBar

from pigeon.tui.fast_path import guard
from pigeon.tui.fast_path.compositor import LineCompositor, TextualCompositor
from pigeon.tui.fast_path.panes import SteadyScrollBar
from pigeon.tui.screens.mail import MainScreen
from pigeon.tui.widgets.pane import FOCUSED_TITLE
from pigeon.tui.widgets.reader import Reader
from pigeon.tui.widgets.thread_list import ThreadList
from tests.tui.scenes import SIZE, mail_loaded, scene_app, settle
from tests.tui.test_key_path import until


@pytest.fixture(autouse=True)
def decided_afresh() -> Iterator[None]:
    guard.forget()
    yield
    guard.forget()


def said(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.name == "pigeon.tui.fast_path"]


async def runs_as_plain_textual() -> None:
    """The mail screen on Textual's own compositor, scrollbars and focus, and still the mail client."""
    app = scene_app()
    async with app.run_test(size=SIZE) as pilot:
        await mail_loaded(pilot)
        screen = app.screen
        assert isinstance(screen, MainScreen)
        assert type(screen._compositor) is TextualCompositor
        threads, reader = screen.query_one(ThreadList), screen.query_one(Reader)
        assert type(threads.vertical_scrollbar) is ScrollBar
        await pilot.press("j")
        assert threads.cursor == 1
        await pilot.press("enter")
        await until(pilot, lambda: reader.has_focus and not threads.has_focus)
        shown = str(reader.border_title)  # (set through Textual's own border_title, which repaints the pane)
        assert " Message " in shown
        assert f"[{FOCUSED_TITLE}]" in shown
        await pilot.press("h")  # back: the reader's own binding, reached through Textual's dispatch
        await until(pilot, lambda: threads.has_focus)
        assert threads.current is not None
        done = threads.current.id
        await pilot.press("e")  # done: it leaves the inbox
        await settle(pilot)
        assert done not in {threads.source.row(index).id for index in range(len(threads.source))}


async def test_the_switch_runs_the_stock_path(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("PIGEON_STOCK_FRAMES", "1")
    with caplog.at_level(logging.INFO, logger="pigeon.tui.fast_path"):
        await runs_as_plain_textual()
    assert said(caplog) == [
        "Pigeon's fast path is off, Textual's stock path runs: PIGEON_STOCK_FRAMES=1 in the environment"
    ]


async def test_an_untested_textual_runs_the_stock_path(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv("PIGEON_STOCK_FRAMES", raising=False)
    monkeypatch.setattr(guard, "TESTED_TEXTUAL", frozenset({"7.0.0"}))
    with caplog.at_level(logging.INFO, logger="pigeon.tui.fast_path"):
        await runs_as_plain_textual()
    [line] = said(caplog)
    assert "is not a version it was tested with (7.0.0)" in line


async def test_a_private_name_missing_runs_the_stock_path(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv("PIGEON_STOCK_FRAMES", raising=False)
    monkeypatch.setattr(guard, "NEEDED_ON_CLASSES", {**guard.NEEDED_ON_CLASSES, App: ("_begin_batch", "_renamed")})
    with caplog.at_level(logging.INFO, logger="pigeon.tui.fast_path"):
        await runs_as_plain_textual()
    assert said(caplog) == [
        f"Pigeon's fast path is off, Textual's stock path runs: Textual {version('textual')} lacks App._renamed"
    ]


@pytest.mark.fast_path
async def test_the_tested_textual_runs_the_fast_path(caplog: pytest.LogCaptureFixture) -> None:
    app = scene_app()
    with caplog.at_level(logging.INFO, logger="pigeon.tui.fast_path"):
        async with app.run_test(size=SIZE) as pilot:
            await mail_loaded(pilot)
            screen = app.screen
            assert isinstance(screen._compositor, LineCompositor)
            assert isinstance(screen.query_one(ThreadList).vertical_scrollbar, SteadyScrollBar)
    assert said(caplog) == []
