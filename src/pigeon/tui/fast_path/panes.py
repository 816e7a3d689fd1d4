"""The fast path's part in the mail screen's panes: a focus move repaints a pane's title line alone (not the whole
pane, as Textual's Focus and Blur handlers do), a new status its bottom line alone, and a pane's scrollbar is drawn
again only when its look changed.

Textual restyles a widget's scrollbars with the widget, and its scrollbar-colour properties repaint them even when
the colours stay the same: every focus move drew the list's and the reader's scrollbars anew.
"""

from __future__ import annotations

from typing import Any

from rich.color import Color as RichColor
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.content import Content
from textual.geometry import Region
from textual.scrollbar import ScrollBar, ScrollBarRender
from textual.strip import Strip
from textual.widget import Widget

from pigeon.tui.fast_path.guard import running


def quiet_focus(widget: Widget, event: events.Focus | events.Blur) -> bool:
    """Handle ``widget``'s Focus or Blur as Textual's handler does, without its repaint of the whole widget; False
    (and Textual's handler runs) when the fast path is off."""
    if not running(widget.app, "pane_focus"):
        return False
    event.prevent_default()  # (Textual's handler, on Widget, is not called)
    widget.has_focus = isinstance(event, events.Focus)
    if widget.parent is not None:
        made = events.DescendantFocus if widget.has_focus else events.DescendantBlur
        widget.parent.post_message(made(widget))
    return True


def set_title_quietly(widget: Widget, title: Content) -> bool:
    """Show ``title`` as ``widget``'s border title without Textual's repaint of the whole widget (the caller draws
    the title's line); False when the fast path is off (then set ``border_title``)."""
    if not running(widget.app, "pane_focus"):
        return False
    widget._border_title = title
    return True


def set_subtitle_quietly(widget: Widget, subtitle: Content | None) -> bool:
    """Show ``subtitle`` as ``widget``'s border subtitle without Textual's repaint of the whole widget (the caller
    draws the bottom line); False when the fast path is off (then set ``border_subtitle``)."""
    if not running(widget.app, "pane_focus"):
        return False
    widget._border_subtitle = None if subtitle is None else subtitle.expand_tabs(4).split()[0]
    return True


class SteadyScrollBar(ScrollBar):
    """A scrollbar drawn again only when what it shows changed: a plain ``refresh()`` that finds the look it last
    drew changes nothing; any other refresh, or one after a change of size, position, colour or hover, is
    Textual's."""

    _shown: tuple[Any, ...] | None = None

    def _look(self) -> tuple[Any, ...] | None:
        parent = self.parent
        if parent is None or not self.is_mounted:
            return None
        styles = parent.styles
        return (
            self.size,
            self.thickness,
            self.grabbed,
            self.mouse_over,
            self.window_virtual_size,
            self.window_size,
            self.position,
            styles.scrollbar_color,
            styles.scrollbar_color_hover,
            styles.scrollbar_color_active,
            styles.scrollbar_background,
            styles.scrollbar_background_hover,
            styles.scrollbar_background_active,
            parent.background_colors,
            self.screen.styles.scrollbar_color,
        )

    def render(self) -> Any:
        self._shown = self._look()
        return super().render()

    _lines: tuple[tuple[Any, ...] | None, list[Strip]] = (None, [])
    _drawing: list[Strip] | None = None  # the bar's lines, while a render asks for them

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._strips: dict[tuple[Segment, Style], Strip] = {}  # a line per kind of segment, filtered once

    def render_lines(self, crop: Region) -> list[Strip]:
        """The bar's lines, made once a look from the segments Textual's renderer makes for it, without the pass
        through a Rich console that Textual's drawing takes (the reader's bar moves with each message key: 42
        lines); Textual's own where the bar has nothing of its usual look to draw."""
        self._drawing = self._bar_lines()
        try:
            return super().render_lines(crop)
        finally:
            self._drawing = None

    def render_line(self, y: int) -> Strip:
        lines = self._drawing
        if lines is None:
            return super().render_line(y)
        return lines[y] if 0 <= y < len(lines) else Strip.blank(self.size.width)

    def _bar_lines(self) -> list[Strip] | None:
        look = self._look()
        made_for, kept = self._lines
        if look is not None and made_for == look:
            return kept
        renderable = self.render() if look is not None and self.vertical else None
        if not isinstance(renderable, ScrollBarRender):  # (not laid out, or a screen that hides scrollbars)
            return None
        width, height = self.size
        style = renderable.style if isinstance(renderable.style, Style) else Style.parse(str(renderable.style))
        bar = renderable.render_bar(
            size=height,
            virtual_size=renderable.virtual_size,
            window_size=renderable.window_size,
            position=renderable.position,
            thickness=width,
            vertical=True,
            back_color=style.bgcolor or RichColor.parse("#555555"),
            bar_color=style.color or RichColor.parse("bright_magenta"),
        )
        base, made = self.visual_style.rich_style, self._strips
        if len(made) > 64:  # (a bar's lines are a few kinds: its track above and below, its thumb, the thumb's ends)
            made.clear()
        lines = []
        for part in bar.segments:
            line = made.get((part, base))
            if line is None:
                line = made[part, base] = Strip([Segment(part.text, base + part.style)], width)
            lines.append(line)
        self._lines = (look, lines)
        return lines

    def refresh(self, *regions: Any, repaint: bool = True, layout: bool = False, recompose: bool = False) -> Any:
        plain = not regions and repaint and not layout and not recompose
        if plain and self._shown is not None and self._look() == self._shown:
            return self
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)


def steady_vertical_scrollbar(widget: Widget) -> ScrollBar | None:
    """``widget``'s vertical scrollbar, made as Textual makes it but a :class:`SteadyScrollBar`; None when the fast
    path is off (Textual's own is then made)."""
    if widget._vertical_scrollbar is not None:
        return widget._vertical_scrollbar
    if not running(widget.app, "scrollbar"):
        return None
    bar = SteadyScrollBar(vertical=True, name="vertical", thickness=widget.scrollbar_size_vertical)
    bar.display = False
    widget._vertical_scrollbar = bar
    widget.app._start_widget(widget, bar)
    return bar
