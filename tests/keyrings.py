"""Keyring backends for tests: one that keeps secrets in memory, one that has nowhere to keep them."""

from __future__ import annotations

import keyring.backend
import keyring.errors


class MemoryKeyring(keyring.backend.KeyringBackend):
    """Secrets in a dict, gone when the test ends."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
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
