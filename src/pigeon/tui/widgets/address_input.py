"""``AddressInput``: a field of comma-separated addresses (To, Cc) that completes the one being typed from the
address book, as you type. The candidates show in a small list under the field, drawn over what is below it; up and
down move in it, Tab (or Right at the end of the field) takes the highlighted one, Escape closes it. Ignored, it
changes nothing: what the user typed stays as typed."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import ClassVar

from textual.actions import SkipAction
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.widgets import Input, OptionList
from textual.widgets.option_list import Option

from pigeon.core.address_book import AddressEntry

Lookup = Callable[[str], Awaitable[list[AddressEntry]]]


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


class Candidates(OptionList):
    """The addresses offered for the one being typed (never focused: the keys stay in the field)."""

    DEFAULT_CSS = """
    Candidates {
        overlay: screen;
        position: absolute;
        display: none;
        width: auto;
        min-width: 30;
        max-width: 80;
        height: auto;
        max-height: 10;
        border: round $accent;
        background: $panel;
    }
    """

    can_focus = False


class AddressInput(Input):
    """Comma-separated addresses, the one being typed completed from ``lookup`` (the address book's)."""

    BINDINGS: ClassVar[list[BindingType]] = [  # (each passes the key on while no list is open)
        Binding("tab", "take", "Take the address", show=False),
        Binding("right", "take_or_right", "Take the address", show=False),
        Binding("down", "move(1)", "Next address", show=False),
        Binding("up", "move(-1)", "Previous address", show=False),
        Binding("escape", "close", "Close the list", show=False),
    ]

    def __init__(self, value: str = "", *, lookup: Lookup, id: str | None = None) -> None:
        super().__init__(value, id=id, placeholder="Name or address, comma between two")
        self.lookup = lookup
        self.offered: list[AddressEntry] = []
        self.candidates = Candidates()

    def on_mount(self) -> None:
        self.screen.mount(self.candidates)

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
        self.run_worker(self._complete(typed), group="address-lookup", exclusive=True, exit_on_error=False)

    async def _complete(self, typed: str) -> None:
        found = await self.lookup(typed)
        if typed != self.typed or not self.has_focus:  # (typed on meanwhile: a newer lookup answers)
            return
        self.offered = found
        if not found:
            self.close_candidates()
            return
        candidates = self.candidates
        candidates.set_options(Option(self._label(entry)) for entry in found)
        candidates.highlighted = 0
        region = self.region
        candidates.styles.offset = (region.x, region.bottom)
        candidates.display = True

    @staticmethod
    def _label(entry: AddressEntry) -> Content:
        """One candidate, literal (a name is the sender's text, never markup)."""
        shown = Content(entry.written)
        return Content.assemble(shown, Content.styled(f"  {entry.note}", "dim")) if entry.note else shown

    @property
    def open(self) -> bool:
        return bool(self.candidates.display and self.offered)

    def close_candidates(self) -> None:
        self.offered = []
        self.candidates.display = False

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
        if step > 0:
            self.candidates.action_cursor_down()
        else:
            self.candidates.action_cursor_up()

    def action_close(self) -> None:
        if not self.open:
            raise SkipAction
        self.close_candidates()

    def on_blur(self) -> None:
        self.close_candidates()
