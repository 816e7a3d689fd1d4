"""Search queries over the local store: free text through SQLite FTS5, plus operators.

``from:`` ``to:`` ``subject:`` ``is:unread|read|starred|done|snoozed|muted`` ``has:attachment`` ``label:``
``in:inbox|unread|starred|snoozed|done|all`` ``before:YYYY-MM-DD`` ``after:YYYY-MM-DD``. A search covers all mail
unless ``in:`` narrows it to a view. Every word the user types becomes a quoted FTS5 phrase (prefix
matched), so no input is ever parsed as FTS syntax: ``"``, ``*``, ``NEAR(`` or ``-`` are just text.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pigeon.models import Message

from pigeon.htmltext import words_of
from pigeon.store.predicates import STATES, VIEW_CONDITIONS

FTS_COLUMNS = {"from": "sender", "to": "recipients", "subject": "subject"}
OPERATORS = {"is", "has", "in", "label", "before", "after"}
_WORD = re.compile(r"\w", re.UNICODE)
MAX_TERMS = 100
"""The most words and operators one search takes: each operator is a condition of one SQL expression, whose depth
SQLite bounds (a query of hundreds failed there instead of saying what was wrong)."""
MAX_QUERY_LENGTH = 2000
"""The most characters one search takes: ``shlex`` reads a long word in time that grows with its square (a pasted
page held the app), and no search needs more."""


class QueryError(ValueError):
    """A search query with an operator Pigeon does not know, or a value it cannot read."""


def _phrase(text: str) -> str | None:
    """``text`` as one quoted, prefix-matched FTS5 phrase; ``None`` if it has no word characters."""
    if not _WORD.search(text):
        return None
    return '"' + text.replace('"', '""') + '"*'


@dataclass
class SearchQuery:
    text: list[str] = field(default_factory=list)
    columns: list[tuple[str, str]] = field(default_factory=list)
    states: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    views: list[str] = field(default_factory=list)
    has_attachment: bool = False
    before: date | None = None
    after: date | None = None

    @property
    def searching(self) -> bool:
        """Whether this asks for anything (an empty query is no search: the view is shown as it is)."""
        return bool(
            self.text or self.columns or self.states or self.labels or self.views or self.has_attachment
        ) or bool(self.before or self.after)

    def fts(self) -> str:
        parts = [p for p in (_phrase(t) for t in self.text) if p]
        for column, value in self.columns:
            phrase = _phrase(value)
            if phrase:
                parts.append(f"{column} : {phrase}")
        return " AND ".join(parts)

    def sql(self) -> tuple[str, dict[str, Any]]:
        """A condition over ``threads t LEFT JOIN triage tr``, and its parameters."""
        parts: list[str] = []
        params: dict[str, Any] = {}
        fts = self.fts()
        if fts:
            parts.append("t.id IN (SELECT thread_id FROM search WHERE search MATCH :fts)")
            params["fts"] = fts
        parts += [STATES[s] for s in self.states]
        parts += [f"({VIEW_CONDITIONS[v]})" for v in self.views]
        for n, label in enumerate(self.labels):
            parts.append(f"EXISTS (SELECT 1 FROM labels l WHERE l.thread_id = t.id AND l.label = :label{n})")
            params[f"label{n}"] = label
        if self.has_attachment:
            parts.append("t.has_attachment = 1")
        if self.before:
            parts.append("t.last_message_at < :before")
            params["before"] = datetime.combine(self.before, datetime.min.time(), UTC).strftime("%Y-%m-%dT%H:%M:%S")
        if self.after:
            parts.append("t.last_message_at >= :after")
            params["after"] = datetime.combine(self.after, datetime.min.time(), UTC).strftime("%Y-%m-%dT%H:%M:%S")
        return " AND ".join(parts), params


def _date(name: str, value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise QueryError(f"{name}: takes a date like 2026-11-01, not {value!r}") from None


def parse_query(query: str | None) -> SearchQuery:
    """Read a query; :class:`QueryError` says what is wrong with it."""
    parsed = SearchQuery()
    if not query or not query.strip():
        return parsed
    if len(query) > MAX_QUERY_LENGTH:
        raise QueryError(f"a search takes at most {MAX_QUERY_LENGTH:,} characters, not {len(query):,}")
    try:
        tokens = shlex.split(query)
    except ValueError:  # an unbalanced quote: take the words as they are
        tokens = query.split()
    if len(tokens) > MAX_TERMS:
        raise QueryError(f"a search takes at most {MAX_TERMS} words and operators, not {len(tokens)}")
    for token in tokens:
        name, sep, value = token.partition(":")
        key = name.lower()
        if (
            not sep
            or not value
            or (key not in FTS_COLUMNS and key not in {"is", "has", "in", "label", "before", "after"})
        ):
            parsed.text.append(token)
        elif key in FTS_COLUMNS:
            parsed.columns.append((FTS_COLUMNS[key], value))
        elif key == "is":
            if value.lower() not in STATES:
                raise QueryError(f"is: takes one of {', '.join(STATES)}, not {value!r}")
            parsed.states.append(value.lower())
        elif key == "has":
            if value.lower() not in {"attachment", "attachments"}:
                raise QueryError(f"has: takes attachment, not {value!r}")
            parsed.has_attachment = True
        elif key == "label":
            parsed.labels.append(value)
        elif key == "in":
            if value.lower() not in VIEW_CONDITIONS:
                raise QueryError(f"in: takes one of {', '.join(VIEW_CONDITIONS)} (label: for a label), not {value!r}")
            parsed.views.append(value.lower())
        elif key == "before":
            parsed.before = _date("before", value)
        else:
            parsed.after = _date("after", value)
    return parsed


def index_text(messages: Iterable[Message]) -> str:
    """The words of a thread's messages for the full-text index (HTML reduced to its text)."""
    chunks = []
    for message in messages:
        for block in message.content_blocks:
            if block.filename:
                chunks.append(block.filename)
                continue
            content = block.content or ""
            if (block.mime_type or "").lower().startswith("text/html"):
                content = words_of(content)
            chunks.append(content)
    return "\n".join(chunks)
