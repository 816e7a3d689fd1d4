"""Checking for mail: a check every ``poll_interval`` seconds always, and webhooks on top when they can work.

Webhooks can work when the service runs on this machine (it must reach a receiver on 127.0.0.1) and accepts a
subscription to a private address, and when the keyring can keep the subscription's secret. One subscription is
kept per profile and service, across runs: its receiver's address and secret are kept in the keyring (an
in-memory vault for the demo and tests), and the next start listens on the same address with the same secret
instead of subscribing again (the spec has no way to delete a subscription, so each new one would keep delivering
to a port nobody owns). When another program holds that port, mail is checked instead for the run, and the user
told. A subscription can stop delivering for good while Pigeon is closed (the service gives up after its retries):
when synced mail stays unannounced past a margin while nothing is delivered at all, a new subscription replaces it,
once.

The caller (the TUI) gets each verified event (read once, by the receiver) and does its own timing: an event is a
reason to sync (its thread is read again), never mail to show. :class:`Mode` says which way mail comes and why. No
Textual here.
"""

from __future__ import annotations

import errno
import json
import logging
import math
import socket
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit

from pigeon import credentials
from pigeon.api import PigeonError

if TYPE_CHECKING:
    from pigeon.api.client import PigeonClient
    from pigeon.api.receiver import WebhookReceiver
    from pigeon.models import Message
    from pigeon.models.events import WebhookEvent

log = logging.getLogger("pigeon.core.live")

BACKUP_FACTOR = 5  # with webhooks, the check for mail still runs, this many times less often
DELIVERY_MARGIN = 300.0
"""Seconds a stored message may wait for its delivery before deliveries count as stopped: more than the service's
whole retry schedule (see docs/service-decisions.md, "Webhooks"), so a late delivery is never taken for a stop."""
ANNOUNCED_KEPT = 2000  # ids of delivered messages remembered (a sync may store a message after its delivery)


def is_loopback(base_url: str) -> bool:
    host = (urlsplit(base_url).hostname or "").lower()
    return host in {"localhost", "::1"} or host.startswith("127.")


NAMED_KEPT = 1000  # threads events may name between two syncs


@dataclass(frozen=True)
class Mode:
    """How new mail reaches Pigeon (``webhooks``), why, and the same in a few words for the status line."""

    webhooks: bool
    why: str
    short: str = ""
    warn: bool = False
    """Something on this machine is wrong (not merely unavailable): the app says ``why`` when it starts."""

    def words(self, poll_interval: float) -> str:
        """For ``pigeon status`` and the status line's long form."""
        if self.webhooks:
            return f"live: webhooks ({self.why}), and a check every {poll_interval * BACKUP_FACTOR:.0f} s"
        return f"a check every {poll_interval:.0f} s; no webhooks: {self.why}"

    def status(self, poll_interval: float) -> str:
        if self.webhooks:
            return "live"
        return f"checking every {poll_interval:.0f} s" + (f" ({self.short})" if self.short else "")


def plan(live_wanted: bool, base_url: str, vault: Vault, kept_as: str = "") -> Mode:
    """How new mail will come, as far as is known before trying: no webhooks and why, or webhooks to try (the
    service may still refuse them). The one answer for ``pigeon status`` and the app; the keyring is asked last
    (with ``kept_as``, for the subscription kept under that name, whose port must be free)."""
    if not live_wanted:
        return Mode(False, "live = false in the config", "live off")
    if not is_loopback(base_url):
        return Mode(False, "the service is not on this machine, so it cannot reach a receiver here")
    if not vault.can_keep():
        return Mode(False, "no keyring to keep a webhook subscription's secret in", "no keyring")
    kept = KeptHook.parse(vault.load(kept_as)) if kept_as else None
    held = port_held(kept.port) if kept is not None else ""
    if held:
        return Mode(False, held, "webhook port taken", warn=True)
    return Mode(True, f"while the app runs: the service is on this machine; {vault.where}")


class Vault(Protocol):
    """Where the kept subscription is (its secret included)."""

    where: str  # said in ``pigeon status``

    def can_keep(self) -> bool: ...
    def load(self, name: str) -> str | None: ...
    def save(self, name: str, value: str) -> bool: ...
    def forget(self, name: str) -> None: ...


class MemoryVault:
    """For the demo (its service lives as long as the app) and tests."""

    where = "its subscription lasts as long as the app"

    def __init__(self) -> None:
        self.kept: dict[str, str] = {}

    def can_keep(self) -> bool:
        return True

    def load(self, name: str) -> str | None:
        return self.kept.get(name)

    def save(self, name: str, value: str) -> bool:
        self.kept[name] = value
        return True

    def forget(self, name: str) -> None:
        self.kept.pop(name, None)


class KeyringVault:
    """The OS keyring (never a keyring that writes plain files)."""

    where = "one subscription is kept in the keyring"

    def can_keep(self) -> bool:
        return credentials.can_keep_secrets()

    def load(self, name: str) -> str | None:
        return credentials.read_secret(name)

    def save(self, name: str, value: str) -> bool:
        return credentials.keep_secret(name, value)

    def forget(self, name: str) -> None:
        credentials.forget_secret(name)


def subscription_vault(*, keeps_nothing: bool) -> Vault:
    """Where a profile's subscription is kept: the keyring (wherever the token comes from, so that each start uses
    the one subscription again), or memory for a session that keeps nothing on this machine (the demo)."""
    return MemoryVault() if keeps_nothing else KeyringVault()


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


def port_taken(port: int, exc: OSError) -> str:
    """Why the kept subscription's receiver cannot listen, in a line."""
    if exc.errno == errno.EADDRINUSE:
        return f"another program holds port {port} on this machine, where the kept webhook subscription delivers"
    return f"cannot listen on port {port}, where the kept webhook subscription delivers ({exc.strerror or exc})"


def port_held(port: int) -> str:
    """Why the kept subscription's receiver could not listen on ``port`` now, or ``""`` when it could."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the receiver binds
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as exc:
            return port_taken(port, exc)
    return ""


def vault_name(profile: str, base_url: str) -> str:
    return f"{profile} webhook {base_url.rstrip('/')}"


class Live:
    """One profile's webhooks: :meth:`start` says whether they are in use and why; :meth:`check` tells deliveries
    that stopped from deliveries that are merely late.

    A subscription stopped when a sync stored a message created after the receiver began listening, no delivery
    announced it within ``margin`` seconds (longer than the service's whole retry schedule), and no delivery at all
    came meanwhile (a service may emit no event for some messages; any delivery shows the subscription works). It
    is then replaced once; a replacement that stops the same way, without a delivery ever, ends webhooks for the
    run (checks alone go on) rather than leave one subscription after another at the service."""

    def __init__(
        self, vault: Vault, name: str, *, margin: float = DELIVERY_MARGIN, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.vault = vault
        self.name = name
        self.margin = margin
        self.clock = clock
        self._receiver: WebhookReceiver | None = None
        self._announced: dict[str, None] = {}  # ids of the messages deliveries told of, the latest ANNOUNCED_KEPT
        self._unannounced: dict[str, float] = {}  # message id -> when a sync stored it with no delivery about it
        self._listening_since = datetime.now(UTC)  # messages created before it may never be delivered
        self._last_heard = -math.inf
        self._heard_since_subscribed = False
        self.renewed = 0
        self.named: set[str] = set()
        """Threads events named since the last sync: it reads their messages again even if the thread list shows
        no move (a changed status moves neither a thread's count nor its last time)."""

    @property
    def receiver(self) -> WebhookReceiver | None:
        """The receiver of webhook deliveries, while live updates come that way."""
        return self._receiver

    def _listen(self, receiver: WebhookReceiver) -> None:
        self._receiver = receiver
        self._listening_since = datetime.now(UTC)
        self._unannounced.clear()
        self._heard_since_subscribed = False

    def _heard(self, event: WebhookEvent) -> None:
        self._last_heard = self.clock()
        self._heard_since_subscribed = True
        if event.message_id:
            self._announced[event.message_id] = None
            self._unannounced.pop(event.message_id, None)
            while len(self._announced) > ANNOUNCED_KEPT:
                del self._announced[next(iter(self._announced))]

    def name_thread(self, event: WebhookEvent) -> None:
        """An event named this thread: the next sync reads it again (an event that names none is no reason)."""
        if event.thread_id and len(self.named) < NAMED_KEPT:
            self.named.add(event.thread_id)

    async def start(self, client: PigeonClient, on_event: Callable[[WebhookEvent], None]) -> Mode:
        """Listen for the kept subscription's deliveries, or subscribe anew when none is kept; the mode says how
        mail comes.

        When another program holds the kept subscription's port, it gets that subscription's deliveries (thin:
        which message changed, never its contents) and there is no taking them back. A new subscription would
        leave one more port for a stranger to take the same way, so mail is checked instead for this run, said
        once, and the kept subscription is used again when its port is free."""
        from pigeon.api.receiver import WebhookReceiver  # only when live updates are on

        def heard(event: WebhookEvent) -> None:
            self._heard(event)
            on_event(event)

        kept = KeptHook.parse(self.vault.load(self.name))
        if kept is not None:
            receiver = WebhookReceiver(heard, port=kept.port, path=kept.path)
            try:
                await receiver.start()
            except OSError as exc:
                why = port_taken(kept.port, exc)
                log.info("no webhooks: %s", why)
                return Mode(False, why, "webhook port taken", warn=True)
            else:
                receiver.secret = kept.secret
                self._listen(receiver)
                return Mode(True, "subscription kept from an earlier run")
        receiver = WebhookReceiver(heard)
        await receiver.start()
        self._listen(receiver)
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

    async def check(self, client: PigeonClient, stored: Iterable[Message]) -> Mode | None:
        """After a sync, with the messages it stored new: a new mode when deliveries had stopped (subscribed again,
        or webhooks given up), else ``None``."""
        if self._receiver is None:
            return None
        now = self.clock()
        for message in stored:
            created = message.created_at
            if message.id and message.id not in self._announced and created and created >= self._listening_since:
                self._unannounced.setdefault(message.id, now)
        late = [key for key, seen in self._unannounced.items() if now - seen >= self.margin]
        if not any(self._unannounced[key] > self._last_heard for key in late):
            for key in late:  # never delivered, though deliveries came after: no event for it, nothing stopped
                del self._unannounced[key]
            return None
        log.info("no webhook delivery for %d stored message(s): deliveries stopped", len(self._unannounced))
        self.vault.forget(self.name)
        if self.renewed and not self._heard_since_subscribed:  # the replacement never delivered either
            await self.stop()
            return Mode(False, "webhook deliveries stopped and a new subscription brought none", "webhooks stopped")
        self._listen(self._receiver)
        why = await self._subscribe(client)
        if why:
            await self.stop()
            return Mode(False, why, "webhook refused")
        self.renewed += 1
        return Mode(True, "subscribed again: deliveries had stopped")

    async def stop(self) -> None:
        if self._receiver is not None:
            await self._receiver.stop()
            self._receiver = None
