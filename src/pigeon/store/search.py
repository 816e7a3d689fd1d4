"""Search queries over the local store: free text through SQLite FTS5, plus operators, ``OR`` and ``-``.

``from:`` ``to:`` ``subject:`` ``is:unread|read|starred|done|snoozed|muted|reminded`` ``has:attachment`` ``label:``
``in:inbox|unread|starred|snoozed|done|all`` ``before:DAY`` ``after:DAY`` (a date like 2026-11-01; the core teaches
it day words such as ``yesterday``). Terms side by side must all hold; ``OR`` between two terms lets either do
(``from:ada OR from:bob invoice``); ``-`` before a term or operator turns it round (``-is:read``, ``-invoice``). A
search covers all mail unless ``in:`` narrows it to a view. Every word the user types becomes a quoted FTS5 phrase
(prefix matched), so no input is ever parsed as FTS syntax: ``"``, ``*``, ``NEAR(`` or ``-`` are just text, and
``OR`` and ``-`` are Pigeon's, never FTS5's.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pigeon.models import Message

from pigeon.htmltext import words_of
from pigeon.store.predicates import STATES, VIEW_CONDITIONS

FTS_COLUMNS = {"from": "sender", "to": "recipients", "subject": "subject"}
OPERATORS = {"is", "has", "in", "label", "before", "after"}
EXAMPLES = {"from": "from:ada", "to": "to:bob", "subject": "subject:invoice", "is": "is:unread"}
EXAMPLES |= {"has": "has:attachment", "in": "in:inbox", "label": "label:work"}
EXAMPLES |= {"before": "before:yesterday", "after": "after:3d"}
_WORD = re.compile(r"\w", re.UNICODE)
MAX_TERMS = 100
"""The most words and operators one search takes: each operator is a condition of one SQL expression, whose depth
SQLite bounds (a query of hundreds failed there instead of saying what was wrong)."""
MAX_QUERY_LENGTH = 2000
"""The most characters one search takes: ``shlex`` reads a long word in time that grows with its square (a pasted
page held the app), and no search needs more."""
FTS_KINDS = {"word", "column"}
_MATCHES = "t.rowid IN (SELECT rowid FROM search WHERE search MATCH "


def matched(key: str) -> str:
    """The threads the full-text index matches for the parameter ``key``: a thread's row in the index has the
    thread's rowid (threads are never deleted, nor the store vacuumed, so rowids stay), and the index alone answers;
    asking for its ``thread_id`` column read each match's stored text (docs/performance.md)."""
    return f"{_MATCHES}:{key})"


def walking_dates(where: str) -> str:
    """``where`` with the index's matches (:func:`matched`) tested as the threads go by, not looked up one by one:
    with the newest first, SQLite then walks the date index and stops at the page's last row, instead of reading
    every match's thread and sorting them (a word that matches nothing walks the whole index: docs/performance.md)."""
    return where.replace(_MATCHES, "+" + _MATCHES)


DayReader = Callable[[str], datetime]
"""Reads the value of ``before:``/``after:`` as the moment it starts; raises ``ValueError`` if it cannot."""


class QueryError(ValueError):
    """A search query with an operator Pigeon does not know, or a value it cannot read."""


def _phrase(text: str) -> str | None:
    """``text`` as one quoted, prefix-matched FTS5 phrase; ``None`` if it has no word characters."""
    text = text.replace("\x00", "")  # FTS5 reads a NUL as the end of the query: a quote left open
    if not _WORD.search(text):
        return None
    return '"' + text.replace('"', '""') + '"*'


def iso_day(value: str) -> datetime:
    """A ``YYYY-MM-DD`` day as the UTC moment it starts (the store alone knows no day words)."""
    try:
        return datetime.combine(date.fromisoformat(value), datetime.min.time(), UTC)
    except ValueError:
        raise ValueError(f"takes a date like 2026-11-01, not {value!r}") from None


@dataclass(frozen=True)
class Term:
    """One condition: a word (``kind`` ``word``), a column's word (``column``: ``sender``...), a state, a view, a
    label, ``attachment``, or a ``before``/``after`` moment; ``negated`` when a ``-`` stood before it."""

    kind: str
    value: str = ""
    column: str = ""
    moment: datetime | None = None
    negated: bool = False

    def match(self) -> str:
        """The FTS5 expression of a word term."""
        phrase = _phrase(self.value) or '""'
        return f"{self.column} : {phrase}" if self.kind == "column" else phrase

    def condition(self, params: dict[str, Any]) -> str:
        """This term as a condition over ``threads t LEFT JOIN triage tr`` (its parameters added to ``params``)."""
        key = f"q{len(params)}"
        if self.kind in FTS_KINDS:
            params[key] = self.match()
            sql = matched(key)
        elif self.kind == "state":
            sql = STATES[self.value]
        elif self.kind == "view":
            sql = VIEW_CONDITIONS[self.value]
        elif self.kind == "label":
            params[key] = self.value
            sql = f"EXISTS (SELECT 1 FROM labels l WHERE l.thread_id = t.id AND l.label = :{key})"
        elif self.kind == "attachment":
            sql = "t.has_attachment = 1"
        else:
            assert self.moment is not None
            params[key] = self.moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S")
            sql = f"t.last_message_at {'<' if self.kind == 'before' else '>='} :{key}"
        return f"NOT COALESCE(({sql}), 0)" if self.negated else f"({sql})"


@dataclass
class SearchQuery:
    """What a search asks: every clause must hold, and a clause holds when any of its terms does."""

    clauses: list[list[Term]] = field(default_factory=list)

    @classmethod
    def in_subject(cls, words: Iterable[str]) -> SearchQuery:
        """Threads whose subject has all these words."""
        return cls([[Term("column", word, column="subject")] for word in words if _phrase(word)])

    @property
    def terms(self) -> list[Term]:
        return [term for clause in self.clauses for term in clause]

    @property
    def text(self) -> list[str]:
        """The free words asked for (not turned round)."""
        return [t.value for t in self.terms if t.kind == "word" and not t.negated]

    @property
    def views(self) -> list[str]:
        return [t.value for t in self.terms if t.kind == "view"]

    @property
    def searching(self) -> bool:
        """Whether this asks for anything (an empty query is no search: the view is shown as it is)."""
        return bool(self.clauses)

    @property
    def reads_words(self) -> bool:
        """Whether the full-text index is read (a search that takes a while in a big mailbox)."""
        return any(t.kind in FTS_KINDS for t in self.terms)

    @property
    def broad(self) -> bool:
        """Whether a word of it is one letter: as a prefix it matches most of a big mailbox, and the index reads it
        in one step that cannot be stopped midway (a third of a second at a million messages)."""
        return any(t.kind in FTS_KINDS and len(t.value.strip('" ')) <= 1 for t in self.terms)

    @property
    def words_only(self) -> bool:
        """Whether the full-text index alone answers this (every clause words, none turned round)."""
        return bool(self.clauses) and all(self._matched(clause) for clause in self.clauses)

    def _matched(self, clause: Sequence[Term]) -> bool:
        """Whether a clause is one FTS5 expression: words alone, none turned round."""
        return all(t.kind in FTS_KINDS and not t.negated for t in clause)

    def fts(self) -> str:
        """One FTS5 expression for the clauses that are words alone (the others are conditions of their own)."""
        parts = []
        for clause in self.clauses:
            if self._matched(clause):
                matches = [t.match() for t in clause]
                parts.append(matches[0] if len(matches) == 1 else "(" + " OR ".join(matches) + ")")
        return " AND ".join(parts)

    def sql(self) -> tuple[str, dict[str, Any]]:
        """A condition over ``threads t LEFT JOIN triage tr``, and its parameters."""
        parts: list[str] = []
        params: dict[str, Any] = {}
        fts = self.fts()
        if fts:
            parts.append(matched("fts"))
            params["fts"] = fts
        for clause in self.clauses:
            if not self._matched(clause):
                conditions = [term.condition(params) for term in clause]
                parts.append(conditions[0] if len(conditions) == 1 else "(" + " OR ".join(conditions) + ")")
        return " AND ".join(parts), params


def _term(token: str, days: DayReader) -> Term | None:
    """One token as a term; ``None`` for one with nothing to search for (no word characters)."""
    negated = len(token) > 1 and token.startswith("-")
    body = token[1:] if negated else token
    name, sep, value = body.partition(":")
    key = name.lower()
    if not sep or (key not in FTS_COLUMNS and key not in OPERATORS):
        return Term("word", body, negated=negated) if _phrase(body) else None
    if not value.strip():
        raise QueryError(f"{key}: needs a value, as in {EXAMPLES[key]}")
    if key in FTS_COLUMNS:
        return Term("column", value, column=FTS_COLUMNS[key], negated=negated) if _phrase(value) else None
    if key == "is":
        if value.lower() not in STATES:
            raise QueryError(f"is: takes one of {', '.join(STATES)}, not {value!r}")
        return Term("state", value.lower(), negated=negated)
    if key == "has":
        if value.lower() not in {"attachment", "attachments"}:
            raise QueryError(f"has: takes attachment, not {value!r}")
        return Term("attachment", negated=negated)
    if key == "label":
        return Term("label", value, negated=negated)
    if key == "in":
        if value.lower() not in VIEW_CONDITIONS:
            raise QueryError(f"in: takes one of {', '.join(VIEW_CONDITIONS)} (label: for a label), not {value!r}")
        return Term("view", value.lower(), negated=negated)
    try:
        moment = days(value)
    except ValueError as exc:
        raise QueryError(f"{key}: {exc}") from None
    return Term(key, value, moment=moment, negated=negated)


def parse_query(query: str | None, *, days: DayReader = iso_day) -> SearchQuery:
    """Read a query; :class:`QueryError` says what is wrong with it. ``days`` reads ``before:``/``after:``."""
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
    either = False  # an OR stood before this token, after a term
    for n, word in enumerate(tokens):
        if word == "OR" and parsed.clauses and not either and n + 1 < len(tokens):
            either = True
            continue
        term = _term(word, days)
        if term is not None:
            if either:
                parsed.clauses[-1].append(term)
            else:
                parsed.clauses.append([term])
        either = False
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
