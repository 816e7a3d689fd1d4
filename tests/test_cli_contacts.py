"""``pigeon contacts list`` and ``pigeon contacts search``: the contact book for people and for mail programs
(NeoMutt's query_command, aerc's address-book-cmd), read from the local store, so offline too."""

from __future__ import annotations

import json
from datetime import timedelta
from email.utils import getaddresses

import pytest

from pigeon.models import Contact
from pigeon.store.mailstore import MailStore
from tests.command_line import run
from tests.server.conftest import NOW, Service

ADA = Contact.model_validate(
    {
        "id": "ada",
        "display_name": 'Ada\tLove\nlace, "the" <countess@evil.example>',  # a tab, a line break, another address
        "emails": [{"id": "e1", "type": "EMAIL_TYPE_WORK", "email": "ada@engine.example"}],
        "company": "Analytical\tEngines",
        "last_contacted_at": (NOW + timedelta(days=1)).isoformat(),
    }
)


def keep(*contacts: Contact) -> None:
    store = MailStore.for_profile("default")
    for contact in contacts:
        store.put_contact(contact)
    store.close()


@pytest.fixture
def synced(running: Service, monkeypatch: pytest.MonkeyPatch) -> Service:
    """The test service's mail synced, Ada kept beside its contacts, then the service gone away."""
    assert run("sync")[0] == 0
    keep(ADA)
    monkeypatch.setenv("PIGEON_BASE_URL", "http://127.0.0.1:9")  # (nothing listens: the book needs no service)
    return running


def test_search_in_mutt_format_is_a_status_line_then_one_tabbed_line_per_address(synced: Service) -> None:
    code, text = run("contacts", "search", "--format", "mutt", "ada@eng")
    assert code == 0
    status, line, *rest = text.split("\n")
    assert status == "Pigeon: 1 address for 'ada@eng'"
    assert line.split("\t") == [
        "ada@engine.example",
        'Ada Love lace, "the" <countess@evil.example>',
        "Analytical Engines",
    ]
    assert rest == [""]


def test_no_match_in_mutt_format_says_so_on_the_status_line_and_exits_non_zero(synced: Service) -> None:
    assert run("contacts", "search", "--format", "mutt", "nobody-here") == (
        1,
        "Pigeon: no address matches 'nobody-here'\n",
    )


def test_aerc_format_has_no_status_line_and_no_match_is_no_line(synced: Service) -> None:
    assert run("contacts", "search", "--format", "aerc", "ada@eng") == (
        0,
        'ada@engine.example\tAda Love lace, "the" <countess@evil.example>\tAnalytical Engines\n',
    )
    assert run("contacts", "search", "--format", "aerc", "nobody-here") == (0, "")


def test_search_finds_the_synced_contacts_most_recently_contacted_first(synced: Service) -> None:
    listed = json.loads(run("contacts", "list", "--json")[1])["contacts"]
    someone = next(c for c in listed if c["id"] != "ada" and c["emails"] and " " in c["name"])
    first_name = someone["name"].split()[0]
    code, text = run("contacts", "search", "--json", first_name.lower())
    assert code == 0
    found = json.loads(text)["addresses"]
    assert someone["emails"][0] in [a["email"] for a in found]
    times = [a["last_contacted_at"] or "" for a in found if a["name"].casefold().startswith(first_name.casefold())]
    assert times == sorted(times, reverse=True)


def test_search_as_json_and_as_a_table(synced: Service) -> None:
    code, text = run("contacts", "search", "--json", "LOVE")  # a part of the name, any case
    assert code == 0
    [ada] = json.loads(text)["addresses"]
    assert ada["email"] == "ada@engine.example"
    assert ada["contact_id"] == "ada"
    assert getaddresses([ada["written"]]) == [('Ada Love lace, "the" <countess@evil.example>', "ada@engine.example")]
    code, text = run("contacts", "search", "ada", "love")
    assert code == 0
    header, row = text.splitlines()
    assert header.split() == ["NAME", "EMAIL", "NOTE", "LAST", "CONTACTED"]
    assert "ada@engine.example" in row
    assert "Analytical Engines" in row
    assert run("contacts", "search", "nobody-here")[0] == 1


def test_list_has_every_contact_with_its_emails_most_recent_first(synced: Service) -> None:
    listed = json.loads(run("contacts", "list", "--json")[1])["contacts"]
    store = MailStore.for_profile("default")
    assert {c["id"] for c in listed} == {c.id for c in store.contacts()}
    store.close()
    assert listed[0]["id"] == "ada"  # (contacted after everyone the service knows)
    assert listed[0]["emails"] == ["ada@engine.example"]
    times = [c["last_contacted_at"] for c in listed if c["last_contacted_at"]]
    assert times == sorted(times, reverse=True)
    code, text = run("contacts", "list")
    assert code == 0
    assert text.splitlines()[0].split() == ["NAME", "EMAILS", "LAST", "CONTACTED"]
    assert len(text.splitlines()) == len(listed) + 1


def test_an_empty_store_says_to_sync() -> None:
    code, text = run("contacts", "list")
    assert code == 0
    assert "pigeon sync" in text
    assert run("contacts", "search", "--format", "mutt", "ada") == (1, "Pigeon: no address matches 'ada'\n")
