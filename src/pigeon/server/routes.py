"""The six operations of the spec, as routes on an ``APIRouter``; who calls is the bearer token's account.

Handlers that touch SQLite are plain ``def`` run in a thread pool (:func:`in_pool`), so a slow request never holds
the others up (the database reads through a connection a thread). Only the webhook route, which resolves a host
name, is ``async`` itself. The two lists answer with bodies written straight from the rows (:mod:`.wire`).
"""

# No ``from __future__ import annotations`` here: FastAPI must see the real ``Annotated`` dependency objects that
# are defined inside ``make_router``.
import asyncio
import functools
import math
import uuid
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, ParamSpec, TypeVar

from fastapi import APIRouter, Depends, Path, Query
from fastapi.responses import Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel

from pigeon.models import (
    PAGE_SIZE_DEFAULT,
    PAGE_SIZE_MAX,
    PAGE_SIZE_MIN,
    Contact,
    CreateInbox,
    CreateWebhook,
    Inbox,
    InboxStatus,
    ListInboxesResponse,
    ListMessagesResponse,
    ListThreadsResponse,
    UpdateContact,
    WebhookSubscription,
)
from pigeon.server.db import Database, InvalidCursor, hash_token
from pigeon.server.limits import RateLimiter
from pigeon.server.problems import BODY, INVALID, RATE, UNAUTHORIZED, Docs, ProblemError, ProblemFieldError, problem_doc
from pigeon.server.webhook_targets import UnsafeWebhookURL, check_url
from pigeon.server.webhooks import new_secret

THREAD_PAGE_DEFAULT = 100
THREAD_PAGE_MAX = 500

P = ParamSpec("P")
R = TypeVar("R")
_POOL = ThreadPoolExecutor(max_workers=16, thread_name_prefix="pigeon-db")


def in_pool(handler: Callable[P, R]) -> Callable[P, Awaitable[R]]:
    """A plain ``def`` handler run in the service's thread pool, for FastAPI as the handler itself (its signature,
    parameters and dependencies are the handler's: ``functools.wraps``).

    FastAPI runs a ``def`` handler through anyio's ``to_thread``: 76-84 us of CPU a call on this project's 2-core
    machine against 32-36 us for ``loop.run_in_executor`` (measured alone), 16% of the service's time under a first
    sync (py-spy). List messages, 3,000 requests, 8 in flight, three alternating pairs: 736-845 -> 775-872 requests
    a second, 4-7% less of the service's CPU (``bench/loopback.py``)."""

    @functools.wraps(handler)
    async def run(*args: P.args, **kwargs: P.kwargs) -> R:
        return await asyncio.get_running_loop().run_in_executor(_POOL, functools.partial(handler, *args, **kwargs))

    return run


def json_response(model: BaseModel, status: int = 200) -> Response:
    # An optional field without a value is left out, never sent as null: the spec's types have no null.
    return Response(model.model_dump_json(exclude_none=True), status_code=status, media_type="application/json")


def make_router(
    db: Database, *, allow_private_webhooks: bool, limiter: RateLimiter | None, rate_limit: int | None
) -> APIRouter:
    router = APIRouter()
    bearer = HTTPBearer(auto_error=False, description="Authorization: Bearer <token>")

    async def caller(credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]) -> str:
        challenge = {"WWW-Authenticate": "Bearer"}
        if credentials is None or not credentials.credentials:
            raise ProblemError(401, "Unauthorized", "Send Authorization: Bearer <token>", headers=challenge)
        account_id = db.account_for_token(credentials.credentials)
        if account_id is None:
            raise ProblemError(401, "Unauthorized", "The bearer token is not valid", headers=challenge)
        if limiter is not None:
            wait = limiter.take(hash_token(credentials.credentials))
            if wait is not None:
                raise ProblemError(
                    429,
                    "Too Many Requests",
                    f"Rate limit of {rate_limit} requests a minute reached",
                    headers={"Retry-After": str(max(1, math.ceil(wait)))},
                )
        return account_id

    Account = Annotated[str, Depends(caller)]

    # --- 1. list messages ----------------------------------------------------------------------------------------

    @router.get(
        "/v1/messages",
        response_model=ListMessagesResponse,
        responses={**UNAUTHORIZED, 404: problem_doc("No such thread"), **INVALID, **RATE},
        summary="List messages",
        tags=["messages"],
    )
    @in_pool
    def list_messages(
        account: Account,
        thread_id: Annotated[uuid.UUID, Query(description="Thread whose messages are listed")],
        message_ids: Annotated[
            list[uuid.UUID] | None, Query(max_length=PAGE_SIZE_MAX, description="Only these messages (at most 100)")
        ] = None,
        page_size: Annotated[int, Query(ge=PAGE_SIZE_MIN, le=PAGE_SIZE_MAX)] = PAGE_SIZE_DEFAULT,
        page_token: Annotated[str | None, Query(max_length=1000)] = None,
    ) -> Response:
        if not db.thread_exists(account, str(thread_id)):
            raise ProblemError(404, "Not Found", "No such thread")
        try:
            body = db.list_messages_json(
                account,
                str(thread_id),
                message_ids=[str(m) for m in message_ids] if message_ids is not None else None,
                page_size=page_size,
                page_token=page_token,
            )
        except InvalidCursor as exc:
            raise ProblemError(400, "Bad Request", str(exc)) from None
        return Response(body, media_type="application/json")

    # --- 2. list threads -----------------------------------------------------------------------------------------

    @router.get(
        "/v1/threads",
        response_model=ListThreadsResponse,
        responses={**UNAUTHORIZED, **INVALID, **RATE},
        summary="List threads",
        description="Latest activity first. Pages of `page_size` threads; `next_page_token` is empty on the last.",
        tags=["threads"],
    )
    @in_pool
    def list_threads(
        account: Account,
        page_size: Annotated[int, Query(ge=1, le=THREAD_PAGE_MAX)] = THREAD_PAGE_DEFAULT,
        page_token: Annotated[str | None, Query(max_length=1000)] = None,
    ) -> Response:
        try:
            body = db.list_threads_json(account, page_size=page_size, page_token=page_token)
        except InvalidCursor as exc:
            raise ProblemError(400, "Bad Request", str(exc)) from None
        return Response(body, media_type="application/json")

    # --- 3. list inboxes -----------------------------------------------------------------------------------------

    @router.get(
        "/v1/inboxes",
        response_model=ListInboxesResponse,
        responses={**UNAUTHORIZED, **RATE},
        summary="List inboxes",
        tags=["inboxes"],
    )
    @in_pool
    def list_inboxes(account: Account) -> Response:
        return json_response(ListInboxesResponse(inboxes=db.list_inboxes(account)))

    # --- 4. create inbox -----------------------------------------------------------------------------------------

    @in_pool
    def create_inbox(account: Account, body: CreateInbox) -> Response:
        email = str(body.email) if body.email else f"inbox-{uuid.uuid4().hex[:10]}@pigeon.example"
        if db.inbox_email_taken(account, email):
            raise ProblemError(
                409,
                "Conflict",
                "An inbox with this address exists already",
                errors=[ProblemFieldError(field="email", pointer="#/email", message="already in use")],
            )
        return json_response(db.create_inbox(account, body, email=email, status=InboxStatus.ACTIVE.value), 201)

    inbox_responses: Docs = {**UNAUTHORIZED, **INVALID, 409: problem_doc("Address in use"), **BODY, **RATE}
    for path, summary in (("/v1/inboxes", "Create inbox"), ("/v1/inboxes/", "Create inbox (trailing-slash form)")):
        router.post(
            path, summary=summary, response_model=Inbox, status_code=201, responses=inbox_responses, tags=["inboxes"]
        )(create_inbox)

    # --- 5. update contact ---------------------------------------------------------------------------------------

    @router.patch(
        "/v1/contacts/{contactId}",
        response_model=Contact,
        responses={**UNAUTHORIZED, 404: problem_doc("No such contact"), **INVALID, **BODY, **RATE},
        summary="Update contact",
        description="Only the fields sent change; arrays are replaced whole; read-only fields are refused.",
        tags=["contacts"],
    )
    @in_pool
    def update_contact(
        account: Account,
        contact_id: Annotated[uuid.UUID, Path(alias="contactId", description="The contact's identifier")],
        body: UpdateContact,
    ) -> Response:
        contact = db.update_contact(account, str(contact_id), body)
        if contact is None:
            raise ProblemError(404, "Not Found", "No such contact")
        return json_response(contact)

    # --- 6. create webhook ---------------------------------------------------------------------------------------

    @router.post(
        "/v1/webhooks",
        response_model=WebhookSubscription,
        status_code=201,
        responses={**UNAUTHORIZED, **INVALID, **BODY, **RATE},
        summary="Create webhook subscription",
        description="The signing `secret` is returned in this response only.",
        tags=["webhooks"],
    )
    async def create_webhook(account: Account, body: CreateWebhook) -> Response:
        try:
            await check_url(body.url, allow_private=allow_private_webhooks)
        except UnsafeWebhookURL as exc:
            raise ProblemError(
                422,
                "Unprocessable Content",
                f"url: {exc}",
                errors=[ProblemFieldError(field="url", pointer="#/url", message=str(exc))],
            ) from None
        secret = new_secret()
        webhook = db.create_webhook(account, body, secret=secret)
        return json_response(webhook.model_copy(update={"secret": secret}), 201)

    return router
