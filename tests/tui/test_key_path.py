"""What lies between a key and its frame (issue 16): the compositor that draws only the changed lines, the App
running a pane's bindings at once, a focus move shown in one frame, the panes' titles and the key bar."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from unittest.mock import patch

import pytest
from textual import events
from textual.content import Content
from textual.geometry import Region, Size
from textual.pilot import Pilot
from textual.visual import Visual, visualize
from textual.widget import Widget

from pigeon.tui.fast_path import FOCUS_FRAME_WAIT
from pigeon.tui.fast_path.compositor import LineCompositor, TextualCompositor
from pigeon.tui.fast_path.panes import SteadyScrollBar
from pigeon.tui.screens.mail import MainScreen
from pigeon.tui.widgets.inbox_list import InboxList
from pigeon.tui.widgets.key_bar import KeyBar
from pigeon.tui.widgets.pane import FOCUSED_TITLE
from pigeon.tui.widgets.reader import Reader
from pigeon.tui.widgets.text_input import TextInput
from pigeon.tui.widgets.thread_list import ThreadList
from tests.tui.conftest import searches_held
from tests.tui.scenes import SIZE, mail_loaded, mail_screen, previewed, scene_app, settle


async def until(pilot: Pilot[None], holds: Callable[[], object], within: float = 5.0) -> None:
    """Wait for a state (no fixed sleep): ``AssertionError`` if it does not come within ``within`` seconds."""
    deadline = time.monotonic() + within
    while not holds():
        assert time.monotonic() < deadline, "the state never came"
        await pilot.pause()
        await asyncio.sleep(0.005)


@contextmanager
def lines_asked() -> Iterator[list[tuple[str, int]]]:
    """The widgets asked for lines meanwhile, each with how many lines (in the order asked)."""
    asked: list[tuple[str, int]] = []
    render_lines = Widget.render_lines

    def asking(self: Widget, crop: Region) -> list:  # type: ignore[type-arg]
        asked.append((type(self).__name__, crop.height))
        return render_lines(self, crop)

    with patch.object(Widget, "render_lines", asking):
        yield asked


@contextmanager
def frames_drawn(screen: MainScreen) -> Iterator[list[tuple[bool, set[str]]]]:
    """The screen's frames meanwhile: whether ``draw_key`` drew each, and the widgets each drew."""
    frames: list[tuple[bool, set[str]]] = []
    drawing_key = False
    original_refresh, original_draw = screen._compositor_refresh, screen.frames.draw_key

    def refresh() -> None:
        frames.append((drawing_key, {type(widget).__name__ for widget in screen._dirty_widgets}))
        original_refresh()

    def draw_key(*widgets: Widget) -> None:
        nonlocal drawing_key
        drawing_key = True
        try:
            original_draw(*widgets)
        finally:
            drawing_key = False

    with patch.object(screen, "_compositor_refresh", refresh), patch.object(screen.frames, "draw_key", draw_key):
        yield frames


def update_text(compositor: TextualCompositor, regions: list[Region], renders: object) -> str:
    """What a partial update of ``regions`` writes to the terminal, with ``renders`` as the compositor's way of
    asking widgets for their lines."""
    compositor._dirty_regions = set(regions)
    with patch.object(LineCompositor, "_get_renders", renders):
        update = compositor.render_partial_update()
    assert update is not None
    return update.render_segments(compositor.root.app.console)  # type: ignore[union-attr]


@pytest.mark.fast_path
async def test_a_partial_update_writes_what_textuals_own_compositor_writes() -> None:
    app = scene_app()
    async with app.run_test(size=SIZE) as pilot:
        await mail_loaded(pilot)
        screen = app.screen
        compositor = screen._compositor
        assert isinstance(compositor, LineCompositor)
        threads, reader, bar = screen.query_one(ThreadList), screen.query_one(Reader), screen.query_one(KeyBar)
        list_box, reader_box = threads.content_region, reader.region
        cases = [
            [
                Region(list_box.x, list_box.y + 1, list_box.width, 1),
                Region(list_box.x, list_box.y + 2, list_box.width, 1),
            ],
            [
                Region(list_box.x, list_box.y + 1, list_box.width, 1),
                Region(list_box.x, list_box.y + 30, list_box.width, 1),
            ],
            [reader_box],  # a whole pane (a focus move)
            [bar.region, reader_box],  # the key bar and the reader: lines far apart
            [Region(0, 5, SIZE[0], 3)],  # across the sidebar, the list and the reader
            [Region(list_box.right - 3, 10, 8, 2)],  # across the list's edge, its scrollbar and the reader's
        ]
        for regions in cases:
            ours = update_text(compositor, regions, LineCompositor._get_renders)
            textuals = update_text(compositor, regions, TextualCompositor._get_renders)
            assert ours, regions
            assert ours == textuals, regions


@pytest.mark.fast_path
async def test_a_full_update_writes_what_textuals_own_compositor_writes_without_the_hidden_widgets() -> None:
    app = scene_app()
    async with app.run_test(size=SIZE) as pilot:
        await mail_loaded(pilot)
        compositor = app.screen._compositor
        render_lines = Widget.render_lines

        def full_update(get_renders) -> tuple[str, list[str]]:  # type: ignore[no-untyped-def]
            asked: list[str] = []

            def asking(self: Widget, crop: Region) -> list:  # type: ignore[type-arg]
                asked.append(type(self).__name__)
                return render_lines(self, crop)

            with (
                patch.object(LineCompositor, "_get_renders", get_renders),
                patch.object(Widget, "render_lines", asking),
            ):
                update = compositor.render_full_update()
            assert update is not None
            return update.render_segments(app.console), asked

        ours, ours_asked = full_update(LineCompositor._get_renders)
        textuals, textuals_asked = full_update(TextualCompositor._get_renders)
        assert ours == textuals
        hidden = {"MainScreen", "Horizontal", "Vertical"}  # wholly behind the panes and the key bar
        assert hidden <= set(textuals_asked)
        assert not hidden & set(ours_asked)
        assert {"ThreadList", "Reader", "InboxList", "KeyBar"} <= set(ours_asked)


@pytest.mark.fast_path
async def test_a_partial_update_asks_only_the_lines_it_changes() -> None:
    app = scene_app()
    async with app.run_test(size=SIZE) as pilot:
        await mail_loaded(pilot)
        screen = app.screen
        asked: list[tuple[str, Region]] = []
        original = Widget.render_lines

        def render_lines(widget: Widget, crop: Region):  # type: ignore[no-untyped-def]
            asked.append((type(widget).__name__, crop))
            return original(widget, crop)

        threads = screen.query_one(ThreadList)
        box = threads.scrollable_content_region  # (without its scrollbar)
        with patch.object(Widget, "render_lines", render_lines):
            update_text(screen._compositor, [Region(box.x, box.y + 3, box.width, 1)], LineCompositor._get_renders)
        assert [name for name, _ in asked] == ["ThreadList"]  # nothing behind it, not the sidebar or the reader
        assert asked[0][1].height == 1

        # A focus move (Enter): the list, the reader and the key bar change. The rectangle around them is the
        # whole screen, but neither the sidebar nor the containers behind the panes are asked for a line.
        asked.clear()
        reader, bar = screen.query_one(Reader), screen.query_one(KeyBar)
        with patch.object(Widget, "render_lines", render_lines):
            update_text(screen._compositor, [threads.region, reader.region, bar.region], LineCompositor._get_renders)
        names = {name for name, _ in asked}
        assert {"ThreadList", "Reader", "KeyBar"} <= names
        parts = {"ThreadText", "ThreadBrief", "SteadyScrollBar"}  # (the reader's own parts)
        assert names <= {"ThreadList", "Reader", "KeyBar", *parts}, names


@pytest.mark.fast_path
async def test_a_key_the_list_binds_runs_without_passing_through_the_list() -> None:
    app = scene_app()
    async with app.run_test(size=SIZE) as pilot:
        await mail_loaded(pilot)
        threads = app.screen.query_one(ThreadList)
        assert app.focused is threads
        handed: list[str] = []
        original = threads.post_message

        def post(message):  # type: ignore[no-untyped-def]
            if isinstance(message, events.Key):
                handed.append(message.key)
            return original(message)

        with patch.object(threads, "post_message", post):
            await pilot.press("j")
            assert threads.cursor == 1
            await pilot.press("e")  # a screen's binding (done), from the list: run at once as well
            await settle(pilot)
            assert handed == []
            await pilot.press("ctrl+t")  # bound nowhere: the list gets the key, as Textual hands it on
            await pilot.pause()
            assert handed == ["ctrl+t"]
        sidebar = app.screen.query_one(InboxList)
        done = next(i for i in range(sidebar.option_count) if sidebar.get_option_at_index(i).id == "view:done")
        assert "Done 1" in str(sidebar.get_option_at_index(done).prompt)


@pytest.mark.fast_path
async def test_a_keys_frame_is_drawn_as_its_binding_returns_and_its_binding_chain_built_once() -> None:
    app = scene_app()
    async with app.run_test(size=SIZE) as pilot:
        screen, threads, _ = await mail_screen(pilot)
        chains = 0
        chain = type(screen)._binding_chain

        def counted(self: MainScreen):  # type: ignore[no-untyped-def]
            nonlocal chains
            chains += 1
            return chain.fget(self)  # type: ignore[attr-defined]

        with frames_drawn(screen) as frames, patch.object(type(screen), "_binding_chain", property(counted)):
            await pilot.press("j")
            assert frames == [(True, {"ThreadList"})]  # drawn before the key's other work, in the key's turn
            assert chains == 1  # not once with priority and once without
            frames.clear()
            for _ in range(20):  # j held down, or pasted: keys waiting behind each other
                app.post_message(events.Key("j", "j"))
            await until(pilot, lambda: threads.cursor == 21)
            await previewed(pilot)  # (the reader then shows the thread the cursor rests on: frames of its own)
            keys = [(by_key, drawn) for by_key, drawn in frames if "ThreadList" in drawn]
            assert sum(by_key for by_key, _ in keys) <= 1  # not a frame a key: the last, or Textual's for all
            assert len(keys) <= 3
            frames.clear()
            await pilot.press("G")  # to the last thread: the list scrolls, and its scrollbar with it
            await previewed(pilot)
            assert frames[0] == (True, {"ThreadList", "SteadyScrollBar"})
            assert not any("ThreadList" in drawn for _, drawn in frames[1:])  # the rest are the preview's
            assert threads.cursor == len(threads.source) - 1
            frames.clear()
            threads.refresh(layout=True)  # a layout the key asked for: laid out and drawn at once, in one frame
            screen.draw_key(threads)
            assert frames == [(True, {"ThreadList"})]
            await settle(pilot)
            assert not any("ThreadList" in drawn for _, drawn in frames[1:])
            frames.clear()
            screen.query_one(InboxList).refresh(layout=True)  # outside the key's widget: drawn the usual way
            screen.draw_key(threads)
            assert frames == []
            await settle(pilot)
            assert frames
            assert not any(by_key for by_key, _ in frames)
        y = threads.cursor - int(threads.scroll_offset.y) + threads.content_region.y
        assert threads.current is not None
        assert threads.current.subject[:20] in "".join(seg.text for seg in screen._compositor.render_strips()[y])


async def test_a_priority_binding_comes_first_on_the_list() -> None:
    app = scene_app()
    async with app.run_test(size=SIZE) as pilot:
        await mail_loaded(pilot)
        await pilot.press("slash", "b", "u", "d")  # / is a priority binding: the letters after it are the search's
        await settle(pilot)
        assert app.screen.query_one("#filter").value == "bud"  # type: ignore[attr-defined]


@pytest.mark.fast_path
async def test_a_focus_move_is_shown_in_one_frame() -> None:
    app = scene_app()
    async with app.run_test(size=SIZE) as pilot:
        screen, threads, reader = await mail_screen(pilot)
        frames: list[set[str]] = []
        original = screen._compositor_refresh

        def refresh() -> None:
            frames.append({type(widget).__name__ for widget in screen._dirty_widgets})
            original()

        with patch.object(screen, "_compositor_refresh", refresh):
            screen.set_focus(reader)
            assert app._batch_count == 1  # no frame until both widgets have their new look
            await until(pilot, lambda: app._batch_count == 0 and reader.has_focus and not threads.has_focus)
            await pilot.pause()
        assert len(frames) == 1
        assert {"Reader", "ThreadList", "KeyBar"} <= frames[0]
        assert not {name for name in frames[0] if "ScrollBar" in name}  # their look is the same (SteadyScrollBar)


@pytest.mark.fast_path
async def test_a_focus_moves_frame_is_drawn_as_both_widgets_answer_and_what_waits_for_it_runs_after() -> None:
    app = scene_app()
    async with app.run_test(size=SIZE) as pilot:
        screen, _threads, reader = await mail_screen(pilot)
        events: list[str] = []
        original_refresh, original_end, original_timer = (
            screen._compositor_refresh,
            app._end_batch,
            screen._on_timer_update,
        )

        def refresh() -> None:
            events.append("frame:" + ",".join(sorted(type(widget).__name__ for widget in screen._dirty_widgets)))
            original_refresh()

        def end_batch() -> None:
            events.append("end of the batch")
            original_end()

        def timer() -> None:
            events.append("update timer")
            original_timer()

        with (
            patch.object(screen, "_compositor_refresh", refresh),
            patch.object(app, "_end_batch", end_batch),
            patch.object(screen, "_on_timer_update", timer),
        ):
            screen.set_focus(reader)
            screen.after_focus_frame(lambda: events.append("after the frame"))
            await until(pilot, lambda: "after the frame" in events)
            await settle(pilot)
        frames = [event for event in events if event.startswith("frame:")]
        assert len(frames) == 1  # (the widgets' update messages, queued before it, make no empty frame)
        # Drawn there and then, not at the screen's update timer; then what waited for it.
        assert events[:3] == ["end of the batch", frames[0], "after the frame"]
        assert {"KeyBar", "Reader", "ThreadList"} <= set(frames[0].removeprefix("frame:").split(","))


@pytest.mark.fast_path
async def test_opening_a_previewed_thread_reads_its_neighbours_ahead_after_the_frame() -> None:
    app = scene_app()
    async with app.run_test(size=SIZE) as pilot:
        screen, threads, reader = await mail_screen(pilot)
        await pilot.press("j")
        await previewed(pilot)
        await settle(pilot)
        neighbours = [threads.source.row(index).id for index in (0, 2)]
        for thread_id in neighbours:
            screen.core.messages.pop(thread_id, None)
        events: list[str] = []
        original_refresh, original_read = screen._compositor_refresh, screen.reading.read_neighbours

        def refresh() -> None:
            events.append("frame")
            original_refresh()

        def read_neighbours() -> object:
            events.append("read ahead")
            return original_read()

        with (
            patch.object(screen, "_compositor_refresh", refresh),
            patch.object(screen.reading, "read_neighbours", read_neighbours),
        ):
            await pilot.press("enter")
            await until(pilot, lambda: all(thread_id in screen.core.messages for thread_id in neighbours))
        assert reader.has_focus
        assert events.index("frame") < events.index("read ahead")  # (its worker starts once the frame is out)


@pytest.mark.fast_path
async def test_a_cursor_move_asks_the_list_for_its_two_rows_and_not_the_scrollbar_beside_them() -> None:
    app = scene_app()
    async with app.run_test(size=SIZE) as pilot:
        _screen, threads, _reader = await mail_screen(pilot)
        assert threads.show_vertical_scrollbar
        with lines_asked() as asked:
            await pilot.press("j")
            await until(pilot, lambda: bool(asked))
        assert asked == [("ThreadList", 2)]


@pytest.mark.fast_path
async def test_a_new_status_draws_the_lists_bottom_line_alone() -> None:
    app = scene_app()
    async with app.run_test(size=SIZE) as pilot:
        screen, threads, _reader = await mail_screen(pilot)
        asked: list[tuple[str, int, int]] = []
        render_lines = Widget.render_lines

        def asking(self: Widget, crop: Region) -> list:  # type: ignore[type-arg]
            asked.append((type(self).__name__, crop.y, crop.height))
            return render_lines(self, crop)

        with patch.object(Widget, "render_lines", asking):
            screen.set_status(Content.styled("Checking for mail…", "italic"))
            await until(pilot, lambda: bool(asked))
            await settle(pilot)
        assert asked == [("ThreadList", threads.outer_size.height - 1, 1)]
        assert "Checking for mail…" in "".join(strip.text for strip in threads.render_lines(threads.outer_size.region))


@pytest.mark.fast_path
async def test_a_pane_scrollbar_draws_the_lines_textual_draws_for_it() -> None:
    app = scene_app()
    async with app.run_test(size=SIZE) as pilot:
        _screen, threads, _reader = await mail_screen(pilot)
        bar = threads.vertical_scrollbar
        assert isinstance(bar, SteadyScrollBar)
        for theme in ("textual-dark", "textual-light"):
            app.theme = theme
            for share in (0.0, 0.37, 0.5, 1.0):  # (the thumb's ends fall on different eighths of a cell)
                threads.scroll_to(y=round(threads.max_scroll_y * share), animate=False, immediate=True)
                await settle(pilot)
                width, height = bar.size
                textual = Visual.to_strips(bar, visualize(bar, bar.render()), width, height, bar.visual_style)
                for line_filter in bar.get_line_filters():  # (as Textual passes each line on to the screen)
                    textual = [strip.apply_filter(line_filter, bar.background_colors[1]) for strip in textual]
                ours = bar.render_lines(Region(0, 0, width, height))
                assert [list(strip) for strip in ours] == [list(strip) for strip in textual], (theme, share)


@pytest.mark.fast_path
async def test_a_scrollbar_is_drawn_again_only_when_its_look_changes() -> None:
    app = scene_app()
    async with app.run_test(size=SIZE) as pilot:
        screen, threads, reader = await mail_screen(pilot)
        bar = threads.vertical_scrollbar
        assert isinstance(bar, SteadyScrollBar)
        assert threads.show_vertical_scrollbar  # (the list is longer than the screen)
        drawn: list[object] = []
        original = SteadyScrollBar.render

        def render(self: SteadyScrollBar) -> object:
            drawn.append(self)
            return original(self)

        with patch.object(SteadyScrollBar, "render", render):
            for pane in (reader, threads):  # open, and back: both panes restyled twice
                screen.set_focus(pane)
                await until(pilot, lambda pane=pane: pane.has_focus and app._batch_count == 0)  # type: ignore[misc]
                await settle(pilot)
            assert bar not in drawn
            before = threads.scroll_y
            threads.scroll_page_down(animate=False)
            await settle(pilot)
            assert threads.scroll_y > before
            assert bar in drawn  # its thumb moved
            drawn.clear()
            app.theme = "textual-light" if app.theme != "textual-light" else "textual-dark"
            await settle(pilot)
            assert bar in drawn  # new colours


@pytest.mark.fast_path
async def test_a_focus_frame_does_not_wait_for_a_widget_that_never_answers() -> None:
    app = scene_app()
    async with app.run_test(size=SIZE) as pilot:
        await mail_loaded(pilot)
        screen: MainScreen = app.screen  # type: ignore[assignment]
        timers: list[tuple[float, object]] = []
        with patch.object(screen, "set_timer", lambda delay, callback: timers.append((delay, callback))):
            screen.frames.one_frame([Widget()])  # never mounted: it handles nothing
        await pilot.pause()
        assert app._batch_count == 1  # still waiting for it
        [(delay, give_up)] = timers
        assert delay == FOCUS_FRAME_WAIT
        give_up()  # type: ignore[operator]
        assert app._batch_count == 0
        assert screen.frames.holding == 0


async def test_the_focused_panes_title_takes_the_accent() -> None:
    app = scene_app()
    async with app.run_test(size=SIZE) as pilot:
        await mail_loaded(pilot)
        threads, reader = app.screen.query_one(ThreadList), app.screen.query_one(Reader)

        def accented(widget: ThreadList | Reader) -> bool:
            title = widget._border_title
            return title is not None and any(str(span.style) == FOCUSED_TITLE for span in title.spans)

        assert accented(threads)
        assert not accented(reader)
        await pilot.press("enter")
        await until(pilot, lambda: reader.has_focus)
        assert accented(reader)
        assert not accented(threads)
        assert threads.title.plain == "Threads · Inbox"
        assert reader.title.plain == "Message"


@pytest.mark.fast_path
async def test_the_first_focus_move_lays_nothing_out() -> None:
    app = scene_app()
    async with app.run_test(size=SIZE) as pilot:
        await mail_loaded(pilot)
        screen = app.screen
        await settle(pilot)
        layouts: list[bool] = []
        original = screen._refresh_layout

        def layout(*args, **kwargs) -> None:  # type: ignore[no-untyped-def]
            layouts.append(True)
            original(*args, **kwargs)

        with patch.object(screen, "_refresh_layout", layout):
            screen.set_focus(screen.query_one(Reader))  # the scrollbars were styled when they appeared
            await until(pilot, lambda: app._batch_count == 0)
            await pilot.pause()
        assert layouts == []


async def test_the_key_bar_is_drawn_again_only_when_its_keys_change() -> None:
    app = scene_app()
    async with app.run_test(size=SIZE) as pilot:
        await mail_loaded(pilot)
        bar = app.screen.query_one(KeyBar)
        version = bar._version
        bar._changed()  # Textual's bindings signal, the keys as they were
        assert bar._version == version
        app.screen.set_focus(app.screen.query_one(Reader))  # the reader's keys
        await until(pilot, lambda: bar._version > version)
        shown = bar.render().plain
        assert " h Back " in shown  # the reader's back key, not the screen's escape (which waits out its ambiguity)
        assert "esc Back" not in shown


@pytest.mark.fast_path
async def test_a_frame_made_while_a_focus_move_waits_is_drawn_after_it() -> None:
    app = scene_app()
    async with app.run_test(size=SIZE) as pilot:
        await mail_loaded(pilot)
        screen: MainScreen = app.screen  # type: ignore[assignment]
        await settle(pilot)
        drawn: list[object] = []
        dropped: list[object] = []  # frames rendered during the wait, which Textual would not draw
        original = app._display

        def display(on, update) -> None:  # type: ignore[no-untyped-def]
            (dropped if app._batch_count else drawn).append(update)
            original(on, update)

        with patch.object(app, "_display", display):
            screen.set_focus(screen.query_one(Reader))
            screen.query_one(InboxList).refresh()
            screen._refresh_layout()  # a layout while the focus frame waits: Textual renders it at its next turn...
            screen._compositor_refresh()  # (that turn, made to come now) ...and, in a batch, draws nothing
            await until(pilot, lambda: app._batch_count == 0)
            await pilot.pause()
        assert dropped == []
        assert drawn  # the frame held was drawn once the focus move's frame could be
        assert not screen._compositor._dirty_regions
        assert not screen.frames.frame_held


@pytest.mark.fast_path
async def test_a_resize_to_the_screens_own_size_lays_nothing_out_and_a_new_size_does() -> None:
    app = scene_app()
    async with app.run_test(size=SIZE) as pilot:
        screen, threads, _ = await mail_screen(pilot)
        layouts: list[tuple[object, ...]] = []
        original = screen._refresh_layout

        def layout(*args, **kwargs) -> None:  # type: ignore[no-untyped-def]
            layouts.append(args)
            original(*args, **kwargs)

        with patch.object(screen, "_refresh_layout", layout):
            screen.post_message(events.Resize(Size(*SIZE), Size(*SIZE)))  # as the app sends it at start-up
            await pilot.pause()
            assert layouts == []
            await pilot.resize_terminal(120, 40)
            await until(pilot, lambda: screen.size == Size(120, 40))
        assert layouts
        assert threads.size.height < SIZE[1] - 5  # laid out again at the new size


@pytest.mark.fast_path
async def test_the_first_move_after_the_list_changed_size_draws_its_two_rows_alone() -> None:
    app = scene_app()
    async with app.run_test(size=SIZE) as pilot:
        _screen, threads, _reader = await mail_screen(pilot)
        height = threads.size.height
        await pilot.resize_terminal(SIZE[0], SIZE[1] - 3)  # (as a banner above it makes the list shorter)
        await until(pilot, lambda: threads.size.height == height - 3)
        await settle(pilot)
        with lines_asked() as asked:
            await pilot.press("j")
            await until(pilot, lambda: bool(asked))
        lists = [entry for entry in asked if entry[0] == "ThreadList"]  # (a preview may follow the move)
        assert lists == [("ThreadList", 2)]  # (the layout's own frame drew the list whole already)


@pytest.mark.fast_path
async def test_a_letter_typed_into_the_search_lays_nothing_out_and_shows_the_search_in_its_own_turn() -> None:
    app = scene_app()
    async with app.run_test(size=SIZE) as pilot:
        screen, _threads, _reader = await mail_screen(pilot)
        await previewed(pilot)
        await pilot.press("slash")
        await settle(pilot)
        box = screen.query_one("#filter", TextInput)
        assert box.has_focus
        layouts = 0
        original_layout = screen._refresh_layout

        def layout(*args: object, **kwargs: object) -> None:
            nonlocal layouts
            layouts += 1
            original_layout(*args, **kwargs)  # type: ignore[arg-type]

        with (
            searches_held(app),  # (its results, come at once in a small mailbox, are another frame's)
            lines_asked() as asked,
            frames_drawn(screen) as frames,
            patch.object(screen, "_refresh_layout", layout),
        ):
            await pilot.press("b")
            await until(pilot, lambda: "Searching" in screen.threads.status)
            await until(pilot, lambda: any(by_key for by_key, _ in frames))
            searching = [entry for entry in asked if entry[0] == "ThreadList"]
        # The letter's frame draws the field and the list's title and status lines; nothing is laid out.
        assert layouts == 0
        assert {name for name, _ in asked} <= {"TextInput", "ThreadList"}
        assert searching
        assert all(lines == 1 for _, lines in searching)
        assert any(by_key and "ThreadList" in drawn for by_key, drawn in frames)  # not left for a timer's frame


async def test_a_search_longer_than_its_box_scrolls_within_it() -> None:
    app = scene_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen, _threads, _reader = await mail_screen(pilot)
        await pilot.press("slash")
        box = screen.query_one("#filter", TextInput)
        words = "first" + "".join(f"w{n:02}" for n in range(40)) + "last"  # (no piece repeats)
        await pilot.press(*words)
        await settle(pilot)
        assert box.value == words
        assert box.scroll_offset.x > 0  # scrolled, so the cursor at the end stays in view
        region = box.content_region
        row = "".join(seg.text for seg in screen._compositor.render_strips()[region.y])
        shown = row[region.x : region.right].rstrip()
        assert shown.endswith("w39last")  # its end shows, by the cursor
        assert "first" not in shown  # and its start has scrolled out
