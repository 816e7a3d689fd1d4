"""A thread list straight from the local store, a page at a time, as the rows a list shows."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from pigeon.core.when import day_start
from pigeon.store.mailstore import MailStore, StoredThread, UnknownThread
from pigeon.store.predicates import LABEL_VIEW, LANE_VIEWS, SORTS, VIEWS
from pigeon.store.search import SearchQuery
from pigeon.store.search import parse_query as read_query

__all__ = ["LABEL_VIEW", "LANE_VIEWS", "PAGE", "SORTS", "VIEWS", "Listing", "SearchQuery", "ThreadRow", "parse_query"]

PAGE = 200


def parse_query(text: str | None, now: datetime) -> SearchQuery:
    """A search as typed; its ``before:``/``after:`` take the day words of :func:`pigeon.core.when.day_start`
    (``yesterday``, ``friday``, ``3d``) as well as dates. :class:`QueryError` says what is wrong."""
    return read_query(text, days=lambda value: day_start(value, now))


def searched(
    store: MailStore, view: str, text: str, *, sort: str, limit: int, now: datetime
) -> tuple[list[StoredThread], int]:
    """The first ``limit`` threads of a view narrowed by a search, and how many it holds in all (counted only
    when the limit was reached)."""
    query = parse_query(text, now)
    found = store.list_threads(view, query, sort=sort, limit=limit, now=now)
    return found, (store.count(view, query, now=now) if len(found) >= limit else len(found))


@dataclass(frozen=True)
class ThreadRow:
    """What one line of a thread list shows."""

    id: str
    who: str
    subject: str
    when: datetime | None
    count: int
    unread: bool = False
    attachment: bool = False
    starred: bool = False
    selected: bool = False
    labels: tuple[str, ...] = ()
    where: str = ""
    """Where the thread is, when its view does not say it: done, snoozed, muted, or a reminder's "no answer"."""
    seen_by: tuple[str, ...] = ()
    """When the user wrote last: who has read it since, the latest first."""
    seen_at: datetime | None = None


def first_name(name: str) -> str:
    """A person's first name, as a row names several people (an address stays whole)."""
    return (name.split() or [name])[0]


class Listing:
    """A view of the store as list rows: one ``COUNT`` when made, then one indexed query per 200 rows shown. Made
    not ``counted``, it reads its first page instead, and is as long as that page until :meth:`count` (in a
    worker) says how long it is: counting a big view was most of the cost of showing it."""

    def __init__(
        self,
        store: MailStore,
        *,
        view: str,
        query: SearchQuery | None,
        inbox_id: str | None,
        sort: str,
        now: datetime,
        selected: Callable[[str], bool] = lambda _: False,
        counted: bool = True,
    ) -> None:
        self.store = store
        self.searching = query is not None and query.searching
        if self.searching:  # a search covers all mail; its own in: narrows it
            view, inbox_id = "all", None
        self.view, self.query, self.inbox_id, self.sort, self.now = view, query, inbox_id, sort, now
        self._selected = selected
        self._pages: dict[int, list[StoredThread]] = {}
        if counted:
            self._count = store.count(view, query, inbox_id=inbox_id, now=now)
        else:
            self._pages[0] = self._read(0)
            self._count = len(self._pages[0])
        self.exact = counted or self._count < PAGE
        """Whether its length is the view's (else: its first page's, until counted)."""

    def __len__(self) -> int:
        return self._count

    def count(self) -> Listing:
        """The same view, its threads counted (in a worker) and the rows read so far kept."""
        fresh = copy.copy(self)
        fresh._count = self.store.count(self.view, self.query, inbox_id=self.inbox_id, now=self.now)
        fresh._pages = dict(self._pages)
        fresh.exact = True
        return fresh

    def members(self, thread_ids: Sequence[str]) -> int:
        """How many of ``thread_ids`` this view holds (a lookup by id each, not a count of the view)."""
        return self.store.count(self.view, self.query, inbox_id=self.inbox_id, now=self.now, among=thread_ids)

    def ids(self) -> list[str]:
        """Every thread of this view (to select them all): one query, in a worker."""
        return self.store.view_ids(self.view, self.query, inbox_id=self.inbox_id, now=self.now)

    def changed(self, gained: int) -> Listing:
        """The same view read again after a change that brought ``gained`` threads into it (or took them out, if
        negative): counted without counting the view, which in a big mailbox is most of the cost of a new list."""
        fresh = copy.copy(self)  # the same view, store, moment and selection: its rows read anew
        fresh._count = max(self._count + gained, 0)
        fresh._pages = {}
        return fresh

    def prefetch(self, indexes: range) -> None:
        """Read the pages of ``indexes`` now (in a worker, so that drawing them does not read)."""
        for index in (indexes.start, indexes.stop - 1):
            if 0 <= index < self._count:
                self.stored(index)

    def stored(self, index: int) -> StoredThread:
        if not 0 <= index < self._count:
            raise IndexError(index)
        page = index // PAGE
        rows = self._pages.get(page)
        if rows is None:
            rows = self._pages[page] = self._read(page)
        if index % PAGE >= len(rows):  # the store changed under us: show what is there
            raise IndexError(index)
        return rows[index % PAGE]

    def _read(self, page: int) -> list[StoredThread]:
        return self.store.list_threads(
            self.view,
            self.query,
            inbox_id=self.inbox_id,
            sort=self.sort,
            offset=page * PAGE,
            limit=PAGE,
            now=self.now,
        )

    def locate(self, thread_id: str) -> int | None:
        """Where the thread is in this view, or None (one lookup by id when it is not there)."""
        index = self.store.position(
            thread_id, self.view, self.query, inbox_id=self.inbox_id, sort=self.sort, now=self.now
        )
        return index if index is not None and index < self._count else None

    def row(self, index: int) -> ThreadRow:
        t = self.stored(index)
        return ThreadRow(
            id=t.id,
            who=t.who,
            subject=t.subject,
            when=t.last_message_at,
            count=t.message_count,
            unread=t.unread,
            attachment=t.has_attachment,
            starred=t.starred,
            selected=self._selected(t.id),
            labels=t.labels,
            where=self._place(t),
            seen_by=t.seen_by,
            seen_at=t.seen_at,
        )

    def _place(self, thread: StoredThread) -> str:
        """Where the thread is, unless its view is that place (every row of Done is done); the inbox and its lanes
        hold no thread triaged out, so there it is said only of a reminder come due."""
        place = where(thread)
        return "" if place == self.view else place


def where(thread: StoredThread) -> str:
    """Where a thread is, when that is not the inbox: a reminder come due, snoozed, done or muted."""
    if thread.reminded:
        return "no answer"
    if thread.snoozed_until is not None:
        return "snoozed"
    if thread.done:
        return "done"
    if thread.muted:
        return "muted"
    return ""


def resolve_threads(store: MailStore, given: Sequence[str]) -> list[str]:
    """Thread ids from whole ids or prefixes naming one stored thread (as git's); UnknownThread, saying which."""
    resolved = []
    for text in given:
        text = text.strip()
        found = store.thread_ids(text) if text else []
        if found and found[0] == text:
            resolved.append(text)
            continue
        if len(found) != 1:
            why = "matches several threads; give more of the id" if found else "matches no thread"
            raise UnknownThread(f"{text!r} {why}")
        resolved.append(found[0])
    return resolved
