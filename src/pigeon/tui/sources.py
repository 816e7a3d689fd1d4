"""Rows of the thread list straight from the local store, a page at a time."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from pigeon.store.mailstore import MailStore, StoredThread
from pigeon.store.search import SearchQuery
from pigeon.tui.widgets.thread_list import ThreadRow

PAGE = 200


class StoreSource:
    """A view of the store as list rows: one ``COUNT`` when made, then one indexed query per 200 rows shown."""

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
    ) -> None:
        self.store = store
        self.view, self.query, self.inbox_id, self.sort, self.now = view, query, inbox_id, sort, now
        self._selected = selected
        self._count = store.count(view, query, inbox_id=inbox_id, now=now)
        self._pages: dict[int, list[StoredThread]] = {}

    def __len__(self) -> int:
        return self._count

    def stored(self, index: int) -> StoredThread:
        if not 0 <= index < self._count:
            raise IndexError(index)
        page = index // PAGE
        rows = self._pages.get(page)
        if rows is None:
            rows = self.store.list(
                self.view,
                self.query,
                inbox_id=self.inbox_id,
                sort=self.sort,
                offset=page * PAGE,
                limit=PAGE,
                now=self.now,
            )
            self._pages[page] = rows
        if index % PAGE >= len(rows):  # the store changed under us: show what is there
            raise IndexError(index)
        return rows[index % PAGE]

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
        )
