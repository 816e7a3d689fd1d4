"""How the focused pane is shown (issue 16): a badge on its title and the list's cursor row, set in code, so that
opening a thread or going back draws those few lines and the key bar, not both panes whole."""

from __future__ import annotations

import sys
from unittest.mock import patch

import pytest
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

from pigeon.tui.screens.mail import MainScreen
from pigeon.tui.widgets.key_bar import KeyBar
from pigeon.tui.widgets.pane import Pane
from pigeon.tui.widgets.reader import Reader
from pigeon.tui.widgets.thread_list import ThreadList
from tests.tui.scenes import SIZE, mail_loaded, mail_screen, scene_app, settle
from tests.tui.test_key_path import until


def badge(pane: Pane) -> bool:
    """Whether the pane's title is drawn as the focus's badge."""
    title = pane._border_title
    return title is not None and title.plain == f" {pane.title.plain} " and bool(title.spans)


@pytest.mark.fast_path
async def test_a_focus_move_draws_the_title_lines_the_cursor_row_and_the_key_bar() -> None:
    app = scene_app()
    async with app.run_test(size=SIZE) as pilot:
        screen, threads, reader = await mail_screen(pilot)
        asked: list[tuple[Widget, Region]] = []
        original = Widget.render_lines

        def render_lines(widget: Widget, crop: Region):  # type: ignore[no-untyped-def]
            asked.append((widget, crop))
            return original(widget, crop)

        cursor_line = threads.cursor - int(threads.scroll_offset.y) + threads.content_offset.y
        for pane, other in ((reader, threads), (threads, reader)):  # open, then back
            asked.clear()
            with patch.object(Widget, "render_lines", render_lines):
                screen.set_focus(pane)
                await until(pilot, lambda pane=pane: pane.has_focus and app._batch_count == 0)  # type: ignore[misc]
                await pilot.pause()
            lines: dict[str, set[int]] = {}
            for widget, crop in asked:
                lines.setdefault(type(widget).__name__, set()).update(range(crop.y, crop.bottom))
            assert lines.get("Reader") == {0}, lines  # its title line: the text under it is not drawn again
            assert lines.get("ThreadList") == {0, cursor_line}, lines  # its title line and the cursor's row
            assert lines.get("KeyBar") == {0}
            assert set(lines) <= {"Reader", "ThreadList", "KeyBar", "SteadyScrollBar"}, lines
            assert badge(pane)
            assert not badge(other)


async def test_the_focus_changes_no_style_of_the_panes_that_are_not_restyled() -> None:
    """No rule of the stylesheet depends on the focus of a pane that is not restyled when the focus moves: a
    rule that did would not be applied (see ``tui/widgets/pane.py``)."""
    app = scene_app()
    async with app.run_test(size=SIZE) as pilot:
        await mail_loaded(pilot)
        panes = [w for w in app.screen.walk_children() if isinstance(w, Pane) and not w.RESTYLE_ON_FOCUS]
        assert {type(pane) for pane in panes} >= {ThreadList, Reader}

        def look(pane: Pane) -> object:
            rules = pane.styles.get_render_rules()
            parts = [pane.get_component_rich_style(name, partial=True) for name in sorted(pane.COMPONENT_CLASSES)]
            return rules, parts, [bar.styles.get_render_rules() for bar in pane.query("*")]

        for pane in panes:
            app.screen.set_focus(pane)
            await until(pilot, lambda pane=pane: pane.has_focus)  # type: ignore[misc]
            app.update_styles(pane)  # what Textual's restyling would make of it
            focused = look(pane)
            app.screen.set_focus(None)
            await until(pilot, lambda pane=pane: not pane.has_focus)  # type: ignore[misc]
            app.update_styles(pane)
            assert look(pane) == focused, type(pane).__name__


async def test_the_cursor_row_is_brighter_while_the_list_has_the_focus() -> None:
    app = scene_app()
    async with app.run_test(size=SIZE) as pilot:
        await mail_loaded(pilot)
        screen = app.screen
        threads, reader = screen.query_one(ThreadList), screen.query_one(Reader)
        y = threads.cursor - int(threads.scroll_offset.y)
        assert threads.has_focus
        focused = threads.render_line(y)
        screen.set_focus(reader)
        await until(pilot, lambda: reader.has_focus and app._batch_count == 0)
        blurred = threads.render_line(y)
        assert focused.text == blurred.text
        cursor_focused = threads.get_component_rich_style("thread-list--cursor-focused").bgcolor
        cursor = threads.get_component_rich_style("thread-list--cursor").bgcolor
        assert cursor_focused != cursor
        assert {s.style.bgcolor for s in focused if s.style} == {cursor_focused}
        assert {s.style.bgcolor for s in blurred if s.style} == {cursor}
        # the list keeps both looks of the cursor; a new theme brings new ones
        app.theme = "textual-light" if app.theme != "textual-light" else "textual-dark"
        await settle(pilot)
        themed = threads.get_component_rich_style("thread-list--cursor").bgcolor
        assert themed != cursor
        assert {s.style.bgcolor for s in threads.render_line(y) if s.style} == {themed}


def cells(strip: Strip) -> list[tuple[str, object, object, bool]]:
    """Each cell of a strip: its character, colours and weight."""
    found: list[tuple[str, object, object, bool]] = []
    for text, style, _control in strip:
        assert style is not None
        found += [(char, style.color, style.bgcolor, bool(style.bold)) for char in text]
    return found


async def test_the_key_bar_draws_what_textual_would_and_keeps_a_strip_for_each_set_of_keys() -> None:
    app = scene_app()
    async with app.run_test(size=SIZE) as pilot:
        await mail_loaded(pilot)
        screen = app.screen
        bar, reader, threads = screen.query_one(KeyBar), screen.query_one(Reader), screen.query_one(ThreadList)
        built: list[object] = []
        original = KeyBar._render_bar

        def render_bar(self: KeyBar):  # type: ignore[no-untyped-def]
            if sys._getframe(1).f_code.co_name == "render_line":  # (not Textual's way, through render())
                built.append(self)
            return original(self)

        with patch.object(KeyBar, "_render_bar", render_bar):
            for pane in (reader, threads, reader, threads):
                screen.set_focus(pane)
                await until(pilot, lambda pane=pane: pane.has_focus and app._batch_count == 0)  # type: ignore[misc]
                await settle(pilot)
                ours = bar.render_line(0)
                textuals = Widget.render_line(bar, 0)  # Textual's way from render() to a strip
                assert cells(ours) == cells(textuals)
                assert ours.cell_length == SIZE[0]
            assert len(built) == 1  # the reader's keys (the list's were drawn before): then both kept
            app.theme = "textual-light" if app.theme != "textual-light" else "textual-dark"
            await settle(pilot)
            assert cells(bar.render_line(0)) == cells(Widget.render_line(bar, 0))
            assert len(built) == 2  # new colours, a new strip


@pytest.mark.fast_path
async def test_a_focus_move_works_out_the_keys_once_before_its_frame() -> None:
    app = scene_app()
    async with app.run_test(size=SIZE) as pilot:
        await mail_loaded(pilot)
        screen: MainScreen = app.screen  # type: ignore[assignment]
        bar, reader, threads = screen.query_one(KeyBar), screen.query_one(Reader), screen.query_one(ThreadList)
        asked: list[object] = []
        before_frame: list[int] = []
        original_hints, original_refresh = KeyBar.hints, screen._compositor_refresh

        def hints(self: KeyBar):  # type: ignore[no-untyped-def]
            asked.append(self.screen.focused)
            return original_hints(self)

        def refresh() -> None:
            if not before_frame:
                before_frame.append(len(asked))
            original_refresh()

        with patch.object(KeyBar, "hints", hints), patch.object(screen, "_compositor_refresh", refresh):
            for pane in (reader, threads):
                asked.clear()
                before_frame.clear()
                screen.set_focus(pane)
                await until(pilot, lambda pane=pane: pane.has_focus and app._batch_count == 0)  # type: ignore[misc]
                await settle(pilot)
                assert before_frame == [1]
                assert asked[0] is pane
                assert bar._hints == original_hints(bar)  # the keys of the pane now focused


async def test_a_disabled_key_is_drawn_dim_as_textual_would_draw_it() -> None:
    app = scene_app()
    async with app.run_test(size=SIZE) as pilot:
        await mail_loaded(pilot)
        bar = app.screen.query_one(KeyBar)
        shown, palette = bar.hints()
        assert palette is not None
        bar._hints = ([shown[0]._replace(enabled=False), *shown[1:]], palette._replace(enabled=False))
        ours, textuals = bar.render_line(0), Widget.render_line(bar, 0)

        def looks(strip: Strip) -> list[tuple[str, bool]]:
            return [(char, bool(style and style.dim)) for text, style, _ in strip for char in text]

        assert looks(ours) == looks(textuals)
        assert cells(ours) == cells(textuals)
        dim = [char for char, is_dim in looks(ours) if is_dim]
        assert "".join(dim).startswith(f" {shown[0].display} {shown[0].description} ")
        assert "".join(dim).endswith(f" {palette.display} {palette.description} ")
