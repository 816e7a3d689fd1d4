"""The reference messaging service: the six operations of the spec over FastAPI, put together.

Choices where the spec says "not shown" are written down in ``docs/service-decisions.md``; they are made in the
routes (:mod:`.routes`), the problems (:mod:`.problems`), the limits (:mod:`.limits`), the storage (:mod:`.db`) and
the webhooks (:mod:`.webhooks`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI

from pigeon_service.db import Database
from pigeon_service.limits import BODY_TIMEOUT, MAX_BODY_BYTES, BodyLimit, RateLimiter
from pigeon_service.problems import PROBLEM_JSON, Problem, ProblemError, install_handlers
from pigeon_service.queries import THREAD_PAGE_DEFAULT, THREAD_PAGE_MAX
from pigeon_service.routes import make_router
from pigeon_service.webhook_rows import MAX_ACTIVE_WEBHOOKS
from pigeon_service.webhooks import Deliverer, DeliveryPolicy

__all__ = [
    "MAX_BODY_BYTES",
    "PROBLEM_JSON",
    "THREAD_PAGE_DEFAULT",
    "THREAD_PAGE_MAX",
    "Problem",
    "ProblemError",
    "ServerSettings",
    "create_app",
]


@dataclass
class ServerSettings:
    """How one instance of the service behaves."""

    allow_private_webhooks: bool = False
    allow_loopback_webhooks: bool = False
    """Webhooks may reach loopback (not private networks): for a service that listens on loopback only."""
    rate_limit_per_minute: int | None = None
    max_webhooks_per_account: int = MAX_ACTIVE_WEBHOOKS
    """Active webhook subscriptions an account may hold; one more is refused with 409."""
    max_body_bytes: int = MAX_BODY_BYTES
    body_timeout: float = BODY_TIMEOUT
    """Seconds a request body may take to arrive in all (408 past that)."""
    deliver_webhooks: bool = True
    delivery: DeliveryPolicy = field(default_factory=DeliveryPolicy)
    background: list[Callable[[Database, Deliverer], Coroutine[Any, Any, None]]] = field(default_factory=list)
    """Extra tasks run for the app's lifetime (live traffic)."""


def create_app(db: Database, settings: ServerSettings | None = None) -> FastAPI:
    """The service over ``db``. Background delivery and extra tasks run while the app's lifespan runs."""
    settings = settings or ServerSettings()
    settings.delivery.allow_private = settings.allow_private_webhooks
    settings.delivery.allow_loopback = settings.allow_loopback_webhooks
    deliverer = Deliverer(db, settings.delivery)
    limiter = RateLimiter(settings.rate_limit_per_minute) if settings.rate_limit_per_minute else None

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        tasks: list[asyncio.Task[None]] = []
        if settings.deliver_webhooks:
            tasks.append(asyncio.create_task(deliverer.run(), name="webhook-deliverer"))
        tasks += [asyncio.create_task(job(db, deliverer)) for job in settings.background]
        try:
            yield
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    app = FastAPI(
        title="Messaging Service (Pigeon reference implementation)",
        version="1",
        description="The six operations of the messaging service spec. Errors are RFC 9457 problem+json.",
        lifespan=lifespan,
    )
    app.state.db = db
    app.state.deliverer = deliverer
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes, timeout=settings.body_timeout)

    install_handlers(app)
    router = make_router(
        db,
        allow_private_webhooks=settings.allow_private_webhooks,
        allow_loopback_webhooks=settings.allow_loopback_webhooks,
        max_webhooks=settings.max_webhooks_per_account,
        limiter=limiter,
        rate_limit=settings.rate_limit_per_minute,
    )
    # The routes themselves, not `include_router`: this FastAPI keeps an included router behind one entry, which
    # the 405 handler's look-up and schemathesis's reading of the app do not see into.
    app.router.routes.extend(router.routes)
    return app
