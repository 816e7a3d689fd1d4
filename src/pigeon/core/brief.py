"""What is new in a thread since the user last read it, in a few lines for the top of the reader: who wrote, the
first words of the newest messages (quotes, greetings and signatures out), and the dates, amounts, links and
attachments found in them. Made here, without a model: one pass over the new messages, each read up to
``READ_AT_MOST`` characters, so its cost grows with the thread's size and no faster."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from pigeon.core.attachments import is_attachment, sequence_of
from pigeon.core.links import thread_links
from pigeon.core.listing import first_name
from pigeon.sanitize import clean_line
from pigeon.store.lanes import AMOUNT, names_currency

if TYPE_CHECKING:
    from pigeon.models import Message

NEWEST = 50
"""New messages read for a brief (the newest); more are counted by who wrote them no further."""
SAID = 3
"""New messages given a line of their own (the newest)."""
READ_AT_MOST = 20_000
"""Characters of a message's text read."""
ALL_AT_MOST = 200_000
"""Characters read for one brief in all (the newest messages first)."""
FOUND_AT_MOST = 4
"""Dates, amounts, links and files named, each."""
GIST = 200

_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?"
    r"|nov(?:ember)?|dec(?:ember)?)\.?"
)
_CLOCK = r"\d{1,2}(?::\d\d)?\s?(?:am|pm)|\d{1,2}:\d\d"
_DATES = re.compile(
    rf"\b(?:\d{{4}}-\d\d-\d\d"
    rf"|(?:mon|tues|wednes|thurs|fri|satur|sun)day(?:\s+(?:at\s+)?(?:{_CLOCK}))?"
    rf"|(?:today|tomorrow|tonight)(?:\s+(?:at\s+)?(?:{_CLOCK}))?"
    rf"|next (?:week|month)|end of (?:the )?(?:day|week|month)"
    rf"|{_MONTH} \d{{1,2}}(?:st|nd|rd|th)?\b|\d{{1,2}}(?:st|nd|rd|th)? (?:of )?{_MONTH}(?=\W|$)"
    rf"|(?:at )?(?:{_CLOCK}))",
    re.IGNORECASE,
)
_GREETING = re.compile(  # a short line of its own: "Hi Lisa," "Dear all," "Good morning!"
    r"(?:hi|hello|hey|dear|good (?:morning|afternoon|evening)|morning)\b[^.?:;]{0,30}[,!]?$", re.IGNORECASE
)
_SIGN_OFF = re.compile(
    r"(?:thanks|thank you|many thanks|cheers|best|regards|kind regards|best regards|warm regards|talk soon|"
    r"sincerely|all the best|see you)(?:\s+\w+){0,2}\s*[,!.]?$",
    re.IGNORECASE,
)
ATTRIBUTION = re.compile(r"^on .{0,200}wrote:\s*$", re.IGNORECASE)
"""The line a reply puts before what it quotes ("On Tue, 24 Nov 2026 at 06:04, Ada wrote:")."""
_MARKDOWN = (  # what Markdown's marks are around or before, for a message's first words (quotes stay quotes)
    (re.compile(r"^[ \t]{0,3}(?:(?:[-*_][ \t]*){3,}|```.*|~~~.*)$", re.MULTILINE), ""),  # rules, code fences
    (re.compile(r"^[ \t]{0,3}(?:#{1,6}[ \t]+|[-*+][ \t]+|\d{1,9}[.)][ \t]+)", re.MULTILINE), ""),
    (re.compile(r"^\|?[-:| \t]+\|[-:| \t]*$", re.MULTILINE), ""),  # a table's line under its head
    (re.compile(r"!?\[([^\]\n]*)\]\([^)\n]*\)"), r"\1"),
    (re.compile(r"(\*\*\*|\*\*|\*|~~|`+)(?=\S)(.+?)(?<=\S)\1"), r"\2"),  # (not _ or __: snake_case words)
)


@dataclass(frozen=True)
class Gist:
    """One new message in a line: who, when, its first words."""

    who: str
    when: datetime | None
    words: str


@dataclass(frozen=True)
class Brief:
    """What is new: how many messages, who wrote them (the most first), the newest few in a line each, and what was
    found in them (each as written, cleaned; links by their real targets)."""

    new: int
    writers: tuple[tuple[str, int], ...]
    gists: tuple[Gist, ...]
    dates: tuple[str, ...] = ()
    amounts: tuple[str, ...] = ()
    links: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    read_before: bool = True
    """The user read the thread before (else all that others wrote is new: it was never read)."""

    def lines(self, when: Callable[[datetime | None], str]) -> list[str]:
        """The brief in lines (``when`` says a message's time), the first saying how much is new and from whom."""
        alone = len(self.writers) == 1  # (then the count says how many are theirs)
        who = ", ".join(f"{name} ({count})" if count > 1 and not alone else name for name, count in self.writers)
        count = f"{self.new} new message{'s' if self.new != 1 else ''}"
        said = "New since you last read it" if self.read_before else "Not read yet"
        lines = [f"{said}: {count} from {who}" if who else f"{said}: {count}"]
        lines += [f"{first_name(g.who)} · {when(g.when)} — {g.words or '(no text)'}" for g in self.gists]
        found = [
            f"{label}: {', '.join(items)}"
            for label, items in (
                ("Dates", self.dates),
                ("Amounts", self.amounts),
                ("Links", self.links),
                ("Files", self.files),
            )
            if items
        ]
        if found:
            lines.append(" · ".join(found))
        return lines


def brief(new: Sequence[Message], count: int, name: Callable[[Message], str], *, read_before: bool = True) -> Brief:
    """The brief of the ``new`` messages (the newest ``NEWEST`` of ``count`` new ones, oldest first), each sender
    named by ``name``."""
    writers = Counter(name(m) for m in new)
    dates: dict[str, str] = {}
    amounts: dict[str, str] = {}
    links: dict[str, None] = {}
    files: dict[str, None] = {}
    gists: list[Gist] = []
    left = ALL_AT_MOST
    for place in range(len(new) - 1, -1, -1):  # the newest first, while the reading budget lasts
        message = _bounded(new[place], min(READ_AT_MOST, left))
        text = _text(message)
        left -= len(text)
        own = _own_words(text)
        if place >= len(new) - SAID:
            gists.insert(0, Gist(name(message), message.created_at, _gist(own)))
        for found in _DATES.finditer(own):
            _keep(dates, " ".join(found.group(0).split()))
        for found in re.finditer(AMOUNT, own) if names_currency(own) else ():
            _keep(amounts, found.group(0))
        for link in thread_links([message]):
            if len(links) < FOUND_AT_MOST and link.openable and not link.target.lower().startswith("mailto:"):
                links.setdefault(_short_link(link.target, link.caution), None)
        for block in message.content_blocks:
            if is_attachment(block) and len(files) < FOUND_AT_MOST:
                files.setdefault(clean_line(block.filename or "(unnamed)", limit=60), None)
    return Brief(
        new=count,
        writers=tuple(writers.most_common()),
        gists=tuple(gists),
        dates=tuple(dates.values()),
        amounts=tuple(amounts.values()),
        links=tuple(links),
        files=tuple(files),
        read_before=read_before,
    )


def _keep(found: dict[str, str], text: str) -> None:
    """Keep ``text`` once (any case), at most ``FOUND_AT_MOST`` in all."""
    if len(found) < FOUND_AT_MOST:
        found.setdefault(text.lower(), clean_line(text, limit=40))


def _bounded(message: Message, at_most: int) -> Message:
    """``message`` with each text block cut to ``at_most`` characters (its links and words are looked for there)."""
    if all(len(b.content or "") <= at_most for b in message.content_blocks):
        return message
    blocks = [
        b if is_attachment(b) else b.model_copy(update={"content": (b.content or "")[:at_most]})
        for b in message.content_blocks
    ]
    return message.model_copy(update={"content_blocks": blocks})


def _text(message: Message) -> str:
    """A message's text as read (HTML as text), up to ``READ_AT_MOST`` characters."""
    from pigeon.htmltext import text_of

    parts: list[str] = []
    left = READ_AT_MOST
    for block in sorted(message.content_blocks, key=sequence_of):
        if is_attachment(block) or left <= 0:
            continue
        content = (block.content or "")[:left]
        mime = (block.mime_type or "text/plain").split(";")[0].strip().lower()
        parts.append(text_of(content) if mime == "text/html" else _unmarked(content) if "markdown" in mime else content)
        left -= len(content)
    return "\n".join(parts)


def _unmarked(markdown: str) -> str:
    """Markdown's text without its marks (headings, lists, emphasis by asterisks, code, rules, links' targets), as
    it reads; underscores stay, being in words as often as around them."""
    for pattern, by in _MARKDOWN:
        markdown = pattern.sub(by, markdown)
    return markdown


def _own_words(text: str) -> str:
    """What the sender wrote this time: quoted lines, the attribution before them, and the signature out."""
    kept: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped in ("--", "-- ", "__") or stripped.lower().startswith("sent from my"):
            break
        if stripped.startswith(">") or ATTRIBUTION.match(stripped):
            continue
        kept.append(stripped)
    return "\n".join(kept)


def _gist(words: str) -> str:
    """The first words of a message's own text, without its greeting and from its sign-off on."""
    kept: list[str] = []
    for line in words.splitlines():
        if not line:
            continue
        if not kept and _GREETING.match(line):
            continue
        if kept and _SIGN_OFF.match(line):
            break
        kept.append(line)
        if sum(len(k) for k in kept) >= GIST:
            break
    return clean_line(" ".join(kept), limit=GIST)


def _short_link(target: str, caution: str) -> str:
    """A link's real target without its scheme, shortened; one that misleads says so."""
    shown = clean_line(re.sub(r"^https?://", "", target, flags=re.IGNORECASE), limit=60)
    return f"{shown} (careful: {clean_line(caution, limit=60)})" if caution else shown
