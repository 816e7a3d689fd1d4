"""Checking for mail: a check every ``poll_interval`` seconds always, and webhooks on top when they can work.

Webhooks can work when the service runs on this machine (it must reach a receiver on 127.0.0.1) and accepts a
subscription to a private address, and when the keyring can keep the subscription's secret. One subscription is
kept per profile and service, across runs: its receiver's address and secret are kept in the keyring (an
in-memory vault for the demo and tests), and the next start listens on the same address with the same secret
instead of subscribing again (the spec has no way to delete a subscription, so each new one would keep delivering
to a port nobody owns). A subscription can stop delivering for good while Pigeon is closed (the service gives up
after its retries): when a check finds changed threads no event announced, a new subscription replaces it.

The caller (the TUI) gets each verified event and does its own timing; :class:`Mode` says which way mail comes
and why. No Textual here.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from pigeon import credentials
from pigeon.api import PigeonError

if TYPE_CHECKING:
    from pigeon.api.client import PigeonClient
    from pigeon.api.receiver import WebhookReceiver
    from pigeon.models import Message

log = logging.getLogger("pigeon.core.live")

BACKUP_FACTOR = 5  # with webhooks, the check for mail still runs, this many times less often


def is_loopback(base_url: str) -> bool:
    host = (urlsplit(base_url).hostname or "").lower()
    return host in {"localhost", "::1"} or host.startswith("127.")


@dataclass(frozen=True)
class LiveEvent:
    """A verified event about a message: ``created`` (new mail) or a change of the message."""

    created: bool
    message: Message


def parse_event(data: dict[str, Any]) -> LiveEvent | None:
    """The event's message, if it carries a valid one."""
    from pydantic import ValidationError

    from pigeon.api.receiver import event_message
    from pigeon.models import EventKind
    from pigeon.models import Message as MailMessage

    raw = event_message(data)
    try:
        message = MailMessage.model_validate(raw) if raw else None
    except ValidationError:
        return None
    if message is None or not message.thread_id:
        return None
    return LiveEvent(data.get("type") == EventKind.MESSAGE_CREATED, message)


@dataclass(frozen=True)
class Mode:
    """How new mail reaches Pigeon (``webhooks``), why, and the same in a few words for the status line."""

    webhooks: bool
    why: str
    short: str = ""

    def words(self, poll_interval: float) -> str:
        """For ``pigeon status`` and the status line's long form."""
        if self.webhooks:
            return f"live: webhooks ({self.why}), and a check every {poll_interval * BACKUP_FACTOR:.0f} s"
        return f"a check every {poll_interval:.0f} s; no webhooks: {self.why}"

    def status(self, poll_interval: float) -> str:
        if self.webhooks:
            return "live"
        return f"checking every {poll_interval:.0f} s" + (f" ({self.short})" if self.short else "")


def plan(live_wanted: bool, base_url: str, can_keep: bool) -> Mode | None:
    """Why webhooks cannot be used, known before trying (``None``: they may be)."""
    if not live_wanted:
        return Mode(False, "live = false in the config", "live off")
    if not is_loopback(base_url):
        return Mode(False, "the service is not on this machine, so it cannot reach a receiver here")
    if not can_keep:
        return Mode(False, "no keyring to keep a webhook subscription's secret in", "no keyring")
    return None


class Vault(Protocol):
    """Where the kept subscription is (its secret included)."""

    def load(self, name: str) -> str | None: ...
    def save(self, name: str, value: str) -> bool: ...
    def forget(self, name: str) -> None: ...


class MemoryVault:
    """For the demo (its service lives as long as the app) and tests."""

    def __init__(self) -> None:
        self.kept: dict[str, str] = {}

    def load(self, name: str) -> str | None:
        return self.kept.get(name)

    def save(self, name: str, value: str) -> bool:
        self.kept[name] = value
        return True

    def forget(self, name: str) -> None:
        self.kept.pop(name, None)


class KeyringVault:
    """The OS keyring (never a keyring that writes plain files)."""

    def load(self, name: str) -> str | None:
        return credentials.read_secret(name)

    def save(self, name: str, value: str) -> bool:
        return credentials.keep_secret(name, value)

    def forget(self, name: str) -> None:
        credentials.forget_secret(name)


@dataclass(frozen=True)
class KeptHook:
    """A subscription kept across runs: where its receiver listens and the secret its deliveries are signed with."""

    id: str
    port: int
    path: str
    secret: str

    @classmethod
    def parse(cls, text: str | None) -> KeptHook | None:
        try:
            data = json.loads(text or "")
            return cls(str(data["id"]), int(data["port"]), str(data["path"]), str(data["secret"]))
        except (ValueError, TypeError, KeyError):
            return None


def vault_name(profile: str, base_url: str) -> str:
    return f"{profile} webhook {base_url.rstrip('/')}"


class Live:
    """One profile's webhooks: :meth:`start` says whether they are in use and why."""

    def __init__(self, vault: Vault, name: str) -> None:
        self.vault = vault
        self.name = name
        self._receiver: WebhookReceiver | None = None
        self._announced: set[str] = set()  # threads events told of since the last check
        self.renewed = 0

    @property
    def receiver(self) -> WebhookReceiver | None:
        """The receiver of webhook deliveries, while live updates come that way."""
        return self._receiver

    async def start(self, client: PigeonClient, on_event: Callable[[dict[str, Any]], None]) -> Mode:
        """Listen for the kept subscription's deliveries, or subscribe anew; the mode says how mail comes."""
        from pigeon.api.receiver import WebhookReceiver  # only when live updates are on

        def heard(data: dict[str, Any]) -> None:
            event = parse_event(data)
            if event is not None and event.message.thread_id:
                self._announced.add(event.message.thread_id)
            on_event(data)

        kept = KeptHook.parse(self.vault.load(self.name))
        if kept is not None:
            receiver = WebhookReceiver(heard, port=kept.port, path=kept.path)
            try:
                await receiver.start()
            except OSError:  # the port is taken (another Pigeon of this profile?): subscribe anew
                log.info("kept webhook receiver port %d is taken", kept.port)
            else:
                receiver.secret = kept.secret
                self._receiver = receiver
                return Mode(True, "subscription kept from an earlier run")
        receiver = WebhookReceiver(heard)
        await receiver.start()
        self._receiver = receiver
        why = await self._subscribe(client)
        if why:
            await self.stop()
            return Mode(False, why, "webhook refused")
        return Mode(True, "new subscription")

    async def _subscribe(self, client: PigeonClient) -> str:
        """Subscribe the running receiver and keep the subscription; a reason when that failed, else ``""``."""
        from pigeon.models import EventKind

        receiver = self._receiver
        assert receiver is not None
        try:
            hook = await client.webhooks.create(
                url=receiver.url, events=[kind.value for kind in EventKind], description="Pigeon live updates"
            )
        except PigeonError as exc:
            log.info("webhook subscription refused, polling instead: %s", exc)
            return f"the service refused a webhook to this machine: {exc}"
        if not hook.secret:
            return "the service gave no secret to check its deliveries with"
        receiver.secret = hook.secret
        kept = KeptHook(hook.id, receiver.port, receiver.path, hook.secret)
        self.vault.save(self.name, json.dumps(asdict(kept)))
        return ""

    async def check(self, client: PigeonClient, changed: Iterable[str]) -> bool:
        """After a check for mail: threads changed that no event announced mean the subscription stopped
        delivering (the service gave up on it while Pigeon was closed). Subscribe anew; ``True`` if it did."""
        silent = set(changed) - self._announced
        self._announced.clear()
        if self._receiver is None or not silent:
            return False
        self.vault.forget(self.name)
        if await self._subscribe(client):
            return False
        self.renewed += 1
        return True

    async def stop(self) -> None:
        if self._receiver is not None:
            await self._receiver.stop()
            self._receiver = None
