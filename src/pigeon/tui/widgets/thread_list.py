"""A virtual thread list on Textual's Line API.

Only the lines on screen are rendered, each from ``source.row(index)`` when it is first needed, and cached as a
``Strip``; a list of any length costs what a screenful does. Selection, scrolling, paging and mouse clicks work
as in a native list.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from typing import ClassVar, Protocol

from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.timer import Timer

from pigeon.core.listing import ThreadRow
from pigeon.tui.widgets.pane import Pane
from pigeon.tui.widgets.thread_row import Age, ages, draw_row


class RowSource(Protocol):
    """Where the rows come from: a list in memory, or a table in the local store. A source may also offer
    ``locate(thread_id) -> int | None``, a thread's index found without reading the rows before it, and ``exact``,
    false while its length is only its first page's (until it is counted)."""

    def __len__(self) -> int: ...

    def row(self, index: int) -> ThreadRow: ...


class EmptySource:
    def __len__(self) -> int:
        return 0

    def row(self, index: int) -> ThreadRow:
        raise IndexError(index)


ROW_STYLES = ("thread-list--dim", "thread-list--unread", "thread-list--mark")
GG_WINDOW = 1.0
KEEP_SEARCH = 50  # rows either side of the cursor where a kept thread is looked for before asking the source
PREPARE_AFTER = 0.02
"""Seconds the cursor rests before the rows beside it are drawn ahead as they look under it (a person's keys come
further apart; a burst of them draws nothing ahead)."""


class ThreadList(ScrollView, Pane, can_focus=True):
    """The list of threads."""

    KEYS_ARE_BINDINGS: ClassVar[bool] = True  # no key handler of its own: the App runs its bindings at once

    # Rows are cut to the width: a horizontal scrollbar (the virtual width lags a vertical scrollbar's coming)
    # would cover the last line, where the cursor is kept when it moves down.
    DEFAULT_CSS = """
    ThreadList {
        overflow-x: hidden;
    }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "thread-list--cursor",
        "thread-list--cursor-focused",
        "thread-list--unread",
        "thread-list--dim",
        "thread-list--mark",
    }

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j,down", "cursor_down", "Down", id="list.down", show=False, tooltip="Next thread"),
        Binding("k,up", "cursor_up", "Up", id="list.up", show=False, tooltip="Previous thread"),
        Binding("g", "g_prefix", "Top (gg)", id="list.top", show=False, tooltip="Press g twice for the first thread"),
        Binding("G,end", "last", "Bottom", id="list.bottom", show=False, tooltip="Last thread"),
        Binding("home", "first", "Top", id="list.home", show=False, tooltip="First thread"),
        Binding("pagedown,ctrl+d", "page_down", "Page down", id="list.page_down", show=False),
        Binding("pageup,ctrl+u", "page_up", "Page up", id="list.page_up", show=False),
        Binding("enter", "open", "Open", id="list.open", tooltip="Open the thread in the reader"),
    ]

    cursor: reactive[int] = reactive(0, always_update=True, init=False, repaint=False)  # watch_cursor repaints

    class Highlighted(Message):
        """The cursor moved to another thread (``row`` None: the list shown is empty)."""

        def __init__(self, thread_list: ThreadList, index: int, row: ThreadRow | None) -> None:
            super().__init__()
            self.thread_list = thread_list
            self.index = index
            self.row = row

    class Opened(Message):
        """A thread was chosen (enter or double click)."""

        def __init__(self, thread_list: ThreadList, index: int, row: ThreadRow) -> None:
            super().__init__()
            self.thread_list = thread_list
            self.index = index
            self.row = row

    def __init__(
        self,
        *,
        clock: Callable[[], datetime] | None = None,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.source: RowSource = EmptySource()
        self._clock = clock
        self._cache: LRUCache[tuple[ThreadRow, Age, int, Style | None], Strip] = LRUCache(1024)
        self._look: tuple[Style, ...] = ()  # the base and the rows' styles, as of the last style update
        self._look_stale = True  # a style update came since the look was worked out
        self._cursor_styles: dict[str, Style] = {}  # the cursor's two looks, as of the last style update
        self._now_at: tuple[int, datetime] | None = None
        self._drawn: dict[int, tuple[ThreadRow, Age]] = {}  # what each line on screen was last drawn from
        self._g_pressed_at = 0.0
        self._preparing: Timer | None = None
        self._when_counted: list[Callable[[], None]] = []

    def on_mount(self) -> None:
        self._preparing = self.set_interval(PREPARE_AFTER, self._prepare_beside, pause=True)

    def watch_loading(self, loading: bool) -> None:
        self.refresh_bindings()  # (Textual runs no key of a loading widget, and says so to no key bar)

    # --- data ------------------------------------------------------------------------------------------------

    @property
    def exact(self) -> bool:
        """Whether the list's length is known (a first page is as long as itself until counted)."""
        return bool(getattr(self.source, "exact", True))

    def when_counted(self, then: Callable[[], None]) -> None:
        """Call ``then`` once the list's length is known: now if it is, else when this list is shown counted
        (another list shown drops it). The end of a first page is not the list's end: ``G`` or ``J`` there waits
        for the count, a few milliseconds."""
        if self.exact:
            then()
        else:
            self._when_counted.append(then)

    def set_source(
        self, source: RowSource, *, keep: str | None = None, cursor: int | None = None, same: bool = False
    ) -> None:
        """Show ``source``; keep the cursor on thread ``keep`` if it is still there, else clamp it (or put it at
        ``cursor``, found beforehand with :meth:`find`). When rows come or go above the cursor, a scrolled list
        moves with it, the cursor staying on its line; a list at its top stays there, showing the new mail, unless
        the cursor would leave it. Rows are cached by what they show, so a row that did not change is not drawn
        again, and when the list did not move, only the lines whose row changed are sent to the terminal (marking a
        thread read changes one line, not the 40 on screen). ``same``: the list shown before, read again or
        counted: what waits for its count goes on waiting, or runs if it is counted."""
        waiting, self._when_counted = (self._when_counted if same else []), []
        self._show(source, keep, cursor)
        if not self.exact:
            self._when_counted = waiting
            return
        for then in waiting:
            then()

    def _show(self, source: RowSource, keep: str | None, cursor: int | None) -> None:
        top, size = int(self.scroll_offset.y), len(self.source)
        self.source = source
        if len(source) != size or not self.virtual_size.width:  # (set again, it lays the screen out again)
            self.virtual_size = Size(self._row_width, len(source))
        index = self.cursor if cursor is None else cursor
        if keep is not None and cursor is None:
            found = self.find(source, keep, near=self.cursor)
            index = found if found is not None else index
        index = max(0, min(index, len(source) - 1))
        if top and index != self.cursor:
            self.scroll_to(y=top + index - self.cursor, animate=False, force=True)
        self.cursor = index
        if int(self.scroll_offset.y) != top or len(source) != size or not self._drawn:
            self.refresh()
            return
        width, now = self.size.width, self._now()
        for y in range(min(self.size.height, len(source) - top)):
            row = source.row(top + y)
            if self._drawn.get(y) != (row, ages(row, now)):
                self.refresh(Region(0, y, width, 1))

    @staticmethod
    def find(source: RowSource, thread_id: str, *, near: int) -> int | None:
        """The index of ``thread_id``: looked for around ``near`` first (after a triage action or new mail it has
        moved by a row or a few), then asked of the source. A thread that left the list costs no walk through it."""
        size = len(source)
        for step in range(KEEP_SEARCH):
            for index in (near + step, near - step) if step else (near,):
                if 0 <= index < size and source.row(index).id == thread_id:
                    return index
        locate = getattr(source, "locate", None)
        return locate(thread_id) if locate is not None else None

    def refresh_rows(self) -> None:
        """The rows' data changed (a selection): draw the screen's rows again. Only rows whose data differ are
        built again: the cache is keyed by what a row shows."""
        self.refresh()

    @property
    def current(self) -> ThreadRow | None:
        if 0 <= self.cursor < len(self.source):
            return self.source.row(self.cursor)
        return None

    def visible_range(self) -> range:
        top = int(self.scroll_offset.y)
        return range(top, min(top + self.size.height, len(self.source)))

    # --- cursor ----------------------------------------------------------------------------------------------

    def validate_cursor(self, value: int) -> int:
        return max(0, min(value, len(self.source) - 1)) if len(self.source) else 0

    def watch_cursor(self, old: int, value: int) -> None:
        top = int(self.scroll_offset.y)
        self._scroll_cursor_into_view()
        if int(self.scroll_offset.y) == top:  # no scroll: only the two rows whose look changed
            width = self._row_width  # (not the scrollbar beside them: it would be asked for its lines)
            for index in {old, value} if old != value else ():  # (a new list draws its own changed lines)
                if top <= index < top + self.size.height:
                    self.refresh(Region(0, index - top, width, 1))
        else:
            self.refresh()
        self.post_message(self.Highlighted(self, value, self.current))
        if self._preparing is not None:
            self._preparing.reset()
            self._preparing.resume()

    def _prepare_beside(self) -> None:
        """Draw the rows beside the cursor as they look under it, into the row cache, while the cursor rests: the
        next ``j`` or ``k`` then finds its row drawn (drawing a row was much of a ``j``'s frame). The cursor's own
        row is drawn as it looks with the focus moved (opening the thread, or going back to the list), and as it
        looks without the cursor (the first ``j`` after a start or a new list)."""
        if self._preparing is not None:
            self._preparing.pause()
        self._check_look()
        width = self._row_width
        if width <= 0:
            return
        cursor, now = self._cursor_style(), self._now()
        for index in (self.cursor + 1, self.cursor - 1):
            if 0 <= index < len(self.source):
                row = self.source.row(index)
                self._row_strip(row, ages(row, now), width, cursor)
        if 0 <= self.cursor < len(self.source):
            row = self.source.row(self.cursor)
            age = ages(row, now)
            self._row_strip(row, age, width, self._cursor_style(not self.has_focus))
            self._row_strip(row, age, width, None)  # and as it looks once the cursor leaves it

    def _scroll_cursor_into_view(self) -> None:
        """Forced: a list that has just grown past the screen has no scrollbar until its next layout, and Textual
        drops an unforced scroll of a list without one."""
        height = max(self.size.height, 1)
        top = int(self.scroll_offset.y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, force=True)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, force=True)

    def action_cursor_down(self) -> None:
        self.cursor += 1

    def action_cursor_up(self) -> None:
        self.cursor -= 1

    def action_first(self) -> None:
        self.cursor = 0

    def action_last(self) -> None:
        self.cursor = at = len(self.source) - 1
        if not self.exact:  # the end of a first page: the list's end once counted, unless the user moved on
            self.when_counted(lambda: self.action_last() if self.cursor == at and self.has_focus else None)

    def action_page_down(self) -> None:
        self.cursor += max(self.size.height - 1, 1)

    def action_page_up(self) -> None:
        self.cursor -= max(self.size.height - 1, 1)

    def action_g_prefix(self) -> None:
        now = time.monotonic()
        if now - self._g_pressed_at <= GG_WINDOW:
            self._g_pressed_at = 0.0
            self.cursor = 0
        else:
            self._g_pressed_at = now

    def action_open(self) -> None:
        row = self.current
        if row is not None:
            self.post_message(self.Opened(self, self.cursor, row))

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        index = int(self.scroll_offset.y) + offset.y
        if 0 <= index < len(self.source):
            self.cursor = index
            if event.chain >= 2:
                self.action_open()

    # --- rendering -------------------------------------------------------------------------------------------

    @property
    def _row_width(self) -> int:
        """Width of a row: the widget less its vertical scrollbar."""
        return self.scrollable_content_region.width

    def on_resize(self, event: events.Resize) -> None:
        # Cached rows stay: their key has the width (a layout elsewhere sends Resize without changing it).
        self.virtual_size = Size(self._row_width, len(self.source))
        self.call_after_refresh(self._scroll_cursor_into_view)  # a smaller pane keeps the cursor's row in sight

    def notify_style_update(self) -> None:
        """The look is worked out again when a row is next drawn: Textual applies the component classes' styles
        (a new theme's colours) only after it calls this."""
        super().notify_style_update()
        self._cursor_styles.clear()
        self._look_stale = True

    def _check_look(self) -> None:
        """Rows are drawn again only when their look changed (a theme): focus changes the cursor row alone."""
        if self._look_stale:
            try:
                look = (self.rich_style, *(self.get_component_rich_style(name, partial=True) for name in ROW_STYLES))
            except KeyError:  # before the stylesheet reached the component classes
                return
            self._look_stale = False
            if look != self._look:
                self._look = look
                self._cache.clear()

    def render_line(self, y: int) -> Strip:
        self._check_look()
        index = int(self.scroll_offset.y) + y
        width = self._row_width
        if index >= len(self.source) or width <= 0:
            return Strip.blank(width, self._look[0] if self._look else self.rich_style)
        cursor = self._cursor_style() if index == self.cursor else None
        row = self.source.row(index)
        age = ages(row, self._now())
        self._drawn[y] = (row, age)
        return self._row_strip(row, age, width, cursor)

    def _row_strip(self, row: ThreadRow, age: Age, width: int, cursor: Style | None) -> Strip:
        """A row as drawn, from the cache when it was drawn before as it looks now."""
        key = (row, age, width, cursor)  # what the row shows: its data, its age as shown, the cursor's look
        strip = self._cache.get(key)
        if strip is None:
            strip = self._render_row(row, age, width, cursor)
            self._cache[key] = strip
        return strip

    def _cursor_style(self, focused: bool | None = None) -> Style:
        """The cursor row's style (as it looks with the focus on the list or not; by default as it has it),
        worked out once a look: Textual forgets its own copy at every refresh, and a ``j`` refreshes two rows. It is
        brighter while the list has the focus (set here, not by a ``:focus`` rule: see
        :mod:`pigeon.tui.widgets.pane`)."""
        focused = self.has_focus if focused is None else focused
        name = "thread-list--cursor-focused" if focused else "thread-list--cursor"
        style = self._cursor_styles.get(name)
        if style is None:
            style = self._cursor_styles[name] = self.get_component_rich_style(name)
        return style

    def focus_shown(self, has_focus: bool) -> None:
        top = int(self.scroll_offset.y)
        if top <= self.cursor < top + self.size.height:
            self.refresh(Region(0, self.cursor - top, self._row_width, 1))

    def _now(self) -> datetime:
        """The time the rows' ages are counted from, read once a second (not once a row: a repaint draws 40)."""
        tick = int(time.monotonic())
        if self._now_at is None or self._now_at[0] != tick:
            self._now_at = (tick, self._clock() if self._clock else datetime.now().astimezone())
        return self._now_at[1]

    def _render_row(self, row: ThreadRow, age: Age, width: int, cursor: Style | None) -> Strip:
        """A row drawn in the list's look (as of the last style update: ``rich_style`` walks the ancestors)."""
        if self._look:
            base, dim, unread, mark = self._look
        else:
            base = self.rich_style
            dim, unread, mark = (self.get_component_rich_style(name, partial=True) for name in ROW_STYLES)
        return draw_row(row, age, width, cursor, (base, dim, unread, mark))
