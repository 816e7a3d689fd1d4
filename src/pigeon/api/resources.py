"""The service's resources, grouped by noun as the client offers them (``client.inboxes.list()``,
``client.messages.iter(thread_id)``): request bodies built and checked here, pages followed."""

from __future__ import annotations

import builtins
import functools
import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Protocol, TypeVar
from urllib.parse import quote

from pydantic import BaseModel, TypeAdapter, ValidationError, create_model

from pigeon.api.errors import FieldError, InvalidInput, MalformedResponse, StatusError
from pigeon.api.pagination import Page, walk_pages
from pigeon.models import (
    PAGE_SIZE_DEFAULT,
    Contact,
    CreateInbox,
    CreateWebhook,
    Inbox,
    InboxType,
    ListMessagesQuery,
    Message,
    RequestBody,
    Resource,
    Thread,
    Unreadable,
    UpdateContact,
    UUIDText,
    WebhookSubscription,
    refused,
    unreadable,
)

if TYPE_CHECKING:
    from pigeon.api.answers import Answer

M = TypeVar("M", bound=BaseModel)
B = TypeVar("B", bound=RequestBody)

_UUID_ADAPTER: TypeAdapter[str] = TypeAdapter(UUIDText)


class Transport(Protocol):
    """What the resources need of the client: typed requests, and how many pages a list may have."""

    max_pages: int

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: builtins.list[tuple[str, str]] | None = None,
        body: dict[str, Any] | None = None,
    ) -> Answer: ...

    async def request_model(
        self,
        method: str,
        path: str,
        model: type[M],
        *,
        params: builtins.list[tuple[str, str]] | None = None,
        body: dict[str, Any] | None = None,
    ) -> M: ...


class LongNumber:
    """A JSON integer with more digits than Python reads (valid JSON all the same), in place of its value: what
    holds one is refused where it stands (a record), not the whole answer. No model field takes it as a value."""

    def __init__(self, text: str) -> None:
        self.digits = len(text.lstrip("-"))
        self._text = text

    def __repr__(self) -> str:  # (a record's fingerprint: the same number, the same text)
        return f"LongNumber({self._text})"


def _integer(text: str) -> int | LongNumber:
    try:
        return int(text)
    except ValueError:  # (past sys.get_int_max_str_digits)
        return LongNumber(text)


def parse_json(answer: Answer, method: str, path: str) -> Any:
    """A success answer's body as parsed JSON; a body that is not JSON is :class:`MalformedResponse`. An integer
    too long to read is a :class:`LongNumber`."""
    try:
        return json.loads(answer.content, parse_int=_integer)
    except (ValueError, RecursionError):  # (JSON nested past what the parser takes is not JSON to us either)
        raise MalformedResponse(
            f"{method} {path}: the service answered {answer.status_code} but the body is not JSON"
        ) from None


def read_answer(model: type[M], data: Any, where: str) -> M:
    """A parsed answer read as ``model``: one of the wrong shape, or one the store could not keep, is
    :class:`MalformedResponse` naming the first problem."""
    try:
        item = model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        at, why = ".".join(str(p) for p in first["loc"]) or "body", first["msg"]
    else:
        if keepable(model, item):
            return item
        at, why = unkeepable(data)
    raise MalformedResponse(f"{where}: the answer is not a valid {model.__name__} ({at}: {why})")


def invalid_input(exc: ValidationError, what: str) -> InvalidInput:
    """Turn a pydantic validation error of a request into :class:`InvalidInput` with field errors."""
    errors = [
        FieldError(".".join(str(p) for p in err["loc"]), err["msg"].removeprefix("Value error, "))
        for err in exc.errors()
    ]
    summary = "; ".join(str(e) for e in errors[:3]) + (" …" if len(errors) > 3 else "")
    return InvalidInput(f"Invalid {what}: {summary}", errors)


def _uuid(value: str, name: str) -> str:
    try:
        return _UUID_ADAPTER.validate_python(value)
    except ValidationError:
        raise InvalidInput(f"Invalid {name} {value!r}: must be a UUID", [FieldError(name, "must be a UUID")]) from None


def _build(model: type[B], body: B | None, fields: dict[str, Any], what: str) -> B:
    """A request body from a ready model or from keyword fields; field problems become :class:`InvalidInput`."""
    if body is not None:
        if fields:
            raise TypeError("pass either a body model or keyword fields, not both")
        return body
    try:
        return model(**fields)
    except ValidationError as exc:
        raise invalid_input(exc, what) from None


class _Resource:
    def __init__(self, client: Transport) -> None:
        self._client = client

    def _walk(self, path: str, model: type[M], items: str) -> AsyncIterator[Page[M]]:
        """Pages of a list whose pagination the spec does not show: follow ``next_page_token`` if it comes."""

        async def fetch(token: str | None) -> Page[M]:
            params = [("page_token", token)] if token else None
            return await self._page("GET", path, model, items, params)

        return walk_pages(fetch, what=items, max_pages=self._client.max_pages)

    async def _page(
        self,
        method: str,
        path: str,
        model: type[M],
        items: str,
        params: builtins.list[tuple[str, str]] | None,
        thread_id: str = "",
    ) -> Page[M]:
        """One page of a list, each record read on its own: one the models refuse (a date no calendar has, a count
        past what JSON carries) is skipped and named in ``Page.skipped``, with its place among the page's readable
        records; the rest of the page is kept.

        A page is first read whole by pydantic from its bytes (one ``validate_json``, quicker than record by record,
        and a first sync reads a page a thread); only a page that fails that is parsed and
        read record by record, which finds what to skip, so both ways give the same page."""
        answer = await self._client.request(method, path, params=params)
        try:
            whole = _page_model(model, items).model_validate_json(answer.content)
        except ValidationError:
            pass
        else:
            return Page(getattr(whole, items), _next_token(getattr(whole, "next_page_token", None)))
        data = parse_json(answer, method, path)
        records = data.get(items) if isinstance(data, dict) else None
        if not isinstance(records, builtins.list):
            raise MalformedResponse(f"{method} {path}: the answer has no list of {items}")
        kept: builtins.list[M] = []
        skipped: builtins.list[Unreadable] = []
        kind = _KINDS.get(items, items)
        for record in records:
            try:
                item = model.model_validate(record)
            except ValidationError as exc:
                skipped.append(unreadable(kind, record, exc, thread_id=thread_id, before=len(kept)))
                continue
            if not keepable(model, item):
                where, why = unkeepable(record)
                skipped.append(refused(kind, record, where, why, thread_id=thread_id, before=len(kept)))
                continue
            kept.append(item)
        return Page(kept, _next_token(data.get("next_page_token")), tuple(skipped))


_KINDS = {"inboxes": "inbox", "threads": "thread", "messages": "message"}


def keepable(model: type[M], item: M) -> bool:
    """Whether the store can write ``item`` and read it back: a record read from parsed JSON may hold what the
    models take as any value (in metadata, in unknown fields) but JSON text cannot carry, or nesting deeper than
    pydantic writes or reads."""
    try:
        model.model_validate_json(item.wire_json() if isinstance(item, Resource) else item.model_dump_json())
    except (ValueError, TypeError, RecursionError):  # (ValidationError and PydanticSerializationError included)
        return False
    return True


def unkeepable(record: Any) -> tuple[str, str]:
    """Where a record :func:`keepable` refused goes wrong, and why, in words: the first :class:`LongNumber` in it,
    or else its most deeply nested field (walked without recursion: the nesting is the problem)."""
    fields = record.items() if isinstance(record, dict) else [("record", record)]
    deepest, depth = "record", 0
    for name, value in fields:
        stack: builtins.list[tuple[Any, str, int]] = [(value, str(name), 1)]
        while stack:
            value, where, level = stack.pop()
            if isinstance(value, LongNumber):
                return where, f"a number of {value.digits} digits, more than Pigeon reads"
            if level > depth:
                deepest, depth = str(name), level
            if isinstance(value, dict):
                stack += [(v, f"{where}.{k}", level + 1) for k, v in value.items()]
            elif isinstance(value, builtins.list):
                stack += [(v, f"{where}.{n}", level + 1) for n, v in enumerate(value)]
    return deepest, f"nested {depth} levels deep, more than Pigeon keeps"


def _next_token(value: Any) -> str | None:
    """The next page's token as the service sent it; an empty string, ``null`` or none at all ends the list."""
    return value if isinstance(value, str) and value else None


@functools.cache
def _page_model(model: type[BaseModel], items: str) -> type[BaseModel]:
    """``{items: [model], next_page_token: any}``, other keys ignored: a page every record of which reads."""
    fields: dict[str, Any] = {items: (builtins.list[model], ...), "next_page_token": (Any, None)}  # type: ignore[valid-type]
    return create_model(f"{model.__name__}Page", **fields)


class Inboxes(_Resource):
    """``/v1/inboxes``"""

    def iter_pages(self) -> AsyncIterator[Page[Inbox]]:
        return self._walk("/v1/inboxes", Inbox, "inboxes")

    async def list(self) -> builtins.list[Inbox]:
        """Every inbox of the account (following ``next_page_token`` if the service pages the list)."""
        return [inbox async for page in self.iter_pages() for inbox in page.items]

    async def create(self, body: CreateInbox | None = None, **fields: Any) -> Inbox:
        """Create an inbox: ``create(email="me@example.com")`` (type EMAIL_INBOX) or ``create(CreateInbox(...))``."""
        if body is None:
            fields.setdefault("type", InboxType.EMAIL_INBOX)
        request = _build(CreateInbox, body, fields, "inbox")
        return await self._client.request_model("POST", "/v1/inboxes", Inbox, body=request.to_wire())


THREAD_PAGE_SIZE = 500
"""Threads asked for a page: the most the reference service gives (the spec shows no pagination for the list, and
a first sync on a slow link waits a round trip a page before it knows every thread)."""


class Threads(_Resource):
    """``/v1/threads``, in pages of ``THREAD_PAGE_SIZE`` while the service takes a ``page_size``."""

    def __init__(self, client: Transport) -> None:
        super().__init__(client)
        self.page_size: int | None = THREAD_PAGE_SIZE

    def iter_pages(self) -> AsyncIterator[Page[Thread]]:
        async def fetch(token: str | None) -> Page[Thread]:
            params = [("page_token", token)] if token else []
            if self.page_size is not None:
                sized = [*params, ("page_size", str(self.page_size))]
                try:
                    return await self._page("GET", "/v1/threads", Thread, "threads", sized)
                except StatusError as exc:
                    if token or exc.status not in (400, 422):
                        raise
                    self.page_size = None  # a service that takes no page_size: asked as the spec shows, from now on
            return await self._page("GET", "/v1/threads", Thread, "threads", params or None)

        return walk_pages(fetch, what="threads", max_pages=self._client.max_pages)

    async def list(self) -> builtins.list[Thread]:
        """Every thread of the account (following ``next_page_token`` if the service pages the list)."""
        return [thread async for page in self.iter_pages() for thread in page.items]


class Messages(_Resource):
    """``/v1/messages``"""

    def _query(self, **fields: Any) -> ListMessagesQuery:
        try:
            return ListMessagesQuery(**{k: v for k, v in fields.items() if v is not None})
        except ValidationError as exc:
            raise invalid_input(exc, "message list request") from None

    async def list(
        self,
        thread_id: str,
        *,
        message_ids: builtins.list[str] | None = None,
        page_size: int = PAGE_SIZE_DEFAULT,
        page_token: str | None = None,
    ) -> Page[Message]:
        """One page of the messages of a thread."""
        query = self._query(thread_id=thread_id, message_ids=message_ids, page_size=page_size, page_token=page_token)
        return await self._page("GET", "/v1/messages", Message, "messages", query.to_params(), thread_id)

    def iter_pages(
        self,
        thread_id: str,
        *,
        message_ids: builtins.list[str] | None = None,
        page_size: int = PAGE_SIZE_DEFAULT,
        page_token: str | None = None,
    ) -> AsyncIterator[Page[Message]]:
        """Every page of the messages of a thread, from ``page_token`` (or the start) to the end."""
        # Checked before any I/O, and once: each page adds only the service's page token, sent back as it came.
        params = self._query(thread_id=thread_id, message_ids=message_ids, page_size=page_size).to_params()

        async def fetch(token: str | None) -> Page[Message]:
            query = [*params, ("page_token", token)] if token else params
            return await self._page("GET", "/v1/messages", Message, "messages", query, thread_id)

        return walk_pages(fetch, what="messages", max_pages=self._client.max_pages, first_token=page_token)

    async def iter(
        self,
        thread_id: str,
        *,
        message_ids: builtins.list[str] | None = None,
        page_size: int = PAGE_SIZE_DEFAULT,
    ) -> AsyncIterator[Message]:
        """Every message of a thread, across all pages."""
        async for page in self.iter_pages(thread_id, message_ids=message_ids, page_size=page_size):
            for message in page.items:
                yield message


class Contacts(_Resource):
    """``/v1/contacts``"""

    async def update(self, contact_id: str, body: UpdateContact | None = None, **fields: Any) -> Contact:
        """``PATCH`` a contact with only the fields given: ``update(id, first_name="Ada")``."""
        request = _build(UpdateContact, body, fields, "contact update")
        path = "/v1/contacts/" + quote(_uuid(contact_id, "contact_id"), safe="")
        return await self._client.request_model("PATCH", path, Contact, body=request.to_wire())


class Webhooks(_Resource):
    """``/v1/webhooks``"""

    async def create(self, body: CreateWebhook | None = None, **fields: Any) -> WebhookSubscription:
        """Subscribe ``url`` to ``events``; the answer carries the signing ``secret`` (shown only now)."""
        request = _build(CreateWebhook, body, fields, "webhook")
        return await self._client.request_model("POST", "/v1/webhooks", WebhookSubscription, body=request.to_wire())
