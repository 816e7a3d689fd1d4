"""What every command stands on: the configuration from the flags, the mail core of the profile (its store and its
client), and reading typed arguments."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import sqlite3
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from pigeon import credentials
from pigeon.cli.output import UsageError
from pigeon.config import Config, load_config
from pigeon.core.errors import OtherAccount

if TYPE_CHECKING:
    from pigeon.core.mail import MailCore, MailStore

T = TypeVar("T")


def config_of(args: argparse.Namespace, *, creating: bool = False) -> Config:
    """The configuration the flags name; a profile named that the file does not have is an error (a typo must not
    quietly become an empty profile), unless ``creating`` (login makes it)."""
    config = load_config(profile=getattr(args, "profile", None), base_url=getattr(args, "base_url", None))
    known = config.settings.profiles
    if not creating and config.profile not in known and config.profile != config.settings.default_profile:
        names = ", ".join(sorted(known)) or "none yet"
        raise UsageError(
            f"No profile {config.profile!r} in {config.path} (profiles: {names}). "
            f"`pigeon login --profile {config.profile}` creates it."
        )
    return config


def resolve_token(config: Config) -> tuple[str | None, credentials.TokenSource]:
    """The profile's token and where it came from (PIGEON_TOKEN, its token_command, the keyring)."""
    return credentials.resolve_token(config.profile, config.profile_config.token_command)


def token_of(config: Config) -> str:
    token, _ = resolve_token(config)
    if not token:
        raise UsageError(
            f"Not logged in (profile {config.profile!r}): run `pigeon login`, or give the token with token_command "
            "in the profile or PIGEON_TOKEN."
        )
    return token


def core_of(args: argparse.Namespace, *, online: bool, local: bool = True, creating: bool = False) -> MailCore:
    """The profile's mail core: ``online`` ones need a token; ``local`` ones open the profile's store (the others
    keep nothing: they only ask the service); ``creating`` for login, which makes the profile."""
    from pigeon.core.mail import MailCore, MailStore

    config = config_of(args, creating=creating)
    token = token_of(config) if online else None
    store = open_store(config) if local else MailStore(":memory:")
    return MailCore(config, store, token=token)


def open_store(config: Config) -> MailStore:
    """The profile's local store, or a one-line error that names the file and the way out."""
    from pigeon.core.errors import SchemaTooNew, StoreUnwritable
    from pigeon.core.mail import MailStore, store_path

    try:
        return MailStore.for_profile(config.profile)
    except StoreUnwritable:  # (a full disk or a read-only folder: the file is fine, so no advice to move it)
        raise
    except (sqlite3.Error, SchemaTooNew, OSError) as exc:
        path = store_path(config.profile)
        raise UsageError(
            f"Cannot open the local store {path} ({exc}). Move it aside and start again: Pigeon builds a new one "
            "from the service (the triage state kept in the old one stays in that file)."
        ) from None


BATCH_YOUNG_THRESHOLD = 50_000
"""Objects made between two young collections during a batch (Python's default is 700)."""


@contextlib.contextmanager
def batch_collection() -> Iterator[None]:
    """The cyclic garbage collector as a batch command wants it: what was made before (modules, the core) frozen,
    so no collection walks it again, and the young generation collected every ``BATCH_YOUNG_THRESHOLD`` objects.

    Collections took a noticeable share of a first ``pigeon sync``'s CPU (docs/performance.md), while nearly every
    object a sync makes (a page, its messages, their models) is freed by reference counting once stored, so
    collecting less often finds the same garbage, seldom. The app keeps its own policy (``pigeon.tui.memory``): its
    frames, not a batch's throughput, decide there."""
    before, frozen_before = gc.get_threshold(), gc.get_freeze_count()
    gc.freeze()
    gc.set_threshold(BATCH_YOUNG_THRESHOLD, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
        if not frozen_before:  # (what another froze stays frozen)
            gc.unfreeze()


def run(args: argparse.Namespace, call: Callable[[MailCore], Awaitable[T]], *, local: bool = False) -> T:
    """Run one async call on the profile's mail core (logged in), closed after; ``local`` with its store."""
    core = core_of(args, online=True, local=local)

    async def go() -> T:
        try:
            return await call(core)
        finally:
            await core.close()

    try:
        return asyncio.run(go())
    except OtherAccount as exc:  # a setup problem (which token, which profile), not a failure of the service
        raise UsageError(str(exc)) from None


def json_object(text: str, what: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{what} is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise UsageError(f'{what} must be a JSON object, like \'{{"team": "ops"}}\'')
    return value


def typed_value(text: str, enum: type[Any], prefix: str, what: str) -> dict[str, str]:
    """``TYPE:VALUE`` with TYPE a short name (``work``) or the full enum value (``EMAIL_TYPE_WORK``)."""
    kind, sep, value = text.partition(":")
    if not sep or not value:
        short = ", ".join(m.name.lower() for m in enum)
        raise UsageError(f"--{what} takes TYPE:VALUE, with TYPE one of {short}; got {text!r}")
    key = kind.strip().upper()
    names = {m.name: m.value for m in enum} | {m.value: m.value for m in enum}
    if key not in names and f"{prefix}{key}" not in names:
        short = ", ".join(m.name.lower() for m in enum)
        raise UsageError(f"--{what}: unknown type {kind!r}; use one of {short}")
    return {"type": names.get(key) or names[f"{prefix}{key}"], "value": value.strip()}
