"""The sidebar: views with their counts, then every inbox with its status (when not active) and unread count."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from pigeon.models import Inbox, InboxStatus
from pigeon.tui.render import safe_line

STATUS_LABELS = {
    InboxStatus.INACTIVE: "off",
    InboxStatus.PENDING_VERIFICATION: "pending",
    InboxStatus.FAILED: "failed",
}
VIEW_LABELS = {
    "inbox": "Inbox",
    "unread": "Unread",
    "starred": "Starred",
    "snoozed": "Snoozed",
    "done": "Done",
    "all": "All mail",
}


def inbox_prompt(label: str, unread: int, status: object = InboxStatus.ACTIVE) -> Content:
    parts = [safe_line(label, limit=20)]
    if status != InboxStatus.ACTIVE:
        text = STATUS_LABELS.get(status, str(status).lower())  # type: ignore[call-overload]
        parts.append(Content.styled(f" {safe_line(text).plain} ", "$warning"))
    if unread:
        parts.append(Content.styled(f" {unread}", "bold $accent"))
    return Content.assemble(*parts)


def view_label(view: str) -> str:
    return VIEW_LABELS.get(view) or "#" + view.removeprefix("label:")


class InboxList(OptionList):
    """Views (``view:<name>``) and inboxes (``inbox:<id>``), each with its count."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", id="inboxes.down", show=False),
        Binding("k", "cursor_up", "Up", id="inboxes.up", show=False),
    ]

    def show_sidebar(self, counts: dict[str, int], inboxes: list[Inbox], unread: dict[str, int], selected: str) -> None:
        options: list[Option] = []
        for view, count in counts.items():
            shown = count if view != "all" else 0
            options.append(Option(inbox_prompt(view_label(view), shown), id=f"view:{view}"))
        options.append(Option(Content.styled("Inboxes", "dim"), id="heading", disabled=True))
        for inbox in inboxes:
            options.append(
                Option(
                    inbox_prompt(inbox.display_name or inbox.email, unread.get(inbox.id, 0), inbox.status),
                    id=f"inbox:{inbox.id}",
                )
            )
        highlighted = next((i for i, o in enumerate(options) if o.id == selected), 0)
        with self.prevent(OptionList.OptionHighlighted):
            self.set_options(options)
            self.highlighted = highlighted
