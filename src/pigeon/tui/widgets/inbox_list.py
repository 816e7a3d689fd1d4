"""The inboxes pane: every inbox with its status (when not active) and unread count."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from pigeon.models import Inbox, InboxStatus
from pigeon.tui.mailbox import ALL_INBOXES
from pigeon.tui.render import safe_line

STATUS_LABELS = {
    InboxStatus.INACTIVE: "off",
    InboxStatus.PENDING_VERIFICATION: "pending",
    InboxStatus.FAILED: "failed",
}


def inbox_prompt(label: str, unread: int, status: object = InboxStatus.ACTIVE) -> Content:
    parts = [safe_line(label, limit=20)]
    if status != InboxStatus.ACTIVE:
        text = STATUS_LABELS.get(status, str(status).lower())  # type: ignore[call-overload]
        parts.append(Content.styled(f" {safe_line(text).plain} ", "$warning"))
    if unread:
        parts.append(Content.styled(f" {unread}", "bold $accent"))
    return Content.assemble(*parts)


class InboxList(OptionList):
    """Inboxes; the first entry shows every inbox at once."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", id="inboxes.down", show=False),
        Binding("k", "cursor_up", "Up", id="inboxes.up", show=False),
    ]

    def show_inboxes(self, inboxes: list[Inbox], unread: dict[str, int], selected: str) -> None:
        options = [Option(inbox_prompt("All inboxes", unread.get(ALL_INBOXES, 0)), id=ALL_INBOXES)]
        for inbox in inboxes:
            options.append(
                Option(
                    inbox_prompt(inbox.display_name or inbox.email, unread.get(inbox.id, 0), inbox.status), id=inbox.id
                )
            )
        highlighted = next((i for i, o in enumerate(options) if o.id == selected), 0)
        self.set_options(options)
        self.highlighted = highlighted
