"""The message reader: a thread's messages in order, safe to show whatever they contain."""

from __future__ import annotations

from typing import ClassVar

from rich.markdown import Markdown
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Static

from pigeon.models import Contact, ContentBlock, Message, MessageDirection, MessageStatus, Thread
from pigeon.sanitize import clean
from pigeon.tui.render import (
    Quoted,
    full_time,
    html_to_text,
    human_size,
    is_attachment,
    limit_text,
    recipients_by_type,
    safe,
    safe_line,
    sender_name,
    split_quotes,
    thread_depths,
)

STATUS_BADGES = {
    MessageStatus.PENDING: "sending…",
    MessageStatus.SENT: "sent",
    MessageStatus.DELIVERED: "delivered",
    MessageStatus.FAILED: "FAILED",
}


def attachments_of(messages: list[Message]) -> list[tuple[Message, ContentBlock]]:
    return [(m, b) for m in messages for b in sorted(m.content_blocks, key=_sequence) if is_attachment(b)]


def _base_subject(subject: str | None) -> str:
    value = (subject or "").strip()
    while value[:3].lower() in {"re:", "fw:"} or value[:4].lower() == "fwd:":
        value = value.split(":", 1)[1].strip()
    return value.lower()


def _sequence(block: ContentBlock) -> int:
    return block.sequence if block.sequence is not None else 1 << 30


class MessageView(Vertical):
    """One message: header, body blocks, attachments."""

    def __init__(
        self,
        message: Message,
        *,
        contacts: dict[str, Contact],
        depth: int,
        parent_sender: str | None,
        show_quotes: bool,
        attachment_numbers: dict[int, int],
        thread_subject: str = "",
    ) -> None:
        super().__init__(classes="message")
        self.thread_subject = thread_subject
        self.message = message
        self.contacts = contacts
        self.depth = depth
        self.parent_sender = parent_sender
        self.show_quotes = show_quotes
        self.attachment_numbers = attachment_numbers

    def compose(self):  # type: ignore[no-untyped-def]
        message = self.message
        header = Content.assemble(
            safe_line(sender_name(message, self.contacts), style="bold"),
            "  ",
            Content.styled(full_time(message.created_at), "dim"),
        )
        badge = STATUS_BADGES.get(message.status) if message.direction == MessageDirection.OUTBOUND else None  # type: ignore[arg-type]
        if badge:
            header = header + Content.styled(f"  [{badge}]", "bold $error" if badge == "FAILED" else "$accent")
        yield Static(header, classes="message-from", markup=False)
        lines: list[Content] = []
        if self.parent_sender and self.depth:
            lines.append(Content.assemble(Content.styled("↳ reply to ", "dim"), safe_line(self.parent_sender)))
        for label, names in recipients_by_type(message.recipients, self.contacts):
            lines.append(Content.assemble(Content.styled(f"{label}: ", "dim"), safe_line(", ".join(names))))
        if message.subject and _base_subject(message.subject) != _base_subject(self.thread_subject):
            lines.append(Content.assemble(Content.styled("Subject: ", "dim"), safe_line(message.subject)))
        if lines:
            yield Static(Content("\n").join(lines), classes="message-meta", markup=False)

        blocks = sorted(message.content_blocks, key=_sequence)
        attachments = []
        for block in blocks:
            if is_attachment(block):
                attachments.append(block)
                continue
            yield from self._body(block)
        if not any(not is_attachment(b) for b in blocks):
            yield Static(Content.styled("(no text)", "dim"), classes="message-body")
        if attachments:
            rows = []
            for block in attachments:
                number = self.attachment_numbers.get(id(block), 0)
                rows.append(
                    Content.assemble(
                        Content.styled(f" {number} ", "reverse"),
                        " ",
                        safe_line(block.filename or "(unnamed)", limit=80),
                        Content.styled(
                            f"  {clean(block.mime_type or 'application/octet-stream')}  {human_size(block.size)}", "dim"
                        ),
                    )
                )
            yield Static(
                Content.styled("Attachments (a to save)\n", "bold") + Content("\n").join(rows),
                classes="message-attachments",
                markup=False,
            )

    def _body(self, block: ContentBlock):  # type: ignore[no-untyped-def]
        mime = (block.mime_type or "text/plain").split(";")[0].strip().lower()
        raw = block.content or ""
        text = html_to_text(raw) if mime == "text/html" else raw
        text, left_out = limit_text(clean(text))
        if mime == "text/markdown":
            # Rich renders markdown from tokens (no markup is interpreted); links are shown as "text (target)".
            yield Static(Markdown(text, hyperlinks=False), classes="message-body markdown")
        else:
            for part in split_quotes(text):
                if isinstance(part, Quoted):
                    if self.show_quotes:
                        yield Static(safe("\n".join(part.lines)), classes="message-quote", markup=False)
                    else:
                        yield Static(
                            Content.styled(f"┄ {len(part.lines)} quoted lines (t to show) ┄", "dim italic"),
                            classes="message-quote folded",
                            markup=False,
                        )
                elif part.strip():
                    yield Static(safe(part.strip("\n")), classes="message-body", markup=False)
        if left_out:
            yield Static(
                Content.styled(f"… {left_out:,} more characters not shown", "italic $warning"),
                classes="message-body",
                markup=False,
            )


class Reader(VerticalScroll, can_focus=True):
    """The messages of one thread."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j,down", "scroll_down", "Scroll down", id="reader.down", show=False),
        Binding("k,up", "scroll_up", "Scroll up", id="reader.up", show=False),
        Binding("space,pagedown", "page_down", "Page down", id="reader.page_down", show=False),
        Binding("G,end", "scroll_end", "Bottom", id="reader.bottom", show=False),
        Binding("home", "scroll_home", "Top", id="reader.top", show=False),
        Binding("t", "toggle_quotes", "Quotes", id="reader.quotes", tooltip="Show or fold quoted text"),
        Binding("a", "save_attachment", "Save attachment", id="reader.save", tooltip="Save an attachment"),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.thread: Thread | None = None
        self.messages: list[Message] = []
        self.contacts: dict[str, Contact] = {}
        self.show_quotes = False
        self.progress: str = ""

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(Content.styled("Select a thread to read it.", "dim"), id="reader-empty", markup=False)

    @property
    def attachments(self) -> list[tuple[Message, ContentBlock]]:
        return attachments_of(self.messages)

    def show(
        self, thread: Thread, messages: list[Message], contacts: dict[str, Contact], *, progress: str = ""
    ) -> None:
        """Show ``messages`` of ``thread`` (again, when more pages arrived)."""
        same = self.thread is not None and self.thread.id == thread.id
        self.thread, self.messages, self.contacts, self.progress = thread, messages, contacts, progress
        self._rebuild(keep_scroll=same)

    def clear(self) -> None:
        self.thread, self.messages, self.progress = None, [], ""
        self._rebuild(keep_scroll=False)

    def action_toggle_quotes(self) -> None:
        self.show_quotes = not self.show_quotes
        self._rebuild(keep_scroll=True)

    def action_save_attachment(self) -> None:
        self.screen.action_save_attachment()  # type: ignore[attr-defined]

    def _rebuild(self, *, keep_scroll: bool) -> None:
        scroll = self.scroll_y if keep_scroll else 0
        with self.app.batch_update():
            self.remove_children()
            if self.thread is None:
                self.mount(
                    Static(Content.styled("Select a thread to read it.", "dim"), id="reader-empty", markup=False)
                )
                return
            title = safe_line(self.thread.subject or "(no subject)", style="bold")
            count = Content.styled(
                f"  {len(self.messages)} of {self.thread.message_count or len(self.messages)}", "dim"
            )
            widgets = [Static(title + count, id="reader-title", markup=False)]
            if self.progress:
                widgets.append(Static(Content.styled(self.progress, "italic $accent"), id="reader-progress"))
            depths = thread_depths(self.messages)
            by_id = {m.id: m for m in self.messages}
            numbers = {id(block): n for n, (_, block) in enumerate(self.attachments, 1)}
            for message in self.messages:
                parent = by_id.get(message.parent_id) if message.parent_id else None
                widgets.append(
                    MessageView(
                        message,
                        contacts=self.contacts,
                        depth=depths.get(message.id or "", 0),
                        parent_sender=sender_name(parent, self.contacts) if parent else None,
                        show_quotes=self.show_quotes,
                        attachment_numbers=numbers,
                        thread_subject=self.thread.subject or "",
                    )
                )
            self.mount_all(widgets)
        if keep_scroll:
            self.call_after_refresh(self.scroll_to, y=scroll, animate=False)
        else:
            self.scroll_home(animate=False)
