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
- At most ``max_in_flight`` requests are in flight, fewer while the service answers 429 or 503
  (:mod:`.throttle`): each such answer halves the number and holds new requests until its wait is over.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import random
import time
import urllib.request
from collections.abc import Awaitable, Callable, Generator
from datetime import datetime, timedelta
from typing import Any, TypeVar
from urllib.parse import quote, urlencode

import httpx
from pydantic import BaseModel, SecretStr

from pigeon.api.errors import (
    ConnectionFailed,
    FieldError,
    InvalidInput,
    MalformedResponse,
    PigeonError,
    Timeout,
    parse_retry_after,
    redact,
    status_error,
)
from pigeon.api.pagination import DEFAULT_MAX_PAGES
from pigeon.api.resources import Contacts, Inboxes, Messages, Threads, Webhooks, parse_json, read_answer
from pigeon.api.throttle import BUSY_STATUSES, BusyWait, Throttle
from pigeon.api.transport import MAX_ANSWER_BYTES, Answer, AnswerTooLarge, KeepAliveTransport, origin_of
from pigeon.sanitize import clean_line

log = logging.getLogger("pigeon.api")

DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=5.0)
DEFAULT_MAX_RETRIES = 2
DEFAULT_MAX_IN_FLIGHT = 16  # (pigeon.store.sync.DEFAULT_CONCURRENCY says why)
RETRY_STATUSES = frozenset({408, 429, 502, 503, 504})
USER_AGENT = "pigeon"
_HEADERS = {"Accept": "application/json", "User-Agent": USER_AGENT}

M = TypeVar("M", bound=BaseModel)
Sleep = Callable[[float], Awaitable[None]]


def _check_base_url(base_url: str) -> str:
    url = httpx.URL(base_url.strip())
    if url.scheme not in {"http", "https"} or not url.host:
        raise InvalidInput(
            f"Invalid base URL {base_url!r}: it must start with http:// or https:// and name a host",
            [FieldError("base_url", "must be an http(s) URL")],
        )
    if url.userinfo:
        raise InvalidInput(
            "Invalid base URL: credentials do not belong in the URL; the token is sent as a header",
            [FieldError("base_url", "must not contain credentials")],
        )
    if url.query or url.fragment or "?" in base_url or "#" in base_url:
        # Paths are appended to the base URL: a query there would end up in the middle of every request's path.
        raise InvalidInput(
            "Invalid base URL: it must not have a query (?...) or a fragment (#...); give the service's address",
            [FieldError("base_url", "must not have a query or fragment")],
        )
    return str(url).rstrip("/")


def _proxied(base_url: str) -> bool:
    """Whether the environment names a proxy for ``base_url`` (httpx's own transport then goes through it)."""
    url = httpx.URL(base_url)
    proxies = urllib.request.getproxies()  # (what httpx reads: the environment, and the system's on macOS/Windows)
    return bool(proxies.get(url.scheme) or proxies.get("all")) and not urllib.request.proxy_bypass(url.host)


def _json_bytes(body: dict[str, Any]) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


def _refuse_encoding(value: str | None, method: str, path: str) -> None:
    """A ``Content-Encoding`` other than identity is refused unread: Pigeon never asks for one, and decoding one
    in memory would let a small answer grow without bound."""
    if value is not None and value.strip().lower() not in {"", "identity"}:
        raise MalformedResponse(
            f"{method} {path}: the answer is encoded as {clean_line(value, limit=40)!r}, which Pigeon never asks "
            "for; not read"
        )


async def _read(response: httpx.Response, method: str, path: str) -> Answer:
    """An answer from a streamed ``httpx.Response``, its body read as it came, at most ``MAX_ANSWER_BYTES``."""
    try:
        _refuse_encoding(response.headers.get("content-encoding"), method, path)
        length = response.headers.get("content-length", "").strip()
        if length.isdigit() and int(length) > MAX_ANSWER_BYTES:
            raise AnswerTooLarge
        chunks: list[bytes] = []
        size = 0
        if response.is_stream_consumed:  # (read already by its transport, as httpx's MockTransport does)
            chunks.append(response.content)
            size = len(response.content)
        else:
            async for chunk in response.aiter_raw():
                size += len(chunk)
                if size > MAX_ANSWER_BYTES:
                    break
                chunks.append(chunk)
        if size > MAX_ANSWER_BYTES:
            raise AnswerTooLarge
    finally:
        await response.aclose()
    reason = response.extensions.get("reason_phrase", b"")
    return Answer(response.status_code, reason, list(response.headers.raw), b"".join(chunks))


class BearerAuth(httpx.Auth):
    """Adds ``Authorization: Bearer`` to each request; the token is held as a ``SecretStr`` so that no repr,
    ``vars()`` or traceback with locals shows it."""

    def __init__(self, token: str) -> None:
        if any(ord(c) < 32 or ord(c) == 127 for c in token):
            # (said without the token: h11 named the whole header, token included, in its error)
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

    def apply(self, request: httpx.Request) -> httpx.Request:
        name, value = self.header()
        request.headers[name] = value
        return request

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        yield self.apply(request)


class PigeonClient:
    """Async client of the messaging service.

    ``http_client`` may be injected (tests pass one with ``httpx.ASGITransport`` or ``MockTransport``); the
    client then does not close it, and every request goes through it. Otherwise requests go straight to a
    :class:`KeepAliveTransport` (a third of the CPU of httpx's own transport a request, and no cookie jar, redirect
    or hook machinery of ``httpx.AsyncClient`` run for nothing: a first sync makes one request a thread), unless the
    environment names a proxy for the service: then through an ``httpx.AsyncClient``, which honours it.
    ``sleep`` is injectable so tests of retries need not wait.
    """

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
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
        base = httpx.URL(self.base_url)
        self._origin = origin_of(base)
        self._prefix = base.raw_path.decode("ascii").rstrip("/")  # (a service mounted below a path)
        self._auth = BearerAuth(token)
        self.timeout = timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout)
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
        # As many connections as requests in flight, and one for a page walk beside them.
        connections = self.throttle.bound + 1
        # Only one of the two is made: an ``httpx.AsyncClient`` of its own imports httpcore and anyio and loads the
        # CA bundle into an SSL context, which the direct path never uses (1.7 MiB of the app's peak memory at
        # 100,000 threads, measured).
        self._direct: KeepAliveTransport | None = None
        self._http: httpx.AsyncClient | None = http_client
        self._owns_http = False
        if http_client is None and not _proxied(self.base_url):
            self._direct = KeepAliveTransport(max_connections=connections)
        elif http_client is None:
            limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
            self._http = httpx.AsyncClient(timeout=self.timeout, follow_redirects=False, limits=limits)
            self._owns_http = True
            # httpx loads anyio's backend on the first request: here instead (the app makes its client in a thread,
            # off the event loop). The direct path needs neither httpcore nor anyio.
            importlib.import_module("httpcore._backends.anyio")
            importlib.import_module("anyio._backends._asyncio")

        self.inboxes = Inboxes(self)
        self.threads = Threads(self)
        self.messages = Messages(self)
        self.contacts = Contacts(self)
        self.webhooks = Webhooks(self)

    def __repr__(self) -> str:
        return f"PigeonClient(base_url={self.base_url!r})"

    async def aclose(self) -> None:
        if self._direct is not None:
            await self._direct.aclose()
        if self._owns_http and self._http is not None:
            await self._http.aclose()

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
                async with self.throttle.slot():
                    answer = await self._send(method, path, params, body)
            except httpx.TransportError as exc:
                error, never_sent = self._transport_error(exc, method, path)
                log.debug("%s %s -> %s (attempt %d)", method, path, type(exc).__name__, attempt + 1)
                if (method == "GET" or never_sent) and attempt < self.max_retries:
                    await self._sleep(self._backoff(attempt))
                    attempt += 1
                    continue
                raise error from None
            elapsed = (time.monotonic() - started) * 1000
            log.debug("%s %s -> %d (%.0f ms)", method, path, answer.status_code, elapsed)
            self.throttle.answered(answer.status_code)
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
            raise status_error(answer.as_httpx(), method=method, path=path, redact=self._auth.redact)

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
        content = b"" if body is None else _json_bytes(body)
        try:
            if self._direct is None:
                assert self._http is not None  # (one of the two is always made)
                request = httpx.Request(
                    method,
                    self.base_url + path,
                    params=tuple(params or ()),
                    content=content or None,
                    headers={**_HEADERS, **({"Content-Type": "application/json"} if body is not None else {})},
                    extensions={"timeout": self.timeout.as_dict()},
                )
                sent = await self._http.send(request, auth=self._auth, follow_redirects=False, stream=True)
                return await _read(sent, method, path)
            # The request line and headers are written here, not built as an ``httpx.Request``: its URL parsing
            # alone was 0.2 ms of CPU a request (cProfile of a 10,000-thread first sync).
            target = self._prefix + path + ("?" + urlencode(params, quote_via=quote) if params else "")
            headers = [*_HEADERS.items(), self._auth.header()]
            if body is not None:
                headers.append(("Content-Type", "application/json"))
            answer = await self._direct.send(method, self._origin, target, headers, content, self.timeout.as_dict())
            _refuse_encoding(answer.header("content-encoding"), method, path)
            return answer
        except AnswerTooLarge as exc:
            raise MalformedResponse(f"{method} {path}: {exc}; not read") from None

    def _transport_error(self, exc: httpx.TransportError, method: str, path: str) -> tuple[PigeonError, bool]:
        """The typed error for a transport failure, and whether the request certainly never left."""
        never_sent = isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout)
        where = f"{method} {path}"
        if isinstance(exc, httpx.TimeoutException):
            kind = "connecting" if isinstance(exc, httpx.ConnectTimeout) else "waiting for an answer"
            message = f"{where} timed out {kind} to {self.base_url}; is the service up?"
            return Timeout(message), never_sent
        detail = self._auth.redact(str(exc)).strip() or type(exc).__name__
        message = f"{where} could not reach {self.base_url}: {detail}"
        if never_sent:
            message += " (is the service running, and is the address right?)"
        return ConnectionFailed(message), never_sent

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
