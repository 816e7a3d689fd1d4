"""The key bar: the keys of the focused context on one line at the bottom of a screen.

It shows what Textual's ``Footer`` shows (the bindings with ``show=True``, one per action, the palette key at the
right) and a click on a key presses it, but it is one widget drawing one line of text. ``Footer`` builds a widget
per key and rebuilds them all whenever focus moves, in a frame of its own: on opening a thread that cost more
than the rest of the opening together.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, Protocol, runtime_checkable

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.strip import Strip
from textual.widget import Widget

if TYPE_CHECKING:
    from textual.binding import Binding
    from textual.screen import Screen


STRIPS_KEPT = 8  # sets of keys whose strip is kept (the list's, the reader's, the sidebar's, a search's)


class KeyHint(NamedTuple):
    key: str
    display: str
    description: str
    enabled: bool
    action: str = ""


@runtime_checkable
class SaysKeys(Protocol):
    """A screen whose keys' words depend on where it is (the mail screen's e, in the Done view)."""

    def key_words(self, binding: Binding) -> str: ...


KEPT = "help"
"""The action whose key stays in a bar too narrow for every key (the way to all the others), left of the palette's."""
KEY_CONTRAST = 3.0  # the least contrast of a key with the bar (WCAG's for large or secondary text)


class KeyBar(Widget, can_focus=False):
    ALLOW_SELECT = False
    COMPONENT_CLASSES: ClassVar[set[str]] = {"key-bar--key", "key-bar--description", "key-bar--separator"}
    DEFAULT_CSS = """
    KeyBar {
        dock: bottom;
        height: 1;
        color: $footer-foreground;
        background: $footer-background;
    }
    KeyBar > .key-bar--key {
        color: $footer-key-foreground;  /* (where it does not stand out from the bar: see _key_style) */
        background: $footer-key-background;
        text-style: bold;
    }
    KeyBar > .key-bar--description {
        color: $footer-description-foreground;
        background: $footer-description-background;
    }
    KeyBar > .key-bar--separator {
        color: $foreground 20%;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._spans: list[tuple[int, int, KeyHint]] = []
        self._version = 0  # bumped when the keys or the look may have changed
        self._hints: tuple[list[KeyHint], KeyHint | None] | None = None
        self._worked_out_for: Widget | None = None  # the keys of a focus move, before its signal comes
        self._strips: dict[tuple[Any, ...], tuple[Strip, list[tuple[int, int, KeyHint]]]] = {}

    def on_mount(self) -> None:
        # The screen's signal covers bindings that change in place; focus moves are watched as well, since the
        # signal is not sent while the screen is still starting (the first focus).
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)
        self.watch(self.screen, "focused", self._focus_moved, init=False)
        self.call_after_refresh(self._changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen: Screen[Any]) -> None:
        if not self.is_attached or screen is not self.screen:
            return
        if self._worked_out_for is not None and self._worked_out_for is screen.focused:
            self._worked_out_for = None  # the signal of the focus move this bar has just worked out
            return
        self._changed()

    def _focus_moved(self, focused: Widget | None) -> None:
        """The keys of the newly focused widget, in the focus move's frame. The screen's signal for the move was
        sent just before (its callbacks come later) unless the screen is still starting: the keys are worked out
        here, once, and that signal is let pass (working them out twice showed in an Enter's frame)."""
        self._changed()
        screen = self.screen
        signalled = screen.is_attached and all(node.is_running for node in screen.ancestors_with_self)
        self._worked_out_for = focused if signalled else None

    def _changed(self) -> None:
        """The keys may have changed: the bar is drawn again only if what it shows did change."""
        shown = self.hints()
        if shown != self._hints:
            self._hints = shown
            self._version += 1
            self.refresh()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._version += 1
        self._strips.clear()

    def hints(self) -> tuple[list[KeyHint], KeyHint | None]:
        """The keys to show (first binding of each action, in order) and the palette's key."""
        app, screen = self.app, self.screen
        active = screen.active_bindings
        says = screen.key_words if isinstance(screen, SaysKeys) else None
        seen: set[str] = set()
        shown: list[KeyHint] = []
        for _node, binding, enabled, _tooltip in active.values():  # the focused widget's first, then outwards
            if not binding.show or binding.action in seen or binding.description in seen:
                continue  # (one hint per action: the reader's h "Back" hides the screen's esc "Back")
            seen.update((binding.action, binding.description))
            display = app.get_key_display(binding)
            description = says(binding) if says is not None else binding.description
            shown.append(KeyHint(binding.key, display, description, enabled, binding.action))
        palette = None
        if app.ENABLE_COMMAND_PALETTE and app.COMMAND_PALETTE_BINDING in active:
            _node, binding, enabled, _tooltip = active[app.COMMAND_PALETTE_BINDING]
            palette = KeyHint(binding.key, app.get_key_display(binding), binding.description, enabled)
            shown = [hint for hint in shown if hint.key != binding.key]
        return shown, palette

    def render(self) -> Text:
        """The bar as text (the screen draws it through :meth:`render_line`)."""
        segments, _width = self._render_bar()
        text = Text(no_wrap=True, overflow="crop", end="")
        for segment in segments:
            text.append(segment.text, segment.style)
        return text

    def render_line(self, y: int) -> Strip:
        """The bar as one strip, kept for each set of keys it has shown: opening a thread and going back alternate
        between two, and Textual's way from ``render`` to a strip (a rich ``Text`` made a ``Content``, then laid
        out) was a good part of an Enter's frame (docs/performance.md)."""
        width = self.size.width
        if y or width <= 0:
            return Strip.blank(width, self.rich_style)
        shown, palette = self._hints if self._hints is not None else self.hints()
        key = (tuple(shown), palette, width)  # (a new look clears them all)
        kept = self._strips.get(key)
        if kept is None:
            segments, cells = self._render_bar()
            strip = Strip(segments, cells).extend_cell_length(width).crop(0, width)
            kept = (strip.apply_style(self.rich_style), self._spans)
            if len(self._strips) >= STRIPS_KEPT:
                self._strips.clear()
            self._strips[key] = kept
        self._spans = kept[1]  # (a click reads the keys where they are drawn)
        return kept[0]

    def _render_bar(self) -> tuple[list[Segment], int]:
        """The bar's segments and their width in cells. Made as segments, not a rich ``Text`` laid out: the first
        set of the reader's keys is drawn in the frame that opens a thread,
        and laying out a ``Text`` is the slower way."""
        key_style, description_style = self._key_style(), self.get_component_rich_style("key-bar--description")
        separator = self.get_component_rich_style("key-bar--separator")
        dim = Style(dim=True)
        shown, palette = self._hints if self._hints is not None else self.hints()
        segments: list[Segment] = []
        spans: list[tuple[int, int, KeyHint]] = []
        at = 0

        def add(hint: KeyHint) -> None:
            nonlocal at
            key, description = f" {hint.display} ", f"{hint.description} "
            if hint.enabled:
                segments.extend((Segment(key, key_style), Segment(description, description_style)))
            else:
                segments.extend((Segment(key, key_style + dim), Segment(description, description_style + dim)))
            start, at = at, at + cell_len(key) + cell_len(description)
            spans.append((start, at, hint))

        def cells(hint: KeyHint) -> int:
            return cell_len(f" {hint.display} {hint.description} ")

        room = self.size.width - (1 + cells(palette) if palette else 0)  # (the palette's key: "▏" and the hint)
        crowded = sum(map(cells, shown)) > room
        if crowded and palette is not None:  # short of room: the palette by its key alone, help's key beside it
            palette = palette._replace(description="")
            room = self.size.width - 1 - cells(palette)
        kept = next((h for h in shown if h.action == KEPT), None) if crowded else None
        for hint in shown:  # whole hints only; the palette's key keeps its place at the right edge, help beside it
            if hint is kept:
                continue
            if at + cells(hint) > room - (cells(kept) if kept else 0):
                break
            add(hint)
        if kept is not None:
            add(kept)
        if palette is not None:
            if room > at:
                segments.append(Segment(" " * (room - at)))
                at = room
            segments.append(Segment("▏", separator))
            at += 1
            add(palette)
        self._spans = spans
        return segments, at

    def _key_style(self) -> Style:
        """The keys' style: the theme's colour for them where it stands out from the bar, else the descriptions'
        (bold still): in some themes, light ones most, the footer's key colour is 1.8-2.4:1 on the bar."""
        key = self.get_component_rich_style("key-bar--key")
        behind = self.rich_style.bgcolor
        if key.color is None or behind is None:
            return key
        if contrast(key.color.get_truecolor(), behind.get_truecolor()) >= KEY_CONTRAST:
            return key
        return key + Style(color=self.get_component_rich_style("key-bar--description").color)

    def on_click(self, event: events.Click) -> None:
        for start, end, hint in self._spans:
            if start <= event.x < end:
                if hint.enabled:
                    self.app.simulate_key(hint.key)
                else:
                    self.app.bell()
                return


def contrast(one: tuple[int, int, int], other: tuple[int, int, int]) -> float:
    """WCAG's contrast ratio of two colours given as red, green and blue (1 to 21)."""

    def luminance(color: tuple[int, int, int]) -> float:
        def channel(value: int) -> float:
            c = value / 255
            return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

        red, green, blue = color
        return 0.2126 * channel(red) + 0.7152 * channel(green) + 0.0722 * channel(blue)

    high, low = sorted((luminance(one), luminance(other)), reverse=True)
    return (high + 0.05) / (low + 0.05)
