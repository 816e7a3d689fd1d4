"""Views of the store as thread lists: a view (inbox, unread, ... or a label), a search, an inbox, a sort; pages of
rows, counts, and where a thread stands. Counts for the sidebar read on a connection of their own."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pigeon.sqlite import MEMORY, Database, Params, connect
from pigeon.store.cache import iso
from pigeon.store.predicates import (
    DONE,
    INBOX_VIEWS,
    LABEL_VIEW,
    MUTED,
    OLDEST,
    OLDEST_FIRST,
    REMINDED,
    SNOOZED,
    SORTS,
    STAYS,
    TRIAGED_OUT,
    UNREAD,
    VIEW_CONDITIONS,
    VIEWS,
)
from pigeon.store.search import SearchQuery, parse_query, walking_dates

# SQLite's page cache, per connection, smaller than its default: in a big mailbox the counting connection's scans
# filled the default and the list's reads most of theirs, while with these sizes the counts take the same time (the
# pages come from the system's file cache).
LIST_CACHE_KIB = 1024
COUNT_CACHE_KIB = 256
FILTERS = sqlite3.sqlite_version_info >= (3, 30)
"""Whether SQLite takes ``FILTER`` on an aggregate (3.30 on); older ones count with a ``CASE``, a third slower."""


def _when(text: object) -> datetime | None:
    """A stored moment; one that cannot be read (a damaged row) is no moment rather than a crash."""
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def _aware(moment: datetime | None) -> datetime | None:
    """A stored moment without a zone (a damaged row) read as UTC, so that moments compare."""
    return moment.replace(tzinfo=UTC) if moment is not None and moment.tzinfo is None else moment


def _seen(readers: str | None, since: datetime | None) -> dict[str, Any]:
    """``seen_by`` and ``seen_at`` from the readers column: those who read at or after ``since``."""
    if not readers:
        return {}
    since = _aware(since)
    found = []
    for name, at in json.loads(readers):
        moment = _aware(_when(at))
        if moment is not None and (since is None or moment >= since):
            found.append((moment, str(name or "someone")))
    found.sort(reverse=True)
    return {"seen_by": tuple(name for _, name in found), "seen_at": found[0][0]} if found else {}


def ordered(view: str, sort: str) -> str:
    """The ORDER BY of a view in a sort (by date, the newest first but in the views that put the oldest first)."""
    order = SORTS.get(sort)
    if order is None:
        raise ValueError(f"unknown sort {sort!r}; sorts are {', '.join(SORTS)}")
    return OLDEST if sort == "date" and view in OLDEST_FIRST else order


@dataclass(frozen=True)
class StoredThread:
    """One row of a thread list, with its triage state."""

    id: str
    inbox_id: str | None
    subject: str
    who: str
    last_message_at: datetime | None
    message_count: int
    has_attachment: bool
    unread: bool
    starred: bool
    done: bool
    snoozed_until: datetime | None
    muted: bool
    labels: tuple[str, ...]
    reminded: bool = False
    """A reminder came due and no answer has come."""
    seen_by: tuple[str, ...] = ()
    """When the user wrote last: the names of those who read the thread since, the latest reader first."""
    seen_at: datetime | None = None
    """When the latest of them read it."""


# When the user wrote last: each other participant's name and when they last read the thread (the service's
# ``last_read_at``), compared with the last message in Python (the service's times are not one text format).
READERS = (
    "CASE WHEN t.last_by = 'me' THEN (SELECT json_group_array(json_array(coalesce(c.name, ''), "
    "json_extract(p.value, '$.last_read_at'))) FROM json_each(t.data, '$.participants') p "
    "LEFT JOIN contacts c ON c.id = json_extract(p.value, '$.contact_id') "
    "WHERE coalesce(json_extract(p.value, '$.role'), '') != 'OWNER' "
    "AND coalesce(json_extract(p.value, '$.contact_id'), '') != '' "
    "AND json_extract(p.value, '$.last_read_at') IS NOT NULL) END"
)


class ViewStore(Database):
    """Reading the store as lists."""

    def __init__(
        self, path: str | Path, migrations: Sequence[str], *, folder_mode: int = 0o777, readers: bool = False
    ) -> None:
        super().__init__(path, migrations, folder_mode=folder_mode, readers=readers, reader_cache_kib=LIST_CACHE_KIB)
        self._conn.execute(f"PRAGMA cache_size = -{LIST_CACHE_KIB}")
        # Counts for the sidebar take a while in a big mailbox: they read on a
        # connection of their own, so the list's reads on the UI's path never wait for them (WAL lets both read).
        self._counter: sqlite3.Connection | None = None
        self._counter_lock = threading.Lock()

    def close(self) -> None:
        with self._counter_lock:
            if self._counter is not None:
                self._counter.close()
        super().close()

    def _counted_rows(self, sql: str, params: Params = ()) -> list[sqlite3.Row]:
        """``rows`` on the counting connection (the one connection of a store in memory, which has no other)."""
        if self.path == MEMORY:
            return self.rows(sql, params)
        with self._counter_lock:
            if self._counter is None:
                self._counter = connect(self.path)
                self._counter.execute("PRAGMA query_only = ON")
                self._counter.execute(f"PRAGMA cache_size = -{COUNT_CACHE_KIB}")
            return self._counter.execute(sql, params).fetchall()

    def _where(
        self, view: str, query: SearchQuery | None, inbox_id: str | None, now: datetime
    ) -> tuple[str, dict[str, Any]]:
        if view.startswith(LABEL_VIEW):
            condition = "EXISTS (SELECT 1 FROM labels l WHERE l.thread_id = t.id AND l.label = :view_label)"
            params: dict[str, Any] = {"view_label": view.removeprefix(LABEL_VIEW)}
        elif view in VIEW_CONDITIONS:
            condition, params = VIEW_CONDITIONS[view], {}
        else:
            raise ValueError(f"unknown view {view!r}; views are {', '.join(VIEWS)} and label:NAME")
        params["now"] = iso(now)
        parts = [condition]
        if inbox_id:
            parts.append("t.inbox_id = :inbox_id")
            params["inbox_id"] = inbox_id
        if query is not None:
            sql, more = query.sql()
            if sql:
                parts.append(sql)
                params |= more
        return " AND ".join(f"({p})" for p in parts), params

    def indexed_among(self, thread_ids: Sequence[str]) -> list[str]:
        """Those of ``thread_ids`` whose text is in the search index."""
        sql = "SELECT id FROM threads WHERE indexed = 1 AND id IN (SELECT value FROM json_each(?))"
        return [r[0] for r in self.rows(sql, (json.dumps(list(thread_ids)),))]

    def thread_ids(self, prefix: str, limit: int = 2) -> list[str]:
        """Ids of stored threads that start with ``prefix``, the one that is ``prefix`` itself first (at most
        ``limit``: two tell a prefix is not unique)."""
        escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = self.rows(
            "SELECT id FROM threads WHERE id LIKE ? ESCAPE '\\' ORDER BY id != ? LIMIT ?",
            (escaped + "%", prefix, limit),
        )
        return [r["id"] for r in rows]

    def count(
        self,
        view: str = "inbox",
        query: str | SearchQuery | None = None,
        *,
        inbox_id: str | None = None,
        now: datetime | None = None,
        among: Sequence[str] | None = None,
    ) -> int:
        """How many threads a view holds (of ``among`` alone, if given: a lookup by id each)."""
        parsed = parse_query(query) if isinstance(query, str) else query
        whole_view = VIEW_CONDITIONS.get(view) == "1" and inbox_id is None and among is None
        if whole_view and parsed is not None and parsed.words_only:
            # Every thread is in this view, and each has one row in the index: the index counts alone, reading no
            # thread.
            return int(self.rows("SELECT COUNT(*) FROM search WHERE search MATCH ?", (parsed.fts(),))[0][0])
        if view in INBOX_VIEWS and among is None and not (parsed is not None and parsed.searching):
            return self._inbox_count(view, inbox_id, now or datetime.now(UTC))
        where, params = self._where(view, parsed, inbox_id, now or datetime.now(UTC))
        if among is not None:  # (one parameter for any number of ids: a select-all may name 100,000)
            where = f"t.id IN (SELECT value FROM json_each(:among)) AND ({where})"
            params["among"] = json.dumps(list(among))
        sql = f"SELECT COUNT(*) FROM threads t LEFT JOIN triage tr ON tr.thread_id = t.id WHERE {where}"
        return int(self.rows(sql, params)[0][0])

    def _inbox_count(self, view: str, inbox_id: str | None, now: datetime) -> int:
        """The inbox or a lane counted as the threads it would hold untriaged (an index counts them alone) less
        those triaged out of it (or whose triage cannot say: the list leaves those out too), found from the triage
        rows: no thread without one is looked up in the triage."""
        where, params = INBOX_VIEWS[view], {"now": iso(now), "inbox_id": inbox_id}
        if inbox_id:
            where += " AND t.inbox_id = :inbox_id"
        sql = (  # (CROSS JOIN: the triage rows are walked, each thread looked up by its id)
            f"SELECT (SELECT COUNT(*) FROM threads t WHERE {where}) - (SELECT COUNT(*) FROM triage tr "
            f"CROSS JOIN threads t ON t.id = tr.thread_id WHERE {TRIAGED_OUT} AND {where} AND ({STAYS}) IS NOT 1)"
        )
        return int(self.rows(sql, params)[0][0])

    def view_ids(
        self,
        view: str = "inbox",
        query: SearchQuery | None = None,
        *,
        inbox_id: str | None = None,
        now: datetime,
        among: Sequence[str] | None = None,
    ) -> list[str]:
        """The ids of every thread a view holds (to select them all; of ``among`` alone, if given), in no particular
        order."""
        where, params = self._where(view, query, inbox_id, now)
        if among is not None:
            where = f"t.id IN (SELECT value FROM json_each(:among)) AND ({where})"
            params["among"] = json.dumps(list(among))
        sql = f"SELECT t.id FROM threads t LEFT JOIN triage tr ON tr.thread_id = t.id WHERE {where}"
        return [r[0] for r in self.rows(sql, params)]

    def list_threads(
        self,
        view: str = "inbox",
        query: str | SearchQuery | None = None,
        *,
        inbox_id: str | None = None,
        sort: str = "date",
        offset: int = 0,
        limit: int = 100,
        now: datetime | None = None,
        among: Sequence[str] | None = None,
    ) -> list[StoredThread]:
        """One page of a view (of ``among`` alone, if given), newest first (or by sender or subject)."""
        moment = now or datetime.now(UTC)
        parsed = parse_query(query) if isinstance(query, str) else query
        where, params = self._where(view, parsed, inbox_id, moment)
        if among is not None:
            where = f"t.id IN (SELECT value FROM json_each(:among)) AND ({where})"
            params["among"] = json.dumps(list(among))
        order = ordered(view, sort)
        if sort == "date":  # (its order is an index's: threads_by_date)
            where = walking_dates(where)
        sql = (
            "SELECT t.*, tr.read_upto, tr.starred, tr.done_upto, tr.snoozed_until, tr.snooze_upto, tr.muted, "
            "(SELECT group_concat(label, char(31)) FROM labels l WHERE l.thread_id = t.id) AS label_list, "
            f"{UNREAD} AS is_unread, {DONE} AS is_done, {SNOOZED} AS is_snoozed, {REMINDED} AS is_reminded, "
            f"{READERS} AS readers FROM threads t LEFT JOIN triage tr ON tr.thread_id = t.id WHERE {where} "
            f"ORDER BY {order} LIMIT :limit OFFSET :offset"
        )
        rows = self.rows(sql, params | {"limit": limit, "offset": offset})
        return [self._stored(r) for r in rows]

    def position(
        self,
        thread_id: str,
        view: str = "inbox",
        query: str | SearchQuery | None = None,
        *,
        inbox_id: str | None = None,
        sort: str = "date",
        now: datetime | None = None,
    ) -> int | None:
        """Where thread ``thread_id`` is in a view as :meth:`list` orders it (0 is first), or None if it is not in
        it. Whether it is in the view is one lookup by id; only then is the view ranked."""
        parsed = parse_query(query) if isinstance(query, str) else query
        where, params = self._where(view, parsed, inbox_id, now or datetime.now(UTC))
        order = ordered(view, sort)
        params = params | {"thread_id": thread_id}
        joined = "FROM threads t LEFT JOIN triage tr ON tr.thread_id = t.id"
        if not self.rows(f"SELECT 1 {joined} WHERE t.id = :thread_id AND ({where})", params):
            return None
        ranked = f"SELECT t.id AS id, ROW_NUMBER() OVER (ORDER BY {order}) - 1 AS n {joined} WHERE {where}"
        rows = self.rows(f"SELECT n FROM ({ranked}) WHERE id = :thread_id", params)
        return int(rows[0][0]) if rows else None

    def _stored(self, row: sqlite3.Row) -> StoredThread:
        return StoredThread(
            id=row["id"],
            inbox_id=row["inbox_id"],
            subject=row["subject"],
            who=row["who"],
            last_message_at=_when(row["last_message_at"]),
            message_count=row["message_count"],
            has_attachment=bool(row["has_attachment"]),
            unread=bool(row["is_unread"]),
            starred=bool(row["starred"]),
            done=bool(row["is_done"]),
            snoozed_until=_when(row["snoozed_until"]) if row["is_snoozed"] else None,
            muted=bool(row["muted"]),
            labels=tuple(sorted(row["label_list"].split("\x1f"))) if row["label_list"] else (),
            reminded=bool(row["is_reminded"]),
            **_seen(row["readers"], _when(row["last_message_at"])),
        )

    def view_counts(self, now: datetime | None = None) -> dict[str, int]:
        """How many threads each view holds, labels included (``label:NAME``), read on the counting connection."""
        # One pass over the threads for every view: a view more costs a condition, not a scan (``FILTER`` stops at
        # a condition's first false test, where a sum of ``CASE`` had cost a third more).
        each = "COUNT(*) FILTER (WHERE {})" if FILTERS else "COUNT(CASE WHEN {} THEN 1 END)"
        sums = ", ".join(each.format(VIEW_CONDITIONS[view]) for view in VIEWS)
        sql = f"SELECT {sums} FROM threads t LEFT JOIN triage tr ON tr.thread_id = t.id"
        row = self._counted_rows(sql, {"now": iso(now or datetime.now(UTC))})[0]
        counts: dict[str, int] = {view: int(row[n]) for n, view in enumerate(VIEWS)}
        for row in self._counted_rows("SELECT label, COUNT(*) AS n FROM labels GROUP BY label ORDER BY label"):
            counts[f"label:{row['label']}"] = row["n"]
        return counts

    def unread_by_inbox(self, now: datetime | None = None) -> dict[str, int]:
        """Unread threads per inbox (muted ones left out), read on the counting connection."""
        rows = self._counted_rows(
            f"SELECT t.inbox_id, COUNT(*) AS n FROM threads t LEFT JOIN triage tr ON tr.thread_id = t.id "
            f"WHERE {UNREAD} AND NOT {MUTED} GROUP BY t.inbox_id"
        )
        return {r["inbox_id"]: r["n"] for r in rows}
