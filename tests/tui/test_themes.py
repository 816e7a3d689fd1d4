"""Every built-in theme is legible: the list's and the reader's own colours stand out from their background, and a
resize keeps the list's cursor row in sight."""

from __future__ import annotations

import dataclasses
import html
import re

from textual.color import Color
from textual.geometry import Region

from pigeon.config import load_config
from pigeon.tui.app import PigeonApp
from pigeon.tui.widgets.inbox_list import VIEW_LABELS, InboxList
from pigeon.tui.widgets.key_bar import contrast
from pigeon.tui.widgets.reader import Reader
from pigeon.tui.widgets.thread_list import ROW_STYLES, ThreadList
from tests.server.conftest import Service
from tests.tui.conftest import BASE, loaded, pigeon_for, screen_text, settle

MIN_CONTRAST = 3.0  # WCAG's floor for large or secondary text; the list's dim dates and counts are secondary


async def test_every_theme_keeps_the_lists_and_readers_colours_legible(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=(160, 45)) as pilot:
        await loaded(pilot, app)
        threads = app.screen.query_one(ThreadList)
        reader = app.screen.query_one(Reader)
        poor = []
        for theme in sorted(t for t in app.available_themes if not t.startswith("ansi")):  # (ANSI: the terminal's)
            app.theme = theme
            await settle(pilot, app)
            for widget, names in ((threads, ROW_STYLES), (reader, ())):
                _, background = widget.background_colors
                for name in (*names, None):
                    style = widget.get_component_rich_style(name, partial=True) if name else widget.rich_style
                    if style.color is None:
                        continue
                    foreground = Color.from_rich_color(style.color)
                    shown = foreground.blend(background, 1 - foreground.a) if foreground.a < 1 else foreground
                    ratio = contrast(shown.rgb, background.rgb)
                    if ratio < MIN_CONTRAST:
                        poor.append(f"{theme} {type(widget).__name__} {name or 'text'}: {ratio:.2f}")
        assert not poor, "\n".join(poor)


async def test_a_resize_keeps_the_cursor_row_in_sight(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=(160, 45)) as pilot:
        threads = await loaded(pilot, app)
        await pilot.press("G")
        await settle(pilot, app)
        await pilot.resize_terminal(80, 24)
        await settle(pilot, app)
        top = int(threads.scroll_offset.y)
        assert top <= threads.cursor < top + threads.size.height


CELL_WIDTH, LINE_HEIGHT = 12.2, 24.4  # (Textual's screenshot geometry: a cell's width and a line's height)


def painted(app: PigeonApp, leave_out: Region) -> dict[tuple[str, int, int], str]:
    """What the screen shows, from Textual's own screenshot: each run of text's colour and each background's
    colour, by where it starts (row, column), outside ``leave_out``."""
    svg = app.export_screenshot()
    fills = dict(re.findall(r"\.terminal-\d+-(r\d+) \{ fill: ([^;}\s]+)", svg))
    found: dict[tuple[str, int, int], str] = {}
    for kind, fill, x, y, base in [
        *(
            ("text", fills.get(c, ""), x, y, 20.0)
            for c, x, y in re.findall(r'<text class="terminal-\d+-(r\d+)" x="([\d.]+)" y="([\d.]+)"', svg)
        ),
        *(("back", f, x, y, 1.5) for f, x, y in re.findall(r'<rect fill="([^"]+)" x="([\d.]+)" y="([\d.]+)"', svg)),
    ]:
        row, column = round((float(y) - base) / LINE_HEIGHT), round(float(x) / CELL_WIDTH)
        if not leave_out.contains(column, row):
            found[(kind, row, column)] = fill
    return found


async def screen_in(service: Service, theme: str, *, switch_to: str | None = None) -> dict[tuple[str, int, int], str]:
    """The mail screen of an app started in ``theme`` (then switched to ``switch_to``) once it has loaded and
    checked for mail, less the reader (whose text depends on what has loaded in it so far)."""
    config = load_config(base_url=BASE)
    config = dataclasses.replace(config, ui=dataclasses.replace(config.ui, theme=theme))
    app = pigeon_for(service, config=config, save_settings=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await loaded(pilot, app)
        inboxes = app.screen.query_one(InboxList)
        await settle(
            pilot, app, lambda: inboxes.option_count > len(VIEW_LABELS) + 1 and "checking every" in screen_text(app)
        )
        if switch_to is not None:
            before = painted(app, app.screen.query_one(Reader).region)
            app.theme = switch_to
            await settle(pilot, app, lambda: painted(app, app.screen.query_one(Reader).region) != before)
            await settle(pilot, app)
        return painted(app, app.screen.query_one(Reader).region)


async def test_a_theme_switched_while_running_looks_as_after_a_restart(service: Service) -> None:
    switched = await screen_in(service, "textual-dark", switch_to="textual-light")
    started = await screen_in(service, "textual-light")
    differ = sorted(where for where in switched.keys() | started.keys() if switched.get(where) != started.get(where))
    assert not differ, [(where, switched.get(where), started.get(where)) for where in differ[:10]]


def words_painted(app: PigeonApp, *, marks: bool = False) -> list[tuple[int, int, str, str, str]]:
    """Each run of words on the screen (not lines or spaces; with ``marks``, symbols too): its row, column, text,
    colour and the colour behind it, from Textual's own screenshot."""
    svg = app.export_screenshot()
    fills = dict(re.findall(r"\.terminal-\d+-(r\d+) \{ fill: ([^;}\s]+)", svg))
    backs = sorted(
        (round((float(y) - 1.5) / LINE_HEIGHT), round(float(x) / CELL_WIDTH), f)
        for f, x, y in re.findall(r'<rect fill="([^"]+)" x="([\d.]+)" y="([\d.]+)"', svg)
    )
    runs = []
    for c, x, y, text in re.findall(r'<text class="terminal-\d+-(r\d+)" x="([\d.]+)" y="([\d.]+)"[^>]*>([^<]*)<', svg):
        row, column, text = round((float(y) - 20.0) / LINE_HEIGHT), round(float(x) / CELL_WIDTH), html.unescape(text)
        behind = [f for r, col, f in backs if r == row and col <= column]
        if fills.get(c) and behind and (any(ch.isalnum() for ch in text) or (marks and text.strip())):
            runs.append((row, column, text, fills[c], behind[-1]))
    return runs


async def test_the_sidebar_the_titles_the_status_and_the_keys_are_legible_in_every_theme(service: Service) -> None:
    """What the app styles itself beyond the list's rows: each word on the sidebar, on the panes' title row, on the
    status line under them and in the key bar stands out from what is behind it (the theme's text colours, made
    for its background, not the accent's fill)."""
    app = pigeon_for(service)
    async with app.run_test(size=(160, 45)) as pilot:
        await loaded(pilot, app)
        inboxes = app.screen.query_one(InboxList)
        await settle(pilot, app, lambda: inboxes.option_count > len(VIEW_LABELS) + 1)  # (the counts shown)
        poor = []
        for theme in sorted(t for t in app.available_themes if not t.startswith("ansi")):  # (ANSI: the terminal's)
            app.theme = theme
            await settle(pilot, app)
            for row, column, text, fill, behind in words_painted(app):
                if row in (0, 43, 44) or inboxes.region.contains(column, row):  # (43: the status, 44: the keys)
                    ratio = contrast(Color.parse(fill).rgb, Color.parse(behind).rgb)
                    if ratio < MIN_CONTRAST:
                        poor.append(f"{theme} {text.strip()!r}: {ratio:.2f}")
        assert not poor, "\n".join(poor)


async def test_the_cursor_row_and_its_marks_are_legible_in_every_theme_focused_or_not(service: Service) -> None:
    app = pigeon_for(service)
    async with app.run_test(size=(160, 45)) as pilot:
        threads = await loaded(pilot, app)
        poor = []
        for focused in (True, False):
            if not focused:
                app.screen.set_focus(None)  # (the cursor stays, in its unfocused tint)
            for theme in sorted(t for t in app.available_themes if not t.startswith("ansi")):
                app.theme = theme
                await settle(pilot, app)
                area = threads.content_region
                row = area.y + threads.cursor - int(threads.scroll_offset.y)
                for at, column, text, fill, behind in words_painted(app, marks=True):
                    if at == row and area.x <= column < area.right:
                        ratio = contrast(Color.parse(fill).rgb, Color.parse(behind).rgb)
                        if ratio < MIN_CONTRAST:
                            where = "focused" if focused else "unfocused"
                            poor.append(f"{theme} {where} {text.strip()!r}: {ratio:.2f}")
        assert not poor, "\n".join(poor)
