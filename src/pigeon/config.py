"""Settings: a TOML file in the user config dir, environment variables, and command-line flags.

Precedence, strongest first: flags (``--profile``, ``--base-url``), environment (``PIGEON_PROFILE``,
``PIGEON_BASE_URL``), the file. The file holds named profiles and UI preferences; it never holds the token
(that lives in the keyring, see :mod:`pigeon.credentials`)::

    default_profile = "default"

    [profiles.default]
    base_url = "http://127.0.0.1:8025"

    [profiles.work]
    base_url = "https://mail.example.com"

    [ui]
    theme = "textual-dark"

    [ui.keymap]          # binding id = keys
    "thread.done" = "e,delete"
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import tomllib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomli_w
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict, TomlConfigSettingsSource

from pigeon import locations

DEFAULT_BASE_URL = "http://127.0.0.1:8025"
DEFAULT_PROFILE = "default"
FILE_MODE = 0o600
SECRET_KEYS = frozenset({"token", "access_token", "api_key", "password", "secret"})


class ConfigError(Exception):
    """The configuration file cannot be read or used; the message says which file and what is wrong."""


def _refuse_secrets(data: Any, where: str) -> Any:
    if isinstance(data, dict):
        found = SECRET_KEYS.intersection(data)
        if found:
            raise ValueError(
                f"{where} must not hold {', '.join(sorted(found))}: Pigeon keeps the token in the OS keyring "
                "(run `pigeon login`) or reads PIGEON_TOKEN; remove it from the file"
            )
    return data


class ProfileConfig(BaseModel):
    """One account on one service."""

    model_config = ConfigDict(extra="ignore")

    base_url: str = Field(default=DEFAULT_BASE_URL, description="Address of the messaging service (http or https).")
    live: bool = Field(
        default=False,
        description="Follow new mail as it arrives: webhooks to a receiver on 127.0.0.1 when the service is on this "
        "machine, else polling every poll_interval seconds.",
    )
    poll_interval: float = Field(
        default=60.0, ge=5.0, description="Seconds between polls when webhooks cannot reach Pigeon."
    )

    @model_validator(mode="before")
    @classmethod
    def _no_secrets(cls, data: Any) -> Any:
        return _refuse_secrets(data, "a profile")


class UIConfig(BaseModel):
    """How the terminal UI looks and which keys it answers to."""

    model_config = ConfigDict(extra="ignore")

    theme: str = Field(default="textual-dark", description="Name of a Textual theme; chosen in the command palette.")
    keymap: dict[str, str] = Field(
        default_factory=dict,
        description="Binding id -> comma-separated keys, applied with App.set_keymap (see `?` in the app).",
    )


_toml_path: ContextVar[Path | None] = ContextVar("pigeon_config_toml_path", default=None)


class Settings(BaseSettings):
    """Everything read from flags, environment and file, before the active profile is resolved."""

    model_config = SettingsConfigDict(env_prefix="PIGEON_", extra="ignore")

    profile: str | None = Field(default=None, description="Profile to use (PIGEON_PROFILE, --profile).")
    base_url: str | None = Field(
        default=None, description="Overrides the profile's base URL (PIGEON_BASE_URL, --base-url)."
    )
    default_profile: str = Field(default=DEFAULT_PROFILE, description="Profile used when none is named.")
    profiles: dict[str, ProfileConfig] = Field(default_factory=dict, description="Named profiles.")
    ui: UIConfig = Field(default_factory=UIConfig, description="User interface preferences.")

    @model_validator(mode="before")
    @classmethod
    def _no_secrets(cls, data: Any) -> Any:
        return _refuse_secrets(data, "the configuration")

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        path = _toml_path.get()
        if path is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=path))
        return tuple(sources)


@dataclass(frozen=True)
class Config:
    """The resolved configuration: which profile, which service, which UI preferences, and where they came from."""

    path: Path
    profile: str
    base_url: str
    base_url_source: str
    ui: UIConfig
    settings: Settings

    @property
    def profile_config(self) -> ProfileConfig:
        return self.settings.profiles.get(self.profile, ProfileConfig())


@contextlib.contextmanager
def _reading(path: Path) -> Iterator[None]:
    token = _toml_path.set(path)
    try:
        yield
    finally:
        _toml_path.reset(token)


def load_config(path: Path | None = None, *, profile: str | None = None, base_url: str | None = None) -> Config:
    """Read the configuration; ``profile`` and ``base_url`` are the command-line flags (they win)."""
    path = path or locations.config_file()
    flags = {key: value for key, value in (("profile", profile), ("base_url", base_url)) if value}
    try:
        with _reading(path):
            settings = Settings(**flags)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        message = first["msg"].removeprefix("Value error, ")
        raise ConfigError(f"{path}: {where + ': ' if where else ''}{message}") from None
    except OSError as exc:
        raise ConfigError(f"{path} cannot be read: {exc.strerror or exc}") from None

    name = settings.profile or settings.default_profile
    if settings.base_url:
        url = settings.base_url
        source = "--base-url" if "base_url" in flags else "PIGEON_BASE_URL"
    elif name in settings.profiles:
        url, source = settings.profiles[name].base_url, f"profile {name!r} in {path}"
    else:
        url, source = DEFAULT_BASE_URL, "default"
    return Config(path=path, profile=name, base_url=url, base_url_source=source, ui=settings.ui, settings=settings)


def _read_raw(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None


def _write_private(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` as TOML, atomically, readable only by the user (0600)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, temp = tempfile.mkstemp(prefix=".config-", suffix=".toml", dir=path.parent)
    try:
        os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, "wb") as handle:
            tomli_w.dump(data, handle)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def ensure_config_file(path: Path | None = None) -> Path:
    """Create the configuration file (mode 0600) with the default profile if it does not exist yet."""
    path = path or locations.config_file()
    if not path.exists():
        _write_private(
            path, {"default_profile": DEFAULT_PROFILE, "profiles": {DEFAULT_PROFILE: {"base_url": DEFAULT_BASE_URL}}}
        )
    return path


def update_config_file(change: Callable[[dict[str, Any]], None], path: Path | None = None) -> Path:
    """Apply ``change`` to the file's TOML document and write it back (0600). Refuses to write a secret."""
    path = path or locations.config_file()
    data = _read_raw(path)
    change(data)
    try:
        _refuse_secrets(data, "the configuration")
        for name, profile in (data.get("profiles") or {}).items():
            _refuse_secrets(profile, f"profile {name!r}")
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    _write_private(path, data)
    return path


def save_profile(profile: str, *, base_url: str, path: Path | None = None) -> Path:
    """Record ``base_url`` for ``profile``; the first profile saved becomes the default."""

    def change(data: dict[str, Any]) -> None:
        profiles = data.setdefault("profiles", {})
        profiles.setdefault(profile, {})["base_url"] = base_url
        data.setdefault("default_profile", profile)

    return update_config_file(change, path)
