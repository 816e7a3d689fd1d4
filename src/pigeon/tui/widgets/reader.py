"""The message reader: a thread's messages in order, safe to show whatever they contain.

The whole thread is one ``Content`` in one ``Static``: a new page of messages, a folded quote or a resize replaces
the content, never the widgets, so long threads stay cheap and nothing is torn down while keys arrive.
"""

from __future__ import annotations

import asyncio
import functools
from enum import StrEnum
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import events, work
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message as TextualMessage
from textual.widgets import Static

from pigeon.core.attachments import attachments_of, is_attachment, sequence_of
from pigeon.core.unreadable import unreadable_words
from pigeon.htmltext import footnoted
from pigeon.sanitize import clean, clean_line
from pigeon.tui.keys import bindings
from pigeon.tui.render import (
    Quoted,
    full_time,
    human_size,
    limit_text,
    recipients_by_type,
    safe,
    safe_line,
    sender_address,
    sender_name,
    split_quotes,
    thread_depths,
)
from pigeon.tui.widgets.pane import Pane

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pigeon.models import Contact, ContentBlock, Message, Thread, Unreadable


@functools.cache
def status_badges() -> dict[str, str]:
    """The badge of an outbound message's delivery status."""
    from pigeon.models import MessageStatus  # pydantic loads after the first screen, not before

    return {
        MessageStatus.PENDING: "sending…",
        MessageStatus.SENT: "sent",
        MessageStatus.DELIVERED: "delivered",
        MessageStatus.FAILED: "FAILED",
    }


NEWLINE = Content("\n")
RENDER_HERE = 100_000
"""Characters of message text a thread may hold to be laid out in the frame that shows it; longer ones are laid out
in a thread."""


def _base_subject(subject: str | None) -> str:
    value = (subject or "").strip()
    while value[:3].lower() in {"re:", "fw:"} or value[:4].lower() == "fwd:":
        value = value.split(":", 1)[1].strip()
    return value.lower()


def markdown_content(source: str, width: int) -> Content:
    """Markdown rendered by Rich (from tokens: nothing in it is markup) at ``width``, links shown as
    "text (target)". ``source`` must already be cleaned of control sequences."""
    from rich.console import Console  # imported when markdown mail is first shown, not at start-up
    from rich.markdown import Markdown

    console = Console(width=max(width, 20), color_system="truecolor", force_terminal=True, legacy_windows=False)
    lines = console.render_lines(Markdown(source, hyperlinks=False), pad=False)
    text = Text()
    for number, line in enumerate(lines):
        if number:
            text.append("\n")
        for segment in line:
            if not segment.control:
                text.append(segment.text, segment.style)
    return Content.from_rich_text(text).rstrip()


class ThreadView:
    """Builds the content of a thread."""

    def __init__(
        self,
        thread: Thread,
        messages: list[Message],
        contacts: dict[str, Contact],
        *,
        show_quotes: bool,
        width: int,
        unreadable: Sequence[Unreadable] = (),
    ) -> None:
        self.thread = thread
        self.messages = messages
        self.unreadable = unreadable
        self.contacts = contacts
        self.show_quotes = show_quotes
        self.width = width
        self.attachment_numbers = {id(block): n for n, (_, block) in enumerate(attachments_of(messages), 1)}
        self.links_seen = 0  # footnotes are numbered across the thread, as the links list (L) numbers them

    def render(self, progress: str = "") -> Content:
        self.links_seen = 0
        parts: list[Content | str] = [
            Content.assemble(
                safe_line(self.thread.subject or "(no subject)", style="bold"),
                Content.styled(f"  {len(self.messages)} of {self.thread.message_count or len(self.messages)}", "dim"),
            )
        ]
        if progress:
            parts.append(Content.styled(progress, "italic $accent"))
        depths = thread_depths(self.messages)
        by_id = {m.id: m for m in self.messages}
        rule = Content.styled("─" * max(self.width - 2, 10), "$panel")
        for place, message in enumerate(self.messages):
            parts += self.left_out(place, rule)
            parent = by_id.get(message.parent_id) if message.parent_id else None
            parts += ["", rule, self.message(message, depths.get(message.id or "", 0), parent)]
        parts += self.left_out(len(self.messages), rule)
        return NEWLINE.join(Content(p) if isinstance(p, str) else p for p in parts)

    def left_out(self, place: int, rule: Content) -> list[Content | str]:
        """Where messages that could not be read would be: before the ``place``-th readable one (or after the
        last), one cleaned line saying how many and why."""
        last = place >= len(self.messages)
        here = [u for u in self.unreadable if u.before == place or (last and u.before > place)]
        return ["", rule, Content.styled(unreadable_words(here), "italic $warning")] if here else []

    def message(self, message: Message, depth: int, parent: Message | None) -> Content:
        lines: list[Content | str] = []
        header = Content.assemble(
            safe_line(sender_name(message, self.contacts), style="bold"),
            "  ",
            Content.styled(full_time(message.created_at), "dim"),
        )
        from pigeon.models import MessageDirection

        outbound = message.direction == MessageDirection.OUTBOUND
        badge = status_badges().get(message.status) if outbound else None  # type: ignore[arg-type]
        if message.status is not None and not isinstance(message.status, StrEnum):  # a status the spec leaves open
            badge = clean_line(message.status, limit=60)
        if badge:
            header += Content.styled(f"  [{badge}]", "bold $error" if badge == "FAILED" else "$accent")
        lines.append(header)
        if parent is not None and depth:
            lines.append(
                Content.assemble(Content.styled("↳ reply to ", "dim"), safe_line(sender_name(parent, self.contacts)))
            )
        address = sender_address(message, self.contacts)
        if address:
            lines.append(Content.assemble(Content.styled("From: ", "dim"), address))
        for label, names in recipients_by_type(message.recipients, self.contacts):
            lines.append(Content.assemble(Content.styled(f"{label}: ", "dim"), safe_line(", ".join(names))))
        if message.subject and _base_subject(message.subject) != _base_subject(self.thread.subject):
            lines.append(Content.assemble(Content.styled("Subject: ", "dim"), safe_line(message.subject)))

        blocks = sorted(message.content_blocks, key=sequence_of)
        texts = [b for b in blocks if not is_attachment(b)]
        files = [b for b in blocks if is_attachment(b)]
        for block in texts:
            lines += ["", *self.body(block)]
        if not texts:
            lines += ["", Content.styled("(no text)", "dim")]
        if files:
            lines += ["", Content.styled("Attachments (a to save, O to open)", "bold")]
            for block in files:
                number = self.attachment_numbers.get(id(block), 0)
                lines.append(
                    Content.assemble(
                        Content.styled(f" {number} ", "reverse"),
                        " ",
                        safe_line(block.filename or "(unnamed)", limit=80),
                        Content.styled(
                            f"  {clean(block.mime_type or 'application/octet-stream')}  {human_size(block.size)}", "dim"
                        ),
                    )
                )
        return NEWLINE.join(Content(p) if isinstance(p, str) else p for p in lines)

    def body(self, block: ContentBlock) -> list[Content]:
        mime = (block.mime_type or "text/plain").split(";")[0].strip().lower()
        raw = block.content or ""
        if mime == "text/html":
            text, numbered = footnoted(raw, self.links_seen + 1)
            self.links_seen += numbered
        else:
            text = raw
        text, left_out = limit_text(clean(text))
        out: list[Content] = []
        if mime == "text/markdown":
            out.append(markdown_content(text, self.width))
        else:
            for part in split_quotes(text):
                if isinstance(part, Quoted):
                    if self.show_quotes:
                        out.append(safe("\n".join(part.lines), style="$text-muted"))
                    else:
                        out.append(Content.styled(f"┄ {len(part.lines)} quoted lines (t to show) ┄", "dim italic"))
                elif part.strip():
                    out.append(safe(part.strip("\n")))
        if left_out:
            out.append(Content.styled(f"… {left_out:,} more characters not shown", "italic $warning"))
        return out


class Reader(VerticalScroll, Pane, can_focus=True):
    """The messages of one thread."""

    KEYS_ARE_BINDINGS: ClassVar[bool] = True  # no key handler of its own: the App runs its bindings at once

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j,down", "scroll_down", "Scroll down", id="reader.down", show=False),
        Binding("k,up", "scroll_up", "Scroll up", id="reader.up", show=False),
        Binding("space,pagedown", "page_down", "Page down", id="reader.page_down", show=False),
        Binding("G,end", "scroll_end", "Bottom", id="reader.bottom", show=False),
        Binding("home", "scroll_home", "Top", id="reader.top", show=False),
        *bindings("reader"),
    ]

    class SaveAttachment(TextualMessage):
        """Save an attachment of the open thread (the screen asks which, and where)."""

    class EditSender(TextualMessage):
        """Edit the contact who wrote the open thread."""

    class OpenAttachment(TextualMessage):
        """Open an attachment of the open thread with its program (the screen asks which, and asks first for a
        type that can run code)."""

    class ShowLinks(TextualMessage):
        """List the open thread's links."""

    class ShowRaw(TextualMessage):
        """Show every field the service sent for the message under the cursor."""

    class Pipe(TextualMessage):
        """Give the message under the cursor to a command (the screen asks which)."""

    class Write(TextualMessage):
        """Write the message under the cursor to a file (the screen asks where)."""

    class Copy(TextualMessage):
        """Copy the text of the message under the cursor."""

    class Step(TextualMessage):
        """Open the next (``1``) or previous (``-1``) thread of the list."""

        def __init__(self, delta: int) -> None:
            super().__init__()
            self.delta = delta

    EMPTY = Content.styled("Select a thread to read it.", "dim")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.thread: Thread | None = None
        self.messages: list[Message] = []
        self.unreadable: Sequence[Unreadable] = ()
        self.contacts: dict[str, Contact] = {}
        self.show_quotes = False
        self.progress = ""
        self._width = 0
        self._shown = self.EMPTY
        self._generation = 0

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(self.EMPTY, id="reader-content", markup=False)

    @property
    def attachments(self) -> list[tuple[Message, ContentBlock]]:
        return attachments_of(self.messages)

    @property
    def current_message(self) -> Message | None:
        """The message the reader's actions act on (reply, forward, attachments, links): the latest one someone
        else sent, else the latest."""
        from pigeon.core.compose import answered

        return answered(self.messages)

    @property
    def text(self) -> str:
        """What the reader shows, as plain text (for tests and accessibility tools)."""
        return self._shown.plain

    def show(
        self,
        thread: Thread,
        messages: list[Message],
        contacts: dict[str, Contact],
        *,
        progress: str = "",
        unreadable: Sequence[Unreadable] | None = None,
    ) -> None:
        """Show ``messages`` of ``thread`` (again, when more pages arrived: the scroll position is kept), with the
        places of its ``unreadable`` messages (``None``: those shown already, if it is the same thread)."""
        same = self.thread is not None and self.thread.id == thread.id
        if unreadable is not None or not same:
            self.unreadable = unreadable or ()
        self.thread, self.messages, self.contacts, self.progress = thread, messages, contacts, progress
        self._render_thread()
        if not same:
            self.scroll_home(animate=False)

    def action_toggle_quotes(self) -> None:
        self.show_quotes = not self.show_quotes
        self._render_thread()

    def action_save(self) -> None:
        self.post_message(self.SaveAttachment())

    def action_edit_sender(self) -> None:
        self.post_message(self.EditSender())

    def action_open_attachment(self) -> None:
        self.post_message(self.OpenAttachment())

    def action_links(self) -> None:
        self.post_message(self.ShowLinks())

    def action_raw(self) -> None:
        self.post_message(self.ShowRaw())

    def action_pipe(self) -> None:
        self.post_message(self.Pipe())

    def action_write(self) -> None:
        self.post_message(self.Write())

    def action_copy(self) -> None:
        self.post_message(self.Copy())

    def action_step(self, delta: int) -> None:
        self.post_message(self.Step(delta))

    def clear(self) -> None:
        """Show no thread."""
        self.thread, self.messages, self.unreadable, self.progress = None, [], (), ""
        self._render_thread()

    def on_resize(self, event: events.Resize) -> None:
        width = self.scrollable_content_region.width
        if width != self._width:
            self._width = width
            if self.thread is not None:
                self._render_thread()

    @property
    def rendering(self) -> bool:
        """A long thread is being laid out in the background (the reader says so meanwhile)."""
        return any(worker.group == "render" and not worker.is_finished for worker in self.workers)

    def _render_thread(self) -> None:
        static = self.query_one("#reader-content", Static)
        self._generation += 1
        if self.thread is None:
            self._shown = self.EMPTY
            static.update(self.EMPTY)
            return
        width = self.scrollable_content_region.width or 80
        view = ThreadView(
            self.thread,
            self.messages,
            self.contacts,
            show_quotes=self.show_quotes,
            width=width - 1,
            unreadable=self.unreadable,
        )
        size = sum(len(block.content or "") for message in self.messages for block in message.content_blocks)
        if size <= RENDER_HERE:
            self._shown = view.render(self.progress)
            static.update(self._shown)
            return
        # Laying out a long thread (a huge newsletter, tens of thousands of links) takes a while: in a thread, so
        # that every key is answered meanwhile; a newer layout (more pages, a fold, a resize) replaces it.
        static.update(Content.styled(f"Laying out {size:,} characters…", "italic dim"))
        self._render_elsewhere(view, self.progress, self._generation)

    @work(exclusive=True, group="render", exit_on_error=False, description="laying out the thread")
    async def _render_elsewhere(self, view: ThreadView, progress: str, generation: int) -> None:
        shown = await asyncio.to_thread(view.render, progress)
        if generation == self._generation:  # nothing newer was asked for meanwhile
            self._shown = shown
            self.query_one("#reader-content", Static).update(shown)
