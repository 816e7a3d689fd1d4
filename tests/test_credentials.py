"""The token in the keyring, PIGEON_TOKEN over it, and a plain message when there is no keyring."""

from __future__ import annotations

from pathlib import Path

import keyring
import pytest
from keyring.backends import fail

from pigeon import credentials
from pigeon.credentials import CredentialsError, TokenSource
from tests.keyrings import MemoryKeyring


def test_store_read_and_delete_per_profile(memory_keyring: MemoryKeyring) -> None:
    credentials.store_token("work", "  tok-work \n")
    credentials.store_token("home", "tok-home")
    assert memory_keyring.secrets[("pigeon", "work")] == "tok-work"
    assert credentials.resolve_token("work") == ("tok-work", TokenSource.KEYRING)
    assert credentials.resolve_token("home") == ("tok-home", TokenSource.KEYRING)
    assert credentials.delete_token("work") is True
    assert credentials.delete_token("work") is False
    assert credentials.resolve_token("work") == (None, TokenSource.NONE)


def test_pigeon_token_overrides_and_is_never_stored(
    memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    credentials.store_token("default", "from-keyring")
    monkeypatch.setenv("PIGEON_TOKEN", "from-env")
    assert credentials.resolve_token("default") == ("from-env", TokenSource.ENVIRONMENT)
    assert "from-env" not in memory_keyring.secrets.values()


def test_an_empty_token_is_not_stored(memory_keyring: MemoryKeyring) -> None:
    with pytest.raises(CredentialsError, match="empty"):
        credentials.store_token("default", "   ")
    assert memory_keyring.secrets == {}


def test_no_backend_says_so_and_names_the_ways_out(isolated_environment: Path) -> None:
    keyring.set_keyring(fail.Keyring())
    for call in (
        lambda: credentials.resolve_token("default"),
        lambda: credentials.store_token("default", "tok"),
        lambda: credentials.delete_token("default"),
    ):
        with pytest.raises(CredentialsError) as caught:
            call()
        message = str(caught.value)
        assert "Secret Service" in message
        assert "keyrings.alt" in message
        assert "PIGEON_TOKEN" in message
    assert credentials.backend_name() == "none"
    leftovers = [p for p in isolated_environment.rglob("*") if p.is_file()]
    assert leftovers == [], "no plain-text fallback may be written"


def test_no_backend_still_allows_pigeon_token(monkeypatch: pytest.MonkeyPatch) -> None:
    keyring.set_keyring(fail.Keyring())
    monkeypatch.setenv("PIGEON_TOKEN", "env-only")
    assert credentials.resolve_token("default") == ("env-only", TokenSource.ENVIRONMENT)


def test_a_keyring_that_writes_a_plain_file_is_used_only_when_agreed(plain_file_keyring: MemoryKeyring) -> None:
    assert credentials.plain_file() == "/home/someone/.local/share/python_keyring/keyring_pass.cfg"
    with pytest.raises(credentials.PlainFileKeyring) as caught:
        credentials.store_token("default", "s3cr3t-value")
    assert plain_file_keyring.secrets == {}
    assert "keyring_pass.cfg" in str(caught.value)
    assert "s3cr3t-value" not in str(caught.value)
    credentials.store_token("default", "tok", plain_file_agreed=True)
    assert plain_file_keyring.secrets == {("pigeon", "default"): "tok"}


def test_an_ordinary_keyring_is_not_a_plain_file(memory_keyring: MemoryKeyring) -> None:
    assert credentials.plain_file() is None
