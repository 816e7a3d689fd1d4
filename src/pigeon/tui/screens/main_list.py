"""The mail screen's thread list: which threads it shows (view, inbox, search, sort), the sidebar's counts, the
status line, and swapping in a new list after a change without the UI waiting on the store."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any

from textual import work
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Input

from pigeon.core.errors import QueryError
from pigeon.core.listing import Listing, parse_query
from pigeon.core.mail import MailCore
from pigeon.sanitize import clean_line
from pigeon.tui.widgets.inbox_list import InboxList, view_label
from pigeon.tui.widgets.thread_list import ThreadList

SEARCH_DELAY = 0.15  # a word search starts once typing pauses this long


class MailList(Screen[None]):
    """Mixed into the mail screen: its list of threads."""

    core: MailCore
    view: str
    inbox_id: str | None
    sort: str
    filter_text: str
    selected: set[str]
    live_mode: str
    label_views: list[str]
    _sidebar_shown: Any
    _status: Content
    _list_version: int  # counts the lists shown: a search that ends after a newer list is dropped
    left_view: int  # how many threads the last change took out of the view
    _left_at: int  # where the cursor was when the last change began
    watch_left: bool  # whether the thread a change watched (the reader's) left the view

    def show_threads(self, *, keep: bool = True) -> None:
        """Show the list for the current view, filter and sort, the cursor on the same thread if ``keep`` (else
        on the first). Rows come from the store at once, in this frame; a word search reads its matches in a
        worker (in a big mailbox its first letters match most of it)."""
        box = self.query_one("#filter", Input)
        try:
            query = parse_query(self.filter_text)
        except QueryError as exc:  # said at the search box (marked) and in the status, the list left as it was
            box.add_class("-invalid")
            self.set_status(Content.styled(clean_line(str(exc)), "$error"))
            return
        box.remove_class("-invalid")
        # A search covers all mail (its own in: narrows it), not the view the sidebar has selected.
        self.query_one(ThreadList).title = f"Threads · {'Search' if query.searching else self.place_name()}"
        self._list_version += 1
        make = functools.partial(
            self.core.listing,
            view=self.view,
            query=query,
            inbox_id=self.inbox_id,
            sort=self.sort,
            selected=self.selected.__contains__,
        )
        if query.fts():
            self.set_status(Content.styled("Searching…", "italic"))
            self.search(make, self._list_version, keep=keep)
        else:
            self._show_source(make(), cursor=None if keep else 0)

    @work(exclusive=True, group="search", exit_on_error=False, description="searching")
    async def search(self, make: Callable[[], Listing], version: int, *, keep: bool) -> None:
        await asyncio.sleep(SEARCH_DELAY)  # typing on: this search is replaced before it reads anything
        thread_list = self.query_one(ThreadList)
        current = thread_list.current if keep and len(thread_list.source) else None
        near = thread_list.cursor if keep else 0

        def read() -> tuple[Listing, int | None]:
            source = make()
            if len(source) and version == self._list_version:  # (a newer list makes the rest moot)
                source.stored(0)  # the first page of rows, and where the cursor's thread went: both off the UI's path
            found = ThreadList.find(source, current.id, near=near) if current else None
            return source, found

        source, found = await asyncio.to_thread(read)
        if version == self._list_version:  # nothing newer was shown meanwhile
            self._show_source(source, cursor=found if found is not None else near)

    def _show_source(self, source: Listing, *, cursor: int | None = None) -> None:
        thread_list = self.query_one(ThreadList)
        if cursor is not None:
            thread_list.set_source(source, cursor=cursor)
        else:
            current = thread_list.current if len(thread_list.source) else None
            thread_list.set_source(source, keep=current.id if current else None)
        self.update_status(len(source))
        self.refresh_sidebar()

    @work(exclusive=True, group="sidebar", exit_on_error=False, description="counting the views")
    async def refresh_sidebar(self) -> None:
        """The views' counts, computed off the UI's path (a COUNT over a big mailbox takes a while)."""
        counts, unread = await asyncio.to_thread(self.core.view_counts)
        self.label_views = [view for view in counts if view.startswith("label:")]
        selected = f"inbox:{self.inbox_id}" if self.inbox_id else f"view:{self.view}"
        inboxes = self.core.inboxes
        shown = (counts, [i.id for i in inboxes], unread, selected)
        if shown == self._sidebar_shown:  # nothing changed: no relayout
            return
        self._sidebar_shown = shown
        self.query_one(InboxList).show_sidebar(counts, inboxes, unread, selected)

    def place_name(self) -> str:
        """The view or inbox the list shows, for its title (the folded sidebar no longer says it)."""
        if self.inbox_id is not None:
            inbox = next((i for i in self.core.inboxes if i.id == self.inbox_id), None)
            name = (inbox.display_name or inbox.email) if inbox is not None else ""
            return clean_line(name, limit=40) or "Inbox"
        return view_label(self.view)

    def update_status(self, shown: int | None = None) -> None:
        thread_list = self.query_one(ThreadList)
        shown = len(thread_list.source) if shown is None else shown
        parts = [f"{shown} thread{'s' if shown != 1 else ''}"]
        if self.filter_text:
            try:
                query = parse_query(self.filter_text)
                narrowed, words = bool(query.views), bool(query.fts())
            except QueryError:
                narrowed, words = True, False
            where = "" if narrowed else " in all mail"
            parts.append(f'matching "{clean_line(self.filter_text, limit=30)}"{where}')
            if words and self.core.indexing:
                parts.append("new mail still being indexed")
        if self.selected:
            parts.append(f"{len(self.selected)} selected")
        if self.sort != "date":
            parts.append(f"by {self.sort}")
        if self.live_mode:
            parts.append(self.live_mode)
        self.set_status(Content.styled(" · ".join(parts), "dim"))

    def set_status(self, status: Content) -> None:
        """The list's status line: its count, filter and sort, or what is going on (in the list's bottom border)."""
        shown = self._status  # (Content's == compares the text alone: a warning may share a plain status's words)
        if status.plain != shown.plain or status.spans != shown.spans:  # the list is drawn again: only on a change
            self._status = status
            self.query_one(ThreadList).border_subtitle = status

    @property
    def status(self) -> str:
        """The list's status line, as plain text."""
        return self._status.plain

    def targets(self) -> list[str]:
        """The selected threads, or else the one under the cursor."""
        if self.selected:
            return sorted(self.selected)
        current = self.query_one(ThreadList).current
        return [current.id] if current else []

    async def change_list(
        self,
        targets: list[str] | Callable[[], list[str]],
        change: Callable[[list[str]], Any],
        *,
        watch: str | None = None,
    ) -> Any:
        """Run ``change`` on threads ``targets`` (or those a function of them names) in a thread, then show the
        list as it is now. The new list is made in that thread too, counted from the old one (how many of the
        threads the view held before and holds after), with its screen of rows read and the cursor's thread
        found: the UI only swaps it in. With ``watch`` (the thread open in the reader), ``watch_left`` says after
        whether it left the view."""
        thread_list = self.query_one(ThreadList)
        old = thread_list.source
        version = self._list_version
        current = thread_list.current if len(old) else None
        near, shown = thread_list.cursor, thread_list.visible_range()
        self._left_at = near

        def run() -> tuple[Any, Listing | None, int | None, int, bool]:
            ids = targets() if callable(targets) else targets
            if not isinstance(old, Listing):
                return change(ids), None, None, 0, False
            before = old.members(ids)
            result = change(ids)
            after = old.members(ids)
            fresh = old.changed(after - before)
            fresh.prefetch(shown)
            found = ThreadList.find(fresh, current.id, near=near) if current else None
            left = watch is not None and ThreadList.find(fresh, watch, near=near) is None
            return result, fresh, found, max(before - after, 0), left

        result, fresh, found, self.left_view, self.watch_left = await asyncio.to_thread(run)
        if fresh is not None and version == self._list_version:  # the list is still the one this changed
            self._list_version += 1
            if thread_list.cursor == near:
                self._show_source(fresh, cursor=found if found is not None else near)
            else:  # a key moved the cursor meanwhile: keep the thread it is on now
                self._show_source(fresh)
        else:
            self.show_threads()
        return result
