"""``PigeonClient``: the six operations of the messaging service, async, typed, retried where safe.

Usage::

    async with PigeonClient("http://127.0.0.1:8025", token) as client:
        for inbox in await client.inboxes.list():
            ...
        async for message in client.messages.iter(thread_id):
            ...

Rules kept here:

- ``Authorization: Bearer`` goes on every request as a header; the token is never in a URL, a log line, a repr
  or an error message.
- Retries: GET requests on connection errors, timeouts, 408, 429, 502, 503 and 504, with jittered exponential
  backoff and ``Retry-After`` honoured up to ``retry_after_cap`` seconds (a longer wait is not slept through: the
  error is raised with ``retry_after`` set). A wait on a 429 or 503 is told to ``on_busy``. POST and PATCH are
  retried only when the connection was never made (the request cannot have reached the service); never after.
- Redirects are not followed.
- At most ``max_in_flight`` requests are in flight, as many as the answers show the link and the service carry
  (:mod:`.throttle`): more while answers stay quick, half after a 429, a 503 or a timeout (new requests held until
  a busy answer's wait is over), fewer while answers slow down; the user's requests go first.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import time
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote, urlencode

from pydantic import BaseModel, SecretStr

from pigeon.api.errors import (
    ConnectionFailed,
    FieldError,
    InvalidInput,
    LinkFailure,
    MalformedResponse,
    PigeonError,
    Timeout,
    parse_retry_after,
    redact,
    status_error,
)
from pigeon.api.pagination import DEFAULT_MAX_PAGES
from pigeon.api.resources import Contacts, Inboxes, Messages, Threads, Webhooks, parse_json, read_answer
from pigeon.api.senders import (
    AiohttpSender,
    Answer,
    AnswerTooLarge,
    EncodedAnswer,
    HttpxSender,
    Sender,
    Timeouts,
    proxy_for,
)
from pigeon.api.throttle import BUSY_STATUSES, RESERVE, BusyWait, Priority, Throttle, Ticket, priority
from pigeon.sanitize import clean_line

if TYPE_CHECKING:
    import httpx

log = logging.getLogger("pigeon.api")

DEFAULT_TIMEOUT = Timeouts(connect=5.0, read=30.0)
DEFAULT_MAX_RETRIES = 2
DEFAULT_MAX_IN_FLIGHT = 128
"""The ceiling of requests in flight (the throttle finds how many below it the link and the service carry): on a
slow link a first sync needs about this many to keep up with IMAP's pipelining (docs/performance.md)."""
RETRY_STATUSES = frozenset({408, 429, 502, 503, 504})
USER_AGENT = "pigeon"
_HEADERS = [("Accept", "application/json"), ("User-Agent", USER_AGENT)]
_FORBIDDEN_IN_URL = frozenset(" \t\r\n\0")

M = TypeVar("M", bound=BaseModel)
Sleep = Callable[[float], Awaitable[None]]


def _check_base_url(base_url: str) -> str:
    """The service's address, checked: http(s), a host, no credentials, no query or fragment; no trailing slash."""
    from yarl import URL

    text = base_url.strip()
    try:
        url: URL | None = URL(text)
        assert url is not None
        url.port  # noqa: B018  (a port that is not a number raises here)
    except (ValueError, TypeError):
        url = None
    if url is None or url.scheme not in {"http", "https"} or not url.host:
        raise InvalidInput(
            f"Invalid base URL {base_url!r}: it must start with http:// or https:// and name a host",
            [FieldError("base_url", "must be an http(s) URL")],
        )
    if url.user is not None or url.password is not None:
        raise InvalidInput(
            "Invalid base URL: credentials do not belong in the URL; the token is sent as a header",
            [FieldError("base_url", "must not contain credentials")],
        )
    if url.query_string or url.fragment or "?" in text or "#" in text:
        # Paths are appended to the base URL: a query there would end up in the middle of every request's path.
        raise InvalidInput(
            "Invalid base URL: it must not have a query (?...) or a fragment (#...); give the service's address",
            [FieldError("base_url", "must not have a query or fragment")],
        )
    if not _FORBIDDEN_IN_URL.isdisjoint(text):
        raise InvalidInput(
            f"Invalid base URL {base_url!r}: it has a space or a control character in it",
            [FieldError("base_url", "must not contain spaces or control characters")],
        )
    return str(url).rstrip("/")


def _json_bytes(body: dict[str, Any]) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


class BearerAuth:
    """The ``Authorization: Bearer`` header; the token is held as a ``SecretStr`` so that no repr, ``vars()`` or
    traceback with locals shows it."""

    def __init__(self, token: str) -> None:
        if any(ord(c) < 32 or ord(c) == 127 for c in token):
            # (said without the token: an HTTP library may name the whole header, token included, in its error)
            raise InvalidInput(
                "The token has a control character or a line break in it; no service token has one (pigeon login)",
                [FieldError("token", "must not contain control characters")],
            )
        self._token = SecretStr(token)

    def __repr__(self) -> str:
        return "BearerAuth(token=**********)"

    def redact(self, text: str) -> str:
        return redact(text, self._token.get_secret_value())

    def header(self) -> tuple[str, str]:
        return ("Authorization", "Bearer " + self._token.get_secret_value())


class PigeonClient:
    """Async client of the messaging service.

    Requests go through a pooled aiohttp session (:class:`~pigeon.api.senders.AiohttpSender`), or through
    ``http_client`` when one is given (tests pass an ``httpx.AsyncClient`` on ``httpx.ASGITransport`` or
    ``MockTransport``; the client then does not close it). ``sleep`` is injectable so tests of retries need not
    wait.
    """

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout: Timeouts | float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        http_client: httpx.AsyncClient | None = None,
        max_pages: int = DEFAULT_MAX_PAGES,
        retry_after_cap: float = 30.0,
        backoff_initial: float = 0.5,
        backoff_max: float = 8.0,
        sleep: Sleep | None = None,
        max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
    ) -> None:
        self.base_url = _check_base_url(base_url)
        self._auth = BearerAuth(token)
        self.timeout = timeout if isinstance(timeout, Timeouts) else Timeouts(connect=timeout, read=timeout)
        self.max_retries = max(0, max_retries)
        self.max_pages = max_pages
        self.retry_after_cap = retry_after_cap
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self._sleep: Sleep = sleep or asyncio.sleep
        self.throttle = Throttle(max_in_flight)
        self.on_busy: Callable[[BusyWait], object] | None = None
        """Told of each wait on a "busy" answer (one for requests that wait together), to say so to the user."""
        self._busy_until = 0.0  # (monotonic) when the last wait told of ends
        # As many connections as requests in flight, the user's reserve included.
        self._sender: Sender = (
            HttpxSender(http_client, self.timeout)
            if http_client is not None
            else AiohttpSender(
                connections=self.throttle.bound + RESERVE, timeouts=self.timeout, proxy=proxy_for(self.base_url)
            )
        )

        self.inboxes = Inboxes(self)
        self.threads = Threads(self)
        self.messages = Messages(self)
        self.contacts = Contacts(self)
        self.webhooks = Webhooks(self)

    def __repr__(self) -> str:
        return f"PigeonClient(base_url={self.base_url!r})"

    @staticmethod
    def background() -> contextlib.AbstractContextManager[None]:
        """Requests made inside (and in tasks started inside) wait behind every other: a sync's fetches."""
        return priority(Priority.BACKGROUND)

    @staticmethod
    def for_the_user() -> contextlib.AbstractContextManager[None]:
        """Requests made inside go before every other, above the number allowed if need be: what the user waits
        for, such as a thread opened during a sync."""
        return priority(Priority.USER)

    async def aclose(self) -> None:
        await self._sender.aclose()

    async def __aenter__(self) -> PigeonClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # --- transport -----------------------------------------------------------------------------------------

    def _backoff(self, attempt: int) -> float:
        ceiling = min(self.backoff_max, self.backoff_initial * (2**attempt))
        return float(ceiling * (1 - 0.25 * random.random()))  # noqa: S311  (jitter, not cryptography)

    def _retry_delay(self, attempt: int, answer: Answer) -> float | None:
        """How long to wait before retrying ``answer``; ``None`` when it must not be retried."""
        if answer.status_code not in RETRY_STATUSES or attempt >= self.max_retries:
            return None
        asked = parse_retry_after(answer.header("retry-after"))
        if asked is None:
            return self._backoff(attempt)
        if asked > self.retry_after_cap:
            return None
        return asked

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: list[tuple[str, str]] | None = None,
        body: dict[str, Any] | None = None,
    ) -> Answer:
        """Send one request (retrying where safe) and return its success answer, or raise a typed error."""
        attempt = 0
        while True:
            started = time.monotonic()
            try:
                async with self.throttle.slot() as ticket:
                    answer = await self._sent(method, path, params, body, ticket)
            except LinkFailure as exc:
                error, never_sent = self._transport_error(exc, method, path), exc.never_sent
                log.debug("%s %s -> %s (attempt %d)", method, path, type(exc).__name__, attempt + 1)
                if (method == "GET" or never_sent) and attempt < self.max_retries:
                    await self._sleep(self._backoff(attempt))
                    attempt += 1
                    continue
                raise error from None
            elapsed = (time.monotonic() - started) * 1000
            log.debug("%s %s -> %d (%.0f ms)", method, path, answer.status_code, elapsed)
            if answer.is_success:
                return answer
            delay = self._retry_delay(attempt, answer) if method == "GET" else None
            if delay is not None:
                if answer.status_code in BUSY_STATUSES:
                    self._tell_busy(answer.status_code, delay)
                    async with self.throttle.paused():  # no other request starts while the service is busy
                        await self._sleep(delay)
                else:
                    await self._sleep(delay)
                attempt += 1
                continue
            raise status_error(answer, method=method, path=path, redact=self._auth.redact)

    async def _sent(
        self, method: str, path: str, params: list[tuple[str, str]] | None, body: dict[str, Any] | None, ticket: Ticket
    ) -> Answer:
        """Send through a slot, and tell the throttle how it went."""
        try:
            answer = await self._send(method, path, params, body)
        except LinkFailure as exc:
            if exc.timed_out:
                self.throttle.timed_out(ticket)
            raise
        self.throttle.answered(answer.status_code, ticket)
        return answer

    def _tell_busy(self, status: int, delay: float) -> None:
        """Tell ``on_busy`` of a wait, unless one told of already covers it (requests in flight together are
        answered "busy" together)."""
        ends = time.monotonic() + delay
        if self.on_busy is None or ends <= self._busy_until + 1.0:
            return
        self._busy_until = ends
        until = datetime.now().astimezone() + timedelta(seconds=delay)
        self.on_busy(BusyWait(status, delay, until))

    async def _send(
        self, method: str, path: str, params: list[tuple[str, str]] | None, body: dict[str, Any] | None
    ) -> Answer:
        url = self.base_url + path + ("?" + urlencode(params, quote_via=quote) if params else "")
        headers = [*_HEADERS, self._auth.header()]
        if body is not None:
            headers.append(("Content-Type", "application/json"))
        try:
            return await self._sender.send(method, url, headers, b"" if body is None else _json_bytes(body))
        except AnswerTooLarge as exc:
            raise MalformedResponse(f"{method} {path}: {exc}; not read") from None
        except EncodedAnswer as exc:
            raise MalformedResponse(
                f"{method} {path}: the answer is encoded as {clean_line(exc.encoding, limit=40)!r}, which Pigeon "
                "never asks for; not read"
            ) from None

    def _transport_error(self, exc: LinkFailure, method: str, path: str) -> PigeonError:
        """The typed error for a request that got no whole answer."""
        where = f"{method} {path}"
        if exc.timed_out:
            kind = "connecting" if exc.never_sent else "waiting for an answer"
            return Timeout(f"{where} timed out {kind} to {self.base_url}; is the service up?")
        detail = clean_line(self._auth.redact(str(exc)), limit=300).strip() or "the connection failed"
        message = f"{where} could not reach {self.base_url}: {detail}"
        if exc.never_sent:
            message += " (is the service running, and is the address right?)"
        return ConnectionFailed(message)

    async def request_json(
        self,
        method: str,
        path: str,
        *,
        params: list[tuple[str, str]] | None = None,
        body: dict[str, Any] | None = None,
    ) -> Any:
        """Send a request and return its success body as parsed JSON; a body that is not JSON is an error."""
        answer = await self.request(method, path, params=params, body=body)
        return parse_json(answer, method, path)

    async def request_model(
        self,
        method: str,
        path: str,
        model: type[M],
        *,
        params: list[tuple[str, str]] | None = None,
        body: dict[str, Any] | None = None,
    ) -> M:
        """Send a request and parse its success body as ``model``; a body of the wrong shape is an error."""
        data = await self.request_json(method, path, params=params, body=body)
        return read_answer(model, data, f"{method} {path}")
