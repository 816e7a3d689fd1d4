"""Webhook subscriptions: URL safety, Standard Webhooks signing, and the background deliverer.

Delivery rules (see ``docs/service-decisions.md``):

- payload ``{"id", "type", "created_at", "data": {"message": {...}}}``, the message thin (its ids, direction, status
  and times: :data:`EVENT_FIELDS`), never its subject, text or addresses (whoever holds the receiver's port reads
  the delivery; the receiver syncs to read the message); signed with the subscription's secret per the Standard
  Webhooks scheme (headers ``webhook-id``, ``webhook-timestamp``, ``webhook-signature``); the
  ``webhook-id`` stays the same on every retry of a delivery;
- only a 2xx answer is success; redirects are not followed; an attempt has a time to connect and a time in all,
  after which it counts as failed; the receiver's answer body is never read;
- anything else is retried with jittered exponential backoff up to ``max_attempts`` attempts in all; while a
  delivery waits for its retry the whole subscription waits (its deliveries go in order);
- a 410 Gone, or running out of attempts, turns the subscription ``failed`` (nothing more is sent to it);
- URLs whose host is or resolves to a loopback, private, link-local, multicast, reserved or metadata address are
  refused, at creation and again before every attempt, unless the server allows them; an attempt connects to the
  very address it checked (``webhook_targets``);
- each subscription is served on its own, and each account has its own budget of attempts in flight: a receiver
  that hangs holds back at most its own account's other deliveries, never another account's.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import json
import logging
import random
import secrets
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from standardwebhooks.webhooks import Webhook

from pigeon.models import Message, WebhookStatus
from pigeon_service.db import Database, DeliveryRow, iso
from pigeon_service.webhook_targets import UnsafeWebhookURL, pinned_target

if TYPE_CHECKING:
    import httpx

log = logging.getLogger("pigeon_service.webhooks")

USER_AGENT = "pigeon-webhooks/1"


def new_secret() -> str:
    """``whsec_`` + 32 random bytes, base64."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


EVENT_FIELDS = frozenset(
    {
        "id",
        "thread_id",
        "inbox_id",
        "parent_id",
        "direction",
        "status",
        "created_at",
        "updated_at",
        "sent_at",
        "received_at",
    }
)
"""What an event tells of its message: enough to know what changed and sync it, nothing a stranger could read."""


def event_payload(kind: str, message: Message) -> str:
    """The JSON text of one event: the message named, never its contents (see :data:`EVENT_FIELDS`)."""
    return json.dumps(
        {
            "id": "evt_" + uuid.uuid4().hex,
            "type": kind,
            "created_at": iso(datetime.now(UTC)),
            "data": {"message": message.model_dump(mode="json", include=set(EVENT_FIELDS), exclude_none=True)},
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
    """Seconds an attempt may take in all (look-up, connect, send, answer's status line and headers)."""
    connect_timeout: float = 5.0
    per_account: int = 8
    """Attempts of one account in flight at once; another account's never wait for them."""
    allow_private: bool = False
    allow_loopback: bool = False

    def delay(self, attempts_made: int) -> float:
        base = min(self.max_delay, self.first_delay * 2 ** max(attempts_made - 1, 0))
        return float(base * random.uniform(0.8, 1.2))  # noqa: S311  (jitter)


class Deliverer:
    """Sends queued deliveries in the background; :meth:`wake` after queueing one.

    Each subscription with deliveries due is served by a task of its own that sends them in order; the loop that
    starts those tasks never waits on one, so a hanging receiver holds back nobody else.
    """

    def __init__(
        self, db: Database, policy: DeliveryPolicy | None = None, http_client: httpx.AsyncClient | None = None
    ) -> None:
        self.db = db
        self.policy = policy or DeliveryPolicy()
        self._http = http_client
        self._owns = False  # the client is made at the first delivery, and closed when ``run`` ends
        self._wake = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._serving: dict[str, asyncio.Task[None]] = {}
        self._budgets: dict[str, asyncio.Semaphore] = {}

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
        self._owns = self._http is None
        try:
            while True:
                self.dispatch_due()
                await self._sleep_until_next()
        finally:
            for task in list(self._serving.values()):
                task.cancel()
            await asyncio.gather(*self._serving.values(), return_exceptions=True)
            if self._owns and self._http is not None:
                await self._http.aclose()
                self._http = None
            self._owns = False

    async def _sleep_until_next(self) -> None:
        upcoming = self.db.next_delivery_at(exclude=tuple(self._serving))
        timeout = 30.0
        if upcoming is not None:
            wait = (datetime.fromisoformat(upcoming) - datetime.now(UTC)).total_seconds()
            timeout = min(timeout, max(wait, 0.0))
        self._wake.clear()
        # asyncio.timeout, not wait_for: on Python 3.11 wait_for swallows a cancellation that arrives as the event
        # is set, and the deliverer then never stopped (seen in the hanging-receiver test).
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self._wake.wait()

    def dispatch_due(self) -> list[asyncio.Task[None]]:
        """Start a task for every subscription that has deliveries due and is not already being served."""
        return self._start(self.db.due_deliveries(iso(datetime.now(UTC)), exclude=tuple(self._serving)))

    def _start(self, due: list[DeliveryRow]) -> list[asyncio.Task[None]]:
        by_hook: dict[str, list[DeliveryRow]] = {}
        for delivery in due:
            by_hook.setdefault(delivery.webhook_id, []).append(delivery)
        started = []
        for hook, deliveries in by_hook.items():
            task = asyncio.create_task(self._serve(deliveries), name=f"webhook {hook}")
            self._serving[hook] = task
            task.add_done_callback(functools.partial(self._served, hook))
            started.append(task)
        return started

    def _served(self, hook: str, _task: asyncio.Task[None]) -> None:
        self._serving.pop(hook, None)
        self.wake()  # its next delivery may be due already

    async def _serve(self, deliveries: list[DeliveryRow]) -> None:
        for delivery in deliveries:
            if not await self.attempt(delivery):
                return  # not delivered: the rest wait behind it, in order, for its retry

    async def deliver_due(self) -> int:
        """Start every delivery that is due now and wait for them; returns how many were due."""
        due = self.db.due_deliveries(iso(datetime.now(UTC)), exclude=tuple(self._serving))
        await asyncio.gather(*self._start(due))
        return len(due)

    async def attempt(self, delivery: DeliveryRow) -> bool:
        """One attempt at one delivery, within its account's budget; True when it was delivered."""
        budget = self._budgets.setdefault(delivery.account_id, asyncio.Semaphore(self.policy.per_account))
        async with budget:
            status, error = await self._send(delivery)
        return self._record(delivery, status, error)

    async def _send(self, delivery: DeliveryRow) -> tuple[int | None, str | None]:
        """The receiver's status, or why there is none."""
        import httpx  # (here: its import is no part of the service's start, before any request is answered)

        policy = self.policy
        if self._http is None and self._owns:
            self._http = new_http_client()
        http = self._http or new_http_client()
        try:
            async with asyncio.timeout(policy.timeout):
                target = await pinned_target(
                    delivery.url, allow_private=policy.allow_private, allow_loopback=policy.allow_loopback
                )
                moment = datetime.now(UTC)
                headers = sign(delivery.secret, delivery.id, delivery.payload, moment) | target.headers
                request = http.build_request(
                    "POST",
                    target.url,
                    content=delivery.payload.encode(),
                    headers=headers,
                    timeout=httpx.Timeout(policy.timeout, connect=policy.connect_timeout),
                    extensions=target.extensions,
                )
                # Streamed and closed unread: only the status counts, and a receiver's body could be endless.
                response = await http.send(request, stream=True, follow_redirects=False)
                await response.aclose()
                return response.status_code, None
        except UnsafeWebhookURL as exc:
            return None, f"refused: {exc}"
        except TimeoutError:
            return None, f"no answer within {policy.timeout:g} s"
        except httpx.HTTPError as exc:
            return None, f"{type(exc).__name__}: {exc}"[:300]
        finally:
            if self._http is None:
                await http.aclose()

    def _record(self, delivery: DeliveryRow, status: int | None, error: str | None) -> bool:
        attempts = delivery.attempts + 1
        if status is not None and 200 <= status < 300:
            self.db.record_attempt(delivery.id, state="delivered", status=status, error=None, next_attempt_at=None)
            return True
        if status == 410:
            self.db.record_attempt(delivery.id, state="failed", status=status, error="410 Gone", next_attempt_at=None)
            self.db.set_webhook_status(delivery.webhook_id, WebhookStatus.FAILED)
            log.info("webhook %s answered 410 Gone: subscription failed", delivery.webhook_id)
            return False
        error = error or f"answered {status}"
        if attempts >= self.policy.max_attempts:
            self.db.record_attempt(delivery.id, state="failed", status=status, error=error, next_attempt_at=None)
            self.db.set_webhook_status(delivery.webhook_id, WebhookStatus.FAILED)
            log.info("webhook %s failed %d times: subscription failed", delivery.webhook_id, attempts)
            return False
        retry_at = iso(datetime.now(UTC) + timedelta(seconds=self.policy.delay(attempts)))
        self.db.record_attempt(delivery.id, state="pending", status=status, error=error, next_attempt_at=retry_at)
        return False


def new_http_client() -> httpx.AsyncClient:
    """The deliverer's client: no shared cap on connections (each account's budget bounds its own), no redirects."""
    import httpx

    return httpx.AsyncClient(
        follow_redirects=False, limits=httpx.Limits(max_connections=None, max_keepalive_connections=20)
    )


def emit(db: Database, deliverer: Deliverer | None, account_id: str, kind: str, message: Message) -> int:
    """Queue event ``kind`` about ``message`` for the account's subscriptions and wake the deliverer."""
    queued = db.enqueue_event(account_id, kind, event_payload(kind, message))
    if queued and deliverer is not None:
        deliverer.wake()
    return queued
