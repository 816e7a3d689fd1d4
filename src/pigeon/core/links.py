"""The links of a thread: numbered as the reader's footnotes number them, with their real targets, and whether the
words a link shows name another host than the one it goes to (``paypal.com`` over ``https://evil.test``). No
Textual here; opening one is :mod:`pigeon.core.handoff`'s.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from pigeon.core.attachments import is_attachment, sequence_of
from pigeon.sanitize import clean, clean_line

if TYPE_CHECKING:
    from pigeon.models import ContentBlock, Message

OPENABLE = ("http", "https", "mailto")
"""The schemes Pigeon hands to a browser or mail program; a ``javascript:``, ``file:`` or ``data:`` target in mail
is shown, never opened."""

_URL = re.compile(r"""\b(?:https?://|mailto:)[^\s<>"'`\x00-\x1f]+""", re.IGNORECASE)
_MARKDOWN_LINK = re.compile(r"\[([^\]\n]{1,300})\]\(\s*([^)\s]{1,2000})\s*\)")
# A host named in a link's words: a dotted name with a top-level part of letters, or an address's domain.
_HOST = re.compile(r"(?:[a-z][a-z0-9+.-]*://)?(?:[^\s@/]+@)?((?:[a-z0-9-]{1,63}\.)+[a-z]{2,63})\b", re.IGNORECASE)
_TRAILING = ".,;:!?)]}'\""


@dataclass(frozen=True)
class Link:
    number: int
    target: str
    text: str
    """What the mail shows for it ("" when the target itself is shown)."""
    named_host: str = ""
    """The host the text names when it is not the target's: the link asks before it opens."""

    @property
    def host(self) -> str:
        return host_of(self.target)

    @property
    def openable(self) -> bool:
        return scheme_of(self.target) in OPENABLE


def scheme_of(target: str) -> str:
    return target.split(":", 1)[0].strip().lower() if ":" in target else ""


def host_of(target: str) -> str:
    """The host a target goes to (the domain of a ``mailto:`` address); "" when it has none."""
    if scheme_of(target) == "mailto":
        address = target.split(":", 1)[1].split("?", 1)[0]
        return address.rsplit("@", 1)[-1].lower() if "@" in address else ""
    try:
        return (urlsplit(target).hostname or "").lower()
    except ValueError:
        return ""


def _same_site(named: str, host: str) -> bool:
    named, host = named.lower().removeprefix("www."), host.lower().removeprefix("www.")
    return named == host or host.endswith("." + named)


def named_host(text: str, target: str) -> str:
    """The host ``text`` names if it is not the target's (or a part of it), else ""."""
    found = _HOST.search(text)
    if found is None:
        return ""
    named = found.group(1).lower().rstrip(".")
    host = host_of(target)
    return "" if host and _same_site(named, host) else named


def _links_of_block(block: ContentBlock) -> Iterator[tuple[str, tuple[str, ...]]]:
    from pigeon.htmltext import anchors

    mime = (block.mime_type or "text/plain").split(";")[0].strip().lower()
    raw = block.content or ""
    if mime == "text/html":
        yield from anchors(raw)
        return
    text = clean(raw)
    if mime == "text/markdown":
        for words, target in _MARKDOWN_LINK.findall(text):
            yield target, (words,)
    for found in _URL.finditer(text):
        yield found.group(0).rstrip(_TRAILING), ()


def thread_links(messages: Sequence[Message]) -> list[Link]:
    """Every link of the thread's messages, numbered: first the HTML footnotes, in the reader's order and with its
    numbers (each HTML block's links numbered on from the last block's), then the addresses written out in plain
    text or Markdown that no footnote has. A text that names another host than the target's is the one shown."""
    found: list[tuple[str, tuple[str, ...]]] = []
    plain: dict[str, list[str]] = {}
    for message in messages:
        for block in sorted(message.content_blocks, key=sequence_of):
            if is_attachment(block):
                continue
            if (block.mime_type or "").split(";")[0].strip().lower() == "text/html":
                found.extend(_links_of_block(block))
            else:
                for target, texts in _links_of_block(block):
                    plain.setdefault(target, []).extend(texts)
    footnoted = {target for target, _ in found}
    found += [(target, tuple(texts)) for target, texts in plain.items() if target not in footnoted]
    links: list[Link] = []
    for target, texts in found:
        target = clean_line(target, limit=2000)
        mismatch = next((named for text in texts if (named := named_host(text, target))), "")
        shown = next((text for text in texts if named_host(text, target) == mismatch), texts[0] if texts else "")
        links.append(Link(len(links) + 1, target, clean_line(shown, limit=200), mismatch))
    return links
