"""Webhook subscriptions and their deliveries in the service's database: the queue the deliverer works through."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from pigeon.models import CreateWebhook, WebhookStatus, WebhookSubscription
from pigeon.sqlite import Database as SQLite
from pigeon_service.rows import dump, load, new_id, now_iso, webhook_of


def _not_among(column: str, values: tuple[str, ...]) -> str:
    """``AND column NOT IN (?, ...)`` for ``values``; nothing when there are none."""
    return f" AND {column} NOT IN ({', '.join('?' * len(values))})" if values else ""


MAX_ACTIVE_WEBHOOKS = 25
"""Active subscriptions an account may hold; ``failed`` ones do not count (they get nothing more)."""


class TooManyWebhooks(Exception):
    """The account already holds :data:`MAX_ACTIVE_WEBHOOKS` active subscriptions."""


@dataclass(frozen=True)
class DeliveryRow:
    id: str
    webhook_id: str
    url: str
    secret: str
    payload: str
    attempts: int
    account_id: str = ""


# The first pending delivery of every active subscription: a subscription whose first delivery waits for a retry
# is backed off whole, so its later deliveries wait too (they go in order).
_HEADS = (
    "WITH heads AS (SELECT d.webhook_id, MIN(d.rowid) AS head FROM deliveries d "
    "JOIN webhooks w ON w.id = d.webhook_id WHERE d.state = 'pending' AND w.status = ? GROUP BY d.webhook_id) "
)


class WebhookRows(SQLite):
    """Subscriptions, events and delivery attempts."""

    def create_webhook(
        self, account_id: str, body: CreateWebhook, *, secret: str, cap: int = MAX_ACTIVE_WEBHOOKS
    ) -> WebhookSubscription:
        """Store a new active subscription; :class:`TooManyWebhooks` when the account already holds ``cap``."""
        stamp = now_iso()
        webhook_id = new_id()
        with self.transaction() as conn:
            (active,) = conn.execute(
                "SELECT COUNT(*) FROM webhooks WHERE account_id = ? AND status = ?",
                (account_id, WebhookStatus.ACTIVE.value),
            ).fetchone()
            if active >= cap:
                raise TooManyWebhooks(cap)
            conn.execute(
                "INSERT INTO webhooks (id, account_id, url, events, status, description, secret, metadata, "
                "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    webhook_id,
                    account_id,
                    body.url,
                    dump([e.value for e in body.events]),
                    WebhookStatus.ACTIVE.value,
                    body.description,
                    secret,
                    dump(body.metadata),
                    stamp,
                    stamp,
                ),
            )
            row = conn.execute("SELECT * FROM webhooks WHERE id = ?", (webhook_id,)).fetchone()
        return webhook_of(row)

    def get_webhook(self, webhook_id: str) -> WebhookSubscription | None:
        row = self.row("SELECT * FROM webhooks WHERE id = ?", (webhook_id,))
        return webhook_of(row) if row else None

    def set_webhook_status(self, webhook_id: str, status: WebhookStatus) -> None:
        with self.transaction() as conn:
            conn.execute(
                "UPDATE webhooks SET status = ?, updated_at = ? WHERE id = ?", (status.value, now_iso(), webhook_id)
            )

    def enqueue_event(self, account_id: str, kind: str, payload: str) -> int:
        """Queue a delivery of event ``kind`` (JSON text ``payload``) to every active subscription of the account
        that wants it; each delivery gets its own id (the ``webhook-id`` header). Returns how many were queued."""
        stamp = now_iso()
        with self.transaction() as conn:
            hooks = conn.execute(
                "SELECT id, events FROM webhooks WHERE account_id = ? AND status = ?",
                (account_id, WebhookStatus.ACTIVE.value),
            ).fetchall()
            queued = 0
            for hook in hooks:
                if kind not in load(hook["events"], []):
                    continue
                delivery_id = "msg_" + uuid.uuid4().hex
                conn.execute(
                    "INSERT INTO deliveries (id, webhook_id, payload, next_attempt_at, state, created_at) "
                    "VALUES (?, ?, ?, ?, 'pending', ?)",
                    (delivery_id, hook["id"], payload, stamp, stamp),
                )
                queued += 1
        return queued

    def due_deliveries(self, now: str, limit: int = 50, exclude: tuple[str, ...] = ()) -> list[DeliveryRow]:
        """Pending deliveries due by ``now``, in the order they were queued, of subscriptions whose first pending
        delivery is due, leaving out subscriptions in ``exclude``."""
        rows = self.rows(
            _HEADS + "SELECT d.id, d.webhook_id, d.payload, d.attempts, w.url, w.secret, w.account_id "  # noqa: S608
            "FROM heads h JOIN deliveries head_row ON head_row.rowid = h.head "
            "JOIN deliveries d ON d.webhook_id = h.webhook_id JOIN webhooks w ON w.id = d.webhook_id "
            "WHERE head_row.next_attempt_at <= ? AND d.state = 'pending' AND d.next_attempt_at <= ?"
            f"{_not_among('d.webhook_id', exclude)} ORDER BY d.rowid LIMIT ?",
            (WebhookStatus.ACTIVE.value, now, now, *exclude, limit),
        )
        return [
            DeliveryRow(
                r["id"], r["webhook_id"], r["url"], r["secret"], r["payload"], int(r["attempts"]), r["account_id"]
            )
            for r in rows
        ]

    def next_delivery_at(self, exclude: tuple[str, ...] = ()) -> str | None:
        """When the next subscription's first pending delivery is due (the earliest of them)."""
        row = self.row(
            _HEADS + "SELECT MIN(head_row.next_attempt_at) AS at FROM heads h "  # noqa: S608
            f"JOIN deliveries head_row ON head_row.rowid = h.head WHERE 1{_not_among('h.webhook_id', exclude)}",
            (WebhookStatus.ACTIVE.value, *exclude),
        )
        return row["at"] if row and row["at"] else None

    def record_attempt(
        self, delivery_id: str, *, state: str, status: int | None, error: str | None, next_attempt_at: str | None
    ) -> None:
        with self.transaction() as conn:
            conn.execute(
                "UPDATE deliveries SET attempts = attempts + 1, state = ?, last_status = ?, last_error = ?, "
                "next_attempt_at = COALESCE(?, next_attempt_at) WHERE id = ?",
                (state, status, error, next_attempt_at, delivery_id),
            )

    def deliveries(self, webhook_id: str) -> list[dict[str, Any]]:
        """Every delivery of a subscription (for tests and operators)."""
        rows = self.rows("SELECT * FROM deliveries WHERE webhook_id = ? ORDER BY created_at", (webhook_id,))
        return [dict(r) for r in rows]
