"""The token: ``PIGEON_TOKEN`` for scripts, a profile's ``token_command``, or the OS keyring (service ``pigeon``, one
entry per profile), strongest first.

``PIGEON_TOKEN`` overrides the others and is never stored. A ``token_command`` (a program and its arguments, run
without a shell) prints the token on its standard output, which is read and never logged nor repeated in an
error. When no usable keyring backend exists (a headless
Linux machine with no Secret Service gets keyring's ``fail`` backend), every call says so plainly and names the
ways out. There is no fallback to a plain-text file: a backend that writes secrets unencrypted to a file (such as
``keyrings.alt``'s ``PlaintextKeyring``) is used only when the caller says the user agreed to it
(:class:`PlainFileKeyring` otherwise, naming the file).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import keyring.backend

SERVICE_NAME = "pigeon"
TOKEN_ENV = "PIGEON_TOKEN"  # noqa: S105  (the variable's name, not a secret)

NO_BACKEND_HELP = (
    "No usable OS keyring was found to keep the token in (on a headless Linux machine this usually means no "
    "Secret Service is running). Ways out: start a Secret Service (gnome-keyring or KeePassXC), or install "
    "keyrings.alt and choose one of its backends, or set PIGEON_TOKEN in the environment (it is never stored). "
    "Pigeon does not write the token to a plain-text file."
)


class CredentialsError(Exception):
    """The token cannot be read, stored or removed; the message says why and what to do."""


class PlainFileKeyring(CredentialsError):
    """The keyring in use would write the token unencrypted to a file; nothing was stored."""

    def __init__(self, path: str) -> None:
        self.path = path
        super().__init__(
            f"The only keyring here writes secrets unencrypted to a file ({path}); the token was not stored there. "
            "Run `pigeon login` to agree to it, or set PIGEON_TOKEN, or start a Secret Service."
        )


class TokenCommandFailed(CredentialsError):
    """A profile's ``token_command`` did not give a token; the message says why (never what it printed)."""


class TokenSource(StrEnum):
    ENVIRONMENT = "PIGEON_TOKEN environment variable"
    COMMAND = "token_command"
    KEYRING = "keyring"
    NONE = "none"


TOKEN_COMMAND_TIMEOUT = 30.0
"""Seconds a ``token_command`` may take (a password manager may ask for its passphrase first)."""


def _is_unusable(backend: keyring.backend.KeyringBackend) -> bool:
    module = type(backend).__module__
    if module in {"keyring.backends.fail", "keyring.backends.null"}:
        return True
    chained = getattr(backend, "backends", None)
    return chained is not None and not chained


def _keyring() -> Any:
    """keyring, imported when first needed (PIGEON_TOKEN users and the demo never pay for it)."""
    import keyring
    import keyring.errors

    return keyring


def backend() -> keyring.backend.KeyringBackend:
    """The keyring backend in use; :class:`CredentialsError` if there is none that can hold a secret."""
    current: keyring.backend.KeyringBackend = _keyring().get_keyring()
    if _is_unusable(current):
        raise CredentialsError(NO_BACKEND_HELP)
    return current


# Backends known to keep secrets as plain text in a file, by module and class name (keyrings.alt's names).
_PLAIN_FILE_BACKENDS = {("keyrings.alt.file", "PlaintextKeyring")}


def plain_file() -> str | None:
    """The file the keyring in use would write secrets to unencrypted, or ``None`` when it does not."""
    try:
        current: Any = backend()
    except CredentialsError:
        return None
    chained = getattr(current, "backends", None)
    if chained:  # keyring's chainer writes to the first backend that takes the secret: the highest priority
        current = chained[0]
    kind = type(current)
    if (kind.__module__, kind.__name__) in _PLAIN_FILE_BACKENDS:
        return str(getattr(current, "file_path", "a file"))
    return None


def backend_name() -> str:
    """A human name of the keyring backend, for ``pigeon status``."""
    try:
        current = backend()
    except CredentialsError:
        return "none"
    return getattr(current, "name", type(current).__name__)


def _fail(action: str, exc: Exception) -> CredentialsError:
    errors = _keyring().errors
    if isinstance(exc, errors.NoKeyringError):
        return CredentialsError(NO_BACKEND_HELP)
    if isinstance(exc, errors.KeyringLocked):
        return CredentialsError(f"The keyring is locked; unlock it and try again ({action}).")
    return CredentialsError(f"The keyring could not {action}: {type(exc).__name__}. {NO_BACKEND_HELP}")


def env_token() -> str | None:
    value = os.environ.get(TOKEN_ENV, "").strip()
    return value or None


def resolve_token(profile: str, token_command: Sequence[str] = ()) -> tuple[str | None, TokenSource]:
    """The token for ``profile`` and where it came from: ``PIGEON_TOKEN`` first, then the profile's
    ``token_command``, then the keyring."""
    from_env = env_token()
    if from_env:
        return from_env, TokenSource.ENVIRONMENT
    if token_command:
        return run_token_command(profile, token_command), TokenSource.COMMAND
    try:
        stored = backend().get_password(SERVICE_NAME, profile)
    except _keyring().errors.KeyringError as exc:
        raise _fail("read the token", exc) from None
    if stored:
        return stored, TokenSource.KEYRING
    return None, TokenSource.NONE


def token_source(profile: str, token_command: Sequence[str] = ()) -> TokenSource:
    """Where the token of ``profile`` would come from, without running its ``token_command``."""
    if env_token():
        return TokenSource.ENVIRONMENT
    if token_command:
        return TokenSource.COMMAND
    try:
        stored = backend().get_password(SERVICE_NAME, profile)
    except (CredentialsError, _keyring().errors.KeyringError):
        return TokenSource.NONE
    return TokenSource.KEYRING if stored else TokenSource.NONE


def run_token_command(profile: str, command: Sequence[str], timeout: float = TOKEN_COMMAND_TIMEOUT) -> str:
    """The token ``command`` prints (its first line, stripped): run without a shell, with no standard input and
    without Pigeon's secrets in its environment. :class:`TokenCommandFailed` when it gives none."""
    import subprocess  # (loaded, with the cleaning of what is shown, for a token_command only)

    from pigeon.children import child_environment
    from pigeon.sanitize import clean_line

    where = f"The token_command of profile {profile!r} ({clean_line(command[0], limit=60)})"
    try:
        done = subprocess.run(  # noqa: S603 - the user's own command, as a list: no shell
            list(command),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            env=child_environment(),
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise TokenCommandFailed(f"{where} did not finish within {timeout:g} s.") from None
    except FileNotFoundError:
        raise TokenCommandFailed(f"{where} was not found; check token_command in the configuration.") from None
    except OSError as exc:
        raise TokenCommandFailed(f"{where} could not be started: {exc.strerror or type(exc).__name__}.") from None
    try:
        printed = done.stdout.decode("utf-8")
    except UnicodeDecodeError:
        raise TokenCommandFailed(f"{where} printed something that is not text; no token.") from None
    lines = printed.strip().splitlines()
    token = lines[0].strip() if lines else ""
    if done.returncode != 0:
        said = _last_line(done.stderr, token)
        raise TokenCommandFailed(f"{where} failed (exit status {done.returncode}){': ' + said if said else ''}.")
    if not token:
        raise TokenCommandFailed(f"{where} printed nothing: no token.")
    return token


def _last_line(stderr: bytes, token: str) -> str:
    """The last line the command wrote on its standard error, cleaned; never what it printed as a token."""
    from pigeon.sanitize import clean_line

    lines = stderr.decode("utf-8", "replace").strip().splitlines()
    said = lines[-1] if lines else ""
    if token and token in said:
        return ""
    return clean_line(said, limit=160)


def store_token(profile: str, token: str, *, plain_file_agreed: bool = False) -> None:
    """Keep ``token`` for ``profile`` in the keyring; a keyring that writes a plain file only when the user agreed."""
    token = token.strip()
    if not token:
        raise CredentialsError("The token is empty; nothing was stored.")
    path = plain_file()
    if path is not None and not plain_file_agreed:
        raise PlainFileKeyring(path)
    try:
        backend().set_password(SERVICE_NAME, profile, token)
    except _keyring().errors.KeyringError as exc:
        raise _fail("store the token", exc) from None


def delete_token(profile: str) -> bool:
    """Remove the token of ``profile`` from the keyring; ``False`` if there was none."""
    try:
        current = backend()
        if current.get_password(SERVICE_NAME, profile) is None:
            return False
        current.delete_password(SERVICE_NAME, profile)
    except _keyring().errors.PasswordDeleteError:
        return False
    except _keyring().errors.KeyringError as exc:
        raise _fail("remove the token", exc) from None
    return True


# --- other secrets of a profile (the live webhook subscription's) -----------------------------------------------


def read_secret(name: str) -> str | None:
    """A secret Pigeon kept under ``name`` (``None`` when there is none or no keyring to hold one)."""
    try:
        return backend().get_password(SERVICE_NAME, name)
    except (CredentialsError, _keyring().errors.KeyringError):
        return None


def keep_secret(name: str, value: str) -> bool:
    """Keep ``value`` under ``name`` in the keyring; ``False`` when no keyring can (one that writes a plain file
    is not used for these: nobody was asked)."""
    if plain_file() is not None:
        return False
    try:
        backend().set_password(SERVICE_NAME, name, value)
    except (CredentialsError, _keyring().errors.KeyringError):
        return False
    return True


def forget_secret(name: str) -> None:
    try:
        backend().delete_password(SERVICE_NAME, name)
    except (CredentialsError, _keyring().errors.KeyringError):
        pass


def can_keep_secrets() -> bool:
    """Whether a keyring that does not write plain files is here."""
    try:
        backend()
    except CredentialsError:
        return False
    return plain_file() is None
