"""The mail screen's live-updates part: a sync when the screen opens and on refresh (with progress), then new mail
as it arrives: a check every ``poll_interval`` seconds, and verified webhook events on top when they can work (the
checks then run less often, and replace a subscription that stopped delivering). Every load schedules the next
check: after a failure (the first included) it comes soon, then twice as late each time up to
:data:`MAX_CHECK_DELAY`. An event starts a sync a moment later (several in a row make one) that reads the thread it
names again: the new mail that sync stored is announced, and a changed message of the open thread is shown as
stored.

Interface: :meth:`LivePart.refresh` (ctrl+r, the first sync), :meth:`event` (a webhook delivery),
:meth:`set_offline`, :meth:`screen_back`, :meth:`cursor_moved`; :attr:`synced`, :attr:`offline`,
:attr:`check_delay`, :attr:`unannounced`.
Up: the :class:`ListShown` protocol the screen gives it."""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

from textual.content import Content
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Static

from pigeon.core.errors import ConnectionFailed, PigeonError, Unauthorized
from pigeon.core.live import BACKUP_FACTOR, Mode
from pigeon.core.mail import MailCore, skipped_words
from pigeon.sanitize import clean_line
from pigeon.tui.messages import LiveEvent
from pigeon.tui.render import sender_name
from pigeon.tui.screens.mail.part import Part
from pigeon.tui.widgets.thread_list import ThreadList

if TYPE_CHECKING:
    from pigeon.models import Message as MailMessage
    from pigeon.models.events import WebhookEvent

LIVE_DEBOUNCE = 0.3
PROGRESS_INTERVAL = 0.2  # seconds between two sync progress figures
PROGRESS_LIST_DELAY = 0.5  # a first sync shows the threads stored so far after this long
ANNOUNCE_AFTER = 1.5  # seconds: new mail arriving within this of the first makes one note
MAX_CHECK_DELAY = 900.0  # seconds: the longest wait between two checks while the service keeps failing
FIRST_RETRY = 5.0  # seconds: the first check again after a failure (sooner if poll_interval is shorter)
COUNT_DOWN_EVERY = 1.0  # seconds between two redraws of "again in N s" while checks fail


def again_in(seconds: float) -> str:
    """When the next check comes, as the status line counts it down: seconds up to 99, then whole minutes."""
    whole = max(1, math.ceil(seconds))
    return f"again in {whole} s" if whole < 100 else f"again in {math.ceil(whole / 60)} min"


def not_checked(seconds: float) -> tuple[str, str]:
    """The live mode and the status a failed check leaves, ``seconds`` before the next one."""
    again = again_in(seconds)
    return f"not checked · {again}", f"Could not check for mail · {again} · ctrl+r to retry now"


class ListShown(Protocol):
    """What live updates ask of the screen: the list and the reader shown again, and the status line."""

    def show_threads(self) -> None: ...
    def set_status(self, status: Content) -> None: ...
    def show_live_mode(self, mode: str, *, redraw: bool = True) -> None: ...
    @property
    def status(self) -> str: ...
    def threads_changed(self, ids: Iterable[str]) -> None: ...
    def words_indexed(self) -> None: ...


class LivePart(Part):
    """Keeping the mail fresh: syncs, checks and their backoff, webhook events, the offline banner, new-mail notes."""

    def __init__(self, screen: Screen[None], core: MailCore, shown: ListShown) -> None:
        super().__init__(screen, core)
        self.shown = shown
        self.synced = False
        self.offline = False
        self.check_delay = core.poll_interval  # the wait before the next check
        self._failing = False
        self._started = False
        self._mode: Mode | None = None
        self._event_timer: Timer | None = None
        self._check_timer: Timer | None = None
        self._retry_due: float | None = None  # (monotonic) when the check after a failure comes
        self._count_down_timer: Timer | None = None
        self._waiting = ("", "")  # the live mode and the status the countdown last said
        self._moved_at = 0.0  # (monotonic) when the list's cursor last moved
        self._progress_timer: Timer | None = None
        self._progress: Content | None = None  # what a sync under way last said of its progress
        self._listing = (0, 0)  # the threads a sync has listed: so far, and as the list last showed them
        self._arrived: dict[str, tuple[str, str]] = {}  # new mail to announce, by message id
        self._announce_timer: Timer | None = None

    @property
    def unannounced(self) -> list[tuple[str, str]]:
        """New mail stored but not announced yet (sender, subject): waiting for its moment, or for a dialog to
        close."""
        return list(self._arrived.values())

    @property
    def note_due(self) -> bool:
        """A note of new mail is on its way (its moment has not come)."""
        return self._announce_timer is not None

    def refresh(self) -> None:
        """Check for mail now (ctrl+r, and the first sync)."""
        threads = self.screen.query_one(ThreadList)
        if not len(threads.source):
            threads.loading = True
        self.shown.set_status(Content.styled("Checking for mail…", "italic"))
        self.load()

    def load(self, timed: bool = False) -> None:
        """Sync the store with the service (only what changed), showing progress as threads arrive; ``timed`` for
        the check a timer started. Whatever started it, it schedules the next check when it ends (this load is the
        check a pending one would make, so that one is called off: ctrl+r never makes two)."""
        self.run(self._load, timed, group="load", description="loading your mail", exclusive=True)

    async def _load(self, timed: bool) -> None:
        self._stop_check()
        retrying = timed and self._failing
        if retrying:
            self.shown.set_status(Content.styled("Checking for mail…", "italic"))
        try:
            await self._sync()
        except Exception as exc:  # whatever failed (the service, the disk), the next check is scheduled
            if isinstance(exc, Unauthorized):
                raise  # the app asks for a login: no point checking again with this token
            delay = min(self.check_delay * 2, MAX_CHECK_DELAY) if self._failing else self._first_retry()
            self._failing = True
            self._schedule_check(delay)
            self._retry_due = time.monotonic() + delay
            self._count_down_timer = self.screen.set_interval(COUNT_DOWN_EVERY, self._count_down)
            self._waiting = mode, said = not_checked(delay)
            self.shown.show_live_mode(mode)  # (what the line says till then)
            self.shown.set_status(Content.styled(said, "$text-warning"))
            if retrying and (self.offline or not isinstance(exc, ConnectionFailed)):
                return  # said at the first failure (and by the banner, when offline): not again at every try
            raise
        if self._failing:  # (no mode yet, live updates still starting: nothing said of them)
            self.shown.show_live_mode(self._mode.status(self.core.poll_interval) if self._mode is not None else "")
        self._failing = False
        self._schedule_check(self._regular_delay())

    def _first_retry(self) -> float:
        return min(self.core.poll_interval, FIRST_RETRY)

    async def _sync(self) -> None:
        announce = self.synced  # a first sync stores every message new: only later ones bring new mail
        last_shown = 0.0
        self._listing = (0, 0)

        def progress(done: int, total: int) -> None:
            nonlocal last_shown
            self._listing = (total, self._listing[1])
            if done == 0:  # the thread list has arrived: its rows now, the messages (senders, text) fill in behind
                last_shown = time.monotonic()
                self._say_progress(Content.styled(f"Syncing 0 of {total}…", "italic"))
                self._progress_refresh()
                return
            if done < total and time.monotonic() - last_shown < PROGRESS_INTERVAL:
                return  # a big first sync reports every thread: the list is drawn a few times a second, no more
            last_shown = time.monotonic()
            in_flight = self.core.in_flight_words() if done < total else ""
            said = Content.styled(f"Syncing {done} of {total}… {in_flight}".rstrip(), "italic")
            if total == self._listing[1]:
                self._say_progress(said)
            else:  # more threads listed than the list shows: said with them, when it shows them
                self._progress = said
            if self._progress_timer is None:
                self._progress_timer = self.screen.set_timer(PROGRESS_LIST_DELAY, self._progress_refresh)

        try:
            report = await self.core.sync(on_progress=progress)
        except PigeonError:
            self.shown.show_threads()  # the threads saved before the failure (the thread list comes first) are listed
            raise
        finally:
            self.screen.query_one(ThreadList).loading = False
            self._progress = None
            if self._progress_timer is not None:  # the list is shown whole now: no progress view after it
                self._progress_timer.stop()
                self._progress_timer = None
        self.set_offline(False)
        if report.skipped:
            self.screen.notify(skipped_words(report.skipped), severity="warning", timeout=10)
        self.synced = True
        self.shown.show_threads()
        if self.core.indexing:
            self.run(self._index_filled, group="index", description="filling the search index", exclusive=True)
        self.shown.threads_changed(report.changed)
        if announce:
            self.stored_new_mail(report.new_messages, report.screened)
        if self._mode is not None and self._mode.webhooks:
            await self._check_deliveries(report.new_messages)
        if not self._started:
            self._started = True
            self.run(self._start_live, group="live", description="starting live updates", exclusive=True)

    def index_behind(self) -> None:
        """Index what the store holds unindexed (what the last run stored and did not index before it ended), with
        or without the service; a word search shown meanwhile runs again after."""
        self.core.index_behind()
        self.run(self._index_filled, group="index", description="filling the search index", exclusive=True)

    async def _index_filled(self) -> None:
        """Once the text of new mail is in the search index, a word search shown meanwhile is run again."""
        await self.core.indexed()
        self.shown.words_indexed()

    def _say_progress(self, status: Content) -> None:
        self._progress = status
        self.shown.set_status(status)

    def _progress_refresh(self) -> None:
        self._progress_timer = None
        self._listing = (self._listing[0], self._listing[0])
        self.screen.query_one(ThreadList).loading = False  # rows to show: no loading cover over them
        self.shown.show_threads()
        if self._progress is not None:  # the count the list says as it shows gives way to the sync's progress
            self.shown.set_status(self._progress)

    def set_offline(self, offline: bool) -> None:
        """The banner that says the service cannot be reached (and that what was loaded stays readable)."""
        self.offline = offline
        banner = self.screen.query_one("#offline", Static)
        banner.set_class(offline, "shown")
        if offline:
            text = (
                f"Offline: cannot reach {self.core.service_url}. What was loaded stays readable. Press ctrl+r to retry."
            )
            banner.update(Content.styled(clean_line(text), "bold"))

    async def _start_live(self) -> None:
        screen = self.screen

        def deliver(webhook: WebhookEvent) -> None:
            screen.post_message(LiveEvent(webhook))

        self._mode = await self.core.start_live(deliver)
        self._schedule_check(self._regular_delay())
        self.shown.show_live_mode(self._mode.status(self.core.poll_interval))
        if self._mode.warn:
            self.screen.notify(
                clean_line(f"No live updates: {self._mode.why}. Checking for mail every {self.check_delay:g} s."),
                severity="warning",
                timeout=10,
                markup=False,
            )

    async def _check_deliveries(self, stored: tuple[MailMessage, ...]) -> None:
        """Replace a webhook subscription whose deliveries stopped (or give webhooks up), and say so."""
        mode = await self.core.check_live(stored)
        if mode is None:
            return
        self._mode = mode
        self.shown.show_live_mode(mode.status(self.core.poll_interval))
        if mode.webhooks:
            self.screen.notify("Webhook deliveries had stopped; subscribed again.", timeout=6)
        else:
            self.screen.notify(
                f"Webhook deliveries stopped: {mode.why}. Checking for mail instead.", timeout=8, markup=False
            )

    def _regular_delay(self) -> float:
        webhooks = self._mode is not None and self._mode.webhooks
        return self.core.poll_interval * (BACKUP_FACTOR if webhooks else 1)

    def _schedule_check(self, delay: float) -> None:
        self.check_delay = delay
        self._stop_check()
        self._check_timer = self.screen.set_timer(delay, lambda: self.load(timed=True))

    def _stop_check(self) -> None:
        if self._check_timer is not None:
            self._check_timer.stop()
            self._check_timer = None
        self._retry_due = None
        if self._count_down_timer is not None:
            self._count_down_timer.stop()
            self._count_down_timer = None

    def cursor_moved(self) -> None:
        """The list's cursor moved: the countdown waits for it to rest (a key's frame carries the key's change
        alone, and the line catches up a second later)."""
        self._moved_at = time.monotonic()

    def _count_down(self) -> None:
        """The wait until the next check, said again as it shortens: in the live mode, and in the failure's
        status while that is what the line shows."""
        if self._retry_due is None or time.monotonic() - self._moved_at < COUNT_DOWN_EVERY:
            return
        (was_mode, was_said), (mode, said) = self._waiting, not_checked(self._retry_due - time.monotonic())
        if mode == was_mode:
            return
        self._waiting = (mode, said)
        shown = self.shown.status  # (another status said meanwhile, a search's error, stays said)
        self.shown.show_live_mode(mode, redraw=shown.endswith(was_mode))
        if shown == was_said:
            self.shown.set_status(Content.styled(said, "$text-warning"))

    def stored_new_mail(self, stored: tuple[MailMessage, ...], screened: frozenset[str] = frozenset()) -> None:
        """The mail a sync stored new, to announce (each message once; what arrives within a moment makes one
        note): only what the store now holds is ever announced, whatever the deliveries said. A new sender's
        (``screened``: their threads) is said to wait in the Screener."""
        from pigeon.models import MessageDirection

        if not self.core.config.ui.notify_new_mail:
            return
        for message in stored:
            if message.direction == MessageDirection.OUTBOUND or not message.id or message.id in self._arrived:
                continue
            who = clean_line(sender_name(message, self.core.contacts), limit=40)
            what = clean_line(message.subject or "(no subject)", limit=60)
            if message.thread_id in screened:
                what = f"{what} (in the Screener: S)"
            self._arrived[message.id] = (who, what)
        if self._arrived and self._announce_timer is None:
            self._announce_timer = self.screen.set_timer(ANNOUNCE_AFTER, self.announce_new_mail)

    def announce_new_mail(self) -> None:
        """One note for the mail that arrived together; held while a dialog is open (it never covers a question
        the user is answering) and given when the mail screen is back."""
        self._announce_timer = None
        if not self._arrived or not self.screen.is_active:  # (is_current holds under a modal too)
            return
        arrived = list(self._arrived.values())
        self._arrived = {}
        if len(arrived) == 1:
            who, what = arrived[0]
            self.screen.notify(f"{who}: {what}", title="New mail", timeout=4, markup=False)
            return
        senders = list(dict.fromkeys(who for who, _ in arrived))
        named = ", ".join(senders[:3]) + (" and others" if len(senders) > 3 else "")
        self.screen.notify(f"{len(arrived)} new messages, from {named}", title="New mail", timeout=4, markup=False)

    def screen_back(self) -> None:
        """The mail screen is on top again: a note held meanwhile is given."""
        if self._arrived:
            self.announce_new_mail()

    def event(self, webhook: WebhookEvent) -> None:
        """A verified delivery, whole or thin: a reason to sync a moment later (several in a row make one), never
        mail to show. That sync reads the thread it names again, so a changed message of the open thread is shown
        from the store, and new mail is announced from what it stored."""
        if not webhook.thread_id:
            return
        self.core.live.name_thread(webhook)
        if self._event_timer is not None:
            self._event_timer.stop()
        self._event_timer = self.screen.set_timer(LIVE_DEBOUNCE, self.load)
