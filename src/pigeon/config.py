"""Settings: a TOML file in the user config dir, environment variables, and command-line flags.

Precedence, strongest first: flags (``--profile``, ``--base-url``), environment (``PIGEON_PROFILE``,
``PIGEON_BASE_URL``), the file. The file holds named profiles and UI preferences; it never holds the token
(that lives in the keyring, or a profile's ``token_command`` prints it, see :mod:`pigeon.credentials`)::

    default_profile = "default"

    [profiles.default]
    base_url = "http://127.0.0.1:8025"
    token_command = ["pass", "show", "pigeon/default"]   # optional: a program that prints the token

    [profiles.work]
    base_url = "https://mail.example.com"

    [ui]
    theme = "textual-dark"

    [ui.keymap]          # binding id = keys
    "triage.done" = "e,delete"

    [compose]
    send_command = ["msmtp", "-t"]   # the message on standard input; none: a mailto: link to the system handler
    review = true                    # after the editor, review the draft before it goes (false: send at once)

    [[rules]]            # run on new mail at each sync (docs/rules.md)
    name = "newsletters"
    match = "from:news@example.com"
    label = "news"
    done = true
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import tomli_w

from pigeon import locations
from pigeon.files import write_private

DEFAULT_BASE_URL = "http://127.0.0.1:8025"
DEFAULT_PROFILE = "default"
DEFAULT_THEME = "textual-dark"
AFTER_TRIAGE = ("next", "previous", "list")
MIN_POLL_INTERVAL = 5.0
SECRET_KEYS = frozenset({"token", "access_token", "api_key", "password", "secret"})
MAX_CONFIG_BYTES = 1024 * 1024
"""The largest configuration file read (a few profiles and a keymap are a few kilobytes)."""

# The file has a handful of keys, checked here by hand rather than by pydantic-settings: that library and the
# pydantic machinery it loads took a large share of the time to the first screen of mail (docs/performance.md).
# Unknown keys are ignored.


class ConfigError(Exception):
    """The configuration file cannot be read or used; the message says which file and what is wrong."""


def _refuse_secrets(data: Any, where: str) -> None:
    if isinstance(data, dict):
        found = SECRET_KEYS.intersection(data)
        if found:
            raise ValueError(
                f"{where} must not hold {', '.join(sorted(found))}: Pigeon keeps the token in the OS keyring "
                "(run `pigeon login`), runs a profile's token_command, or reads PIGEON_TOKEN; remove it from the file"
            )


def _table(data: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ValueError(f"{where}{key}: should be a table")
    return value


def _command(data: dict[str, Any], key: str, where: str) -> list[str]:
    """A program and its arguments, as a list of strings (run without a shell); ``[]`` when not set."""
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(part, str) and part for part in value):
        raise ValueError(f'{where}{key}: should be a list of strings, the program first (e.g. ["msmtp", "-t"])')
    return list(value)


def _string(data: dict[str, Any], key: str, where: str, default: str | None) -> str | None:
    value = data.get(key, default)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{where}{key}: should be a string")
    return value


def check_base_url(value: str, where: str) -> str:
    """``value`` if it is an http(s) address of a service; else ``ValueError`` naming ``where`` (the setting) and
    the value, cleaned."""

    def bad(why: str) -> ValueError:
        from pigeon.sanitize import clean_line  # (loaded for a bad value only: not at every start)

        return ValueError(f"{where}: {clean_line(value, limit=80)!r} {clean_line(why, limit=120)}")

    if any(not ch.isprintable() or ch.isspace() for ch in value):
        raise bad("has a space or a control character in it; give the service's address")
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError as exc:
        raise bad(f"is not a valid URL ({exc})") from None
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise bad("should start with http:// or https:// and name a host")
    if port == 0:
        raise bad("has port 0; give a port from 1 to 65535, or none")
    if parts.username is not None or parts.password is not None:
        raise bad("should hold no user or password (the token is sent as a header)")
    if parts.query or parts.fragment or "?" in value or "#" in value:
        raise bad("should have no query (?...) or fragment (#...)")
    return value


@dataclass
class ProfileConfig:
    """One account on one service.

    ``base_url``: address of the messaging service (http or https). Pigeon checks for mail every
    ``poll_interval`` seconds (at least 5; longer while the service fails). ``live``: webhooks on top when they
    can work (a receiver on 127.0.0.1 when the service is on this machine and the keyring can keep its secret);
    on by default. ``token_command``: a program and its arguments that prints the token (run without a shell;
    ``PIGEON_TOKEN`` wins over it, it wins over the keyring). ``screener``: mail from a sender new to the user
    waits in the Screener until let in; on by default."""

    base_url: str = DEFAULT_BASE_URL
    live: bool = True
    screener: bool = True
    poll_interval: float = 60.0
    token_command: list[str] = field(default_factory=list)

    @classmethod
    def parse(cls, data: Any, where: str) -> ProfileConfig:
        if not isinstance(data, dict):
            raise ValueError(f"{where}: should be a table")
        _refuse_secrets(data, "a profile")
        base_url = check_base_url(
            _string(data, "base_url", f"{where}.", DEFAULT_BASE_URL) or DEFAULT_BASE_URL, f"{where}.base_url"
        )
        live = data.get("live", True)
        if not isinstance(live, bool):
            raise ValueError(f"{where}.live: should be true or false")
        screener = data.get("screener", True)
        if not isinstance(screener, bool):
            raise ValueError(f"{where}.screener: should be true or false")
        interval = data.get("poll_interval", 60.0)
        if isinstance(interval, bool) or not isinstance(interval, int | float) or math.isnan(interval):
            raise ValueError(f"{where}.poll_interval: should be a number of seconds")
        if interval < MIN_POLL_INTERVAL:
            raise ValueError(f"{where}.poll_interval: should be at least {MIN_POLL_INTERVAL:g} seconds")
        return cls(
            base_url=base_url,
            live=live,
            screener=screener,
            poll_interval=float(interval),
            token_command=_command(data, "token_command", f"{where}."),
        )


@dataclass
class UIConfig:
    """How the terminal UI looks (``theme``: a Textual theme, chosen in the command palette), which keys it
    answers to (``keymap``: binding id -> comma-separated keys, applied with App.set_keymap; see ``?``),
    whether new mail is announced (``notify_new_mail``: one note for what arrives together), what the reader
    shows after the open thread leaves the view (``after_triage``: the next thread, the previous one, or the list),
    and what opens attachments and mailto: links (``open_command``: a program and its arguments, the file or link
    added as the last one; default: the system's handler)."""

    theme: str = DEFAULT_THEME
    keymap: dict[str, str] = field(default_factory=dict)
    notify_new_mail: bool = True
    after_triage: str = "next"
    open_command: list[str] = field(default_factory=list)

    @classmethod
    def parse(cls, data: dict[str, Any]) -> UIConfig:
        theme = _string(data, "theme", "ui.", DEFAULT_THEME) or DEFAULT_THEME
        keymap = _table(data, "keymap", "ui.")
        for binding, keys in keymap.items():
            if not isinstance(keys, str):
                raise ValueError(f"ui.keymap.{binding}: should be a string of keys")
        notify = data.get("notify_new_mail", True)
        if not isinstance(notify, bool):
            raise ValueError("ui.notify_new_mail: should be true or false")
        after = _string(data, "after_triage", "ui.", "next")
        if after not in AFTER_TRIAGE:
            raise ValueError(f"ui.after_triage: should be one of {', '.join(AFTER_TRIAGE)}")
        return cls(
            theme=theme,
            keymap=dict(keymap),
            notify_new_mail=notify,
            after_triage=after,
            open_command=_command(data, "open_command", "ui."),
        )


@dataclass
class ComposeConfig:
    """How replies leave: ``send_command``, a program and its arguments that reads a whole RFC 5322 message on
    standard input (``["msmtp", "-t"]``, ``["sendmail", "-t"]``); without one a reply opens as a ``mailto:`` link
    in the system's mail handler. ``review``: after the editor, show the draft to send, edit again, attach,
    postpone or discard it (false: it is sent at once)."""

    send_command: list[str] = field(default_factory=list)
    review: bool = True

    @classmethod
    def parse(cls, data: dict[str, Any]) -> ComposeConfig:
        review = data.get("review", True)
        if not isinstance(review, bool):
            raise ValueError("compose.review: should be true or false")
        return cls(send_command=_command(data, "send_command", "compose."), review=review)


@dataclass
class Settings:
    """Everything read from flags, environment (``PIGEON_PROFILE``, ``PIGEON_BASE_URL``) and file, before the
    active profile is resolved."""

    profile: str | None = None
    base_url: str | None = None
    default_profile: str = DEFAULT_PROFILE
    profiles: dict[str, ProfileConfig] = field(default_factory=dict)
    ui: UIConfig = field(default_factory=UIConfig)
    compose: ComposeConfig = field(default_factory=ComposeConfig)
    rules: Any = None
    """The ``[[rules]]`` tables as written: the core checks them, a line a mistake, and runs the good ones."""

    @classmethod
    def parse(cls, data: dict[str, Any]) -> Settings:
        _refuse_secrets(data, "the configuration")
        profiles = {
            str(name): ProfileConfig.parse(value, f"profiles.{name}")
            for name, value in _table(data, "profiles", "").items()
        }
        return cls(
            default_profile=_string(data, "default_profile", "", DEFAULT_PROFILE) or DEFAULT_PROFILE,
            profiles=profiles,
            ui=UIConfig.parse(_table(data, "ui", "")),
            compose=ComposeConfig.parse(_table(data, "compose", "")),
            rules=data.get("rules"),
        )


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
    def compose(self) -> ComposeConfig:
        return self.settings.compose

    @property
    def profile_config(self) -> ProfileConfig:
        return self.settings.profiles.get(self.profile, ProfileConfig())


def load_config(path: Path | None = None, *, profile: str | None = None, base_url: str | None = None) -> Config:
    """Read the configuration; ``profile`` and ``base_url`` are the command-line flags (they win over the
    environment, which wins over the file)."""
    path = path or locations.config_file()
    try:
        settings = Settings.parse(_read_raw(path))
    except ValueError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    settings.profile = profile or os.environ.get("PIGEON_PROFILE") or None
    settings.base_url = base_url or os.environ.get("PIGEON_BASE_URL") or None

    name = settings.profile or settings.default_profile
    if settings.base_url:
        url = settings.base_url
        source = "--base-url" if base_url else "PIGEON_BASE_URL"
        try:
            check_base_url(url, source)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
    elif name in settings.profiles:
        url, source = settings.profiles[name].base_url, f"profile {name!r} in {path}"
    else:
        url, source = DEFAULT_BASE_URL, "default"
    return Config(path=path, profile=name, base_url=url, base_url_source=source, ui=settings.ui, settings=settings)


def read_rules(path: Path) -> object:
    """The ``[[rules]]`` the file holds now, as written (``pigeon.core.rules`` checks them); :class:`ConfigError`
    if the file cannot be read."""
    try:
        return Settings.parse(_read_raw(path)).rules
    except ValueError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def _read_raw(path: Path) -> dict[str, Any]:
    """The file's TOML document (``{}`` when there is none); any failure to read it is one :class:`ConfigError`
    naming the file (a hostile file must not end in a traceback: tomllib recurses once per nested bracket)."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"{path} cannot be read: {exc.strerror or exc}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path} is over {MAX_CONFIG_BYTES // 1024} KiB, too large for a configuration file")
    try:
        return tomllib.loads(raw.decode())
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{path} nests arrays or tables too deeply to read") from None


def _write_private(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` as TOML, atomically, readable only by the user (0600)."""
    try:
        text = tomli_w.dumps(data)
    except RecursionError:  # (tomllib reads a little deeper than tomli_w writes)
        raise ConfigError(f"{path} nests arrays or tables too deeply to write back; it was left as it is") from None
    write_private(path, text.encode())


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
