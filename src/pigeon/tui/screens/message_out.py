"""A message's text shown whole over the mail screen: its raw record (``H``: every field the service sent) and what
a command it was piped to said (``|``). Both are cleaned before they are shown, scroll, and close on ``escape`` or
``q``; the raw record is copied with ``y``."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from pigeon.tui.render import safe, safe_line

SCROLL_BINDINGS: list[BindingType] = [
    Binding("j,down", "scroll('down')", "Down", show=False),
    Binding("k,up", "scroll('up')", "Up", show=False),
    Binding("space,pagedown", "scroll('page_down')", "Page down", show=False),
    Binding("pageup", "scroll('page_up')", "Page up", show=False),
]


class ShownText(ModalScreen[None]):
    """A title, a long text in a scrolling pane, and a line of keys."""

    DEFAULT_CSS = """
    ShownText #shown-box {
        width: 120; max-width: 95%; height: 90%;
        border: round $accent; background: $surface; padding: 1 2;
    }
    ShownText #shown-text { height: 1fr; margin: 1 0; }
    """

    def __init__(self, title: Content, text: str, keys: str) -> None:
        super().__init__()
        self.title_content, self.body, self.keys = title, safe(text), keys

    def compose(self) -> ComposeResult:
        with Vertical(id="shown-box"):
            yield Static(self.title_content, markup=False)
            with VerticalScroll(id="shown-text"):
                yield Static(self.body, markup=False)
            yield Static(Content.styled(self.keys, "dim"), markup=False)

    def on_mount(self) -> None:
        self.query_one("#shown-text", VerticalScroll).focus()

    @property
    def shown(self) -> str:
        """What the pane shows, as plain text (cleaned)."""
        return self.body.plain

    def action_scroll(self, where: str) -> None:
        getattr(self.query_one("#shown-text", VerticalScroll), f"scroll_{where}")()

    def action_close(self) -> None:
        self.dismiss(None)


class RawScreen(ShownText):
    """Every field the service sent for a message, as JSON."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close", id="raw.close"),
        Binding("y", "copy", "Copy", id="raw.copy"),
        *SCROLL_BINDINGS,
    ]

    def __init__(self, text: str) -> None:
        title = Content.styled("Raw message: every field the service sent", "bold")
        super().__init__(title, text, "y copies · j/k scroll · esc closes")

    def action_copy(self) -> None:
        shown = self.shown
        self.app.copy_to_clipboard(shown)
        lines = len(shown.splitlines())
        self.notify(f"Copied the raw message ({lines} line{'s' if lines != 1 else ''})", markup=False, timeout=3)


class PipedScreen(ShownText):
    """What a command given a message said, and how it ended."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,enter", "close", "Close", id="piped.close"),
        *SCROLL_BINDINGS,
    ]

    def __init__(self, name: str, code: int, output: str, dropped: int) -> None:
        ended = "finished" if code == 0 else f"failed (exit {code})"
        title = Content.assemble(
            safe_line(name, limit=60, style="bold"), Content.styled(f" {ended}", "bold $text-error" if code else "bold")
        )
        text = output if output.strip() else "(no output)"
        if dropped:
            text += f"\n… {dropped:,} more bytes of output not kept"
        super().__init__(title, text, "j/k scroll · esc closes")
