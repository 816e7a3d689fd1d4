"""A store holds one account on one service: a sync with another account's token writes nothing."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from pigeon.api import PigeonClient
from pigeon.models import Inbox
from pigeon.sqlite import Database
from pigeon.store.account import Account, OtherAccount, account_of, service_key
from pigeon.store.mailstore import MailStore
from pigeon.store.schema import MIGRATIONS
from pigeon.store.sync import sync
from tests.server.conftest import Service, make_service


@pytest.fixture
def service() -> Service:
    return make_service()


def client(service: Service, token: str, base_url: str = "http://s.test") -> PigeonClient:
    return PigeonClient(base_url, token, http_client=httpx.AsyncClient(transport=httpx.ASGITransport(service.app)))


def everything(store: MailStore) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table the mail lives in."""
    tables = ("inboxes", "threads", "messages", "contacts", "triage", "labels", "undo", "account")
    rows = {table: store.rows(f"SELECT * FROM {table}") for table in tables}  # noqa: S608 (fixed names)
    return {table: [tuple(row) for row in found] for table, found in rows.items()}


async def test_a_sync_with_another_accounts_token_writes_nothing(tmp_path: Path, service: Service) -> None:
    store = MailStore(tmp_path / "s.sqlite3")
    async with client(service, service.alice.token) as alice:
        await sync(alice, store)
    store.star([store.rows("SELECT id FROM threads LIMIT 1")[0]["id"]])  # triage state, and an undo step
    before = everything(store)
    assert before["threads"]
    assert before["account"]

    async with client(service, service.bob.token) as bob:
        with pytest.raises(OtherAccount) as refused:
            await sync(bob, store)
    assert everything(store) == before
    assert refused.value.held is not None
    assert refused.value.given is not None
    assert refused.value.held.account_id == service.alice.id
    assert refused.value.given.account_id == service.bob.id
    assert "nothing was written" in str(refused.value)

    async with client(service, service.alice.token, "http://S.TEST:80/") as alice:  # the same service, spelt so
        await sync(alice, store)
    async with client(service, service.alice.token, "http://other.test") as elsewhere:  # another service
        with pytest.raises(OtherAccount):
            await sync(elsewhere, store)


def test_a_store_with_an_account_refuses_a_token_whose_account_cannot_be_told(tmp_path: Path) -> None:
    store = MailStore(tmp_path / "s.sqlite3")
    store.claim(None)  # a new store and an account without inboxes: nothing to record, nothing refused
    assert store.held_account() is None
    store.claim(Account("acc-1", "http://s.test", "me@s.test"))
    with pytest.raises(OtherAccount, match="cannot tell whose account"):
        store.claim(None)
    store.start_afresh(Account("acc-2", "http://s.test"))
    assert store.held_account() == Account("acc-2", "http://s.test")


def test_inboxes_of_several_accounts_in_one_answer_are_refused() -> None:
    def inbox(account: str) -> Inbox:
        return Inbox(id=f"i-{account}", account_id=account, type="EMAIL_INBOX", status="ACTIVE", email="a@b.test")

    assert account_of([inbox("a"), inbox("a")], "http://s.test") == Account("a", "http://s.test", "a@b.test")
    assert account_of([], "http://s.test") is None
    with pytest.raises(OtherAccount, match="several accounts"):
        account_of([inbox("a"), inbox("b")], "http://s.test")


def test_service_addresses_compare_by_what_they_name() -> None:
    assert service_key("HTTP://Mail.Example") == service_key("http://mail.example:80/")
    assert service_key("https://mail.example") == service_key("https://mail.example:443")
    assert service_key("http://mail.example") != service_key("https://mail.example")
    assert service_key("http://mail.example/a") != service_key("http://mail.example/b")


async def test_a_store_kept_before_accounts_were_recorded_is_taken_by_the_next_sync(
    tmp_path: Path, service: Service
) -> None:
    path = tmp_path / "v3.sqlite3"
    Database(path, MIGRATIONS[:3]).close()
    store = MailStore(path)
    assert store.held_account() is None
    async with client(service, service.alice.token) as alice:
        await sync(alice, store)
    held = store.held_account()
    assert held is not None
    assert held.account_id == service.alice.id
