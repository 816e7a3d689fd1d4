"""Fixtures every test gets: private folders instead of the user's, and an in-memory keyring."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest

from tests.keyrings import MemoryKeyring, PlainFileKeyring


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point every Pigeon path at the test's folder and clear Pigeon's environment variables."""
    home = tmp_path / "pigeon-home"
    monkeypatch.setenv("PIGEON_CONFIG_DIR", str(home / "config"))
    monkeypatch.setenv("PIGEON_DATA_DIR", str(home / "data"))
    monkeypatch.setenv("PIGEON_DOWNLOAD_DIR", str(home / "downloads"))
    for name in ("PIGEON_TOKEN", "PIGEON_PROFILE", "PIGEON_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture(autouse=True)
def memory_keyring() -> Iterator[MemoryKeyring]:
    """Install an in-memory keyring backend for the test, and restore the previous one after."""
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


@pytest.fixture
def plain_file_keyring() -> Iterator[PlainFileKeyring]:
    """Install a keyring that (as keyrings.alt's plaintext backend does) would write secrets to a plain file."""
    previous = keyring.get_keyring()
    backend = PlainFileKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)
