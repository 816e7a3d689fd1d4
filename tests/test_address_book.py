"""The address book: what a typed word finds, in which order, and addresses a hostile name cannot add to."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from email.headerregistry import Address
from email.utils import getaddresses
from typing import Any

import pytest

from pigeon.config import load_config
from pigeon.core import address_book
from pigeon.core.address_book import AddressEntry
from pigeon.core.mail import MailCore, MailStore
from pigeon.models import Contact


def contact(ident: str, *emails: str, days_ago: int | None = None, **fields: Any) -> Contact:
    when = None if days_ago is None else datetime(2026, 11, 20, 12, tzinfo=UTC).replace(day=20 - days_ago)
    return Contact.model_validate(
        {
            "id": ident,
            "emails": [{"id": f"{ident}-{n}", "type": "EMAIL_TYPE_WORK", "email": e} for n, e in enumerate(emails)],
            "last_contacted_at": when.isoformat() if when else None,
            **fields,
        }
    )


PEOPLE = [
    contact("c1", "ada@engine.example", "countess@home.example", days_ago=9, first_name="Ada", last_name="Lovelace"),
    contact("c2", "alan@bletchley.example", days_ago=1, first_name="Alan", last_name="Turing", company="GC&CS"),
    contact("c3", "zoe@cafe.example", days_ago=5, display_name="Zoë Adams"),
    contact("c4", "grace@navy.example", first_name="Grace", last_name="Hopper"),  # never contacted
    contact("c5", "not an address", days_ago=0, first_name="Broken"),
    contact("c6", "ez@paris.example", first_name="Émile", last_name="Zola"),
]


@pytest.fixture
async def core() -> AsyncIterator[MailCore]:
    made = MailCore(load_config(base_url="http://service.test"), MailStore(":memory:"), token="t")
    for person in PEOPLE:
        made.store.put_contact(person)
    yield made
    await made.close()


async def found(core: MailCore, text: str) -> list[str]:
    return [e.email for e in await core.address_book.lookup(text)]


async def test_every_email_of_every_contact_is_an_entry_most_recently_contacted_first(core: MailCore) -> None:
    entries = await core.address_book.entries()
    assert [e.email for e in entries] == [
        "alan@bletchley.example",
        "zoe@cafe.example",
        "ada@engine.example",
        "countess@home.example",
        "ez@paris.example",
        "grace@navy.example",  # (never contacted: last; "not an address" cannot be written to, so is none)
    ]
    assert entries[0] == AddressEntry(
        "Alan Turing", "alan@bletchley.example", "GC&CS", datetime(2026, 11, 19, 12, tzinfo=UTC), "c2"
    )


@pytest.mark.parametrize("in_thread", [False, True], ids=["on-the-loop", "in-a-thread"])
async def test_names_parts_of_names_and_emails_match_by_prefix_any_case_any_accent(
    core: MailCore, in_thread: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if in_thread:  # (a big book is scanned off the event loop: the same answers)
        monkeypatch.setattr(address_book, "SCAN_IN_LOOP", 0)
    assert await found(core, "lovel") == ["ada@engine.example", "countess@home.example"]  # a part of the name
    assert await found(core, "COUNTESS@") == ["countess@home.example"]  # the start of an email
    assert await found(core, "bletch") == ["alan@bletchley.example"]  # a part of an email
    assert await found(core, "zoë") == await found(core, "ZOE") == ["zoe@cafe.example"]
    assert await found(core, "EMILE") == await found(core, "zola é") == ["ez@paris.example"]
    assert await found(core, "turing al") == ["alan@bletchley.example"]  # every word typed starts a word
    assert await found(core, "ring") == []  # inside a word is not the start of one
    assert await found(core, "  ") == []


async def test_a_name_starting_with_what_was_typed_comes_before_a_more_recent_other_match(core: MailCore) -> None:
    # Alan (contacted yesterday) has an "a" word; Ada's and Zoë Adams's names start with "ad"; Ada's too with "ada".
    assert await found(core, "a") == [
        "alan@bletchley.example",  # names starting with "a", most recently contacted first
        "ada@engine.example",
        "countess@home.example",
        "zoe@cafe.example",  # contacted after Ada, but only "Adams" starts with "a", not the name
    ]
    assert await found(core, "ada") == ["ada@engine.example", "countess@home.example", "zoe@cafe.example"]


async def test_the_book_follows_the_contacts_the_core_learns(core: MailCore) -> None:
    assert await found(core, "margaret") == []
    core.contacts["c8"] = contact("c8", "mh@apollo.example", days_ago=2, first_name="Margaret", last_name="Hamilton")
    assert await found(core, "margaret") == ["mh@apollo.example"]
    core.contact_changed(contact("c8", "margaret@apollo.example", days_ago=2, first_name="Margaret"))
    assert await found(core, "margaret") == ["margaret@apollo.example"]


async def test_a_ready_book_answers_at_once_as_the_lookup_does_and_waits_again_after_a_change(core: MailCore) -> None:
    book = core.address_book
    assert book.lookup_at_once("a") is None  # (not made yet: the first lookup reads the store)
    await book.prepare()
    for text in ("a", "ada", "zo", "emile z", "nobody"):
        assert book.lookup_at_once(text) == await book.lookup(text)
    core.contacts["c8"] = contact("c8", "mh@apollo.example", days_ago=2, first_name="Margaret", last_name="Hamilton")
    assert book.lookup_at_once("margaret") is None  # (a contact to make first: off the event loop)
    assert await found(core, "margaret") == ["mh@apollo.example"]
    assert [e.email for e in book.lookup_at_once("margaret") or []] == ["mh@apollo.example"]


@pytest.mark.parametrize(
    "name",
    [
        "Mallory <mallory@evil.example>, boss@corp.example",
        'Eve" <eve@evil.example>, "x',
        "Trudy\r\nBcc: spy@evil.example",
        "Oscar; Group: x@evil.example;",
        "=?utf-8?q?mal=40evil.example?= \\",
    ],
)
def test_written_holds_one_address_whatever_the_name(name: str) -> None:
    entry = AddressEntry(name=name, email="ada@engine.example")
    written = entry.written
    assert "\n" not in written
    assert "\r" not in written
    assert [address for _, address in getaddresses([written])] == ["ada@engine.example"]
    assert written.endswith(" <ada@engine.example>")


async def test_a_hostile_name_is_cleaned_to_one_line_and_written_as_one_address(core: MailCore) -> None:
    core.contacts["c7"] = contact("c7", "ok@fine.example", display_name="Ev\x1b[31mil\nBcc: spy@evil.example")
    [entry] = await core.address_book.lookup("ok@")
    assert entry.name == "Evil Bcc: spy@evil.example"
    assert [a for _, a in getaddresses([entry.written])] == ["ok@fine.example"]
    assert entry.written == str(Address(display_name=entry.name, addr_spec="ok@fine.example"))
