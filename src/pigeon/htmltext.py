"""HTML to text, one way for all of Pigeon: the reader, the search index and the service's error pages.

inscriptis drops hidden elements, scripts and styles and lays tables out; it loads on first use, never at
start-up. No Textual here. Every word of a document is kept: one nested deeper than lxml's parser and
inscriptis's recursion take, or with a text longer than lxml's default limit, is flattened below a set depth first.
"""

from __future__ import annotations

import functools
import re
import threading
from typing import Any

from pigeon.sanitize import clean

KEEP_DEPTH = 200
"""How deep elements stay elements: lxml's parser drops what lies deeper than 255 (and with ``huge_tree``,
2047), and inscriptis recurses once per level, so a document nested deeper is flattened below this depth."""


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

    lxml's parser and text iteration, in C, and quicker than inscriptis's layout, which the index does not need
    (its tokenizer reads words, not lines; both give the same words). A first ``pigeon sync`` indexes every
    HTML block; the reader still lays HTML out with inscriptis."""
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
    """What an HTML page is about: its title if it has one (error pages say it there), else its text.

    The title is the parsed document's (linear), not the first text between ``<title`` and ``</title>``."""
    from inscriptis import Inscriptis

    tree = _tree(html)
    if tree is None:
        return ""
    title = " ".join((tree.findtext(".//title") or "").split())
    if title:
        return title
    text: str = Inscriptis(tree, _config(links=False)).get_text()
    return text.strip()


_EMPTY = frozenset(
    ["area", "base", "basefont", "br", "col", "frame", "hr", "img", "input", "isindex", "link", "meta", "param"]
)
"""The elements lxml's HTML parser never nests anything in."""
_UNSHOWN = frozenset({"script", "style", "head", "template", "title"})
_BLOCK_NAMES = frozenset(name.removeprefix("//") for name in _BLOCKS.split("|"))
# A start or end tag's name, a comment's start, or the start of a declaration, processing instruction or bogus tag.
_MARKUP = re.compile(r"<(?:(/?)([A-Za-z][^\t\n\f\r />]*)|!--|[!?/])")
_RAW_END = {name: re.compile(f"</{name}", re.IGNORECASE) for name in ("script", "style", "title", "textarea")}


def _flattened(source: str, keep: int) -> str:
    """``source`` written again with every element deeper than ``keep`` replaced by its content (a space where a
    block ends), so every word stays while the nesting lxml and inscriptis read stays bounded; what is not shown
    (scripts, styles, hidden elements) is left out rather than revealed; comments go.

    One forward pass (each search starts where the last ended), tags found by name, not parsed: a document this
    is needed for is hostile or broken, and what it gets wrong only costs it its layout."""
    out: list[str] = []
    opened: list[tuple[str, bool, bool]] = []  # (tag, kept as an element, its content unshown)
    pos = 0
    close = -1  # the first ">" at or after the current tag's name (found again only once passed)
    while True:
        found = _MARKUP.search(source, pos)
        text = source[pos : found.start() if found else len(source)]
        if text and not (opened and opened[-1][2]):
            out.append(text)
        if found is None:
            break
        if found.group() == "<!--":
            end = source.find("-->", found.end())
            if end < 0:
                break  # (an unterminated comment runs to the end)
            pos = end + 3
            continue
        if close < found.end():
            close = source.find(">", found.end())
        if close < 0:
            break  # (no tag can end: what is left is an unfinished tag)
        pos = close + 1
        name = (found.group(2) or "").lower()
        if not name:
            continue  # a declaration, processing instruction or bogus tag: nothing to show
        if found.group(1):
            _close(out, opened, name)
            continue
        unshown = bool(opened) and opened[-1][2]
        kept = len(opened) < keep
        if kept:
            out.append(source[found.start() : pos])
        elif not unshown:
            unshown = name in _UNSHOWN or bool(_HIDDEN.search(source, found.end(), close))
            out.append(" " if name in _BLOCK_NAMES or name == "br" else "")
        if name in _EMPTY:
            continue
        opened.append((name, kept, unshown))
        if name in _RAW_END:  # its text runs to its end tag whatever it holds
            end_tag = _RAW_END[name].search(source, pos)
            stop = end_tag.start() if end_tag else len(source)
            if not unshown:
                out.append(source[pos:stop])
            pos = stop
    return "".join(out)


def _close(out: list[str], opened: list[tuple[str, bool, bool]], name: str) -> None:
    """An end tag: closes the innermost open element of that name and those inside it (one of nothing open is
    ignored, as lxml does)."""
    at = next((i for i in range(len(opened) - 1, -1, -1) if opened[i][0] == name), None)
    if at is None:
        return
    _, kept, unshown = opened[at]
    del opened[at:]
    if kept:
        out.append(f"</{name}>")
    elif not unshown and name in _BLOCK_NAMES:
        out.append(" ")


_parsers = threading.local()  # (an lxml parser is not for two threads at once; the index and the reader may be)


def _parse(source: str, *, huge: bool = False) -> tuple[Any, bool]:
    """The document of ``source`` and whether lxml's parser cut it short (nested past its depth limit, or a text
    longer than its default limit: ``huge`` lifts that one and raises the other)."""
    from lxml.etree import ErrorTypes, ParserError
    from lxml.html import HTMLParser, document_fromstring

    parser = getattr(_parsers, "huge" if huge else "plain", None)
    if parser is None:
        parser = HTMLParser(huge_tree=huge)
        setattr(_parsers, "huge" if huge else "plain", parser)
    try:
        tree = document_fromstring(source, parser=parser)
    except ParserError:  # (what inscriptis does with what lxml cannot read as a document)
        tree = document_fromstring("<pre>" + source + "</pre>", parser=parser)
    return tree, any(error.type == ErrorTypes.ERR_RESOURCE_LIMIT for error in parser.error_log)


@functools.cache
def _too_deep() -> Any:
    """Whether a document has an element deeper than inscriptis lays out (an XPath of one step a level)."""
    from lxml.etree import XPath

    return XPath("boolean(" + "/*" * (KEEP_DEPTH + 50) + ")")


def _tree(html: str) -> Any:
    """The parsed document of ``html`` (``None`` when there is nothing to read), every word of it kept: a
    document the parser would cut short is flattened below :data:`KEEP_DEPTH` (and, should that not do, to its
    text) and read without lxml's size limits."""
    # Cleaned first: lxml refuses control characters in text it is given (a marker added to an anchor whose text
    # held an escape sequence raised), and nothing of them would be shown anyway.
    source = clean(html).strip()
    if not source:
        return None
    tree, cut = _parse(source)
    if cut:
        tree, cut = _parse(_flattened(source, KEEP_DEPTH), huge=True)
        if cut or _too_deep()(tree):
            tree, _ = _parse(_flattened(source, 0), huge=True)
    return tree


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
