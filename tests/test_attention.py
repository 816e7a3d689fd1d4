"""The Screener, lanes, Owed and Waiting against the reference service: decisions written to the sender's contact
and honoured by a second profile on the account, by address and by domain, kept locally when there is no contact;
why a thread is where it is; kept-out mail never announced; a store from an older Pigeon sorted and screened."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from pigeon.api import PigeonClient
from pigeon.config import load_config
from pigeon.core.attention import NOT_STORED
from pigeon.core.mail import MailCore
from pigeon.models import Message
from pigeon.store.mailstore import MailStore
from pigeon.store.screening import DOMAIN_KEY, LANE_KEY, SCREEN_KEY
from pigeon_service.demo_newcomers import NEWCOMERS, newcomer_thread
from tests.server.conftest import NOW, Service, make_service

NEWSLETTER, PERSON, RECEIPT, ALERT = NEWCOMERS
Cores = Callable[..., MailCore]
PATCHED: list[str] = []
"""The contact updates the cores' service was sent, in order."""


@pytest.fixture
def service() -> Service:
    return make_service()


@pytest.fixture
async def cores(service: Service, tmp_path: Path) -> AsyncIterator[Cores]:
    made: list[MailCore] = []

    def core(name: str = "one", *, screener: bool = True, refusing: bool = False) -> MailCore:
        inner = httpx.ASGITransport(app=service.app)

        class Refusing(httpx.AsyncBaseTransport):  # a service that takes no contact update
            async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
                if request.method == "PATCH":
                    PATCHED.append(request.url.path)
                if refusing and request.method == "PATCH":
                    return httpx.Response(503, json={"title": "Service Unavailable"})
                return await inner.handle_async_request(request)

        http = httpx.AsyncClient(transport=Refusing())
        client = PigeonClient("http://s.test", service.alice.token, http_client=http, max_retries=0)
        file = tmp_path / f"{name}.toml"
        file.write_text(f"[profiles.default]\nscreener = {str(screener).lower()}\n")
        config = load_config(file, base_url="http://s.test")
        made.append(MailCore(config, MailStore(tmp_path / f"{name}.sqlite3"), client=client, save_settings=False))
        made[-1].clock = lambda: NOW
        return made[-1]

    yield core
    for each in made:
        await each.close()


def ids(core: MailCore, view: str) -> list[str]:
    return [t.id for t in core.store.list_threads(view, limit=1000, now=NOW)]


def arrive(service: Service, spec: dict[str, str], *, contact: bool = True) -> Message:
    message = newcomer_thread(service.db, None, service.alice.id, spec, contact=contact)
    assert message is not None
    assert message.thread_id
    return message


def contact_metadata(service: Service, address: str) -> dict[str, Any]:
    with service.db.transaction() as conn:
        row = conn.execute(
            "SELECT metadata FROM contacts WHERE account_id = ? AND emails LIKE ?", (service.alice.id, f"%{address}%")
        ).fetchone()
    return dict(json.loads(row[0] or "{}"))


async def test_mail_had_at_the_first_sync_is_let_in_and_a_new_sender_waits(service: Service, cores: Cores) -> None:
    core = cores()
    await core.sync()
    counts = core.store.view_counts(NOW)
    assert counts["screener"] == 0
    assert counts["inbox"] == 25
    new = arrive(service, PERSON)
    report = await core.sync()
    assert ids(core, "screener") == [new.thread_id]
    assert new.thread_id not in ids(core, "inbox")
    assert new.thread_id in ids(core, "all")
    assert report.screened == {new.thread_id}  # (announced as waiting in the Screener)


async def test_letting_in_is_written_to_the_contact_and_honoured_by_another_profile(
    service: Service, cores: Cores
) -> None:
    here, there = cores("here"), cores("there")
    await here.sync()
    await there.sync()
    new = arrive(service, NEWSLETTER)
    await here.sync()
    await there.sync()
    assert ids(there, "screener") == [new.thread_id]
    ruling = await here.attention.screen(new.thread_id or "", "in")
    assert ruling.apply() == 1
    assert contact_metadata(service, NEWSLETTER["address"])[SCREEN_KEY] == "in"
    assert new.thread_id in ids(here, "newsletters")
    assert not ids(here, "screener")
    assert ruling.words(1) == "Let in: hello@tidepool.example (1 thread)"
    await there.sync()  # the thread waiting there is fetched again: its sender's contact says "in"
    assert not ids(there, "screener")
    assert new.thread_id in ids(there, "inbox")


async def test_keeping_out_a_whole_domain_keeps_its_next_sender_out_silently(service: Service, cores: Cores) -> None:
    core = cores()
    await core.sync()
    first = arrive(service, NEWSLETTER)
    await core.sync()
    ruling = await core.attention.screen(first.thread_id or "", "out", domain=True)
    ruling.apply()
    assert contact_metadata(service, NEWSLETTER["address"])[DOMAIN_KEY] == {"tidepool.example": "out"}
    assert ids(core, "kept-out") == [first.thread_id]
    other = arrive(service, {**PERSON, "address": "editor@tidepool.example", "subject": "A note from the editor"})
    report = await core.sync()
    assert set(ids(core, "kept-out")) == {first.thread_id, other.thread_id}
    assert other.thread_id not in ids(core, "unread") + ids(core, "inbox") + ids(core, "screener")
    assert all(m.thread_id != other.thread_id for m in report.new_messages)  # kept-out mail never notifies
    # an address's own decision wins over its domain's
    ruling = await core.attention.screen(other.thread_id or "", "in")
    ruling.apply()
    assert ids(core, "kept-out") == [first.thread_id]


async def test_a_sender_without_a_contact_is_decided_here_and_the_app_says_so(service: Service, cores: Cores) -> None:
    core = cores()
    await core.sync()
    new = arrive(service, ALERT, contact=False)
    await core.sync()
    ruling = await core.attention.screen(new.thread_id or "", "out")
    assert ruling.contact is None
    ruling.apply()
    assert ids(core, "kept-out") == [new.thread_id]
    words = ruling.words(1)
    assert words.startswith("Kept out: no-reply@status.example (1 thread)")
    assert "Kept on this machine only: the service has no contact for this sender" in words
    why = await core.attention.why(new.thread_id or "")
    assert why[0] == "Kept out: no-reply@status.example kept out on this machine."


async def test_why_offers_only_the_screeners_moves_that_change_something(service: Service, cores: Cores) -> None:
    core = cores()
    await core.sync()
    new = arrive(service, PERSON)
    await core.sync()
    thread_id = new.thread_id or ""
    assert (await core.attention.explained(thread_id))[1] == ["lane", "in", "out"]  # waiting in the Screener: either
    (await core.attention.screen(thread_id, "in")).apply()
    assert (await core.attention.explained(thread_id))[1] == ["lane", "out"]  # let in: not "let in" again
    (await core.attention.screen(thread_id, "out")).apply()
    assert (await core.attention.explained(thread_id))[1] == ["lane", "in"]
    assert await core.attention.explained("no-such-thread") == ([NOT_STORED], [])


async def test_a_service_that_cannot_take_the_decision_leaves_it_kept_here(service: Service, cores: Cores) -> None:
    core = cores(refusing=True)
    await core.sync()
    new = arrive(service, PERSON)
    await core.sync()
    ruling = await core.attention.screen(new.thread_id or "", "in")
    ruling.apply()
    assert ruling.contact is None
    assert "the contact could not be updated" in ruling.why
    assert new.thread_id in ids(core, "inbox")


async def test_writing_to_a_new_sender_lets_them_in(service: Service, cores: Cores) -> None:
    core = cores()
    await core.sync()
    new = arrive(service, PERSON)
    await core.sync()
    assert ids(core, "screener") == [new.thread_id]
    service.add_message(
        service.alice,
        new.thread_id or "",
        direction="MESSAGE_DIRECTION_OUTBOUND",
        sender_address="you@pigeon.example",
        recipients=[{"raw_address": PERSON["address"], "type": "RECIPIENT_TYPE_TO"}],
    )
    await core.sync()
    assert not ids(core, "screener")
    assert new.thread_id in ids(core, "waiting")  # the user wrote last: waiting for an answer
    said = await core.attention.why(new.thread_id or "")
    assert said[0] == f"In the Inbox: you have written to {PERSON['address']}."


async def test_writing_to_a_sender_sorts_their_other_threads_again(service: Service, cores: Cores) -> None:
    core = cores(screener=False)
    await core.sync()
    sale = {**PERSON, "address": "sam@shop.example", "subject": "Spring sale", "body": "Ten percent off. Unsubscribe."}
    letter = arrive(service, sale)
    await core.sync()
    await core.indexed()
    assert letter.thread_id in ids(core, "newsletters")  # an unsubscribe link, and nothing of a person
    other = arrive(service, PERSON)
    service.add_message(
        service.alice,
        other.thread_id or "",
        direction="MESSAGE_DIRECTION_OUTBOUND",
        sender_address="you@pigeon.example",
        recipients=[{"raw_address": "sam@shop.example", "type": "RECIPIENT_TYPE_TO"}],
    )
    await core.sync()
    await core.indexed()
    assert letter.thread_id in ids(core, "people")  # the user wrote to Sam since: Sam's mail is sorted again
    said = await core.attention.why(letter.thread_id or "")
    assert "you have written to sam@shop.example" in " ".join(said)


async def test_the_sidebar_counts_what_each_view_lists(service: Service, cores: Cores) -> None:
    from pigeon.store.predicates import VIEWS

    core = cores()
    await core.sync()
    for spec in NEWCOMERS:
        arrive(service, spec)
    await core.sync()
    await core.indexed()
    core.store.decide(ALERT["address"], now=NOW, screen="out")  # one kept out, three left waiting
    assert len(ids(core, "screener")) == len(NEWCOMERS) - 1
    everything = ids(core, "all")
    core.store.done(everything[:3])
    core.store.star(everything[2:6])
    core.store.mute(everything[6:8])
    core.store.mark_read(everything[8:14])
    core.store.snooze(everything[14:16], NOW + timedelta(days=1))
    counts = core.store.view_counts(NOW)
    assert counts["kept-out"] == 1
    assert all(counts[view] for view in ("screener", "done", "starred", "snoozed", "people", "owed", "waiting"))
    for view in VIEWS:
        listed = ids(core, view)
        assert counts[view] == len(listed) == core.store.count(view, now=NOW), view


async def test_moving_a_thread_to_a_lane_teaches_its_sender(service: Service, cores: Cores) -> None:
    core = cores()
    await core.sync()
    new = arrive(service, NEWSLETTER)
    await core.sync()
    (await core.attention.screen(new.thread_id or "", "in")).apply()
    assert new.thread_id in ids(core, "newsletters")
    why = await core.attention.why(new.thread_id or "")
    assert why[1] == "Lane Newsletters, from what the mail shows:"
    assert "- it has an unsubscribe link" in why
    ruling = await core.attention.teach(new.thread_id or "", "people")
    ruling.apply()
    assert contact_metadata(service, NEWSLETTER["address"])[LANE_KEY] == "people"
    assert new.thread_id in ids(core, "people")
    assert new.thread_id not in ids(core, "newsletters")
    why = await core.attention.why(new.thread_id or "")
    assert why[1] == (
        "Lane People: hello@tidepool.example taught to go to People as their contact says (any machine on your "
        "account)."
    )
    with pytest.raises(ValueError, match="unknown lane"):
        await core.attention.teach(new.thread_id or "", "spam")


async def test_the_screener_turned_off_holds_nothing(service: Service, cores: Cores) -> None:
    core = cores(screener=False)
    await core.sync()
    new = arrive(service, PERSON)
    await core.sync()
    assert not ids(core, "screener")
    assert new.thread_id in ids(core, "inbox")
    assert (await core.attention.why(new.thread_id or ""))[0] == "In the Inbox: the Screener is off."


async def test_owed_is_oldest_first_and_waiting_is_what_you_wrote_last(cores: Cores) -> None:
    core = cores()
    await core.sync()
    await core.indexed()  # (and the threads it left to be sorted again sorted: lists and counts read alike)
    owed = core.store.list_threads("owed", limit=100, now=NOW)
    assert owed
    assert [t.last_message_at for t in owed] == sorted(t.last_message_at for t in owed if t.last_message_at)
    for thread_id in [t.id for t in owed]:
        _, messages = await core.stored_thread(thread_id)
        assert messages[-1].direction != "MESSAGE_DIRECTION_OUTBOUND"
    waiting = ids(core, "waiting")
    assert waiting
    assert not set(waiting) & {t.id for t in owed}
    for thread_id in waiting:
        _, messages = await core.stored_thread(thread_id)
        assert messages[-1].direction == "MESSAGE_DIRECTION_OUTBOUND"
    counts = core.store.view_counts(NOW)
    assert counts["owed"] == len(owed)
    assert counts["waiting"] == len(waiting)
    lanes = sum(counts[lane] for lane in ("people", "newsletters", "notifications", "receipts"))
    assert lanes == counts["inbox"]  # every thread of the inbox is in one lane
    owes = "Owed: a person wrote the last message, and you have not answered it yet."
    waits = "Waiting: you wrote the last message, and no answer has come yet."
    assert owes in await core.attention.why(owed[0].id or "")  # "why is this here?" says why it is in each
    assert waits not in await core.attention.why(owed[0].id or "")
    assert waits in await core.attention.why(waiting[0])
    assert owes not in await core.attention.why(waiting[0])


async def test_a_store_from_an_older_pigeon_is_sorted_then_screened(service: Service, cores: Cores) -> None:
    core = cores()
    await core.sync()
    with core.store.transaction() as conn:  # what the migration leaves: threads to sort, no screening yet
        conn.execute("UPDATE threads SET sorted = 0, sender = '', lane = '' WHERE synced_upto IS NOT NULL")
        conn.execute("DELETE FROM lanes")
        conn.execute("DELETE FROM senders")
        conn.execute("UPDATE screening SET since = NULL")
    assert core.store.view_counts(NOW)["people"] == 0
    assert not core.store.begin_screening(NOW)  # not while threads wait to be sorted
    await core.sync()
    await core.indexed()
    counts = core.store.view_counts(NOW)
    assert counts["screener"] == 0
    assert counts["people"] > 0
    new = arrive(service, PERSON)
    await core.sync()
    assert ids(core, "screener") == [new.thread_id]


async def test_a_reminder_brings_a_sent_thread_back_if_no_answer_came_by_then(service: Service, cores: Cores) -> None:
    from datetime import timedelta

    from pigeon.core.actions import BY_ID, describe
    from pigeon.core.listing import Listing

    core = cores()
    await core.sync()
    remind = BY_ID["triage.remind"]
    quiet, answered = ids(core, "waiting")[:2]
    due = NOW + timedelta(days=1)
    change = core.apply(remind, [quiet, answered], until=due)
    assert change.count == 2
    assert describe(change).endswith("if no answer comes: 2 threads")
    assert quiet not in ids(core, "inbox")  # away until it is due
    assert quiet in ids(core, "waiting")
    service.add_message(service.alice, answered, subject="Re: the answer")  # an answer comes before it is due
    await core.sync()
    later = NOW + timedelta(days=2)
    inbox = {t.id: t for t in core.store.list_threads("inbox", limit=1000, now=later)}
    assert inbox[quiet].reminded  # due, and no answer: back, and said so
    assert not inbox[answered].reminded  # the answer brought it back, and ended the reminder
    assert [t.id for t in core.store.list_threads("all", "is:reminded", limit=100, now=later)] == [quiet]
    listing = Listing(core.store, view="inbox", query=None, inbox_id=None, sort="date", now=later)
    rows = {listing.row(n).id: listing.row(n) for n in range(len(listing))}
    assert rows[quiet].where == "no answer"
    assert rows[answered].where == ""
    assert quiet not in [t.id for t in core.store.list_threads("inbox", limit=1000, now=due - timedelta(minutes=1))]
    owed = ids(core, "owed")[0]
    with pytest.raises(ValueError, match="the last message of this thread is not yours"):
        core.apply(remind, [owed], until=due)
    assert core.undo() == change  # one undo step
    assert quiet in [t.id for t in core.store.list_threads("inbox", limit=1000, now=NOW)]


async def test_teaching_a_lane_leaves_the_sender_let_in(service: Service, cores: Cores) -> None:
    core = cores()
    await core.sync()
    thread = ids(core, "newsletters")[0]  # a sender of the mail there was when screening began
    (await core.attention.teach(thread, "receipts")).apply()
    assert thread in ids(core, "receipts")
    assert not ids(core, "screener")
    (await core.attention.screen(thread, "in")).apply()
    (await core.attention.teach(thread, "people")).apply()  # both decisions kept, each its own
    why = await core.attention.why(thread)
    assert why[0].endswith("let in on this machine.")  # (the demo's newsletters have no contact)
    assert why[1].endswith("taught to go to People on this machine.")
    # a sender with a contact, let in because their mail was there at the start: the contact's lane alone
    for candidate in ids(core, "people"):
        if (await core.attention.why(candidate))[0].endswith("when the Screener started."):
            break
    ruling = await core.attention.teach(candidate, "receipts")
    assert ruling.contact is not None
    ruling.apply()
    assert candidate in ids(core, "receipts")
    assert not ids(core, "screener")


async def test_a_domain_kept_out_elsewhere_wins_over_being_there_at_the_start(service: Service, cores: Cores) -> None:
    here = cores("here")
    await here.sync()
    first = arrive(service, NEWSLETTER)
    await here.sync()
    (await here.attention.screen(first.thread_id or "", "out", domain=True)).apply()
    other = arrive(service, {**PERSON, "address": "editor@tidepool.example", "subject": "From the editor"})
    there = cores("there")  # a new machine: its first sync lets in every sender it finds, but not a domain kept out
    await there.sync()
    assert set(ids(there, "kept-out")) == {first.thread_id, other.thread_id}


async def test_mail_fetched_before_a_decision_and_stored_after_does_not_undo_it(service: Service, cores: Cores) -> None:
    core = cores()
    await core.sync()
    new = arrive(service, NEWSLETTER)
    await core.sync()
    _, before = await core.stored_thread(new.thread_id or "")
    stale = [m.model_copy(deep=True) for m in before]  # the messages as a fetch begun now would bring them
    (await core.attention.screen(new.thread_id or "", "in")).apply()
    assert new.thread_id in ids(core, "newsletters")
    core.store.put_messages(new.thread_id or "", stale, who="Tidepool", recipients="")
    assert new.thread_id in ids(core, "newsletters")
    assert not ids(core, "screener")


async def test_a_sync_looks_again_at_a_few_waiting_threads_at_a_time(service: Service, cores: Cores) -> None:
    from pigeon.core.attention import REFETCHED

    core = cores()
    await core.sync()
    for n in range(REFETCHED + 2):
        arrive(service, {**PERSON, "address": f"new{n}@people.example"})
    await core.sync()
    assert len(ids(core, "screener")) == REFETCHED + 2
    seen: set[str] = set()
    for _ in range(2):
        report = await core.sync()
        assert len(report.changed) <= REFETCHED
        seen |= set(report.changed)
    assert seen == set(ids(core, "screener"))  # (in turns: every waiting thread is looked at)


async def test_letting_in_several_threads_of_one_sender_is_one_decision(service: Service, cores: Cores) -> None:
    core = cores()
    await core.sync()
    first, second = arrive(service, PERSON), arrive(service, {**PERSON, "subject": "And another thing"})
    await core.sync()
    PATCHED.clear()
    rulings = await core.attention.screen_all([first.thread_id or "", second.thread_id or ""], "in")
    assert [r.key for r in rulings] == [PERSON["address"]]
    assert len(PATCHED) == 1  # one update of the contact, not one a thread
    assert rulings[0].apply() == 2
    assert not ids(core, "screener")


async def test_a_thread_out_of_the_inbox_says_where_it_is_in_views_that_hold_it_unless_the_view_says_it(
    service: Service, cores: Cores
) -> None:
    from datetime import timedelta

    from pigeon.core.actions import BY_ID
    from pigeon.core.listing import Listing

    core = cores()
    await core.sync()
    snoozed, done = ids(core, "waiting")[:2]
    core.apply(BY_ID["triage.snooze"], [snoozed], until=NOW + timedelta(days=3))
    core.apply(BY_ID["triage.done"], [done])

    def places(view: str) -> dict[str, str]:
        listing = Listing(core.store, view=view, query=None, inbox_id=None, sort="date", now=NOW)
        return {listing.row(n).id: listing.row(n).where for n in range(len(listing))}

    waiting = places("waiting")  # you wrote last: still waiting for an answer, wherever the thread is
    assert (waiting[snoozed], waiting[done]) == ("snoozed", "done")
    assert places("all")[snoozed] == "snoozed"
    assert places("snoozed")[snoozed] == ""  # (the view says it)
    assert places("done")[done] == ""
    assert set(places("inbox").values()) == {""}
