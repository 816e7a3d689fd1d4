"""Keeping the mail screen fresh: a sync when it opens and on refresh (with progress), then new mail as it
arrives: a check every ``poll_interval`` seconds (waiting longer, up to :data:`MAX_CHECK_DELAY`, while the service
fails), and verified webhook events on top when they can work (the checks then run less often, and replace a
subscription that stopped delivering). New mail is announced and the list follows a moment later (several events
in a row make one sync); a changed message is shown in place."""

from __future__ import annotations

import time
from typing import Any

from textual import work
from textual.content import Content
from textual.timer import Timer
from textual.widgets import Static

from pigeon.core.errors import PigeonError
from pigeon.core.live import BACKUP_FACTOR, Mode, parse_event
from pigeon.core.mail import skipped_words
from pigeon.sanitize import clean_line
from pigeon.tui.messages import LiveEvent, Offline
from pigeon.tui.render import sender_name
from pigeon.tui.screens.main_handoff import HandsOff
from pigeon.tui.widgets.reader import Reader
from pigeon.tui.widgets.thread_list import ThreadList

LIVE_DEBOUNCE = 0.3
PROGRESS_INTERVAL = 0.2  # seconds between two sync progress figures
PROGRESS_LIST_DELAY = 0.5  # a first sync shows the threads stored so far after this long
ANNOUNCE_AFTER = 1.5  # seconds: new mail arriving within this of the first makes one note
MAX_CHECK_DELAY = 900.0  # seconds: the longest wait between two checks while the service keeps failing


class LiveUpdates(HandsOff):
    """The mail screen's freshness (on top of its reader and list)."""

    synced: bool
    offline: bool
    live_mode: str
    _live_started: bool
    _live_timer: Timer | None
    _mode: Mode | None
    _arrived: list[tuple[str, str]]
    _announce_timer: Timer | None
    _check_timer: Timer | None
    check_delay: float
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
        """Sync the store with the service (only what changed), showing progress as threads arrive; ``timed``
        for the regular check, which schedules the next one (later while the service fails)."""
        try:
            await self._load_mail(timed)
        except PigeonError:
            if timed:
                self._schedule_check(min(self.check_delay * 2, MAX_CHECK_DELAY))
            raise
        if timed:
            self._schedule_check(self._regular_delay())

    async def _load_mail(self, timed: bool) -> None:
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
            self.set_status(Content.styled("Could not check for mail · ctrl+r to retry", "$warning"))
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
        if timed and self._mode is not None and self._mode.webhooks and await self.core.check_live(report.changed):
            self.notify("Webhook deliveries had stopped; subscribed again.", timeout=6)
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
        def deliver(data: dict[str, Any]) -> None:
            self.post_message(LiveEvent(data))

        self._mode = await self.core.start_live(deliver)
        self.live_mode = self._mode.status(self.core.poll_interval)
        self._schedule_check(self._regular_delay())
        self.update_status()

    def _regular_delay(self) -> float:
        webhooks = self._mode is not None and self._mode.webhooks
        return self.core.poll_interval * (BACKUP_FACTOR if webhooks else 1)

    def _schedule_check(self, delay: float) -> None:
        self.check_delay = delay
        if self._check_timer is not None:
            self._check_timer.stop()
        self._check_timer = self.set_timer(delay, lambda: self.load_mail(timed=True))

    def announce_new_mail(self) -> None:
        """One note for the mail that arrived together; held while a dialog is open (it never covers a question
        the user is answering) and given when the mail screen is back."""
        self._announce_timer = None
        if not self._arrived or self.app.screen is not self:  # (is_current holds under a modal too)
            return
        arrived, self._arrived = self._arrived, []
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
        from pigeon.models import MessageDirection

        parsed = parse_event(event.data)
        if parsed is None:
            return
        message = parsed.message
        if not parsed.created:
            self.show_message(message)
            return
        if message.direction != MessageDirection.OUTBOUND and self.core.config.ui.notify_new_mail:
            who = clean_line(sender_name(message, self.core.contacts), limit=40)
            what = clean_line(message.subject or "(no subject)", limit=60)
            self._arrived.append((who, what))
            if self._announce_timer is None:  # what arrives within a moment makes one note
                self._announce_timer = self.set_timer(ANNOUNCE_AFTER, self.announce_new_mail)
        if self._live_timer is not None:
            self._live_timer.stop()
        self._live_timer = self.set_timer(LIVE_DEBOUNCE, self.load_mail)
