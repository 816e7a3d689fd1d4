"""Fixtures every test gets: private folders instead of the user's, and an in-memory keyring."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

import keyring
import pytest

from tests import respx_pigeon  # noqa: F401  (registers respx.mock(using="pigeon"))
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


K = TypeVar("K", bound=MemoryKeyring)


def installed(backend: K) -> Iterator[K]:
    """``backend`` as the keyring for a test; the previous one is back after."""
    previous = keyring.get_keyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


@pytest.fixture(autouse=True)
def memory_keyring() -> Iterator[MemoryKeyring]:
    """An in-memory keyring backend for every test."""
    yield from installed(MemoryKeyring())


@pytest.fixture
def plain_file_keyring() -> Iterator[PlainFileKeyring]:
    """A keyring that (as keyrings.alt's plaintext backend does) would write secrets to a plain file."""
    yield from installed(PlainFileKeyring())


@pytest.fixture
def browser(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The system's browser, as ``webbrowser`` finds it: one that records what it is asked to open."""
    import webbrowser

    opened: list[str] = []

    class Recording(webbrowser.BaseBrowser):
        def open(self, url: str, new: int = 0, autoraise: bool = True) -> bool:
            opened.append(url)
            return True

    monkeypatch.setattr(webbrowser, "_tryorder", None)
    monkeypatch.setattr(webbrowser, "_browsers", {})
    webbrowser.register("recording", None, Recording("recording"), preferred=True)
    return opened
