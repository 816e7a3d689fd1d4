"""The mail screen's thread list part: which threads the list shows (view, inbox, search, sort), the selection,
the sidebar's counts, the status line, and swapping in a new list after a change without the UI waiting on the
store.

Interface: :meth:`ThreadsPart.show` (the list again), :meth:`go_to` / :meth:`next_sort` / :meth:`search_for`
(where the list is), :meth:`select` / :meth:`select_all` / :meth:`deselect`, :meth:`targets`, :meth:`change` (a
change made off the UI's path, then the new list), :meth:`set_status` / :meth:`update_status` / :attr:`status`."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from textual.content import Content
from textual.screen import Screen
from textual.widgets import Input
from textual.worker import Worker

from pigeon.core.errors import Interrupted, QueryError
from pigeon.core.listing import LABEL_VIEW, PAGE, SORTS, VIEWS, Listing, parse_query
from pigeon.core.mail import MailCore
from pigeon.sanitize import clean_line
from pigeon.tui.screens.mail.part import Part
from pigeon.tui.widgets.inbox_list import InboxList, view_label
from pigeon.tui.widgets.thread_list import KEEP_SEARCH, ThreadList

BROAD_DELAY = 0.3
"""A search for a one-letter word waits for typing to pause this long (the next letter makes it moot, and it
cannot be stopped midway); a longer word is searched for at once."""

VIEW_HINTS = {"screener": "I let in, X keep out, W why", "kept-out": "I let in, W why", "owed": "oldest first"}
"""What a view's status line says of it: the keys that matter there."""


@dataclass(frozen=True)
class Changed:
    """What :meth:`ThreadsPart.change` did: the change's own result, how many threads left the view, whether the
    watched thread left it, and where the cursor was when the change began."""

    result: Any
    left: int = 0
    watched_left: bool = False
    at: int = 0


class ThreadsPart(Part):
    """The list of threads: what it shows, its selection and its status line."""

    def __init__(self, screen: Screen[None], core: MailCore) -> None:
        super().__init__(screen, core)
        self.view = "inbox"
        self.inbox_id: str | None = None
        self.sort = "date"
        self.filter_text = ""
        self.selected: set[str] = set()  # (the list's rows ask this very set whether they are selected)
        self.label_views: list[str] = []
        self.live_mode = ""  # how new mail comes, for the status line
        self._sidebar_shown: Any = None
        self._counter: Worker[None] | None = None  # the views' count under way
        self._recount = False  # the views asked to be counted (again)
        self._status = Content()
        self._version = 0  # counts the lists shown: a search that ends after a newer list is dropped
        self._shown: tuple[object, ...] = ()  # the view, filter, inbox and sort of the list shown last

    @property
    def widget(self) -> ThreadList:
        return self.screen.query_one(ThreadList)

    # --- where the list is ------------------------------------------------------------------------------------

    def go_to(self, view: str, inbox_id: str | None = None, *, keep_selection: bool = False) -> None:
        """Show ``view`` (of ``inbox_id``, or of every inbox)."""
        self.view, self.inbox_id = view, inbox_id
        if not keep_selection:
            self.selected.clear()
        self.show()

    def next_sort(self) -> None:
        order = list(SORTS)
        self.sort = order[(order.index(self.sort) + 1) % len(order)]
        self.show()

    def search_for(self, text: str) -> None:
        """What the search box holds: new results start at the first; a cleared search keeps the thread it was on,
        now in the whole list."""
        self.filter_text = text.strip()
        self.show(keep=not self.filter_text, recount=False)  # (typing changes no view's count)

    def indexed(self) -> None:
        """New mail's words are in the search index, threads that wanted it sorted again (and screening begun,
        after a first sync), and the rules run on new mail: a word search, or a view they decide, shown meanwhile is
        shown again, and the views counted again; what the rules did is said."""
        moved = self.core.attention.moved or self.core.rules.moved
        ruled = self.core.rules.news()
        if ruled:
            self.screen.notify(clean_line(f"{ruled} (u undoes the last)", limit=300), markup=False)
        if self.filter_text or (moved and self.view != "all"):
            self.show()
        elif moved:
            self.refresh_sidebar()

    @property
    def views(self) -> list[str]:
        """Every view, with a view per label the store knows (the palette offers them)."""
        return [*VIEWS, *(v for v in self.label_views if v.startswith(LABEL_VIEW))]

    # --- the list shown ---------------------------------------------------------------------------------------

    def show(self, *, keep: bool = True, recount: bool = True) -> None:
        """Show the list for the current view, filter and sort, the cursor on the same thread if ``keep`` (else
        on the first), and count the views again if ``recount``. Rows come from the store at once, in this frame;
        a word search reads its matches in a worker (in a big mailbox its first letters match most of it)."""
        box = self.screen.query_one("#filter", Input)
        try:
            query = parse_query(self.filter_text, self.core.clock())
        except QueryError as exc:  # said at the search box (marked) and in the status, the list left as it was
            box.add_class("-invalid")
            box.border_subtitle = clean_line(str(exc))
            self._version += 1  # (a word search still running for what was typed before is moot)
            self.set_status(Content.styled(clean_line(str(exc)), "$text-error"))
            return
        box.remove_class("-invalid")
        if box.border_subtitle:  # (set to what it is, it is drawn again)
            box.border_subtitle = None
        # A search covers all mail (its own in: narrows it), not the view the sidebar has selected.
        self.widget.title = f"Threads · {'Search' if query.searching else self.place_name()}"
        self._version += 1
        make = functools.partial(
            self.core.listing,
            view=self.view,
            query=query,
            inbox_id=self.inbox_id,
            sort=self.sort,
            selected=self.selected.__contains__,
        )
        if query.reads_words:
            self.set_status(Content.styled("Searching…", "italic"))
            search = functools.partial(self._search, make, self._version, keep, query.broad, recount)
            self.run(search, group="search", description="searching", exclusive=True)
        else:
            # Another list's count comes after its first page (the same list shown again is counted at once: its
            # length stays put), unless the cursor's thread is kept beyond that page.
            shown, self._shown = self._shown, (self.view, self.filter_text, self.inbox_id, self.sort)
            same = shown == self._shown
            counted = same or (keep and self.widget.cursor + KEEP_SEARCH >= PAGE)
            self._show_source(make(counted=counted), cursor=None if keep else 0, same=same, recount=recount)

    async def _search(self, make: Callable[[], Listing], version: int, keep: bool, broad: bool, recount: bool) -> None:
        """Search for what is typed, at once unless a word is one letter (``BROAD_DELAY``); the next letter stops
        this search where it is (the store's read interrupted), so typing on costs no wait for a search nobody
        will see."""
        if broad:
            await asyncio.sleep(BROAD_DELAY)  # (a newer list replaces this worker before it reads anything)
        thread_list = self.widget
        current = thread_list.current if keep and len(thread_list.source) else None
        near = thread_list.cursor if keep else 0

        def read() -> tuple[Listing, int | None]:
            with self.core.unless(lambda: version != self._version):
                source = make()
                if len(source):
                    source.stored(0)  # the first page of rows, and where the cursor's thread went: off the UI's path
                return source, (ThreadList.find(source, current.id, near=near) if current else None)

        try:
            source, found = await asyncio.to_thread(read)
        except Interrupted:  # (a newer search, or another list, is on its way)
            return
        if version == self._version:  # nothing newer was shown meanwhile
            self._show_source(source, cursor=found if found is not None else near, recount=recount)

    def _show_source(
        self, source: Listing, *, cursor: int | None = None, same: bool = False, recount: bool = True
    ) -> None:
        """Show ``source`` (``same``: the list shown before, read again) and count it after if it is a first page;
        ``recount``: the views counted again."""
        thread_list = self.widget
        kept: str | None = None
        if cursor is not None:
            thread_list.set_source(source, cursor=cursor, same=same)
        else:
            current = thread_list.current if len(thread_list.source) else None
            kept = current.id if current else None
            thread_list.set_source(source, keep=kept, same=same)
        self.update_status(len(source))
        if recount:
            self.refresh_sidebar()
        if isinstance(source, Listing) and not source.exact:
            now = thread_list.current
            lost = kept if now is None or now.id != kept else None  # (beyond the first page, until counted)
            self.run(self._count, source, lost, group="count", description="counting the threads", exclusive=True)

    async def _count(self, source: Listing, lost: str | None) -> None:
        """Count a list shown from its first page; the cursor goes to the thread it was kept on if that is beyond
        the page, unless it moved meanwhile. A list replaced meanwhile stops its count where it is."""
        thread_list = self.widget
        at = thread_list.cursor

        def count() -> tuple[Listing, int | None]:
            with self.core.unless(lambda: thread_list.source is not source):
                counted = source.count()
                return counted, (counted.locate(lost) if lost else None)

        try:
            counted, found = await asyncio.to_thread(count)
        except Interrupted:
            return
        if thread_list.source is not source:  # (a list shown since will be counted in its turn)
            return
        if thread_list.cursor == at and found is not None:
            thread_list.set_source(counted, cursor=found, same=True)
        else:
            current = thread_list.current
            thread_list.set_source(counted, keep=current.id if current else None, same=True)
        self.update_status()

    def refresh_sidebar(self) -> None:
        """The views' counts, computed off the UI's path (a COUNT over a big mailbox takes a while). One count at
        a time: asked for while one runs, it runs once more after (a count under way cannot be stopped, and counts
        piled up in threads would hold back the reads the user waits for)."""
        self._recount = True
        if self._counter is None or self._counter.is_finished:
            self._counter = self.run(self._refresh_sidebar, group="sidebar", description="counting the views")

    async def _refresh_sidebar(self) -> None:
        while self._recount:
            self._recount = False  # (asked for from here on: counted again after this count)
            counts, unread = await asyncio.to_thread(self.core.view_counts)
            self.label_views = [view for view in counts if view.startswith("label:")]
            selected = f"inbox:{self.inbox_id}" if self.inbox_id else f"view:{self.view}"
            inboxes = self.core.inboxes
            shown = (counts, [i.id for i in inboxes], unread, selected)
            if shown != self._sidebar_shown:  # (nothing changed: no relayout)
                self._sidebar_shown = shown
                self.screen.query_one(InboxList).show_sidebar(counts, inboxes, unread, selected)

    def place_name(self) -> str:
        """The view or inbox the list shows, for its title (the folded sidebar no longer says it)."""
        if self.inbox_id is not None:
            inbox = next((i for i in self.core.inboxes if i.id == self.inbox_id), None)
            name = (inbox.display_name or inbox.email) if inbox is not None else ""
            return clean_line(name, limit=40) or "Inbox"
        return view_label(self.view)

    # --- the status line --------------------------------------------------------------------------------------

    def update_status(self, shown: int | None = None) -> None:
        """The status line said afresh: how many threads, the search, the selection, the sort, how mail comes."""
        shown = len(self.widget.source) if shown is None else shown
        source = self.widget.source
        more = "+" if isinstance(source, Listing) and not source.exact else ""  # (its first page, until counted)
        parts = [f"{shown}{more} thread{'s' if shown != 1 else ''}"]
        if self.filter_text:
            try:
                query = parse_query(self.filter_text, self.core.clock())
                narrowed, words = bool(query.views), query.reads_words
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
        if self.view in VIEW_HINTS and shown:
            parts.append(VIEW_HINTS[self.view])
        if self.live_mode:
            parts.append(self.live_mode)
        self.set_status(Content(" · ".join(parts)))  # (in the border's muted colour)

    def set_status(self, status: Content) -> None:
        """The list's status line: its count, filter and sort, or what is going on (in the list's bottom border)."""
        shown = self._status  # (Content's == compares the text alone: a warning may share a plain status's words)
        if status.plain != shown.plain or status.spans != shown.spans:  # (drawn again only on a change)
            self._status = status
            self.widget.show_subtitle(status)

    @property
    def status(self) -> str:
        """The list's status line, as plain text."""
        return self._status.plain

    # --- the selection ----------------------------------------------------------------------------------------

    def targets(self) -> list[str]:
        """The selected threads, or else the one under the cursor."""
        if self.selected:
            return sorted(self.selected)
        current = self.widget.current
        return [current.id] if current else []

    def select(self, move: int = 0) -> None:
        """Select the thread under the cursor (unselect it, if ``move`` is 0 and it is); with ``move``, then move
        the cursor and select that one too."""
        thread_list = self.widget
        current = thread_list.current
        if current is None:
            return
        if current.id in self.selected and move == 0:
            self.selected.discard(current.id)
        else:
            self.selected.add(current.id)
        thread_list.refresh_rows()
        if move:
            thread_list.cursor += move
            if thread_list.current:
                self.selected.add(thread_list.current.id)
                thread_list.refresh_rows()
        self.update_status()

    def select_all(self) -> None:
        """Select every thread of the view (all of a search's results); again, select none."""
        self.run(self._select_all, group="select", description="selecting every thread", exclusive=True)

    async def _select_all(self) -> None:
        source = self.widget.source
        ids = set(await asyncio.to_thread(source.ids)) if isinstance(source, Listing) else set()
        everything = bool(ids) and ids <= self.selected
        self.selected.clear()
        if not everything:
            self.selected.update(ids)
        self.widget.refresh_rows()
        self.update_status()

    def deselect(self, ids: list[str]) -> None:
        """Threads that left the view take their selection with them; the rows and the status say so."""
        self.selected.difference_update(ids)
        self.redraw_selection()

    def redraw_selection(self) -> None:
        self.widget.refresh_rows()  # the marks of the selection, and its count in the status
        self.update_status()

    def turns_on(self, op: str | None) -> bool:
        """A toggling key turns the state on, unless the thread under the cursor (alone) has it already."""
        current = self.widget.current
        if op == "done":
            return self.view != "done"
        if op == "star":
            return not (current and current.starred and not self.selected)
        if op == "mute":
            return not (current is not None and self.view == "all" and self._muted_under_cursor())
        return True

    def _muted_under_cursor(self) -> bool:
        thread_list = self.widget
        stored = getattr(thread_list.source, "stored", None)
        return bool(stored(thread_list.cursor).muted) if stored is not None else False

    # --- a change, then the list as it is now -----------------------------------------------------------------

    async def change(
        self,
        targets: list[str] | Callable[[], list[str]],
        change: Callable[[list[str]], Any],
        *,
        watch: str | None = None,
        back: bool = False,
    ) -> Changed:
        """Run ``change`` on threads ``targets`` (or those a function of them names) in a thread, then show the
        list as it is now. The new list is made in that thread too, counted from the old one (how many of the
        threads the view held before and holds after), with its screen of rows read and the cursor's thread
        found: the UI only swaps it in. With ``watch`` (the thread open in the reader), the answer says whether
        it left the view. ``back`` (an undo): the cursor goes to the first thread changed, if the view holds it."""
        thread_list = self.widget
        old = thread_list.source
        version = self._version
        current = thread_list.current if len(old) else None
        near, shown = thread_list.cursor, thread_list.visible_range()

        def run() -> tuple[Any, Listing | None, int | None, int, bool]:
            ids = targets() if callable(targets) else targets
            if not isinstance(old, Listing):
                return change(ids), None, None, 0, False
            before = old.members(ids)
            result = change(ids)
            after = old.members(ids)
            fresh = old.changed(after - before)
            fresh.prefetch(shown)
            wanted = [*(ids[:1] if back else ()), *((current.id,) if current else ())]
            found = next((at for i in wanted if (at := ThreadList.find(fresh, i, near=near)) is not None), None)
            left = watch is not None and ThreadList.find(fresh, watch, near=near) is None
            return result, fresh, found, max(before - after, 0), left

        result, fresh, found, left, watched_left = await asyncio.to_thread(run)
        if fresh is not None and version == self._version and thread_list.source is old:  # (not since counted)
            self._version += 1
            if thread_list.cursor == near:
                self._show_source(fresh, cursor=found if found is not None else near, same=True)
            else:  # a key moved the cursor meanwhile: keep the thread it is on now
                self._show_source(fresh, same=True)
        else:
            self.show()
        return Changed(result, left, watched_left, near)
