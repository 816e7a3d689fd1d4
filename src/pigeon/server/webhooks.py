"""Webhook subscriptions: URL safety, Standard Webhooks signing, and the background deliverer.

Delivery rules (see ``docs/service-decisions.md``):

- payload ``{"id", "type", "created_at", "data": {"message": {...}}}``, signed with the subscription's secret per
  the Standard Webhooks scheme (headers ``webhook-id``, ``webhook-timestamp``, ``webhook-signature``); the
  ``webhook-id`` stays the same on every retry of a delivery;
- only a 2xx answer is success; redirects are not followed; each attempt times out after 10 s;
- anything else is retried with jittered exponential backoff up to ``max_attempts`` attempts in all;
- a 410 Gone, or running out of attempts, turns the subscription ``failed`` (nothing more is sent to it);
- URLs whose host is or resolves to a loopback, private, link-local, multicast, reserved or metadata address are
  refused, at creation and again before every attempt, unless the server allows private webhooks.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import ipaddress
import json
import logging
import random
import secrets
import socket
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

import httpx
from standardwebhooks.webhooks import Webhook

from pigeon.models import Message, WebhookStatus
from pigeon.server.db import Database, DeliveryRow, iso

log = logging.getLogger("pigeon.server.webhooks")

USER_AGENT = "pigeon-webhooks/1"
RESOLVE_TIMEOUT = 3.0


class UnsafeWebhookURL(ValueError):
    """A webhook URL that points at this machine, a private network or a cloud metadata service."""


def new_secret() -> str:
    """``whsec_`` + 32 random bytes, base64."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def _blocked(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    # Not globally routable covers loopback, private, link-local (cloud metadata at 169.254.169.254), carrier-grade
    # NAT, documentation, reserved and unspecified ranges; multicast is refused too.
    return not address.is_global or address.is_multicast


async def check_url(url: str, *, allow_private: bool, must_resolve: bool) -> None:
    """Refuse ``url`` if its host is, or resolves to, an address a webhook must not reach.

    At creation an unresolvable name is let through (``must_resolve=False``): it is checked again, and must
    resolve, before every delivery attempt.
    """
    if allow_private:
        return
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    if not host:
        raise UnsafeWebhookURL("the URL has no host")
    if host == "localhost" or host.endswith((".localhost", ".internal", ".local")):
        raise UnsafeWebhookURL(f"{host} is a local name; webhooks may not target this machine or its network")
    try:
        literal = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None:
        if _blocked(literal):
            raise UnsafeWebhookURL(f"{host} is a loopback, private, link-local or reserved address")
        return
    try:
        infos = await asyncio.wait_for(
            asyncio.get_running_loop().getaddrinfo(host, None, type=socket.SOCK_STREAM), RESOLVE_TIMEOUT
        )
    except (OSError, TimeoutError) as exc:
        if must_resolve:
            raise UnsafeWebhookURL(f"{host} could not be resolved") from exc
        return
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%")[0])
        if _blocked(address):
            raise UnsafeWebhookURL(f"{host} resolves to {address}, a loopback, private or reserved address")


def event_payload(kind: str, message: Message) -> str:
    """The JSON text of one event."""
    return json.dumps(
        {
            "id": "evt_" + uuid.uuid4().hex,
            "type": kind,
            "created_at": iso(datetime.now(UTC)),
            "data": {"message": message.model_dump(mode="json", exclude_none=True)},
        },
        separators=(",", ":"),
    )


def sign(secret: str, delivery_id: str, payload: str, moment: datetime) -> dict[str, str]:
    """Standard Webhooks headers for ``payload``."""
    return {
        "webhook-id": delivery_id,
        "webhook-timestamp": str(int(moment.timestamp())),
        "webhook-signature": Webhook(secret).sign(delivery_id, moment, payload),
        "content-type": "application/json",
        "user-agent": USER_AGENT,
    }


@dataclass
class DeliveryPolicy:
    """How hard the deliverer tries; tests shrink the delays."""

    max_attempts: int = 6
    first_delay: float = 5.0
    max_delay: float = 3600.0
    timeout: float = 10.0
    allow_private: bool = False

    def delay(self, attempts_made: int) -> float:
        base = min(self.max_delay, self.first_delay * 2 ** max(attempts_made - 1, 0))
        return float(base * random.uniform(0.8, 1.2))  # noqa: S311  (jitter)


class Deliverer:
    """Sends queued deliveries in the background; :meth:`wake` after queueing one."""

    def __init__(
        self, db: Database, policy: DeliveryPolicy | None = None, http_client: httpx.AsyncClient | None = None
    ) -> None:
        self.db = db
        self.policy = policy or DeliveryPolicy()
        self._http = http_client
        self._wake = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None

    def wake(self) -> None:
        """Look for due deliveries now; safe to call from any thread."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self._wake.set()
        else:
            loop.call_soon_threadsafe(self._wake.set)

    async def run(self) -> None:
        """Deliver until cancelled."""
        self._loop = asyncio.get_running_loop()
        owns = self._http is None
        http = self._http or httpx.AsyncClient(follow_redirects=False)
        try:
            while True:
                await self.deliver_due()
                await self._sleep_until_next()
        finally:
            if owns:
                await http.aclose()

    async def _sleep_until_next(self) -> None:
        upcoming = self.db.next_delivery_at()
        timeout = 30.0
        if upcoming is not None:
            wait = (datetime.fromisoformat(upcoming) - datetime.now(UTC)).total_seconds()
            timeout = min(timeout, max(wait, 0.0))
        self._wake.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), timeout)

    async def deliver_due(self) -> int:
        """Attempt every delivery that is due now; returns how many were attempted."""
        due = self.db.due_deliveries(iso(datetime.now(UTC)))
        if due:
            await asyncio.gather(*(self.attempt(d) for d in due))
        return len(due)

    async def attempt(self, delivery: DeliveryRow) -> None:
        status: int | None = None
        error: str | None = None
        try:
            await check_url(delivery.url, allow_private=self.policy.allow_private, must_resolve=True)
            moment = datetime.now(UTC)
            headers = sign(delivery.secret, delivery.id, delivery.payload, moment)
            http = self._http or httpx.AsyncClient(follow_redirects=False)
            try:
                response = await http.post(
                    delivery.url,
                    content=delivery.payload.encode(),
                    headers=headers,
                    timeout=self.policy.timeout,
                    follow_redirects=False,
                )
            finally:
                if self._http is None:
                    await http.aclose()
            status = response.status_code
        except UnsafeWebhookURL as exc:
            error = f"refused: {exc}"
        except httpx.HTTPError as exc:
            error = f"{type(exc).__name__}: {exc}"[:300]

        attempts = delivery.attempts + 1
        if status is not None and 200 <= status < 300:
            self.db.record_attempt(delivery.id, state="delivered", status=status, error=None, next_attempt_at=None)
            return
        if status == 410:
            self.db.record_attempt(delivery.id, state="failed", status=status, error="410 Gone", next_attempt_at=None)
            self.db.set_webhook_status(delivery.webhook_id, WebhookStatus.FAILED)
            log.info("webhook %s answered 410 Gone: subscription failed", delivery.webhook_id)
            return
        error = error or f"answered {status}"
        if attempts >= self.policy.max_attempts:
            self.db.record_attempt(delivery.id, state="failed", status=status, error=error, next_attempt_at=None)
            self.db.set_webhook_status(delivery.webhook_id, WebhookStatus.FAILED)
            log.info("webhook %s failed %d times: subscription failed", delivery.webhook_id, attempts)
            return
        retry_at = iso(datetime.now(UTC) + timedelta(seconds=self.policy.delay(attempts)))
        self.db.record_attempt(delivery.id, state="pending", status=status, error=error, next_attempt_at=retry_at)


def emit(db: Database, deliverer: Deliverer | None, account_id: str, kind: str, message: Message) -> int:
    """Queue event ``kind`` about ``message`` for the account's subscriptions and wake the deliverer."""
    queued = db.enqueue_event(account_id, kind, event_payload(kind, message))
    if queued and deliverer is not None:
        deliverer.wake()
    return queued
