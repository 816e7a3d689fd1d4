"""The open thread's links (``L``): numbered as the reader's footnotes, each with its real target. A number or
enter opens one, ``y`` copies its target. It dismisses with what to do; the mail screen asks before opening a link
that misleads (its words, its host or its user part), and opens it through the core."""

from __future__ import annotations

from typing import ClassVar, Literal

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from pigeon.core.links import Link
from pigeon.sanitize import clean_line
from pigeon.tui.render import safe_line
from pigeon.tui.widgets.choices import Choices

Chosen = tuple[Literal["open", "copy"], Link]


def link_line(link: Link) -> Content:
    """One link: its number, the words the mail shows, then where it really goes (and why to be careful)."""
    parts = [Content.styled(f"{link.number:>3} ", "bold $text-accent")]
    if link.text and link.text != link.target:
        parts += [safe_line(link.text, limit=50), Content.styled(" → ", "dim")]
    parts.append(safe_line(link.target, limit=120, style="underline" if link.openable else "dim"))
    caution = link.caution
    if caution:
        parts.append(Content.styled(f"  ⚠ {clean_line(caution)}", "bold $text-warning"))
    elif not link.openable:
        parts.append(Content.styled("  (not opened: shown only)", "dim"))
    return Content.assemble(*parts)


class LinksScreen(ModalScreen[Chosen | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,L", "cancel", "Close", id="links.close"),
        Binding("y", "copy", "Copy target", id="links.copy"),
    ]

    def __init__(self, links: list[Link], title: str = "") -> None:
        super().__init__()
        self.links = links
        self.title_text = title or f"Links ({len(links)})"
        self.places = {str(link.number): index for index, link in enumerate(links)}
        self.typed = ""

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog links"):
            yield Static(Content.styled(self.title_text, "bold"), markup=False)
            yield Choices(*(Option(link_line(link), id=str(n)) for n, link in enumerate(self.links)), id="links")
            yield Static(Content.styled("enter or a number opens · y copies the target · esc closes", "dim"))

    def on_mount(self) -> None:
        self.query_one(OptionList).highlighted = 0

    @property
    def highlighted(self) -> Link | None:
        index = self.query_one(OptionList).highlighted
        return self.links[index] if index is not None and 0 <= index < len(self.links) else None

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(("open", self.links[int(event.option.id or 0)]))

    def on_key(self, event: events.Key) -> None:
        """Digits pick a link by its number (the reader's footnote number): at once when no longer number starts
        with them, else on enter."""
        if event.character is None or not event.character.isdigit():
            self.typed = ""
            return
        event.stop()
        typed = (self.typed + event.character).lstrip("0")
        if not any(number.startswith(typed) for number in self.places):
            typed = event.character if any(number.startswith(event.character) for number in self.places) else ""
        self.typed = typed
        if typed in self.places:
            self.query_one(OptionList).highlighted = self.places[typed]
            if not any(number != typed and number.startswith(typed) for number in self.places):  # (none goes on)
                self.dismiss(("open", self.links[self.places[typed]]))

    def action_copy(self) -> None:
        link = self.highlighted
        if link is not None:
            self.dismiss(("copy", link))

    def action_cancel(self) -> None:
        self.dismiss(None)
