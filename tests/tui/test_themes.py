"""Every built-in theme is legible: the list's and the reader's own colours stand out from their background, and a
resize keeps the list's cursor row in sight."""

from __future__ import annotations

from textual.color import Color

from pigeon.tui.widgets.reader import Reader
from pigeon.tui.widgets.thread_list import ROW_STYLES, ThreadList
from tests.server.conftest import Service
from tests.tui.conftest import loaded, pigeon_for, settle

MIN_CONTRAST = 3.0  # WCAG's floor for large or secondary text; the list's dim dates and counts are secondary


def luminance(color: Color) -> float:
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(color.r) + 0.7152 * channel(color.g) + 0.0722 * channel(color.b)


def contrast(one: Color, other: Color) -> float:
    a, b = sorted((luminance(one), luminance(other)), reverse=True)
    return (a + 0.05) / (b + 0.05)


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
                    ratio = contrast(
                        foreground.blend(background, 1 - foreground.a) if foreground.a < 1 else foreground, background
                    )
                    if ratio < MIN_CONTRAST:
                        poor.append(f"{theme} {type(widget).__name__} {name or 'text'}: {ratio:.2f}")
        assert not poor, poor


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
