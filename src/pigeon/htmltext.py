"""HTML to text, one way for all of Pigeon: the reader, the search index and the service's error pages.

inscriptis drops hidden elements, scripts and styles and lays tables out; it loads on first use (about 0.1 s), never
at start-up. No Textual here.
"""

from __future__ import annotations

import re
from typing import Any

_LINK = re.compile(r"\[([^\[\]\n]*)\]\(([^()\s]+)\)")
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


def summary(html: str) -> str:
    """What an HTML page is about: its title if it has one (error pages say it there), else its text."""
    title = _TITLE.search(html)
    return text_of(title.group(1)) if title and title.group(1).strip() else text_of(html)


def readable(html: str) -> str:
    """The readable text of ``html`` with its links as numbered footnotes that show their real targets."""
    from inscriptis import get_text

    text: str = get_text(html, _config(links=True))
    numbers: dict[str, int] = {}  # target -> its footnote number (a dict: linear in the number of links)

    def footnote(match: re.Match[str]) -> str:
        label, target = match.group(1).strip(), match.group(2)
        number = numbers.setdefault(target, len(numbers) + 1)
        return f"{label} [{number}]" if label and label != target else f"{target} [{number}]"

    text = _LINK.sub(footnote, text).strip()
    if numbers:
        text += "\n\nLinks:\n" + "\n".join(f"[{n}] {target}" for target, n in numbers.items())
    return text
