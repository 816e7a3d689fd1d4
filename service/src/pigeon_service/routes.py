"""The six operations of the spec, as routes on an ``APIRouter``; who calls is the bearer token's account.

Handlers that touch SQLite are plain ``def`` run in a thread pool (:func:`in_pool`), so a slow request never holds
the others up (the database reads through a connection a thread). Only the webhook route, which resolves a host
name, is ``async`` itself. The two lists answer with bodies written straight from the rows
(:mod:`.list_bodies`), and read their query themselves (:mod:`.queries`: FastAPI's solving of a signature's
parameters was half their CPU).
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

from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel

from pigeon.models import (
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
from pigeon_service.db import Database, InvalidCursor, hash_token
from pigeon_service.limits import RateLimiter
from pigeon_service.problems import (
    BODY,
    INVALID,
    RATE,
    UNAUTHORIZED,
    Docs,
    ProblemError,
    ProblemFieldError,
    problem_doc,
)
from pigeon_service.queries import (
    MessagesQuery,
    ThreadsQuery,
    query_operation,
    read_query,
)
from pigeon_service.webhook_rows import MAX_ACTIVE_WEBHOOKS, TooManyWebhooks
from pigeon_service.webhook_targets import UnsafeWebhookURL, check_url
from pigeon_service.webhooks import new_secret

P = ParamSpec("P")
R = TypeVar("R")
Q = TypeVar("Q", bound=BaseModel)
DB_THREADS = 2
"""Threads that run the handlers. Two, so one slow request (a long read, a write waiting for the lock) never holds
up the rest; not more, since only one of them runs Python at a time (the GIL) and every further one makes them
hand it over more often, which raised the service's CPU a request (docs/performance.md)."""
_POOL = ThreadPoolExecutor(max_workers=DB_THREADS, thread_name_prefix="pigeon-db")


def in_pool(handler: Callable[P, R]) -> Callable[P, Awaitable[R]]:
    """A plain ``def`` handler run in the service's thread pool, for FastAPI as the handler itself (its signature,
    parameters and dependencies are the handler's: ``functools.wraps``).

    FastAPI runs a ``def`` handler through anyio's ``to_thread``, which costs more than twice the CPU of
    ``loop.run_in_executor`` a call (docs/performance.md)."""

    @functools.wraps(handler)
    async def run(*args: P.args, **kwargs: P.kwargs) -> R:
        return await asyncio.get_running_loop().run_in_executor(_POOL, functools.partial(handler, *args, **kwargs))

    return run


def json_response(model: BaseModel, status: int = 200) -> Response:
    # An optional field without a value is left out, never sent as null: the spec's types have no null.
    return Response(model.model_dump_json(exclude_none=True), status_code=status, media_type="application/json")


def make_router(
    db: Database,
    *,
    allow_private_webhooks: bool,
    limiter: RateLimiter | None,
    rate_limit: int | None,
    allow_loopback_webhooks: bool = False,
    max_webhooks: int = MAX_ACTIVE_WEBHOOKS,
) -> APIRouter:
    router = APIRouter()
    bearer = HTTPBearer(auto_error=False, description="Authorization: Bearer <token>")

    def authenticate(credentials: HTTPAuthorizationCredentials | None) -> str:
        """The caller's account, or a 401 (no or an unknown token) or 429 (over the rate limit) problem."""
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

    async def caller(credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]) -> str:
        return authenticate(credentials)

    Account = Annotated[str, Depends(caller)]

    async def list_answer(request: Request, model: type[Q], page: Callable[[str, Q], Awaitable[Response]]) -> Response:
        """A list's answer: the caller's account, the query read from the request (:mod:`.queries`), then the page
        from ``page`` (a handler run in the pool)."""
        account = authenticate(await bearer(request))
        return await page(account, read_query(model, request.query_params))

    # --- 1. list messages ----------------------------------------------------------------------------------------

    @router.get(
        "/v1/messages",
        response_model=ListMessagesResponse,
        responses={**UNAUTHORIZED, 404: problem_doc("No such thread"), **INVALID, **RATE},
        summary="List messages",
        tags=["messages"],
        openapi_extra=query_operation(MessagesQuery, bearer.scheme_name),
    )
    async def list_messages(request: Request) -> Response:
        return await list_answer(request, MessagesQuery, messages_page)

    @in_pool
    def messages_page(account: str, query: MessagesQuery) -> Response:
        message_ids = [str(m) for m in query.message_ids] if query.message_ids is not None else None
        try:
            body = db.list_messages_json(
                account,
                str(query.thread_id),
                message_ids=message_ids,
                page_size=query.page_size,
                page_token=query.page_token,
            )
        except InvalidCursor as exc:
            raise ProblemError(400, "Bad Request", str(exc)) from None
        if body is None:
            raise ProblemError(404, "Not Found", "No such thread")
        return Response(body, media_type="application/json")

    # --- 2. list threads -----------------------------------------------------------------------------------------

    @router.get(
        "/v1/threads",
        response_model=ListThreadsResponse,
        responses={**UNAUTHORIZED, **INVALID, **RATE},
        summary="List threads",
        description="Latest activity first. Pages of `page_size` threads; `next_page_token` is empty on the last.",
        tags=["threads"],
        openapi_extra=query_operation(ThreadsQuery, bearer.scheme_name),
    )
    async def list_threads(request: Request) -> Response:
        return await list_answer(request, ThreadsQuery, threads_page)

    @in_pool
    def threads_page(account: str, query: ThreadsQuery) -> Response:
        try:
            body = db.list_threads_json(account, page_size=query.page_size, page_token=query.page_token)
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
        responses={**UNAUTHORIZED, **INVALID, 409: problem_doc("Too many active subscriptions"), **BODY, **RATE},
        summary="Create webhook subscription",
        description="The signing `secret` is returned in this response only.",
        tags=["webhooks"],
    )
    async def create_webhook(account: Account, body: CreateWebhook) -> Response:
        try:
            await check_url(body.url, allow_private=allow_private_webhooks, allow_loopback=allow_loopback_webhooks)
        except UnsafeWebhookURL as exc:
            raise ProblemError(
                422,
                "Unprocessable Content",
                f"url: {exc}",
                errors=[ProblemFieldError(field="url", pointer="#/url", message=str(exc))],
            ) from None
        secret = new_secret()
        try:
            webhook = db.create_webhook(account, body, secret=secret, cap=max_webhooks)
        except TooManyWebhooks:
            raise ProblemError(
                409,
                "Conflict",
                f"This account already has {max_webhooks} active webhook subscriptions, the most it may have",
            ) from None
        return json_response(webhook.model_copy(update={"secret": secret}), 201)

    return router
