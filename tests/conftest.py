"""Fixtures every test gets: private folders instead of the user's, and an in-memory keyring."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import keyring
import pytest

from pigeon_service.app import ServerSettings, create_app
from pigeon_service.run import start_in_thread
from tests import respx_pigeon  # noqa: F401  (registers respx.mock(using="pigeon"))
from tests.keyrings import MemoryKeyring, PlainFileKeyring
from tests.server.conftest import Service, make_service


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
def running(monkeypatch: pytest.MonkeyPatch) -> Iterator[Service]:
    """The reference service on a port of this machine, named to ``pigeon`` commands by its environment."""
    service = make_service()
    thread = start_in_thread(create_app(service.db, ServerSettings(deliver_webhooks=False)), db=service.db)
    monkeypatch.setenv("PIGEON_BASE_URL", thread.base_url)
    monkeypatch.setenv("PIGEON_TOKEN", service.alice.token)
    yield service
    thread.stop()
    service.db.close()


@pytest.fixture
def plain_file_keyring() -> Iterator[PlainFileKeyring]:
    """A keyring that (as keyrings.alt's plaintext backend does) would write secrets to a plain file."""
    yield from installed(PlainFileKeyring())


RECORDER = """import json, os, sys
with open(os.environ["PIGEON_TEST_RECORD"], "a") as record:
    record.write(json.dumps({"argv": sys.argv, "env": dict(os.environ)}) + "\\n")
"""


class Recorded:
    """What a recording program was started with, read as it happens: its runs' arguments and environments."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def runs(self) -> list[dict[str, Any]]:
        lines = self.path.read_text().splitlines() if self.path.exists() else []
        return [json.loads(line) for line in lines]

    def urls(self) -> list[str]:
        return [run["argv"][-1] for run in self.runs()]

    def __eq__(self, other: object) -> bool:
        return self.urls() == other

    def __getitem__(self, index: int) -> str:
        return self.urls()[index]

    def __len__(self) -> int:
        return len(self.runs())


def recording_program(folder: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Recorded]:
    """An executable ``folder/name`` that records its arguments and environment (one JSON line a run)."""
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / name
    program.write_text(f"#!{sys.executable}\n{RECORDER}")
    program.chmod(0o700)
    record = folder / f"{name}.record"
    monkeypatch.setenv("PIGEON_TEST_RECORD", str(record))
    return program, Recorded(record)


@pytest.fixture
def browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Recorded:
    """The user's browser on a desktop, named by ``$BROWSER``: a program that records the links it is asked to
    open."""
    program, record = recording_program(tmp_path / "bin", "recording-browser", monkeypatch)
    monkeypatch.setenv("BROWSER", str(program))
    monkeypatch.setenv("DISPLAY", ":0")
    return record
