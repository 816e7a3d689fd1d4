"""A thread laid out message by message: each message's lines are made once for a width, a fold and the quotes'
state, and kept, so a fold, a cursor move or a find lays out only the messages it changes.

The messages come in tree order (replies under what they answer), indented by depth up to a cap."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING

from rich.text import Text
from textual.content import Content

from pigeon.core.attachments import is_attachment, sequence_of
from pigeon.core.conversation import tree_places
from pigeon.core.paged import PAGE, PagedMessages, heads, with_html
from pigeon.core.seen import last_mine, readers, seen_words
from pigeon.core.unreadable import unreadable_words
from pigeon.htmltext import footnoted
from pigeon.sanitize import clean, clean_line
from pigeon.tui.render import (
    Quoted,
    contact_name,
    full_time,
    human_size,
    limit_text,
    recipients_by_type,
    safe,
    safe_line,
    sender_address,
    sender_name,
    split_quotes,
    wrapped,
)

if TYPE_CHECKING:
    from pigeon.core.brief import Brief
    from pigeon.core.conversation import Head
    from pigeon.models import Contact, ContentBlock, Message, Thread, Unreadable

NEWLINE = Content("\n")
INDENT = 2
"""Columns of indent per level of replies."""
INDENT_LEVELS = 4
"""Levels indented; deeper replies stay at this indent and say their depth (a deep tree stays readable)."""
ROOM = 56
"""Columns a message keeps whatever its depth (a long address beside its label): a narrower reader indents less."""


def indent_levels(width: int) -> int:
    """How many levels of replies are indented at ``width``."""
    return max(0, min(INDENT_LEVELS, (width - ROOM) // INDENT))


CURSOR = "▌"
HIT_STYLE = "reverse"


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


def finder(words: str) -> re.Pattern[str] | None:
    """The pattern a find looks for: the words as typed, any case."""
    return re.compile(re.escape(words), re.IGNORECASE) if words.strip() else None


@dataclass(frozen=True)
class Hit:
    """A place a find found: the message (in the order shown) and the line in its unfolded lines."""

    index: int
    line: int


@dataclass(frozen=True)
class Piece:
    """One message laid out: its lines (each within the width) and how many."""

    rows: tuple[Content, ...]
    """Its lines as shown, each within the width."""
    lines: int
    plain: tuple[str, ...]
    """Its lines as shown (wrapped), plain."""
    text: str
    """Its lines as written (unwrapped), plain: what the reader's ``text`` says."""
    head: int = 0
    """The line of its header (where the cursor's bar is drawn)."""

    def marked(self) -> Piece:
        """The same piece under the message cursor: the bar beside its header, every other line the same object."""
        rows = list(self.rows)
        rows[self.head] = Content.assemble(Content.styled(CURSOR, "bold $text-accent"), rows[self.head][1:])
        texts = self.text.split("\n")  # (the lines above a header never wrap: it is the same line unwrapped)
        texts[self.head] = CURSOR + texts[self.head][1:]
        return Piece(tuple(rows), self.lines, self.plain, "\n".join(texts), self.head)


class ThreadView:
    """The thread's messages in tree order, and each one's lines (kept per width, fold, quotes, cursor, find). A
    long thread's messages come a page at a time (``PagedMessages``): its shape is made from their outline, and a
    message is read when it is laid out."""

    def __init__(
        self,
        thread: Thread,
        messages: Sequence[Message],
        contacts: dict[str, Contact],
        *,
        unreadable: Sequence[Unreadable] = (),
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.thread = thread
        self.clock = clock or (lambda: datetime.now(UTC))  # (for how long ago a reader read the user's message)
        self.messages = messages
        self.contacts = contacts
        self.unreadable = unreadable
        outline = heads(messages)
        shape = tree_places(outline)
        self.order: list[tuple[Head, int]] = [(outline[place], depth) for place, depth in shape]
        """Each message's head (the message, or its outline) and its reply depth, as shown."""
        self.place = [place for place, _ in shape]
        """Each message's place in ``messages``, as shown."""
        self.by_id = {m.id: n for n, m in enumerate(outline) if m.id}
        self.mine_last = getattr(last_mine(outline), "id", None)
        """The user's last message: its readers are named under its header."""
        self.keys = [m.id or f"#{place}" for (m, _), place in zip(self.order, self.place, strict=True)]
        self._first_attachment = _numbered_from(messages)
        self._footnotes: dict[int, tuple[str, int]] | None = None
        self.opening: tuple[datetime | None, frozenset[str], int] | None = None
        """Where it opens for a read time, worked out ahead: (read time, the keys folded, the cursor)."""
        self.briefed: tuple[datetime | None, Brief | None] | None = None
        """What is new since a read time (``thread_brief``), worked out once: (read time, the brief)."""
        self._pieces: dict[tuple[object, ...], Piece] = {}

    def __len__(self) -> int:
        return len(self.order)

    def at(self, index: int) -> Message:
        """The ``index``-th message shown. Paged, the first time: read from the store with the page of messages
        shown around it (replies put a long thread's neighbours far apart in stored order)."""
        messages, place = self.messages, self.place
        if isinstance(messages, PagedMessages) and not messages.holds(place[index]):
            messages.fetch(place[max(0, index - PAGE // 2) : index + PAGE // 2])
        return messages[place[index]]

    def title(self, progress: str, width: int = 80) -> list[Content]:
        """The subject, wrapped to ``width``, with "n of m" after it whole (on a line of its own if it must be)."""
        lines = safe_line(self.thread.subject or "(no subject)", style="bold").wrap(max(width, 1))
        count = f"{len(self.messages)} of {self.thread.message_count or len(self.messages)}"
        if lines and lines[-1].cell_length + 2 + len(count) <= width:
            lines[-1] = Content.assemble(lines[-1], Content.styled(f"  {count}", "dim"))
        else:
            lines.append(Content.styled(count, "dim"))
        return [*lines, Content.styled(progress, "italic $text-accent")] if progress else lines

    def left_out(self, index: int) -> Content | None:
        """Before the ``index``-th message shown (or after the last): a line for the messages that could not be
        read there (their places count in time order)."""
        if not self.unreadable:
            return None
        last = index >= len(self.order)
        place = len(self.messages) if last else self.place[index]
        here = [u for u in self.unreadable if u.before == place or (last and u.before > place)]
        if not here:
            return None
        return Content.styled(unreadable_words(here), "italic $text-warning")

    def piece(self, index: int, width: int, *, folded: bool, current: bool, show_quotes: bool, find: str = "") -> Piece:
        key = (self.keys[index], width, folded, current, show_quotes, find)
        found = self._pieces.get(key)
        if found is None:
            if current:
                found = self.piece(index, width, folded=folded, current=False, show_quotes=show_quotes, find=find)
                found = found.marked()
            else:
                found = self._lay_out(index, width, folded, show_quotes, find)
            self._pieces[key] = found
        return found

    def find(self, words: str, width: int, *, show_quotes: bool) -> list[Hit]:
        """Every place ``words`` are, message by message as shown, each message as it reads unfolded."""
        pattern = finder(words)
        if pattern is None:
            return []
        hits: list[Hit] = []
        for index in range(len(self.order)):
            piece = self.piece(index, width, folded=False, current=False, show_quotes=show_quotes)
            for line, plain in enumerate(piece.plain):
                hits += [Hit(index, line) for _ in pattern.finditer(plain)]
        return hits

    def forget(self) -> None:
        """Drop every laid-out message (the width changed)."""
        self._pieces.clear()

    def _lay_out(self, index: int, width: int, folded: bool, show_quotes: bool, find: str) -> Piece:
        message, depth = self.at(index), self.order[index][1]
        levels = indent_levels(width)
        shown_depth = min(depth, levels)
        indent = " " * (1 + INDENT * shown_depth)
        room = max(width - 1 - len(indent), 10)
        deep = Content.styled(f"↳ {depth} ", "dim") if depth > levels else Content("")
        if folded:
            line = Content.assemble(deep, self.summary(message, room - deep.cell_length))
            logical = [line.truncate(room, ellipsis=True) if line.cell_length > room else line]
        else:
            logical = [Content(""), Content.styled("─" * room, "$panel"), Content.assemble(deep, self.header(message))]
            logical += self.message(message, show_quotes, room, place=self.place[index])
        pattern = finder(find)
        if pattern is not None:
            logical = [_highlight(row, pattern) for row in logical]
        head = 0 if folded else 2

        def prefixed(rows: list[Content]) -> list[Content]:
            return [Content.assemble(" ", indent, row) for row in rows]

        rows: list[Content] = []
        for n, row in enumerate(logical):
            if n == head:
                head = len(rows)
            rows += wrapped(row, room) if folded is False or row.cell_length > room else [row]  # (a summary fits)
        lines = prefixed(rows)
        text = NEWLINE.join(prefixed(logical)).plain
        return Piece(tuple(lines), len(lines), tuple(row.plain for row in rows), text, head)

    def summary(self, message: Message, room: int = 200) -> Content:
        """A folded message's one line: sender, time, first words (no more of them read than ``room`` shows)."""
        name = safe_line(sender_name(message, self.contacts), limit=30, style="bold")
        when = full_time(message.created_at)[:16]
        left = max(room - name.cell_length - len(when) - 4, 1)  # (what the words may take of the line)
        words = " ".join(
            clean_line((block.content or "")[: left * 2], limit=left)  # (a long body is not read for one line)
            for block in sorted(message.content_blocks, key=sequence_of)
            if not is_attachment(block) and (block.mime_type or "text/plain").startswith("text/plain")
        )
        return Content.assemble(
            name, "  ", Content.styled(when, "dim"), "  ", Content.styled(clean_line(words, limit=left), "$text-muted")
        )

    def header(self, message: Message) -> Content:
        from pigeon.models import MessageDirection

        header = Content.assemble(
            safe_line(sender_name(message, self.contacts), style="bold"),
            "  ",
            Content.styled(full_time(message.created_at), "dim"),
        )
        outbound = message.direction == MessageDirection.OUTBOUND
        badge = status_badges().get(message.status) if outbound else None  # type: ignore[arg-type]
        if message.status is not None and not isinstance(message.status, StrEnum):  # a status the spec leaves open
            badge = clean_line(message.status, limit=60)
        if badge:
            header += Content.styled(f"  [{badge}]", "bold $text-error" if badge == "FAILED" else "$text-accent")
        return header

    def message(self, message: Message, show_quotes: bool, width: int = 80, *, place: int = 0) -> list[Content]:
        """The lines of an unfolded message (the ``place``-th stored) under its header (before wrapping)."""
        lines: list[Content] = []
        parent_place = self.by_id.get(message.parent_id) if message.parent_id else None
        parent = self.messages[parent_place] if parent_place is not None else None
        if parent is not None and parent is not message:
            lines.append(
                Content.assemble(Content.styled("↳ reply to ", "dim"), safe_line(sender_name(parent, self.contacts)))
            )
        if message.id and message.id == self.mine_last:
            seen = seen_words(readers(self.thread, message.created_at), self._name, self.clock())
            lines += [Content.styled(line, "$text-accent") for line in seen]
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
            lines += [Content(""), *self.body(block, width, show_quotes)]
        if not texts:
            lines += [Content(""), Content.styled("(no text)", "dim")]
        if files:
            lines += [Content(""), Content.styled("Attachments (a to save, O to open)", "bold")]
            for n, block in enumerate(files):
                number = self._first_attachment[place] + n
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
        return [part for line in lines for part in line.split(allow_blank=True)]

    def _name(self, contact_id: str) -> str:
        """A participant's name as shown (cleaned): the contact's, else "someone"."""
        return clean_line(contact_name(self.contacts.get(contact_id)), limit=30) or "someone"

    def html_text(self, block: ContentBlock) -> str:
        """An HTML block as text with numbered footnotes, numbered across the thread in time order (as the links
        list numbers them), whatever order the messages are shown in."""
        if self._footnotes is None:  # (filled, then shared: a layout in a worker may ask meanwhile)
            footnotes, seen = {}, 0
            for message in with_html(self.messages):
                for each in sorted(message.content_blocks, key=sequence_of):
                    if not is_attachment(each) and _mime(each) == "text/html":
                        text, numbered = footnoted(each.content or "", seen + 1)
                        footnotes[id(each)] = (text, numbered)
                        seen += numbered
            self._footnotes = footnotes
        found = self._footnotes.get(id(block))  # (none: a block the outline did not count, numbered on its own)
        return found[0] if found is not None else footnoted(block.content or "", 1)[0]

    def body(self, block: ContentBlock, width: int, show_quotes: bool) -> list[Content]:
        mime = _mime(block)
        text = self.html_text(block) if mime == "text/html" else block.content or ""
        text, left_out = limit_text(clean(text))
        out: list[Content] = []
        if mime == "text/markdown":
            out.append(markdown_content(text, width))
        else:
            for part in split_quotes(text):
                if isinstance(part, Quoted):
                    if show_quotes:
                        out.extend(safe(line, style="$text-muted") for line in part.lines)
                    else:
                        out.append(Content.styled(f"┄ {len(part.lines)} quoted lines (t to show) ┄", "dim italic"))
                elif part.strip():
                    out.append(safe(part.strip("\n")))
        if left_out:
            out.append(Content.styled(f"… {left_out:,} more characters not shown", "italic $text-warning"))
        return out


def _numbered_from(messages: Sequence[Message]) -> list[int]:
    """The number of each stored message's first attachment (numbered across the thread from 1, as the
    attachments list numbers them): from the outline when paged."""
    if isinstance(messages, PagedMessages):
        counts = [head.attachments for head in messages.outline]
    else:
        counts = [sum(1 for block in m.content_blocks if is_attachment(block)) for m in messages]
    first, numbers = 1, []
    for count in counts:
        numbers.append(first)
        first += count
    return numbers


def _mime(block: ContentBlock) -> str:
    return block.base_mime


def _highlight(row: Content, pattern: re.Pattern[str]) -> Content:
    for match in pattern.finditer(row.plain):
        row = row.stylize(HIT_STYLE, match.start(), match.end())
    return row
