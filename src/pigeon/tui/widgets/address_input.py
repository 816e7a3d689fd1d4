"""``AddressInput``: a field of comma-separated addresses (To, Cc) that completes the one being typed from the
address book, as you type. The candidates show in a small list under the field, drawn over what is below it; up and
down move in it, Tab (or Right at the end of the field) takes the highlighted one, Escape closes it. Ignored, it
changes nothing: what the user typed stays as typed."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import ClassVar

from textual.actions import SkipAction
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.geometry import Region
from textual.strip import Strip
from textual.visual import Visual
from textual.widget import Widget

from pigeon.core.address_book import AddressEntry
from pigeon.tui.widgets.text_input import TextInput

Lookup = Callable[[str], Awaitable[list[AddressEntry]]]
LookupAtOnce = Callable[[str], "list[AddressEntry] | None"]
"""The same lookup answered at once where it can be (None: it cannot, ask ``Lookup``)."""


def last_address_start(text: str) -> int:
    """Where the address being typed starts: after the last comma outside a quoted name and angle brackets."""
    start, quoted, angled, escaped = 0, False, False, False
    for index, ch in enumerate(text):
        if escaped:
            escaped = False
        elif ch == "\\" and quoted:
            escaped = True
        elif ch == '"':
            quoted = not quoted
        elif not quoted and ch in "<>":
            angled = ch == "<"
        elif ch == "," and not quoted and not angled:
            start = index + 1
    return start


class Candidates(Widget):
    """The addresses offered for the one being typed, one a line, the highlighted one marked; never focused (the keys
    stay in the field).

    Its size never changes: closed, it waits above the screen, laid out, and opening it is a move. So every letter,
    the first too, is drawn in the letter's own frame (Textual lays a widget that changed size out twice, a frame
    apart; an ``OptionList`` also measures itself again after it is laid out: two or three frames a letter)."""

    ROWS = 8
    """Candidates shown at most (the book's lookup offers as many)."""
    DEFAULT_CSS = f"""
    Candidates {{
        layer: address-candidates;  /* (a layer of its own: the screen's alignment never moves what is under it) */
        overlay: screen;
        position: absolute;
        offset: 0 -1000;  /* (closed: above the screen) */
        width: 80;
        max-width: 100%;
        height: {ROWS + 2};
        border: round $accent;
        background: $panel;
        padding: 0 1;
        & > .candidates--highlighted {{
            color: $block-cursor-foreground;
            background: $block-cursor-background;
            text-style: $block-cursor-text-style;
        }}
    }}
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {"candidates--highlighted"}
    CLOSED = (0, -1000)

    can_focus = False

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[Content] = []
        self.highlighted = 0
        self.shown = False
        self._drawn: dict[tuple[int, bool], tuple[Content, Strip]] = {}  # a line kept while it is the same row
        self._drawn_as: tuple[object, ...] = ()

    @property
    def labels(self) -> list[str]:
        """What each line says, as plain text."""
        return [row.plain for row in self.rows]

    def offer(self, rows: list[Content], field: Region) -> None:
        """Show ``rows``, the first highlighted, under ``field`` (over it where the screen has no room below)."""
        self.rows, self.highlighted = rows[: self.ROWS], 0
        self.refresh()
        screen, size = self.screen.size, self.outer_size
        x = max(0, min(field.x, screen.width - size.width))
        y = field.bottom if field.bottom + size.height <= screen.height else max(0, field.y - size.height)
        self.styles.offset = (x, y)  # (the same offset set again changes nothing)
        self.shown = True

    def close(self) -> None:
        self.shown = False
        self.styles.offset = self.CLOSED

    def move(self, step: int) -> None:
        """Highlight the next (``1``) or previous (``-1``) candidate, round the ends."""
        if self.rows:
            self.highlighted = (self.highlighted + step) % len(self.rows)
            self.refresh()

    def render_line(self, y: int) -> Strip:
        width = self.content_size.width
        highlighted = y == self.highlighted
        style = self.get_visual_style("candidates--highlighted") if highlighted else self.visual_style
        if not 0 <= y < len(self.rows) or width <= 0:
            return Strip.blank(max(width, 0), style.rich_style)
        if self._drawn_as != (width, self.visual_style) or len(self._drawn) > 4 * self.ROWS:
            self._drawn, self._drawn_as = {}, (width, self.visual_style)
        row = self.rows[y]
        kept = self._drawn.get((id(row), highlighted))
        if kept is not None and kept[0] is row:
            return kept[1]
        strips = Visual.to_strips(self, row.truncate(width, ellipsis=True), width, 1, style, pad=True)
        drawn = strips[0] if strips else Strip.blank(width, style.rich_style)
        self._drawn[id(row), highlighted] = (row, drawn)
        return drawn


class AddressInput(TextInput):
    """Comma-separated addresses, the one being typed completed from ``lookup`` (the address book's)."""

    BINDINGS: ClassVar[list[BindingType]] = [  # (each passes the key on while no list is open)
        Binding("tab", "take", "Take the address", show=False),
        Binding("right", "take_or_right", "Take the address", show=False),
        Binding("down", "move(1)", "Next address", show=False),
        Binding("up", "move(-1)", "Previous address", show=False),
        Binding("escape", "close", "Close the list", show=False),
    ]

    def __init__(
        self,
        value: str = "",
        *,
        lookup: Lookup,
        lookup_at_once: LookupAtOnce | None = None,
        prepare: Callable[[], Awaitable[None]] | None = None,
        id: str | None = None,
    ) -> None:
        """``prepare`` makes the book ready while the field opens, so that even the first letter is answered at once
        by ``lookup_at_once``."""
        super().__init__(value, id=id, placeholder="Name or address, comma between two")
        self.lookup = lookup
        self.lookup_at_once = lookup_at_once
        self.prepare = prepare
        self.offered: list[AddressEntry] = []
        self.candidates = Candidates()

    def on_mount(self) -> None:
        self.screen.mount(self.candidates)
        if self.prepare is not None:
            self.run_worker(self.prepare(), group="address-prepare", exit_on_error=False)

    def on_unmount(self) -> None:
        self.candidates.remove()

    @property
    def typed(self) -> str:
        """The address being typed (after the last comma), as typed."""
        return self.value[last_address_start(self.value) :].strip()

    def watch_value(self, value: str) -> None:
        if not self.has_focus:  # (set by the program, not typed)
            return
        typed = self.typed
        if not typed:
            self.close_candidates()
            return
        found = self.lookup_at_once(typed) if self.lookup_at_once is not None else None
        if found is not None:  # drawn with the letter typed, in its frame
            self.workers.cancel_group(self, "address-lookup")
            self._offer(found)
            return
        self.run_worker(self._complete(typed), group="address-lookup", exclusive=True, exit_on_error=False)

    async def _complete(self, typed: str) -> None:
        found = await self.lookup(typed)
        if typed != self.typed or not self.has_focus:  # (typed on meanwhile: a newer lookup answers)
            return
        self._offer(found)

    def _offer(self, found: list[AddressEntry]) -> None:
        if not found:
            self.close_candidates()
            return
        candidates = self.candidates
        if found != self.offered or not candidates.shown:  # (the same ones offered: nothing to draw again)
            candidates.offer([self._label(entry) for entry in found], self.region)
        self.offered = found

    @staticmethod
    @functools.lru_cache(maxsize=256)  # (the same row for the same entry: its line is drawn once)
    def _label(entry: AddressEntry) -> Content:
        """One candidate, literal (a name is the sender's text, never markup)."""
        shown = Content(entry.written)
        return Content.assemble(shown, Content.styled(f"  {entry.note}", "dim")) if entry.note else shown

    @property
    def open(self) -> bool:
        return bool(self.candidates.shown and self.offered)

    def close_candidates(self) -> None:
        self.offered = []
        self.candidates.close()

    def accept(self, entry: AddressEntry) -> None:
        """Put ``entry`` in place of the address being typed, ready for the next one."""
        kept = self.value[: last_address_start(self.value)].rstrip()
        self.close_candidates()
        self.value = f"{kept} {entry.written}, " if kept else f"{entry.written}, "
        self.cursor_position = len(self.value)

    def _chosen(self) -> AddressEntry | None:
        """The highlighted candidate, while the list is open."""
        chosen = self.candidates.highlighted
        if not self.open or chosen is None or chosen >= len(self.offered):
            return None
        return self.offered[chosen]

    def action_take(self) -> None:
        """Tab: the highlighted address taken; with no list open, Tab does what it does elsewhere."""
        chosen = self._chosen()
        if chosen is None:
            raise SkipAction
        self.accept(chosen)

    def action_take_or_right(self) -> None:
        """Right at the end of the field takes the highlighted address; anywhere else it moves the cursor."""
        chosen = self._chosen()
        if chosen is not None and self.cursor_at_end:
            self.accept(chosen)
        else:
            self.action_cursor_right()

    def action_move(self, step: int) -> None:
        if not self.open:
            raise SkipAction
        self.candidates.move(step)

    def action_close(self) -> None:
        if not self.open:
            raise SkipAction
        self.close_candidates()

    def on_blur(self) -> None:
        self.close_candidates()
