"""Keeping the mail screen fresh: a sync when it opens and on refresh (with progress), then new mail as it
arrives: a check every ``poll_interval`` seconds, and verified webhook events on top when they can work (the checks
then run less often, and replace a subscription that stopped delivering). Every load schedules the next check: after
a failure (the first included) it comes soon, then twice as late each time up to :data:`MAX_CHECK_DELAY`. An event
starts a sync a moment later (several in a row make one) that reads the thread it names again: the new mail that
sync stored is announced, and a changed message of the open thread is shown as stored."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual import work
from textual.content import Content
from textual.timer import Timer
from textual.widgets import Static

from pigeon.core.errors import ConnectionFailed, PigeonError, Unauthorized
from pigeon.core.live import BACKUP_FACTOR, Mode
from pigeon.core.mail import skipped_words
from pigeon.sanitize import clean_line
from pigeon.tui.messages import LiveEvent, Offline
from pigeon.tui.render import sender_name
from pigeon.tui.screens.main_handoff import HandsOff
from pigeon.tui.widgets.reader import Reader
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


class LiveUpdates(HandsOff):
    """The mail screen's freshness (on top of its reader and list)."""

    synced: bool
    offline: bool
    live_mode: str
    _live_started: bool
    _live_timer: Timer | None
    _mode: Mode | None
    _arrived: dict[str, tuple[str, str]]
    _announce_timer: Timer | None
    _check_timer: Timer | None
    check_delay: float
    _failing: bool
    _progress_timer: Timer | None

    def action_refresh(self) -> None:
        self.refresh_mail()

    def refresh_mail(self) -> None:
        threads = self.query_one(ThreadList)
        if not len(threads.source):
            threads.loading = True
        self.set_status(Content.styled("Checking for mail…", "italic"))
        self.load_mail()

    @work(exclusive=True, group="load", exit_on_error=False, description="loading your mail")
    async def load_mail(self, timed: bool = False) -> None:
        """Sync the store with the service (only what changed), showing progress as threads arrive; ``timed`` for
        the check a timer started. Whatever started it, it schedules the next check when it ends (this load is the
        check a pending one would make, so that one is called off: ctrl+r never makes two)."""
        self._stop_check()
        retrying = timed and self._failing
        if retrying:
            self.set_status(Content.styled("Checking for mail…", "italic"))
        try:
            await self._load_mail()
        except Exception as exc:  # whatever failed (the service, the disk), the next check is scheduled
            if isinstance(exc, Unauthorized):
                raise  # the app asks for a login: no point checking again with this token
            delay = min(self.check_delay * 2, MAX_CHECK_DELAY) if self._failing else self._first_retry()
            self._failing = True
            self._schedule_check(delay)
            self.set_status(
                Content.styled(f"Could not check for mail · again in {delay:g} s · ctrl+r to retry now", "$warning")
            )
            if retrying and (self.offline or not isinstance(exc, ConnectionFailed)):
                return  # said at the first failure (and by the banner, when offline): not again at every try
            raise
        self._failing = False
        self._schedule_check(self._regular_delay())

    def _first_retry(self) -> float:
        return min(self.core.poll_interval, FIRST_RETRY)

    async def _load_mail(self) -> None:
        announce = self.synced  # a first sync stores every message new: only later ones bring new mail
        last_shown = 0.0

        def progress(done: int, total: int) -> None:
            nonlocal last_shown
            if done == 0:  # the thread list has arrived: its rows now, the messages (senders, text) fill in behind
                last_shown = time.monotonic()
                self.set_status(Content.styled(f"Syncing 0 of {total}…", "italic"))
                self._progress_refresh()
                return
            if done < total and time.monotonic() - last_shown < PROGRESS_INTERVAL:
                return  # a big first sync reports every thread: the list is drawn a few times a second, no more
            last_shown = time.monotonic()
            self.set_status(Content.styled(f"Syncing {done} of {total}…", "italic"))
            if self._progress_timer is None:
                self._progress_timer = self.set_timer(PROGRESS_LIST_DELAY, self._progress_refresh)

        try:
            report = await self.core.sync(on_progress=progress)
        except PigeonError:
            self.show_threads()  # the threads saved before the failure (the thread list comes first) are listed
            raise
        finally:
            self.query_one(ThreadList).loading = False
            if self._progress_timer is not None:  # the list is shown whole now: no progress view after it
                self._progress_timer.stop()
                self._progress_timer = None
        self.set_offline(False)
        if report.skipped:
            self.notify(skipped_words(report.skipped), severity="warning", timeout=10)
        self.synced = True
        self.show_threads()
        if self.core.indexing:
            self.index_filled()
        reader = self.query_one(Reader)
        if reader.thread is not None and reader.thread.id in report.changed:
            self.load_thread(reader.thread.id or "", mark_read=self.focused is reader)
        if announce:
            self.stored_new_mail(report.new_messages)
        if self._mode is not None and self._mode.webhooks:
            await self._check_deliveries(report.new_messages)
        if not self._live_started:
            self._live_started = True
            self.start_live()

    @work(exclusive=True, group="index", exit_on_error=False, description="filling the search index")
    async def index_filled(self) -> None:
        """Once the text of new mail is in the search index, a word search shown meanwhile (which found less, and
        said so) is run again."""
        await self.core.indexed()
        if self.filter_text:
            self.show_threads()

    def _progress_refresh(self) -> None:
        self._progress_timer = None
        self.query_one(ThreadList).loading = False  # rows to show: no loading cover over them
        self.show_threads()

    def set_offline(self, offline: bool) -> None:
        """The banner that says the service cannot be reached (and that what was loaded stays readable)."""
        self.offline = offline
        banner = self.query_one("#offline", Static)
        banner.set_class(offline, "shown")
        if offline:
            text = (
                f"Offline: cannot reach {self.core.service_url}. What was loaded stays readable. Press ctrl+r to retry."
            )
            banner.update(Content.styled(clean_line(text), "bold"))

    def on_offline(self, event: Offline) -> None:
        self.set_offline(True)

    @work(exclusive=True, group="live", exit_on_error=False, description="starting live updates")
    async def start_live(self) -> None:
        def deliver(webhook: WebhookEvent) -> None:
            self.post_message(LiveEvent(webhook))

        self._mode = await self.core.start_live(deliver)
        self.live_mode = self._mode.status(self.core.poll_interval)
        self._schedule_check(self._regular_delay())
        self.update_status()
        if self._mode.warn:
            self.notify(
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
        self.live_mode = mode.status(self.core.poll_interval)
        self.update_status()
        if mode.webhooks:
            self.notify("Webhook deliveries had stopped; subscribed again.", timeout=6)
        else:
            self.notify(f"Webhook deliveries stopped: {mode.why}. Checking for mail instead.", timeout=8, markup=False)

    def _regular_delay(self) -> float:
        webhooks = self._mode is not None and self._mode.webhooks
        return self.core.poll_interval * (BACKUP_FACTOR if webhooks else 1)

    def _schedule_check(self, delay: float) -> None:
        self.check_delay = delay
        self._stop_check()
        self._check_timer = self.set_timer(delay, lambda: self.load_mail(timed=True))

    def _stop_check(self) -> None:
        if self._check_timer is not None:
            self._check_timer.stop()
            self._check_timer = None

    def stored_new_mail(self, stored: tuple[MailMessage, ...]) -> None:
        """The mail a sync stored new, to announce (each message once; what arrives within a moment makes one
        note): only what the store now holds is ever announced, whatever the deliveries said."""
        from pigeon.models import MessageDirection

        if not self.core.config.ui.notify_new_mail:
            return
        for message in stored:
            if message.direction == MessageDirection.OUTBOUND or not message.id or message.id in self._arrived:
                continue
            who = clean_line(sender_name(message, self.core.contacts), limit=40)
            what = clean_line(message.subject or "(no subject)", limit=60)
            self._arrived[message.id] = (who, what)
        if self._arrived and self._announce_timer is None:
            self._announce_timer = self.set_timer(ANNOUNCE_AFTER, self.announce_new_mail)

    def announce_new_mail(self) -> None:
        """One note for the mail that arrived together; held while a dialog is open (it never covers a question
        the user is answering) and given when the mail screen is back."""
        self._announce_timer = None
        if not self._arrived or self.app.screen is not self:  # (is_current holds under a modal too)
            return
        arrived = list(self._arrived.values())
        self._arrived = {}
        if len(arrived) == 1:
            who, what = arrived[0]
            self.notify(f"{who}: {what}", title="New mail", timeout=4, markup=False)
            return
        senders = list(dict.fromkeys(who for who, _ in arrived))
        named = ", ".join(senders[:3]) + (" and others" if len(senders) > 3 else "")
        self.notify(f"{len(arrived)} new messages, from {named}", title="New mail", timeout=4, markup=False)

    def on_screen_resume(self) -> None:
        if self._arrived:
            self.announce_new_mail()

    def on_live_event(self, event: LiveEvent) -> None:
        """A verified delivery, whole or thin: a reason to sync a moment later (several in a row make one), never
        mail to show. That sync reads the thread it names again, so a changed message of the open thread is shown
        from the store, and new mail is announced from what it stored."""
        if not event.webhook.thread_id:
            return
        self.core.live.name_thread(event.webhook)
        if self._live_timer is not None:
            self._live_timer.stop()
        self._live_timer = self.set_timer(LIVE_DEBOUNCE, self.load_mail)
