"""The links of a thread: numbered as the reader's footnotes number them, with their real targets whole, and why
one should ask before it opens: words that name another host than the one it goes to (``paypal.com`` over
``https://evil.test``), a host not written in ASCII (``раураl.com`` in Cyrillic: shown in its ``xn--`` form, the
form no look-alike letter survives), or a user part before the host (``https://bank.example@evil.example/``). No
Textual here; opening one is :mod:`pigeon.core.programs`'s.
"""

from __future__ import annotations

import re
import socket
import unicodedata
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

    @property
    def caution(self) -> str:
        """Why to ask before opening it ("" when nothing misleads): its words, its host or its user part."""
        if self.named_host:
            return f"its words name {self.named_host} but it goes to {ascii_host(self.host) or 'no host'}"
        return target_caution(self.target)


def scheme_of(target: str) -> str:
    return target.split(":", 1)[0].strip().lower() if ":" in target else ""


def _as_browsers_read(target: str) -> str:
    """A web link as a browser reads it: a backslash is a slash in http and https (``evil.test\\@bank.test``
    goes to evil.test)."""
    return target.replace("\\", "/") if scheme_of(target) in {"http", "https"} else target


def host_of(target: str) -> str:
    """The host a target goes to (the domain of a ``mailto:`` address); "" when it has none."""
    if scheme_of(target) == "mailto":
        address = target.split(":", 1)[1].split("?", 1)[0]
        return address.rsplit("@", 1)[-1].lower() if "@" in address else ""
    try:
        return (urlsplit(_as_browsers_read(target)).hostname or "").lower()
    except ValueError:
        return ""


def ascii_host(host: str) -> str:
    """``host`` as it goes over the network: each label not in ASCII in its ``xn--`` (punycode) form."""
    if host.isascii():
        return host
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:  # (a label IDNA refuses: still shown in the form no letter can disguise)
        labels = host.split(".")
        return ".".join(x if x.isascii() else "xn--" + x.encode("punycode").decode("ascii") for x in labels)


def scripts_of(text: str) -> set[str]:
    """The writing systems of ``text``'s letters (``LATIN``, ``CYRILLIC``, ``GREEK`` ...)."""
    return {unicodedata.name(c, "UNKNOWN").split(" ")[0] for c in text if c.isalpha()}


def _odd_address(host: str) -> str | None:
    """The IPv4 address a host written as a number in another form names (``0x7f.1``, ``3232235777``), as browsers
    read it; None for a name or an address written plainly."""
    if not host or not host.isascii():
        return None
    try:
        address = socket.inet_ntoa(socket.inet_aton(host))
    except (OSError, ValueError):
        return None
    return address if address != host else None


def _host_letters(host: str) -> str:
    """Why a host not in ASCII may pass for another (mixed scripts named), with its ``xn--`` form; "" in ASCII."""
    if host.isascii():
        return ""
    mixed = next((sorted(scripts_of(label)) for label in host.split(".") if len(scripts_of(label)) > 1), [])
    how = f"mixes {' and '.join(s.title() for s in mixed)} letters" if mixed else "is not written in plain letters"
    return f"its host {clean_line(host, limit=60)} {how}: it is {ascii_host(host)}"


def target_caution(target: str) -> str:
    """Why a link's target itself misleads ("" when it does not): a user part before the host, a host not in
    ASCII (mixed scripts said so), or a host that reads otherwise than a browser goes."""
    if scheme_of(target) == "mailto":
        return _host_letters(host_of(target))
    if scheme_of(target) not in {"http", "https"}:
        return ""
    host = host_of(target)
    try:
        parts = urlsplit(_as_browsers_read(target))
    except ValueError:
        return "it cannot be read as a web address"
    if "@" in parts.netloc:
        user = parts.netloc.rsplit("@", 1)[0]
        return f"it starts with {clean_line(user, limit=60)}@ but goes to {ascii_host(host) or 'no host'}"
    try:
        written = (urlsplit(target).hostname or "").lower()
    except ValueError:
        written = ""
    if written != host:
        return f"it reads as {clean_line(written, limit=60)} but goes to {ascii_host(host)}"
    if (address := _odd_address(host)) is not None:
        return f"its host {clean_line(host, limit=60)} is the address {address} written otherwise"
    return _host_letters(host)


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
        target = clean_line(target)  # (whole: what is shown is shortened, never what is opened)
        mismatch = next((named for text in texts if (named := named_host(text, target))), "")
        shown = next((text for text in texts if named_host(text, target) == mismatch), texts[0] if texts else "")
        links.append(Link(len(links) + 1, target, clean_line(shown, limit=200), mismatch))
    return links


def _footnotes(messages: Sequence[Message]) -> int:
    """How many footnotes the HTML blocks of ``messages`` have (the reader numbers them on across the thread)."""
    return sum(
        1
        for message in messages
        for block in message.content_blocks
        if not is_attachment(block) and (block.mime_type or "").split(";")[0].strip().lower() == "text/html"
        for _ in _links_of_block(block)
    )


def message_links(messages: Sequence[Message], message: Message) -> list[Link]:
    """The links of one message of the thread, with the numbers :func:`thread_links` gives them (the reader's
    footnote numbers): its own footnotes, then the addresses its text writes out (numbered where the thread first
    has them)."""
    place = next((n for n, m in enumerate(messages) if m is message or (m.id and m.id == message.id)), None)
    if place is None:
        return []
    whole = thread_links(messages)
    start, own = _footnotes(messages[:place]), _footnotes([message])
    footnotes = whole[start : start + own]
    written = {link.target for link in thread_links([message])[own:]} - {link.target for link in footnotes}
    first = {link.target: link for link in reversed(whole) if link.target in written}  # (the lowest number)
    return footnotes + sorted(first.values(), key=lambda link: link.number)
