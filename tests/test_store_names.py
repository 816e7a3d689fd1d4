"""Each profile name has a store of its own: names made only of letters, digits, ``-`` and ``_`` keep the file name
they always had; any other name gets a hash of itself, so two names never share one store."""

from __future__ import annotations

from pathlib import Path

import pytest

from pigeon.store.account import Account
from pigeon.store.mailstore import MailStore, store_path


@pytest.mark.parametrize("name", ["work", "default", "work_alice", "Work-2", "café"])
def test_an_ordinary_name_keeps_its_old_file_name(isolated_environment: Path, name: str) -> None:
    assert store_path(name) == isolated_environment / "data" / "store" / f"{name}.sqlite3"


@pytest.mark.parametrize(
    "names",
    [
        ("work.alice", "work_alice"),
        ("work alice", "work_alice"),
        ("a/b", "a_b"),
        ("", "default"),
    ],
    ids=["dot", "space", "slash", "empty"],
)
def test_two_names_that_used_to_share_a_file_get_two_stores(isolated_environment: Path, names: tuple[str, str]) -> None:
    first, second = (store_path(name) for name in names)
    assert first != second
    assert first.parent == second.parent == isolated_environment / "data" / "store"


def test_a_name_too_long_for_a_file_name_gets_a_store_of_its_own(isolated_environment: Path) -> None:
    name = "報告" * 100  # 600 bytes: more than a file name holds
    store = MailStore.for_profile(name)
    store.close()
    assert len(Path(store.path).name.encode()) < 255
    assert store_path(name) != store_path(name + "x")


def test_a_profile_with_a_dot_does_not_see_the_mail_of_the_one_with_an_underscore(isolated_environment: Path) -> None:
    bob = Account("acct-bob", "http://127.0.0.1:8025", "bob@example.com")
    dotted = MailStore.for_profile("work.alice")
    try:
        dotted.claim(bob)
    finally:
        dotted.close()
    plain = MailStore.for_profile("work_alice")
    try:
        assert plain.held_account() is None
        assert Path(plain.path).name == "work_alice.sqlite3"
    finally:
        plain.close()
    again = MailStore.for_profile("work.alice")
    try:
        assert again.held_account() == bob
    finally:
        again.close()


def test_a_name_with_bytes_that_are_not_utf8_gets_a_store() -> None:
    name = "caf\udce9"  # (how Python reads a Latin-1 byte from the command line)
    assert store_path(name) != store_path("caf_")
    assert store_path(name).name.isascii()
