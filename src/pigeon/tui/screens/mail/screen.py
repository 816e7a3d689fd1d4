"""The mail screen: inboxes, thread list and reader, and its keys (from the action registry).

It holds its parts and calls down into them; they answer with messages (or through the small protocol each is
given), and never reach one another: the list (:mod:`.threads`), the reader (:mod:`.reading`), live updates
(:mod:`.live`), the hand-off to other programs (:mod:`.handoff`) and triage (:mod:`.triage`). Everything they
read or change goes through the mail core."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import ClassVar

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.reactive import Reactive
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, OptionList, Static

from pigeon.core.actions import BY_ID
from pigeon.core.mail import MailCore
from pigeon.tui import fast_path
from pigeon.tui.keys import bindings
from pigeon.tui.messages import ContactSaved, InboxesChanged, LiveEvent, Offline
from pigeon.tui.render import load_readers
from pigeon.tui.screens.base import ReportsFailures
from pigeon.tui.screens.mail.attention import AttentionPart
from pigeon.tui.screens.mail.handoff import HandOffPart
from pigeon.tui.screens.mail.live import LivePart
from pigeon.tui.screens.mail.reading import ReaderPart, ThreadOpened
from pigeon.tui.screens.mail.threads import ThreadsPart
from pigeon.tui.screens.mail.triage import Triaged, TriagePart
from pigeon.tui.widgets.inbox_list import ALL_INBOXES, InboxList
from pigeon.tui.widgets.key_bar import KeyBar
from pigeon.tui.widgets.reader import Reader
from pigeon.tui.widgets.reader_messages import EditSender, HandOff, Step
from pigeon.tui.widgets.text_input import TextInput
from pigeon.tui.widgets.thread_list import ThreadList

NARROW_WIDTH = 120
FOLD_WIDTH = 100  # below this the sidebar folds away
BACKGROUND_START_DELAY = 0.05
SNOOZE_DUE_CHECK = 60  # seconds: snoozes come due


class MainScreen(ReportsFailures, Screen[None]):
    AUTO_FOCUS = "#threads"

    # Textual repaints the whole screen when focus moves; the widgets whose look depends on focus repaint
    # themselves (their styles change), so opening a thread (focus to the reader) redraws only what changed.
    focused: Reactive[Widget | None] = Reactive(None, repaint=False)
    BINDINGS: ClassVar[list[BindingType]] = bindings("main")

    def __init__(self, core: MailCore) -> None:
        super().__init__()
        self.frames = fast_path.attach(self)
        self.core = core
        self.threads = ThreadsPart(self, core)
        self.reading = ReaderPart(self, core, self.after_focus_frame)
        self.live = LivePart(self, core, self)
        self.handoff = HandOffPart(self, core)
        self.triage = TriagePart(self, core, self.threads.change)
        self.attention = AttentionPart(self, core, self.threads.change)
        self._sync_first = False  # the list had no row to show: the first sync started with the screen

    def draw_key(self, *widgets: Widget) -> None:
        """Draw what a key changed in ``widgets`` now (on the fast path; see :mod:`pigeon.tui.fast_path`)."""
        self.frames.draw_key(*widgets)

    def after_focus_frame(self, callback: Callable[[], object]) -> None:
        """Run ``callback`` once the frame of the focus move under way is out."""
        self.frames.after_focus_frame(callback)

    def compose(self) -> ComposeResult:
        yield Static("", id="offline", markup=False)
        with Horizontal(id="panes"):
            yield InboxList(id="inboxes")
            with Vertical(id="list-pane"):
                yield TextInput(
                    placeholder="Search all mail: words from: to: subject: is:unread has:attachment label: in:inbox",
                    id="filter",
                )
                yield ThreadList(id="threads", clock=self.core.clock)
            yield Reader(id="reader", clock=self.core.clock)
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one(InboxList).title = "Views"
        self.query_one(ThreadList).title = "Threads"
        self.query_one(Reader).title = "Message"
        self.show_threads()  # the list's rows, from the store at once: nothing else is read before the first frame
        self.set_interval(SNOOZE_DUE_CHECK, self.show_threads)
        self._sync_first = not len(self.query_one(ThreadList).source)
        if self._sync_first:  # no row to show (a fresh account): the sync is all the user waits for, at once
            self.live.refresh()
        self.call_after_refresh(self.after_first_frame)

    def after_first_frame(self) -> None:
        """What the first frame does not need: saved inboxes and contacts (pydantic models), then the sync
        (aiohttp). Both load modules, in threads; they start a moment after the first frame so that the terminal
        has all of it first, unless the list had no row to show (then the sync began with the screen)."""
        self.set_timer(BACKGROUND_START_DELAY, self.load_saved)
        if not self._sync_first:
            self.set_timer(BACKGROUND_START_DELAY, self.live.refresh)

    @work(group="saved", exit_on_error=False, description="reading saved inboxes and contacts")
    async def load_saved(self) -> None:
        await self.core.load_saved()
        self.attention.rules_left_out()
        self.live.index_behind()
        if not self.live.synced:  # (a sync that finished first has shown the fresher list)
            self.threads.refresh_sidebar()
        await asyncio.to_thread(load_readers)
        self.core.on_start_up_stage()  # the models and the body renderers are loaded: start-up's objects freeze

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.width < NARROW_WIDTH, "narrow")
        self.set_class(event.size.width < FOLD_WIDTH, "folded")

    async def on_unmount(self) -> None:
        await self.core.live.stop()

    # --- what the parts show, read by the palette and the tests -------------------------------------------------

    @property
    def status(self) -> str:
        """The list's status line, as plain text."""
        return self.threads.status

    @property
    def selected(self) -> set[str]:
        return self.threads.selected

    @property
    def view(self) -> str:
        return self.threads.view

    @property
    def inbox_id(self) -> str | None:
        return self.threads.inbox_id

    @property
    def label_views(self) -> list[str]:
        return self.threads.label_views

    @property
    def views(self) -> list[str]:
        """Every view, with a view per label the store knows (the palette offers them)."""
        return self.threads.views

    @property
    def live_mode(self) -> str:
        """How new mail comes ("live", "checking every 60 s"), once the first sync has found out."""
        return self.threads.live_mode

    @property
    def synced(self) -> bool:
        return self.live.synced

    @property
    def offline(self) -> bool:
        return self.live.offline

    @property
    def check_delay(self) -> float:
        return self.live.check_delay

    def targets(self) -> list[str]:
        """What a triage key acts on: in the reader the open thread (a selection in the list is left alone); else
        the selected threads, or the one under the cursor."""
        open_id = self.reading.open_id
        return [open_id] if open_id else self.threads.targets()

    # --- what live updates ask of the screen (:class:`~pigeon.tui.screens.mail.live.ListShown`) --------------

    def show_threads(self) -> None:
        self.threads.show()

    def set_status(self, status: Content) -> None:
        self.threads.set_status(status)

    def show_live_mode(self, mode: str, *, redraw: bool = True) -> None:
        self.threads.live_mode = mode
        if redraw:
            self.threads.update_status()

    def threads_changed(self, ids: Iterable[str]) -> None:
        self.reading.reload(ids)

    def words_indexed(self) -> None:
        self.threads.indexed()

    # --- messages from the widgets, the parts and the App ----------------------------------------------------

    @on(OptionList.OptionHighlighted, "#inboxes")
    def _sidebar_chosen(self, event: OptionList.OptionHighlighted) -> None:
        chosen = event.option.id or "view:inbox"
        if chosen.startswith("view:"):
            self.threads.go_to(chosen.removeprefix("view:"))
        elif chosen.startswith("inbox:"):
            self.threads.go_to("inbox", chosen.removeprefix("inbox:"))
        else:
            self.threads.go_to(self.threads.view, self.threads.inbox_id)
        self.refresh_bindings()

    @on(ThreadList.Highlighted)
    def _highlighted(self, event: ThreadList.Highlighted) -> None:
        self.reading.highlighted(event.row.id if event.row is not None else None)
        self.live.cursor_moved()

    @on(ThreadList.Opened)
    def _opened(self, event: ThreadList.Opened) -> None:
        self.reading.open(event.row.id)

    def on_reader_step(self, event: Step) -> None:
        self.reading.step(event.delta)

    def on_reader_edit_sender(self, event: EditSender) -> None:
        self.reading.edit_sender()

    def on_reader_hand_off(self, event: HandOff) -> None:
        handoff = self.handoff
        chosen = {
            "save": handoff.save_attachment,
            "open": handoff.open_attachment,
            "links": handoff.show_links,
            "raw": handoff.show_raw,
            "pipe": handoff.pipe,
            "write": handoff.write,
            "copy": handoff.copy,
        }.get(event.what)
        if chosen is not None:
            chosen()

    def on_thread_opened(self, event: ThreadOpened) -> None:
        self.triage.mark_read(event.thread_id)

    def on_triaged(self, event: Triaged) -> None:
        """Threads a change took out of the view take their selection with them (others keep it, as in Gmail);
        the reader follows its thread's leaving to the next one."""
        if event.left:
            self.threads.deselect(event.ids)
        else:
            self.threads.redraw_selection()
        if event.followed:
            self.reading.follow(event.at)

    def on_contact_saved(self, event: ContactSaved) -> None:
        self.reading.contact_saved(event.contact)

    def on_inboxes_changed(self, event: InboxesChanged) -> None:
        self.show_threads()

    def on_offline(self, event: Offline) -> None:
        self.live.set_offline(True)

    def on_live_event(self, event: LiveEvent) -> None:
        self.live.event(event.webhook)

    def on_screen_resume(self) -> None:
        self.live.screen_back()

    # --- the keys and the palette -----------------------------------------------------------------------------

    def select_inbox(self, inbox_id: str) -> None:
        self.threads.go_to("inbox", None if inbox_id == ALL_INBOXES else inbox_id, keep_selection=True)
        self.set_focus(self.query_one(ThreadList))
        self.refresh_bindings()  # (the key bar's words may depend on the view: see key_words)

    def open_thread(self, thread_id: str) -> None:
        """Open a thread in the reader (the palette's jump)."""
        self.reading.open(thread_id)

    def action_view(self, view: str) -> None:
        self.threads.go_to(view)
        self.set_focus(self.query_one(ThreadList))
        self.refresh_bindings()  # (the key bar's words may depend on the view: see key_words)

    def key_words(self, binding: Binding) -> str:
        """A key's words in the key bar: in the Done view, e brings threads back to the inbox."""
        done_here = binding.action == "triage('done')" and self.threads.view == "done"
        return "To inbox" if done_here else binding.description

    def action_sort(self) -> None:
        self.threads.next_sort()

    def action_contacts(self) -> None:
        from pigeon.tui.screens.contacts.book import ContactBook  # loads on first use

        self.app.push_screen(ContactBook(self.core))

    def action_refresh(self) -> None:
        self.live.refresh()

    def action_triage(self, action_id: str) -> None:
        """A triage action of the registry on the selection, or the thread under the cursor (in the reader: the
        open thread)."""
        op = BY_ID[f"triage.{action_id}"].op
        self.triage.act(action_id, self.targets(), turns_on=self.threads.turns_on(op), watch=self.reading.open_id)

    def action_screen_sender(self, screen: str, domain: bool = False) -> None:
        """Let the sender of the threads a triage key acts on in, or keep them out."""
        watch = self.reading.open_id
        self.attention.screen_sender(self.targets(), "out" if screen == "out" else "in", domain=domain, watch=watch)

    def action_move_lane(self) -> None:
        self.attention.move_lane(next(iter(self.targets()), None), self.reading.open_id)

    def action_why(self) -> None:
        self.attention.why(next(iter(self.targets()), None), self.reading.open_id)

    def action_try_rules(self) -> None:
        self.attention.try_rules()

    def action_select(self, move: int = 0) -> None:
        self.threads.select(move)

    def action_select_all(self) -> None:
        self.threads.select_all()

    def action_undo(self) -> None:
        self.triage.undo()

    def action_compose(self, kind: str) -> None:
        """Reply (all) to or forward the message under the reader's cursor (in the list: the latest of the thread
        under the list's cursor, whatever a preview shows), or write anew."""
        current = self.query_one(ThreadList).current
        thread_id = "" if kind == "new" else self.reading.open_id or (current.id if current else "")
        shown = self.query_one(Reader).current_message if self.reading.open_id else None
        self.handoff.compose(kind, thread_id, self.threads.inbox_id, shown.id if shown is not None else None)

    def action_drafts(self) -> None:
        self.handoff.drafts()

    # --- filter, back, zoom -----------------------------------------------------------------------------------

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        if isinstance(self.focused, Input):  # a / typed in a box (the binding comes first, being a priority one)
            self.focused.insert_text_at_cursor("/")
            return
        box.add_class("shown")
        self.set_focus(box)  # at once, before the keys typed after it are handed on: they are the search's

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        searching = bool(self.threads.filter_text)
        self.threads.search_for(event.value)
        if searching != bool(self.threads.filter_text):
            self.refresh_bindings()  # (Back goes to the key bar with a search, and away with none)
        self.draw_key(event.input, self.threads.widget)  # the search's state with the letter's frame, not a frame later

    @on(Input.Submitted, "#filter")
    def _filter_kept(self, event: Input.Submitted) -> None:
        if not event.value.strip():
            self.query_one("#filter", Input).remove_class("shown")
        self.set_focus(self.query_one(ThreadList))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "back":  # (the list, unfiltered, has nothing to go back from: no dead key in the bar)
            return bool(self.threads.filter_text) or self.focused is not self.query_one(ThreadList)
        if action == "filter":  # (in the reader, / is the reader's: it finds in the thread)
            return not self.reading.active
        return True

    def action_back(self) -> None:
        box = self.query_one("#filter", Input)
        reader = self.query_one(Reader)
        if reader.finding or reader.query_one("#reader-find", Input).has_focus:
            reader.end_find()
            self.set_focus(reader)
        elif box.has_focus or (self.threads.filter_text and self.focused is self.query_one(ThreadList)):
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
