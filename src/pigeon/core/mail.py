"""The mail core: one object that owns the API client and the local store for the app's life and does what the
screens and the CLI ask: sync, read threads, triage, search, save contacts, create inboxes and webhooks.

It never imports Textual. Its async methods run network calls on the caller's loop and disk work in threads; its
plain methods touch the store directly, for callers that already run in a thread (a worker making a new list).
pydantic and httpx load on first use, never before the app's first frame.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pigeon.api import PigeonError
from pigeon.config import Config
from pigeon.core import conversation
from pigeon.core.actions import Action
from pigeon.core.address_book import AddressBook
from pigeon.core.attention import Attention
from pigeon.core.errors import NotSaved, draft_reason
from pigeon.core.handoff import HandOff
from pigeon.core.listing import Listing, resolve_threads, searched
from pigeon.core.live import Live, Mode, plan, subscription_vault, vault_name
from pigeon.core.paged import LONG, latest_by_writer, loaded, stored_messages
from pigeon.core.rules import Rules
from pigeon.core.session import ClientFactory, Session, store_accepts
from pigeon.core.unreadable import skipped_words, unreadable_words
from pigeon.store.contact_drafts import ContactDraft, ContactDrafts
from pigeon.store.mailstore import MailStore, StoredThread, store_path
from pigeon.store.search import SearchQuery
from pigeon.store.sync import SyncReport, fetch_thread, index_stored, sender_label, sync
from pigeon.store.triage import Change

if TYPE_CHECKING:
    from pigeon.api.client import PigeonClient
    from pigeon.models import Contact, Inbox, Message, Thread, Unreadable, UpdateContact, WebhookSubscription
    from pigeon.models.events import WebhookEvent

__all__ = ["ContactDraft", "MailCore", "MailStore", "NotSaved", "StoredThread", "SyncReport", "sender_label"]
__all__ += ["skipped_words", "store_path", "unreadable_words"]


THREADS_HELD = 64


class MailCore(Session):
    """Give it a configuration, a store and either a ready client or a token to make one with."""

    def __init__(
        self,
        config: Config,
        store: MailStore,
        *,
        token: str | None = None,
        client: PigeonClient | None = None,
        client_factory: ClientFactory | None = None,
        clock: Callable[[], datetime] | None = None,
        remember_token: bool = True,
        save_settings: bool = True,
        live: bool | None = None,
        poll_interval: float | None = None,
        contact_drafts: ContactDrafts | None = None,
    ) -> None:
        super().__init__(
            config,
            token=token,
            client=client,
            client_factory=client_factory,
            remember_token=remember_token,
            save_settings=save_settings,
        )
        profile = config.profile_config
        self.store = store
        self.unless = store.unless  # ``with core.unless(stale):`` reads in a worker stop once ``stale()`` is true
        self.clock: Callable[[], datetime] = clock or (lambda: datetime.now(UTC))
        self.live_wanted = profile.live if live is None else live
        self.poll_interval = poll_interval or profile.poll_interval
        self.contact_drafts = contact_drafts or ContactDrafts()
        self.handoff = HandOff(config, self.clock)  # attachments, links and replies: what leaves Pigeon
        vault = subscription_vault(keeps_nothing=not save_settings)
        self.live = Live(vault, vault_name(config.profile, config.base_url))
        self.inboxes: list[Inbox] = []
        self.contacts: dict[str, Contact] = {}
        self.address_book = AddressBook(self)  # the contacts' addresses, found as a person types
        self.attention = Attention(self, screening=profile.screener)  # the Screener, the lanes, why
        self.rules = Rules(self, config.settings.rules)  # the user's rules, run on new mail
        self.messages: dict[str, Sequence[Message]] = {}  # threads read whole (long ones a page at a time), by id
        self._opened: dict[str, Thread] = {}  # threads opened before: opening one again reads no row
        self._unreadable: dict[str, list[Unreadable]] = {}  # threads' messages that could not be read, by thread
        self._indexing: asyncio.Task[int] | None = None
        self._stored_new: list[Message] = []  # new messages stored by syncs that did not finish: the next reports them

    async def close(self) -> None:
        if self._indexing is not None:  # (what is left is indexed at the next start)
            self._indexing.cancel()
            await asyncio.gather(self._indexing, return_exceptions=True)
        await self.live.stop()
        await super().close()
        self.store.close()

    async def login(
        self, base_url: str, token: str, *, plain_file_agreed: bool = False, start_afresh: bool = False
    ) -> str:
        """Check ``token`` at ``base_url`` and its account against the store (another: :class:`OtherAccount`, unless
        ``start_afresh``), then keep token and address. Raises the client's errors; returns a warning, or ``""``."""
        accept = store_accepts(self.store, start_afresh=start_afresh)
        inboxes, warning = await self.sign_in(base_url, token, plain_file_agreed=plain_file_agreed, accept=accept)
        self.inboxes, self.contacts, self.messages = inboxes, {}, {}
        self._opened.clear()
        return warning

    # --- mail -------------------------------------------------------------------------------------------------

    async def load_saved(self) -> None:
        """The inboxes and contacts the store kept (before the first sync answers)."""
        inboxes = await asyncio.to_thread(self.store.inboxes)
        if not self.inboxes:  # a sync that finished first has the fresher list
            self.inboxes = inboxes
        await self.learn_stored_contacts()

    async def learn_stored_contacts(self) -> None:
        """Remember the contacts the store has met (none known replaced): the reader names recipients by them."""
        for contact in await asyncio.to_thread(self.store.contacts):
            if contact.id:
                self.contacts.setdefault(contact.id, contact)

    async def sync(
        self, on_progress: Callable[[int, int], None] | None = None, *, index_now: bool = False
    ) -> SyncReport:
        """Bring the store up to date with the service (only what changed). The text of what came goes into the
        search index after, in the background (the app), or with the messages before this returns (``index_now``:
        the CLI; what an earlier sync left unindexed is indexed after them)."""
        client = await self.connect()
        first = not await asyncio.to_thread(self.store.screening_begun)  # (before a whole sync, all mail is new)
        also = self.live.named | await self.attention.refetched()  # (those synced leave it)
        report = await sync(
            client, self.store, on_progress=on_progress, index=index_now, new=self._stored_new, also=also
        )
        self.live.named &= also
        self._stored_new = []
        await self.attention.after_sync()
        report = await self.attention.announced(report)
        self.rules.arrived(report, first=first)
        self.inboxes = list(report.inbox_list)
        if report.changed:  # contacts that came with new mail (on a first sync, all of them)
            await self.learn_stored_contacts()
        for thread_id in report.changed:
            self.messages.pop(thread_id, None)
            self._opened.pop(thread_id, None)
            self._unreadable.pop(thread_id, None)
        indexing = self.index_behind()
        if index_now:
            await indexing
        return report

    def index_behind(self) -> asyncio.Task[int]:
        """Put the stored text not yet in the search index into it, in the background (at start: offline too)."""
        if self._indexing is None or self._indexing.done():
            self._indexing = asyncio.create_task(self._index_stored(), name="search-index")
        return self._indexing

    async def _index_stored(self) -> int:
        indexed = await index_stored(self.store)
        await self.attention.after_sorting()  # (then the threads that wait to be sorted)
        await self.rules.run_arrived()  # (then the rules, on the new mail now in the index)
        return indexed

    @property
    def indexing(self) -> bool:
        """The text of what a sync brought is still going into the search index: a word search finds less."""
        return self._indexing is not None and not self._indexing.done()

    async def indexed(self) -> None:
        """Return once the search index holds the text of everything stored so far (at once if it does)."""
        while self._indexing is not None and not self._indexing.done():
            await asyncio.wait([self._indexing])  # (a waiter cancelled leaves the indexing be, unlike gather)

    def resolve_threads(self, given: Sequence[str]) -> list[str]:
        """Thread ids from whole ids or prefixes naming one stored thread (as git's); UnknownThread, saying which."""
        return resolve_threads(self.store, given)

    def listing(
        self,
        *,
        view: str,
        query: SearchQuery | None,
        inbox_id: str | None,
        sort: str,
        selected: Callable[[str], bool] = lambda _: False,
        counted: bool = True,
    ) -> Listing:
        return Listing(
            self.store, view=view, query=query, inbox_id=inbox_id, sort=sort, now=self.clock(),
            selected=selected, counted=counted,
        )

    def view_counts(self) -> tuple[dict[str, int], dict[str, int]]:
        """The views' counts and the unread threads per inbox (in a thread: a big mailbox takes a while)."""
        now = self.clock()
        return self.store.view_counts(now), self.store.unread_by_inbox(now)

    def search(self, view: str, text: str, *, sort: str = "date", limit: int = 50) -> tuple[list[StoredThread], int]:
        """A view narrowed by a search and how many match in all (``searched``); QueryError, ValueError if bad."""
        return searched(self.store, view, text, sort=sort, limit=limit, now=self.clock())

    def stored_threads(self) -> int:
        return self.store.count("all", now=self.clock())  # (every thread the store holds)

    async def read_ahead(self, thread_id: str) -> None:
        """Hold a stored thread in memory before it is opened (J, K, the thread after e): its open reads nothing."""
        if thread_id in self.messages:
            return
        thread, messages = await self.stored_thread(thread_id)
        whole = len(messages) + len(self._unreadable.get(thread_id, ()))  # (the unreadable ones have their places)
        if thread is not None and messages and whole >= (thread.message_count or 0):
            self.keep(thread_id, messages)

    async def stored_thread(self, thread_id: str) -> tuple[Thread | None, Sequence[Message]]:
        """The thread and the messages the store (or memory) holds."""
        thread, messages = self._opened.get(thread_id), self.messages.get(thread_id) or []
        if thread is None or not messages:  # one trip to a thread for what memory does not hold
            store, known = self.store, thread

            def read() -> tuple[Thread | None, Sequence[Message]]:
                found = known or store.thread(thread_id)
                self._unreadable[thread_id] = store.unreadable_in(thread_id)
                return found, (messages or (stored_messages(store, found) if found is not None else []))

            thread, messages = await asyncio.to_thread(read)
        if thread is not None:
            self._opened[thread_id] = thread
        return thread, messages

    async def last_read(self, thread: Thread) -> datetime | None:
        """When the user last read ``thread`` (here or, as the service says, elsewhere); None: never."""
        local = await asyncio.to_thread(self.store.read_upto, thread.id or "")
        return conversation.last_read(local, thread)

    def keep(self, thread_id: str, messages: Sequence[Message]) -> None:
        """Hold a thread's messages (all of them) and learn the contacts they carry."""
        self.learn(messages)
        self._hold(thread_id, messages)

    def _hold(self, thread_id: str, messages: Sequence[Message]) -> None:
        """Keep a whole thread in memory, the most recent ``THREADS_HELD`` of them (previews add up)."""
        self.messages.pop(thread_id, None)  # (then last in, so the most recent)
        self.messages[thread_id] = messages
        while len(self.messages) > THREADS_HELD:
            self.messages.pop(next(iter(self.messages)))

    async def fetch_thread(self, thread_id: str) -> AsyncIterator[tuple[list[Message], bool]]:
        """The thread's messages from the service, page by page (what has arrived, and whether more follow);
        stored once all have arrived. A long thread is not held: it is opened again a page at a time."""
        unreadable: list[Unreadable] = []
        client = await self.connect()
        with client.for_the_user():  # ahead of a sync's fetches, and of its next page of threads
            async for loaded, more in fetch_thread(client, self.store, thread_id, unreadable):
                self._unreadable[thread_id] = list(unreadable)
                self.learn(loaded)
                if not more and len(loaded) <= LONG:
                    self._hold(thread_id, loaded)
                yield loaded, more

    def unreadable_in(self, thread_id: str) -> list[Unreadable]:
        """The messages of a thread read last (from the store or the service) that could not be read."""
        return list(self._unreadable.get(thread_id, ()))

    def learn(self, messages: Sequence[Message]) -> None:
        """Remember the contacts that messages carry (those read so far), none known replaced."""
        for contact in (m.sender.contact for m in loaded(messages) if m.sender and m.sender.contact):
            if contact.id:
                self.contacts.setdefault(contact.id, contact)

    async def find_threads(self, words: str, limit: int) -> list[tuple[str, str, datetime | None, str]]:
        """Threads whose subject has these words, newest first: ``(id, subject, last message, who)``."""
        query = SearchQuery.in_subject(words.split())
        if not query.fts():
            return []
        rows = await asyncio.to_thread(self.store.list_threads, "all", query, limit=limit, now=self.clock())
        return [(t.id, t.subject, t.last_message_at, t.who) for t in rows]

    # --- triage (in a thread: these touch the store) ---------------------------------------------------------

    def apply(
        self, action: Action, ids: Sequence[str], *, on: bool = True, until: datetime | None = None, label: str = ""
    ) -> Change:
        """Run a triage action of the registry on ``ids``: one undo step."""
        store = self.store
        if action.op == "read":
            return store.mark_read(ids, read=on)
        if action.op == "star":
            return store.star(ids, on=on)
        if action.op == "done":
            return store.done(ids, on=on)
        if action.op == "mute":
            return store.mute(ids, on=on)
        if action.op in ("snooze", "remind"):
            if until is None:
                raise ValueError(f"a {action.op} needs a time")
            reminder = action.op == "remind"
            return store.remind(self.attention.awaiting(ids), until) if reminder else store.snooze(ids, until)
        if action.op == "label":
            return store.label(ids, label, on=on)
        raise ValueError(f"{action.id} is not a triage action")

    def mark_opened(self, ids: Sequence[str]) -> Change:
        """An opened thread is read (no undo step: reading is not an action to take back)."""
        return self.store.mark_read(ids, record=False)

    def undo(self) -> Change | None:
        return self.store.undo()

    def undo_targets(self) -> list[str]:
        return self.store.undo_targets()

    # --- contacts -----------------------------------------------------------------------------------------------

    async def all_contacts(self) -> list[Contact]:
        """Every contact the store has met in synced mail (the API cannot list contacts), and those in memory."""
        await self.learn_stored_contacts()
        return list(self.contacts.values())

    async def contact_draft(self, contact_id: str | None) -> ContactDraft | None:
        return await asyncio.to_thread(self.contact_drafts.load, contact_id) if contact_id else None

    async def discard_contact_draft(self, contact_id: str) -> None:
        await asyncio.to_thread(self.contact_drafts.discard, contact_id)

    async def save_contact(self, contact_id: str, request: UpdateContact, draft: dict[str, Any]) -> Contact:
        """Send an edit. On success the new version is kept everywhere (and the draft dropped); if the service
        refuses the values, :class:`pigeon.api.Invalid` is raised; on any other failure the edit is kept as a draft
        and :class:`NotSaved` is raised."""
        from pigeon.api import Invalid

        try:
            updated = await (await self.connect()).contacts.update(contact_id, request)
        except Invalid:
            raise
        except PigeonError as exc:
            try:
                await asyncio.to_thread(self.contact_drafts.save, contact_id, draft, reason=draft_reason(exc))
            except OSError as problem:
                raise NotSaved(exc, f"Could not keep the draft on disk: {problem}") from exc
            raise NotSaved(exc) from exc
        await asyncio.to_thread(self.contact_drafts.discard, contact_id)
        self.contact_changed(updated)
        await asyncio.to_thread(self.store.put_contact, updated)
        return updated

    def contact_changed(self, contact: Contact) -> None:
        if not contact.id:
            return
        self.contacts[contact.id] = contact
        for messages in self.messages.values():
            for message in loaded(messages):
                if message.sender and message.sender.contact_id == contact.id:
                    message.sender.contact = contact

    def senders(self, thread: Thread, messages: Sequence[Message]) -> list[Contact]:
        """The known contacts who wrote a thread, latest first, the account's own inboxes left out."""
        from pigeon.models import ParticipantRole

        owner = {p.contact_id for p in thread.participants if p.role == ParticipantRole.OWNER}
        people: dict[str, Contact] = {}
        for message in latest_by_writer(messages):
            contact_id = message.sender.contact_id if message.sender else None
            contact = self.contacts.get(contact_id or "") or (message.sender.contact if message.sender else None)
            if contact is not None and contact.id and contact.id not in owner:
                people.setdefault(contact.id, contact)
        return list(people.values())

    # --- the rest of the service ----------------------------------------------------------------------------

    async def create_inbox(self, **fields: Any) -> Inbox:
        inbox = await (await self.connect()).inboxes.create(**fields)
        self.inboxes.append(inbox)
        return inbox

    async def create_webhook(self, **fields: Any) -> WebhookSubscription:
        return await (await self.connect()).webhooks.create(**fields)

    def live_plan(self) -> Mode:
        """How new mail will come, known without trying (what ``pigeon status`` says too)."""
        return plan(self.live_wanted, self.service_url, self.live.vault)

    async def start_live(self, on_event: Callable[[WebhookEvent], None]) -> Mode:
        """Webhooks when they can work; either way the caller checks for mail (less often with webhooks)."""
        planned = await asyncio.to_thread(self.live_plan)  # the keyring may be asked: not on the event loop
        self.live.name = vault_name(self.config.profile, self.service_url)
        if not planned.webhooks:
            return planned
        return await self.live.start(await self.connect(), on_event)

    async def check_live(self, stored: Iterable[Message]) -> Mode | None:
        """After a sync storing ``stored``: a silent subscription replaced (or given up); a changed mode, or None."""
        return await self.live.check(await self.connect(), stored)
