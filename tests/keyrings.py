"""Keyring backends for tests: one that keeps secrets in memory, one that has nowhere to keep them."""

from __future__ import annotations

import keyring.backend
import keyring.errors


class MemoryKeyring(keyring.backend.KeyringBackend):
    """Secrets in a dict, gone when the test ends."""

    priority = 1

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]  # (keyring's own code is untyped)
        self.secrets: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.secrets.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.secrets[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        try:
            del self.secrets[(service, username)]
        except KeyError:
            raise keyring.errors.PasswordDeleteError("no such password") from None


class PlainFileKeyring(MemoryKeyring):
    """Stands in for keyrings.alt's PlaintextKeyring (same module and class name): secrets as text in a file."""

    file_path = "/home/someone/.local/share/python_keyring/keyring_pass.cfg"


PlainFileKeyring.__module__ = "keyrings.alt.file"
PlainFileKeyring.__name__ = PlainFileKeyring.__qualname__ = "PlaintextKeyring"


class FileKeyring(MemoryKeyring):
    """For tests that run ``pigeon`` as a subprocess (PYTHON_KEYRING_BACKEND=tests.keyrings.FileKeyring): secrets in
    the JSON file named by PIGEON_TEST_KEYRING, so one command stores what the next reads."""

    def __init__(self) -> None:
        super().__init__()
        import json
        import os
        from pathlib import Path

        self._json = json
        named = os.environ.get("PIGEON_TEST_KEYRING")  # (keyring makes one of every backend class it knows of)
        self._file = Path(named) if named else None
        if self._file is not None and self._file.exists():
            self.secrets = {tuple(k.split("\x1f", 1)): v for k, v in json.loads(self._file.read_text()).items()}

    def _save(self) -> None:
        if self._file is not None:
            self._file.write_text(self._json.dumps({"\x1f".join(k): v for k, v in self.secrets.items()}))

    def set_password(self, service: str, username: str, password: str) -> None:
        super().set_password(service, username, password)
        self._save()

    def delete_password(self, service: str, username: str) -> None:
        super().delete_password(service, username)
        self._save()
