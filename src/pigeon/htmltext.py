"""HTML to text, one way for all of Pigeon: the reader, the search index and the service's error pages.

inscriptis drops hidden elements, scripts and styles and lays tables out; it loads on first use (about 0.1 s), never
at start-up. No Textual here.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from pigeon.sanitize import clean

_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


def _config(*, links: bool) -> Any:
    from inscriptis.model.config import ParserConfig

    return ParserConfig(display_links=links)


def load() -> None:
    """Import inscriptis now (called in a thread after the first frame, so no message waits for it)."""
    _config(links=False)


def text_of(html: str) -> str:
    """The readable text of ``html``, without link targets (for the index and one-line descriptions)."""
    from inscriptis import get_text

    text: str = get_text(html, _config(links=False))
    return text.strip()


_HIDDEN = re.compile(r"display\s*:\s*none", re.IGNORECASE)
_BLOCKS = (  # the block elements: where a word ends
    "//address|//article|//aside|//blockquote|//br|//caption|//dd|//details|//div|//dl|//dt|//figcaption|"
    "//figure|//footer|//form|//h1|//h2|//h3|//h4|//h5|//h6|//header|//hr|//li|//main|//nav|//ol|//p|"
    "//pre|//section|//summary|//table|//tbody|//td|//tfoot|//th|//thead|//tr|//ul"
)


def words_of(html: str) -> str:
    """The words of ``html`` for the search index, in document order: the text a reader shows (not that of script,
    style, head, or what is styled ``display: none``, as inscriptis leaves them out), one space between pieces.

    lxml's parser and text iteration, in C: 332 instead of 708 us a block for inscriptis's layout, which the index
    does not need (its tokenizer reads words, not lines; measured on the bench's newsletters, where both give the
    same words). A first ``pigeon sync`` indexes every HTML block; the reader still lays HTML out with inscriptis."""
    from lxml.etree import strip_elements

    tree = _tree(html)
    if tree is None:
        return ""
    for element in tree.xpath("//*[@style]"):
        if _HIDDEN.search(element.get("style", "")):
            if element.getparent() is None:
                return ""
            element.drop_tree()  # (its tail is text after it, kept)
    strip_elements(tree, "script", "style", "head", with_tail=False)
    for element in tree.xpath(_BLOCKS):  # words end where a block does; inline markup (<b>th</b>ere) splits none
        element.text = " " + element.text if element.text else " "
        element.tail = " " + element.tail if element.tail else " "
    return " ".join("".join(tree.itertext()).split())


def summary(html: str) -> str:
    """What an HTML page is about: its title if it has one (error pages say it there), else its text."""
    title = _TITLE.search(html)
    return text_of(title.group(1)) if title and title.group(1).strip() else text_of(html)


def _tree(html: str) -> Any:
    """The parsed document of ``html`` (``None`` when there is nothing to read)."""
    from lxml.etree import ParserError
    from lxml.html import document_fromstring

    # Cleaned first: lxml refuses control characters in text it is given (a marker added to an anchor whose text
    # held an escape sequence raised), and nothing of them would be shown anyway.
    source = clean(html).strip()
    if not source:
        return None
    try:
        return document_fromstring(source)
    except ParserError:  # (what inscriptis does with what lxml cannot read as a document)
        return document_fromstring("<pre>" + source + "</pre>")


def _targets(tree: Any) -> Any:
    """Each anchor with a target (not a jump within the page), in document order: ``(anchor, target)``."""
    for anchor in tree.iter("a"):
        target = (anchor.get("href") or "").strip()
        if target and not target.startswith("#"):
            yield anchor, target


@functools.lru_cache(maxsize=16)
def anchors(html: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The links of ``html`` in footnote order, one per target: ``(target, the visible texts of its anchors)``
    (whitespace folded). The reader's footnotes number exactly these."""
    tree = _tree(html)
    found: dict[str, list[str]] = {}
    for anchor, target in _targets(tree) if tree is not None else ():
        texts = found.setdefault(target, [])
        text = " ".join(anchor.text_content().split())
        if text and text not in texts:
            texts.append(text)
    return tuple((target, tuple(texts)) for target, texts in found.items())


def readable(html: str, first: int = 1) -> str:
    """The readable text of ``html`` with its links as numbered footnotes that show their real targets, numbered
    from ``first`` (a thread numbers its links once across its messages)."""
    return footnoted(html, first)[0]


@functools.lru_cache(maxsize=16)  # folding quotes or a resize lays a thread out again: its HTML is read once
def footnoted(html: str, first: int = 1) -> tuple[str, int]:
    """:func:`readable`'s text and how many footnotes it numbered (where the next block's numbers start), from
    one parse.

    Each anchor is numbered on the parsed tree (its ``href``, nothing its text says), before the text is made, so a
    link whose text looks like another link cannot take the footnote; numbering is a dict lookup, linear in the
    number of links."""
    from inscriptis import Inscriptis

    tree = _tree(html)
    if tree is None:
        return "", 0
    numbers: dict[str, int] = {}  # target -> its footnote number
    for anchor, target in _targets(tree):
        marker = f" [{numbers.setdefault(target, len(numbers) + first)}]"
        if len(anchor):
            anchor[-1].tail = (anchor[-1].tail or "") + marker
        else:
            anchor.text = (anchor.text or "") + marker
    text: str = Inscriptis(tree, _config(links=False)).get_text()
    text = text.strip()
    if numbers:
        text += "\n\nLinks:\n" + "\n".join(f"[{n}] {target}" for target, n in numbers.items())
    return text, len(numbers)
