"""The reference messaging service: the six operations of the spec over FastAPI.

Choices where the spec says "not shown" are written down in ``docs/service-decisions.md``; this module is where
they are made.
"""

# No ``from __future__ import annotations`` here: FastAPI must see the real ``Annotated`` dependency objects that
# are defined inside ``create_app``.
import asyncio
import contextlib
import logging
import math
import threading
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

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
from pigeon.server.webhooks import Deliverer, DeliveryPolicy, UnsafeWebhookURL, check_url, new_secret

log = logging.getLogger("pigeon.server")

MAX_BODY_BYTES = 1024 * 1024
THREAD_PAGE_DEFAULT = 100
THREAD_PAGE_MAX = 500
PROBLEM_JSON = "application/problem+json"


@dataclass
class ServerSettings:
    """How one instance of the service behaves."""

    allow_private_webhooks: bool = False
    rate_limit_per_minute: int | None = None
    max_body_bytes: int = MAX_BODY_BYTES
    deliver_webhooks: bool = True
    delivery: DeliveryPolicy = field(default_factory=DeliveryPolicy)
    background: list[Callable[[Database, Deliverer], Awaitable[None]]] = field(default_factory=list)
    """Extra tasks run for the app's lifetime (live traffic)."""


# --- problems (RFC 9457) ----------------------------------------------------------------------------------------


class ProblemFieldError(BaseModel):
    field: str = Field(description="Dotted path of the field, e.g. emails.0.email")
    pointer: str | None = Field(default=None, description="JSON pointer into the body, e.g. #/emails/0/email")
    message: str


class Problem(BaseModel):
    """An RFC 9457 problem details object."""

    model_config = ConfigDict(extra="allow")

    type: str = "about:blank"
    title: str
    status: int
    detail: str | None = None
    errors: list[ProblemFieldError] | None = None


class ProblemError(Exception):
    def __init__(
        self,
        status: int,
        title: str,
        detail: str | None = None,
        *,
        errors: list[ProblemFieldError] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(detail or title)
        self.problem = Problem(title=title, status=status, detail=detail, errors=errors)
        self.headers = headers or {}


def problem_response(problem: Problem, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(
        problem.model_dump(exclude_none=True), status_code=problem.status, media_type=PROBLEM_JSON, headers=headers
    )


def _problem_doc(description: str) -> dict[str, Any]:
    return {"description": description, "content": {PROBLEM_JSON: {"schema": Problem.model_json_schema()}}}


_UNAUTHORIZED = {401: _problem_doc("Missing or unknown bearer token")}
_RATE = {429: _problem_doc("Too many requests; see Retry-After")}
_INVALID = {
    400: _problem_doc("Malformed request (body not JSON, unknown page token)"),
    422: _problem_doc("Invalid field values"),
}
_BODY = {413: _problem_doc("Body larger than 1 MiB")}


# --- helpers ---------------------------------------------------------------------------------------------------


def _json(model: BaseModel, status: int = 200) -> Response:
    return Response(model.model_dump_json(), status_code=status, media_type="application/json")


def _field_errors(errors: list[dict[str, Any]]) -> list[ProblemFieldError]:
    found = []
    for error in errors:
        loc = [str(p) for p in error.get("loc", ())]
        where = loc[1:] if loc and loc[0] in {"body", "query", "path", "header"} else loc
        found.append(
            ProblemFieldError(
                field=".".join(where) or (loc[0] if loc else "request"),
                pointer="#/" + "/".join(where) if loc and loc[0] == "body" else None,
                message=str(error.get("msg", "invalid")).removeprefix("Value error, "),
            )
        )
    return found


class RateLimiter:
    """A token bucket per caller: ``per_minute`` requests a minute, in bursts of up to ``per_minute``."""

    def __init__(self, per_minute: int) -> None:
        self.rate = per_minute / 60.0
        self.capacity = float(per_minute)
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, key: str) -> float | None:
        """``None`` if the request may go ahead, else the seconds to wait."""
        now = time.monotonic()
        with self._lock:
            tokens, last = self._buckets.get(key, (self.capacity, now))
            tokens = min(self.capacity, tokens + (now - last) * self.rate)
            if tokens >= 1:
                self._buckets[key] = (tokens - 1, now)
                return None
            self._buckets[key] = (tokens, now)
            return (1 - tokens) / self.rate


class BodyLimit:
    """ASGI middleware: 413 for request bodies over ``limit`` bytes, whether announced or streamed.

    Bodies of POST, PUT and PATCH are read here first (at most ``limit`` bytes are held) and replayed to the app.
    """

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in {"POST", "PUT", "PATCH"}:
            await self.app(scope, receive, send)
            return
        too_big = problem_response(
            Problem(title="Content Too Large", status=413, detail=f"The body is limited to {self.limit} bytes")
        )
        for name, value in scope.get("headers", []):
            if name == b"content-length" and value.isdigit() and int(value) > self.limit:
                await too_big(scope, receive, send)
                return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                await too_big(scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


# --- the app ---------------------------------------------------------------------------------------------------


def create_app(db: Database, settings: ServerSettings | None = None) -> FastAPI:
    """The service over ``db``. Background delivery and extra tasks run while the app's lifespan runs."""
    settings = settings or ServerSettings()
    settings.delivery.allow_private = settings.allow_private_webhooks
    deliverer = Deliverer(db, settings.delivery)
    limiter = RateLimiter(settings.rate_limit_per_minute) if settings.rate_limit_per_minute else None

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        tasks = []
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
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)

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
                    f"Rate limit of {settings.rate_limit_per_minute} requests a minute reached",
                    headers={"Retry-After": str(max(1, math.ceil(wait)))},
                )
        return account_id

    Account = Annotated[str, Depends(caller)]

    @app.exception_handler(ProblemError)
    async def _problem(request: Request, exc: ProblemError) -> JSONResponse:
        return problem_response(exc.problem, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = list(exc.errors())
        if any(e.get("type") == "json_invalid" for e in errors):
            return problem_response(Problem(title="Bad Request", status=400, detail="The body is not valid JSON"))
        fields = _field_errors(errors)
        return problem_response(
            Problem(
                title="Unprocessable Content",
                status=422,
                detail=f"{len(fields)} invalid field{'s' if len(fields) != 1 else ''}; see errors",
                errors=fields,
            )
        )

    def allowed_methods(scope: Scope) -> str:
        """Every method some route accepts at this path (Starlette names only the first route's)."""
        methods: set[str] = set()
        for route in app.router.routes:
            match, _ = route.matches(scope)
            if match is not Match.NONE:
                methods |= set(getattr(route, "methods", None) or ())
        return ", ".join(sorted(methods - {"HEAD"}))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        title = {404: "Not Found", 405: "Method Not Allowed"}.get(exc.status_code, "Error")
        detail = exc.detail if isinstance(exc.detail, str) else None
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            headers["Allow"] = allowed_methods(request.scope)
        return problem_response(Problem(title=title, status=exc.status_code, detail=detail), headers)

    @app.exception_handler(Exception)
    async def _crash(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error in %s %s", request.method, request.url.path)
        return problem_response(Problem(title="Internal Server Error", status=500, detail="The service failed"))

    # --- 1. list messages ----------------------------------------------------------------------------------------

    @app.get(
        "/v1/messages",
        response_model=ListMessagesResponse,
        responses={**_UNAUTHORIZED, 404: _problem_doc("No such thread"), **_INVALID, **_RATE},
        summary="List messages",
        tags=["messages"],
    )
    async def list_messages(
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
            messages, token = db.list_messages(
                account,
                str(thread_id),
                message_ids=[str(m) for m in message_ids] if message_ids is not None else None,
                page_size=page_size,
                page_token=page_token,
            )
        except InvalidCursor as exc:
            raise ProblemError(400, "Bad Request", str(exc)) from None
        return _json(ListMessagesResponse(messages=messages, next_page_token=token))

    # --- 2. list threads -----------------------------------------------------------------------------------------

    @app.get(
        "/v1/threads",
        response_model=ListThreadsResponse,
        responses={**_UNAUTHORIZED, **_INVALID, **_RATE},
        summary="List threads",
        description="Latest activity first. Pages of `page_size` threads; `next_page_token` is empty on the last.",
        tags=["threads"],
    )
    async def list_threads(
        account: Account,
        page_size: Annotated[int, Query(ge=1, le=THREAD_PAGE_MAX)] = THREAD_PAGE_DEFAULT,
        page_token: Annotated[str | None, Query(max_length=1000)] = None,
    ) -> Response:
        try:
            threads, token = db.list_threads(account, page_size=page_size, page_token=page_token)
        except InvalidCursor as exc:
            raise ProblemError(400, "Bad Request", str(exc)) from None
        return _json(ListThreadsResponse(threads=threads, next_page_token=token))

    # --- 3. list inboxes -----------------------------------------------------------------------------------------

    @app.get(
        "/v1/inboxes",
        response_model=ListInboxesResponse,
        responses={**_UNAUTHORIZED, **_RATE},
        summary="List inboxes",
        tags=["inboxes"],
    )
    async def list_inboxes(account: Account) -> Response:
        return _json(ListInboxesResponse(inboxes=db.list_inboxes(account)))

    # --- 4. create inbox -----------------------------------------------------------------------------------------

    async def create_inbox(account: Account, body: CreateInbox) -> Response:
        email = str(body.email) if body.email else f"inbox-{uuid.uuid4().hex[:10]}@pigeon.example"
        if db.inbox_email_taken(account, email):
            raise ProblemError(
                409,
                "Conflict",
                "An inbox with this address exists already",
                errors=[ProblemFieldError(field="email", pointer="#/email", message="already in use")],
            )
        return _json(db.create_inbox(account, body, email=email, status=InboxStatus.ACTIVE.value), 201)

    inbox_doc = {
        "response_model": Inbox,
        "status_code": 201,
        "responses": {**_UNAUTHORIZED, **_INVALID, 409: _problem_doc("Address in use"), **_BODY, **_RATE},
        "tags": ["inboxes"],
    }
    app.post("/v1/inboxes", summary="Create inbox", **inbox_doc)(create_inbox)
    app.post("/v1/inboxes/", summary="Create inbox (trailing-slash form)", **inbox_doc)(create_inbox)

    # --- 5. update contact ---------------------------------------------------------------------------------------

    @app.patch(
        "/v1/contacts/{contactId}",
        response_model=Contact,
        responses={**_UNAUTHORIZED, 404: _problem_doc("No such contact"), **_INVALID, **_BODY, **_RATE},
        summary="Update contact",
        description="Only the fields sent change; arrays are replaced whole; read-only fields are refused.",
        tags=["contacts"],
    )
    async def update_contact(
        account: Account,
        contact_id: Annotated[uuid.UUID, Path(alias="contactId", description="The contact's identifier")],
        body: UpdateContact,
    ) -> Response:
        contact = db.update_contact(account, str(contact_id), body)
        if contact is None:
            raise ProblemError(404, "Not Found", "No such contact")
        return _json(contact)

    # --- 6. create webhook ---------------------------------------------------------------------------------------

    @app.post(
        "/v1/webhooks",
        response_model=WebhookSubscription,
        status_code=201,
        responses={**_UNAUTHORIZED, **_INVALID, **_BODY, **_RATE},
        summary="Create webhook subscription",
        description="The signing `secret` is returned in this response only.",
        tags=["webhooks"],
    )
    async def create_webhook(account: Account, body: CreateWebhook) -> Response:
        try:
            await check_url(body.url, allow_private=settings.allow_private_webhooks, must_resolve=False)
        except UnsafeWebhookURL as exc:
            raise ProblemError(
                422,
                "Unprocessable Content",
                f"url: {exc}",
                errors=[ProblemFieldError(field="url", pointer="#/url", message=str(exc))],
            ) from None
        secret = new_secret()
        webhook = db.create_webhook(account, body, secret=secret)
        return _json(webhook.model_copy(update={"secret": secret}), 201)

    return app
