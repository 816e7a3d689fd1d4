"""The message reader: a thread's messages in tree order with a message cursor, folds and a find, safe to show
whatever they contain.

The thread is one list of lines in one :class:`~pigeon.tui.widgets.thread_text.ThreadText`, which draws only the
lines on screen; each message's lines are laid out once (kept by :class:`~pigeon.tui.widgets.thread_view.ThreadView`),
and a long thread only around the cursor (:mod:`~pigeon.tui.widgets.thread_window`), so a key lays out only the
messages it changes or brings near, and nothing is torn down while keys arrive."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, ClassVar

from textual import events, work
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.geometry import Size
from textual.reactive import Reactive
from textual.widgets import Input

from pigeon.core.attachments import attachments_of
from pigeon.core.conversation import is_new, read_before
from pigeon.core.paged import with_attachments
from pigeon.tui.keys import bindings
from pigeon.tui.widgets.pane import Pane
from pigeon.tui.widgets.reader_messages import EditSender, HandOff, Step
from pigeon.tui.widgets.text_input import TextInput
from pigeon.tui.widgets.thread_ahead import reopened
from pigeon.tui.widgets.thread_brief import ThreadBrief
from pigeon.tui.widgets.thread_text import ThreadText
from pigeon.tui.widgets.thread_view import Hit, ThreadView
from pigeon.tui.widgets.thread_window import Assembled, Layout, assemble, text_near

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from datetime import datetime

    from pigeon.models import Contact, ContentBlock, Message, Thread, Unreadable

RENDER_HERE = 100_000
"""Characters of message text to lay out in the frame that shows it; more are laid out in a thread."""
TOP = 1
"""Lines above the thread's content (its margin)."""


class Reader(VerticalScroll, Pane, can_focus=True):
    """The messages of one thread, and the message cursor."""

    KEYS_ARE_BINDINGS: ClassVar[bool] = True  # no key handler of its own: the App runs its bindings at once

    virtual_size: Reactive[Size] = Reactive(Size(0, 0), repaint=False, layout=False)
    """The thread's height, for scrolling within the pane. It changes only in a layout, whose frame draws the pane
    (of a fixed size, its gutter kept); Textual's asks for another layout, and a frame, after it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        *bindings("find"),  # before the reader's: while a find is on, its keys come first
        Binding("j,down", "scroll_by(1)", "Scroll down", id="reader.down", show=False),
        Binding("k,up", "scroll_by(-1)", "Scroll up", id="reader.up", show=False),
        Binding("space,pagedown", "scroll_by(0, 1)", "Page down", id="reader.page_down", show=False),
        Binding("pageup", "scroll_by(0, -1)", "Page up", id="reader.page_up", show=False),
        Binding("G,end", "scroll_end", "Bottom", id="reader.bottom", show=False),
        Binding("home", "scroll_home", "Top", id="reader.top", show=False),
        *bindings("reader"),
    ]

    EMPTY = Content.styled("Select a thread to read it.", "dim")
    NOTHING = Assembled([EMPTY], [], [EMPTY.plain], 0, 0)

    def __init__(self, *, id: str | None = None, clock: Callable[[], datetime] | None = None) -> None:
        super().__init__(id=id)
        self.clock = clock
        """What time it is (the core's clock), for how long ago someone read what the user sent."""
        self.thread: Thread | None = None
        self.messages: Sequence[Message] = []
        self.unreadable: Sequence[Unreadable] = ()
        self.contacts: dict[str, Contact] = {}
        self.show_quotes = False
        self.progress = ""
        self.read_at: datetime | None = None
        self.cursor = 0
        self.folded: set[str] = set()
        self.find = ""
        self.hits: list[Hit] = []
        self.hit = 0
        self._view: ThreadView | None = None
        self._moved = False  # the user moved the cursor: a new page of messages leaves it where it is
        self._all_open = False
        self._laid = self.NOTHING  # the lines shown (a long thread's: those around the cursor)
        self._width = self._generation = 0  # the width laid out for; the latest layout asked for
        self._placing = 0  # scrolls of moves on their way: the scroll does not move the cursor meanwhile

    def compose(self):  # type: ignore[no-untyped-def]
        yield ThreadBrief(id="reader-brief")
        yield ThreadText(self.EMPTY, id="reader-content")
        yield TextInput(placeholder="Find in this thread (enter; escape ends)", id="reader-find")

    @property
    def attachments(self) -> list[tuple[Message, ContentBlock]]:
        return attachments_of(with_attachments(self.messages))

    @property
    def current_message(self) -> Message | None:
        """The message under the message cursor: the one the reader's actions act on (reply, forward, attachments,
        links)."""
        view = self._view
        return view.at(min(self.cursor, len(view) - 1)) if view else None

    @property
    def text(self) -> str:
        """What the reader shows, as plain text (for tests and accessibility tools)."""
        return "\n".join(self._laid.texts)

    @property
    def finding(self) -> bool:
        return bool(self.find)

    def show(
        self,
        thread: Thread,
        messages: Sequence[Message],
        contacts: dict[str, Contact],
        *,
        progress: str = "",
        unreadable: Sequence[Unreadable] | None = None,
        read_at: datetime | None = None,
        view: ThreadView | None = None,
    ) -> None:
        """Show ``messages`` of ``thread`` (again, as more pages arrive: cursor and folds kept), with the places of its
        ``unreadable`` messages (``None``: those shown already). A new thread opens at its first message newer than
        ``read_at``, those read before folded; ``view``: its view laid out ahead (``thread_ahead``)."""
        same = self.thread is not None and self.thread.id == thread.id
        if unreadable is not None or not same:
            self.unreadable = unreadable or ()
        if not same:
            self.read_at, self._moved, self._all_open, self.folded = read_at, False, False, set()
            self._end_find()
        known = self._view.keys if same and self._view else []
        current = self._view.keys[self.cursor] if same and self._view and self._view.keys else None
        self.thread, self.messages, self.contacts, self.progress = thread, messages, contacts, progress
        kept = self._view
        if same and kept is not None and kept.messages is messages and list(kept.unreadable) == list(self.unreadable):
            view = kept  # the same messages: what is laid out stays
        elif view is None or view.messages is not messages:
            view = ThreadView(thread, messages, contacts, unreadable=self.unreadable, clock=self.clock)
        self._view = view
        room = max(2, (self.size.height - 4) // 3)  # (a short reader: its first line and what was found)
        self.query_one(ThreadBrief).show_for(view, self.read_at, room)
        self.folded, self.cursor = reopened(view, self.read_at, self.folded, known, current if self._moved else None)
        if view.keys:
            self.folded.discard(view.keys[self.cursor])
        self._render_thread(place=not (same and self._moved))

    # --- the message cursor -----------------------------------------------------------------------------------

    def move_to(self, index: int) -> None:
        """Put the message cursor on the ``index``-th message shown, its header at the top."""
        if self._view is None or not len(self._view):
            return
        self._moved = True
        self.cursor = max(0, min(index, len(self._view) - 1))
        self._render_thread(place=True)

    def action_next_message(self) -> None:
        self.move_to(self.cursor + 1)

    def action_previous_message(self) -> None:
        self.move_to(self.cursor - 1)

    def action_first_message(self) -> None:
        self.move_to(0)

    def action_last_message(self) -> None:
        self.move_to(len(self._view) - 1 if self._view else 0)

    def action_scroll_by(self, lines: int, pages: int = 0) -> None:
        """Scroll now, from where the last scroll is going (Textual's waits a frame: held keys' presses were lost)."""
        self.scroll_to(y=self.scroll_target_y + lines + pages * self.scrollable_content_region.height, immediate=True)

    def action_scroll_home(self) -> None:
        if self._laid.first:  # the first message is beyond the laid-out window: go to it
            self.move_to(0)
        else:
            super().action_scroll_home()

    def action_scroll_end(self) -> None:
        if self._view is not None and self._laid.end < len(self._view):  # (the same for the last)
            self.move_to(len(self._view) - 1)
        else:
            super().action_scroll_end()

    def action_first_new(self) -> None:
        order = self._view.order if self._view else []
        first = next((n for n, (m, _) in enumerate(order) if is_new(m, self.read_at)), None)
        if first is None:
            self.notify("Nothing new in this thread.", markup=False)
            return
        self.move_to(first)

    def action_fold(self) -> None:
        """Fold or unfold the message under the cursor."""
        if self._view is None or not len(self._view):
            return
        key = self._view.keys[self.cursor]
        self.folded.symmetric_difference_update({key})
        self._moved = True
        self._render_thread(place=True)

    def action_unfold_all(self) -> None:
        """Unfold every message; again: fold those read before."""
        if self._view is None:
            return
        self._all_open = not self._all_open
        if self._all_open:
            self.folded = set()
        else:
            view = self._view
            self.folded = {k for k, (m, _) in zip(view.keys, view.order, strict=True) if read_before(m, self.read_at)}
            self.folded.discard(view.keys[self.cursor])
        self._render_thread(place=True)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self._placing or not self._laid.starts or self._view is None:
            return
        # Scrolling moves the cursor to the message at the top of the view (at the bottom, where the last
        # headers cannot reach the top, a cursor still in view stays); past the window's ends, the window follows.
        y = round(new_value) - TOP
        if new_value >= self.max_scroll_y and self._laid.starts[self.cursor] >= y:
            return
        index = self._laid.at(y)
        if index != self.cursor:
            self.cursor, self._moved = index, True
            self._render_thread(place=False)

    # --- find -------------------------------------------------------------------------------------------------

    def action_find(self) -> None:
        """Open the find box (``/`` in the reader)."""
        box = self.query_one("#reader-find", Input)
        box.add_class("shown")
        box.value = self.find
        self.screen.set_focus(box)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.find_words(event.value)
        self.query_one("#reader-find", Input).remove_class("shown")
        self.screen.set_focus(self)

    def find_words(self, words: str) -> None:
        """Find ``words`` in the thread: the hits highlighted, the cursor on the first at or after it."""
        self.find = words.strip()
        if self._view is None or not self.find:
            self.end_find()
            return
        self.hits = self._view.find(self.find, self.text_width, show_quotes=self.show_quotes)
        if not self.hits:
            self.notify(f"Not found in this thread: {self.find}", markup=False)
            self.end_find()
            return
        self.go_to_hit(0)

    def go_to_hit(self, number: int) -> None:
        self.hit = number % len(self.hits)
        hit = self.hits[self.hit]
        self.folded.discard(self._view.keys[hit.index] if self._view else "")
        self.cursor, self._moved = hit.index, True
        self.title = Content.assemble("Message  ", Content.styled(f"find: {self.hit + 1} of {len(self.hits)}", "bold"))
        self._render_thread(place=True, line=hit.line)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in {"next_hit", "previous_hit"}:
            return self.finding  # otherwise n and N are the message keys
        if action == "find":  # (in the find box, / is a letter: the screen's binding types it)
            return not self.query_one("#reader-find", Input).has_focus
        return True

    def action_next_hit(self) -> None:
        self.go_to_hit(self.hit + 1)

    def action_previous_hit(self) -> None:
        self.go_to_hit(self.hit - 1)

    def end_find(self) -> None:
        """End the find: no highlights, ``n`` and ``N`` move between messages again."""
        was = self.finding
        self._end_find()
        if was:
            self._render_thread(place=False)

    def _end_find(self) -> None:
        self.find, self.hits, self.hit = "", [], 0
        self.title = "Message"
        if self.is_mounted:
            self.query_one("#reader-find", Input).remove_class("shown")

    # --- the other keys ---------------------------------------------------------------------------------------

    def action_toggle_quotes(self) -> None:
        self.show_quotes = not self.show_quotes
        self._render_thread(place=True)

    def action_edit_sender(self) -> None:
        self.post_message(EditSender())

    def action_hand_off(self, what: str) -> None:
        self.post_message(HandOff(what))

    def action_step(self, delta: int) -> None:
        self.post_message(Step(delta))

    def redraw(self) -> None:
        """Lay the thread out anew (its senders' contacts changed)."""
        if self.thread is not None:
            self._view = ThreadView(
                self.thread, self.messages, self.contacts, unreadable=self.unreadable, clock=self.clock
            )
            self._render_thread(place=False)

    def clear(self, note: str = "") -> None:
        """Show no thread (``note``: why, such as one on its way)."""
        self.thread, self.messages, self.unreadable, self.progress, self._view = None, [], (), note, None
        self.query_one(ThreadBrief).show_for(None, None, 0)
        self._end_find()
        self._render_thread(place=False)

    def on_resize(self, event: events.Resize) -> None:
        width = self.scrollable_content_region.width
        if width != self._width:
            self._width = width
            if self._view is not None:
                self._view.forget()
                self._render_thread(place=True)

    @property
    def rendering(self) -> bool:
        """A long thread is being laid out in the background (the reader says so meanwhile)."""
        return any(worker.group == "render" and not worker.is_finished for worker in self.workers)

    @property
    def text_width(self) -> int:
        """The columns a thread's lines are laid out to."""
        return (self.scrollable_content_region.width or 80) - 1

    @property
    def thread_layout(self) -> Layout:
        """How the thread is laid out now: the width, the folds, the cursor, the quotes, the find."""
        height = self.scrollable_content_region.height or 40
        return Layout(self.text_width, frozenset(self.folded), self.cursor, self.show_quotes, self.find, height)

    def _render_thread(self, *, place: bool, line: int = 0) -> None:
        static = self.query_one("#reader-content", ThreadText)
        self._generation += 1
        view = self._view
        if view is None or self.thread is None:  # (no thread: the reason, if one is given, as its progress)
            shown = Content.styled(self.progress, "italic $text-muted") if self.progress else self.EMPTY
            self._laid = Assembled([shown], [], [shown.plain], 0, 0)
            static.update(shown)
            return
        layout = self.thread_layout
        size = text_near(view, layout)
        if size <= RENDER_HERE:
            self._put(assemble(view, layout, self.progress), place, line)
            return
        # Laying out a long thread (a huge newsletter, tens of thousands of links) takes a while: in a thread, so
        # that every key is answered meanwhile; a newer layout (more pages, a fold, a resize) replaces it.
        static.update(Content.styled(f"Laying out {size:,} characters…", "italic dim"))
        self._render_elsewhere(view, layout, self._generation, place, line)

    @work(exclusive=True, group="render", exit_on_error=False, description="laying out the thread")
    async def _render_elsewhere(self, view: ThreadView, layout: Layout, generation: int, place: bool, at: int) -> None:
        assembled = await asyncio.to_thread(assemble, view, layout, self.progress)
        if generation == self._generation:  # nothing newer was asked for meanwhile
            self._put(assembled, place, at)

    def _put(self, assembled: Assembled, place: bool, line: int) -> None:
        before = self._laid
        self._laid = assembled = assembled.padded(before, len(self._view) if self._view else 0)
        lines = self.query_one("#reader-content", ThreadText)
        grown = max(len(assembled.rows), 1) - lines.size.height if lines.size.height else None
        lines.show(assembled.rows)
        shift = assembled.shift(before, self.cursor)  # the window moved under a scroll: the view moves with it
        if not (place and assembled.starts) and not shift:
            return
        self._placing += 1
        y = TOP + assembled.starts[self.cursor] + line if place else self.scroll_y + shift

        def scroll() -> None:
            self.scroll_to(y=y, animate=False, immediate=True)
            self._placing -= 1

        if place and grown is not None:  # (a scroll's shift waits: it may be animating)
            # As far as the lines' new height lets it go (the layout would cut it short, a frame later); within
            # the height they have now, it goes at once: one frame for the move and its scroll.
            y = min(y, max(0, self.virtual_size.height + grown - self.scrollable_content_region.height))
            if y <= self.max_scroll_y:
                scroll()
                return
        self.call_after_refresh(scroll)
