"""The mail screen: inboxes, thread list and reader; its keys (from the action registry) and what they do.

Its other parts stand on their own: the list it shows (:mod:`.main_list`), the reader's work (:mod:`.main_reading`)
and keeping mail fresh (:mod:`pigeon.tui.live`). Everything it reads or changes goes through the mail core.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime
from typing import Any, ClassVar

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.reactive import Reactive
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Input, OptionList, Static

from pigeon.core.actions import BY_ID, Action, describe
from pigeon.core.listing import LABEL_VIEW, SORTS, VIEWS, Listing
from pigeon.core.live import Mode
from pigeon.core.mail import MailCore
from pigeon.sanitize import clean_line
from pigeon.tui import fast_path
from pigeon.tui.keys import bindings
from pigeon.tui.live import LiveUpdates
from pigeon.tui.messages import InboxesChanged
from pigeon.tui.render import load_readers
from pigeon.tui.screens.base import ReportsFailures
from pigeon.tui.screens.modals import ConfirmScreen, InputScreen
from pigeon.tui.screens.pickers import SnoozePicker
from pigeon.tui.widgets.inbox_list import ALL_INBOXES, InboxList
from pigeon.tui.widgets.key_bar import KeyBar
from pigeon.tui.widgets.reader import Reader
from pigeon.tui.widgets.thread_list import ThreadList

BULK_CONFIRM = 50  # a bulk action on more threads than this asks first (marking read never does: two keys)
NARROW_WIDTH = 120
FOLD_WIDTH = 100  # below this the sidebar folds away
BACKGROUND_START_DELAY = 0.05
SNOOZE_DUE_CHECK = 60  # seconds: snoozes come due


class MainScreen(ReportsFailures, LiveUpdates):
    AUTO_FOCUS = "#threads"

    # Textual repaints the whole screen when focus moves; the widgets whose look depends on focus repaint
    # themselves (their styles change), so opening a thread (focus to the reader) redraws only what changed.
    focused: Reactive[Widget | None] = Reactive(None, repaint=False)
    BINDINGS: ClassVar[list[BindingType]] = bindings("main")

    def __init__(self, core: MailCore) -> None:
        super().__init__()
        self.frames = fast_path.attach(self)
        self.core = core
        self.view = "inbox"
        self.inbox_id: str | None = None
        self.sort = "date"
        self.filter_text = ""
        self.selected: set[str] = set()
        self.label_views: list[str] = []
        self.synced = False
        self.offline = False
        self.live_mode = ""
        self._live_started = False
        self._live_timer: Timer | None = None
        self._mode: Mode | None = None
        self.left_view = 0
        self.watch_left = False
        self._arrived: dict[str, tuple[str, str]] = {}  # new mail to announce, by message id
        self._failing = False
        self._announce_timer: Timer | None = None
        self._check_timer: Timer | None = None
        self.check_delay = core.poll_interval
        self._progress_timer: Timer | None = None
        self._preview_timer: Timer | None = None
        self._left_at = 0
        self._sidebar_shown: Any = None
        self._status = Content()
        self._list_version = 0

    def draw_key(self, widget: Widget) -> None:
        """Draw what a key's binding changed in ``widget`` now (on the fast path; see :mod:`pigeon.tui.fast_path`)."""
        self.frames.draw_key(widget)

    def after_focus_frame(self, callback: Callable[[], object]) -> None:
        """Run ``callback`` once the frame of the focus move under way is out."""
        self.frames.after_focus_frame(callback)

    def compose(self) -> ComposeResult:
        yield Static("", id="offline", markup=False)
        with Horizontal(id="panes"):
            yield InboxList(id="inboxes")
            with Vertical(id="list-pane"):
                yield Input(
                    placeholder="Search all mail: words from: to: subject: is:unread has:attachment label: in:inbox",
                    id="filter",
                )
                yield ThreadList(id="threads", clock=self.core.clock)
            yield Reader(id="reader")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one(InboxList).title = "Views"
        self.query_one(ThreadList).title = "Threads"
        self.query_one(Reader).title = "Message"
        self.show_threads()  # the list's rows, from the store at once: nothing else is read before the first frame
        self.set_interval(SNOOZE_DUE_CHECK, self.show_threads)
        self.call_after_refresh(self.after_first_frame)

    def after_first_frame(self) -> None:
        """What the first frame does not need: saved inboxes and contacts (pydantic models), then the sync
        (httpx). Both load modules for a few hundred milliseconds, in threads; they start a moment after the
        first frame so that the terminal has all of it first."""
        self.set_timer(BACKGROUND_START_DELAY, self.load_saved)
        self.set_timer(BACKGROUND_START_DELAY, self.refresh_mail)

    @work(group="saved", exit_on_error=False, description="reading saved inboxes and contacts")
    async def load_saved(self) -> None:
        await self.core.load_saved()
        if not self.synced:  # (a sync that finished first has shown the fresher list)
            self.refresh_sidebar()
        await asyncio.to_thread(load_readers)
        self.core.on_start_up_stage()  # the models and the body renderers are loaded: start-up's objects freeze

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.width < NARROW_WIDTH, "narrow")
        self.set_class(event.size.width < FOLD_WIDTH, "folded")

    def on_inboxes_changed(self, event: InboxesChanged) -> None:
        self.show_threads()

    async def on_unmount(self) -> None:
        await self.core.live.stop()

    # --- where the list is ------------------------------------------------------------------------------------

    @on(OptionList.OptionHighlighted, "#inboxes")
    def _sidebar_chosen(self, event: OptionList.OptionHighlighted) -> None:
        chosen = event.option.id or "view:inbox"
        if chosen.startswith("view:"):
            self.view, self.inbox_id = chosen.removeprefix("view:"), None
        elif chosen.startswith("inbox:"):
            self.view, self.inbox_id = "inbox", chosen.removeprefix("inbox:")
        self.selected.clear()
        self.show_threads()

    def select_inbox(self, inbox_id: str) -> None:
        self.view, self.inbox_id = "inbox", (None if inbox_id == ALL_INBOXES else inbox_id)
        self.show_threads()
        self.set_focus(self.query_one(ThreadList))

    def action_view(self, view: str) -> None:
        self.view, self.inbox_id = view, None
        self.selected.clear()
        self.show_threads()
        self.set_focus(self.query_one(ThreadList))

    def action_sort(self) -> None:
        order = list(SORTS)
        self.sort = order[(order.index(self.sort) + 1) % len(order)]
        self.show_threads()

    def action_contacts(self) -> None:
        from pigeon.tui.screens.contacts.book import ContactBook  # loads on first use

        self.app.push_screen(ContactBook(self.core))

    # --- triage ----------------------------------------------------------------------------------------------

    def action_triage(self, action_id: str) -> None:
        """A triage action of the registry on the selection, or the thread under the cursor (in the reader: the
        open thread). On more than ``BULK_CONFIRM`` threads it asks first, saying how many (marking read aside)."""
        action = BY_ID[f"triage.{action_id}"]
        ids = self.targets()
        if len(ids) > BULK_CONFIRM and action.op != "read":
            question = Content(f"{action.title}: all {len(ids):,} selected threads? (u takes it back in one step)")

            def answer(yes: bool | None) -> None:
                if yes:
                    self.triage_on(action, ids)

            self.app.push_screen(ConfirmScreen(question, yes=action.title, no="Cancel"), answer)
            return
        self.triage_on(action, ids)

    def triage_on(self, action: Action, ids: list[str]) -> None:
        if not ids:
            self.notify("No thread to act on.", markup=False)
        elif action.op == "snooze":

            def picked(when: datetime | None) -> None:
                if when is not None:
                    self.run_triage(ids, lambda chosen: self.core.apply(action, chosen, until=when))

            self.app.push_screen(SnoozePicker(self.core.clock), picked)
        elif action.op == "label":

            def typed(text: str | None) -> None:
                if text:
                    name, on = (text[1:], False) if text.startswith("-") else (text, True)
                    self.run_triage(ids, lambda chosen: self.core.apply(action, chosen, label=name, on=on))

            self.app.push_screen(InputScreen("Label", "A label to add; -label removes it"), typed)
        else:
            on = self._turns_on(action.op) if action.on is None else action.on
            self.run_triage(ids, lambda chosen: self.core.apply(action, chosen, on=on))

    def _turns_on(self, op: str | None) -> bool:
        """A toggling key turns the state on, unless the thread under the cursor (alone) has it already."""
        current = self.query_one(ThreadList).current
        if op == "done":
            return self.view != "done"
        if op == "star":
            return not (current and current.starred and not self.selected)
        if op == "mute":
            return not (current is not None and self.view == "all" and self._muted_under_cursor())
        return True

    def _muted_under_cursor(self) -> bool:
        thread_list = self.query_one(ThreadList)
        source = thread_list.source
        stored = getattr(source, "stored", None)
        return bool(stored(thread_list.cursor).muted) if stored is not None else False

    @work(group="triage", exit_on_error=False, description="changing the threads")
    async def run_triage(self, ids: list[str], change: Any) -> None:
        reader = self.query_one(Reader)
        watch = reader.thread.id if self.reading and reader.thread is not None else None
        try:
            done = await self.change_list(ids, change, watch=watch)
            said = describe(done)
        except ValueError as exc:  # a label too long, say
            self.notify(clean_line(str(exc)), severity="warning", markup=False)
            return
        if self.left_view:  # threads that left the view take the selection with them; others keep it (as Gmail)
            self.selected.difference_update(ids)
            if watch is not None and self.watch_left:  # the reader follows the work: the next thread opens
                self.follow_triage()
        self.query_one(ThreadList).refresh_rows()  # the marks of the selection go, and its count in the status
        self.update_status()
        self.notify(f"{said} — u to undo" if done.count else said, markup=False, timeout=4)

    def action_select(self, move: int = 0) -> None:
        thread_list = self.query_one(ThreadList)
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

    @work(group="select", exclusive=True, exit_on_error=False, description="selecting every thread")
    async def action_select_all(self) -> None:
        """Select every thread of the view (all of a search's results); pressed again, select none."""
        source = self.query_one(ThreadList).source
        ids = set(await asyncio.to_thread(source.ids)) if isinstance(source, Listing) else set()
        everything = bool(ids) and ids <= self.selected
        self.selected.clear()  # (in place: the list's rows ask this very set whether they are selected)
        if not everything:
            self.selected.update(ids)
        self.query_one(ThreadList).refresh_rows()
        self.update_status()

    @work(group="triage", exit_on_error=False, description="undoing")
    async def action_undo(self) -> None:
        from pigeon.core.errors import DamagedStep, damaged_step_words

        try:
            change = await self.change_list(lambda: self.core.undo_targets(), lambda _: self.core.undo())
        except DamagedStep as exc:
            self.notify(damaged_step_words(exc), severity="warning", markup=False, timeout=8)
            return
        self.notify(f"Undone: {describe(change)}" if change else "Nothing to undo.", markup=False, timeout=4)

    # --- filter, back, zoom -----------------------------------------------------------------------------------

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        if box.has_focus:  # a / typed in the search (the binding comes first, being a priority one)
            box.insert_text_at_cursor("/")
            return
        box.add_class("shown")
        self.set_focus(box)  # at once, before the keys typed after it are handed on: they are the search's

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.filter_text = event.value.strip()
        # new results start at the first; a cleared search keeps the thread it was on, now in the whole list
        self.show_threads(keep=not self.filter_text)

    @on(Input.Submitted, "#filter")
    def _filter_kept(self, event: Input.Submitted) -> None:
        if not event.value.strip():
            self.query_one("#filter", Input).remove_class("shown")
        self.set_focus(self.query_one(ThreadList))

    def action_back(self) -> None:
        box = self.query_one("#filter", Input)
        if box.has_focus or (self.filter_text and self.focused is self.query_one(ThreadList)):
            box.value = ""
            box.remove_class("shown")
            self.set_focus(self.query_one(ThreadList))
        elif self.has_class("zoomed"):
            self.remove_class("zoomed")
            self.set_focus(self.query_one(Reader))
        elif self.focused is not self.query_one(ThreadList):
            self.set_focus(self.query_one(ThreadList))

    def action_zoom(self) -> None:
        self.toggle_class("zoomed")
        if self.has_class("zoomed"):
            self.set_focus(self.query_one(Reader))

    @property
    def views(self) -> list[str]:
        """Every view, with a view per label the store knows (the palette offers them)."""
        return [*VIEWS, *(v for v in self.label_views if v.startswith(LABEL_VIEW))]
