"""The sidebar: views with their counts, then every inbox with its status (when not active) and unread count."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, ClassVar

from textual.binding import Binding, BindingType
from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from pigeon.core.listing import LANE_VIEWS
from pigeon.sanitize import clean_line
from pigeon.tui.render import safe_line
from pigeon.tui.widgets.pane import Pane

if TYPE_CHECKING:
    from pigeon.models import Inbox

ALL_INBOXES = "*"
"""The id that stands for every inbox (the palette's "all inboxes")."""

VIEW_LABELS = {
    "inbox": "Inbox",
    "people": "People",
    "newsletters": "Newsletters",
    "notifications": "Notifications",
    "receipts": "Receipts",
    "owed": "Owed",
    "waiting": "Waiting",
    "screener": "Screener",
    "kept-out": "Kept out",
    "unread": "Unread",
    "starred": "Starred",
    "snoozed": "Snoozed",
    "done": "Done",
    "all": "All mail",
}


LINE = 20  # cells of a sidebar line (24 columns less the border and padding)


@functools.cache
def status_labels() -> dict[str, str]:
    """What the sidebar says of an inbox's status ("" for active); unknown statuses show in lower case."""
    from pigeon.models import InboxStatus  # pydantic loads after the first screen, not before

    return {
        InboxStatus.ACTIVE: "",
        InboxStatus.INACTIVE: "inactive",
        InboxStatus.PENDING_VERIFICATION: "unverified",
        InboxStatus.FAILED: "failed",
    }


def inbox_prompt(label: str, unread: int, status: object = None) -> Content:
    """A view (no ``status``) or an inbox, with its unread count."""
    text = status_labels().get(status, str(status).lower()) if status is not None else ""  # type: ignore[call-overload]
    text = safe_line(text, limit=12).plain
    room = LINE - (len(text) + 2 if text else 0) - (len(str(unread)) + 1 if unread else 0)
    parts = [safe_line(label, limit=max(room, 4))]  # the name gives way, so the status and count fit one line
    if text:
        parts.append(Content.styled(f" {text} ", "italic"))  # (cleaned above; the row's colour: legible on its cursor)
    if unread:
        parts.append(Content.styled(f" {unread}", "bold"))  # (the row's colour: legible on its cursor, any theme)
    return Content.assemble(*parts)


def view_label(view: str) -> str:
    """A view's name as one clean line (a label's name is the user's own text)."""
    return VIEW_LABELS.get(view) or clean_line("#" + view.removeprefix("label:"))


class InboxList(OptionList, Pane):
    """Views (``view:<name>``) and inboxes (``inbox:<id>``), each with its count."""

    RESTYLE_ON_FOCUS: ClassVar[bool] = True  # (OptionList's stylesheet shows the focus on its highlighted option)

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", id="inboxes.down", show=False),
        Binding("k", "cursor_up", "Up", id="inboxes.up", show=False),
    ]

    def show_sidebar(self, counts: dict[str, int], inboxes: list[Inbox], unread: dict[str, int], selected: str) -> None:
        options: list[Option] = []
        for view, count in counts.items():
            shown = count if view != "all" else 0
            label = ("  " if view in LANE_VIEWS else "") + view_label(view)  # (the lanes, under the Inbox)
            options.append(Option(inbox_prompt(label, shown), id=f"view:{view}"))
        options.append(Option(Content.styled("Inboxes", "bold $foreground"), id="heading", disabled=True))
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
