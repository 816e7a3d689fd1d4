"""Sending one request and reading its answer whole, bounded: through aiohttp, or through an httpx client given.

``PigeonClient`` sends through :class:`AiohttpSender` (a pooled ``aiohttp.ClientSession``: llhttp parses the
answers, and its cost a request is a fraction of httpx's, which matters in a first sync; docs/http-clients.md).
:class:`HttpxSender` sends through an ``httpx.AsyncClient`` handed to the client instead: the seam tests use
(``httpx.MockTransport``, ``httpx.ASGITransport`` on the reference service). Either way failures are raised as
:class:`~pigeon.api.errors.LinkFailure`, answers come back as an :class:`Answer`, a body longer than
:data:`MAX_ANSWER_BYTES` is refused as soon as that is known, and an answer in a ``Content-Encoding`` is refused
unread (Pigeon asks for none; decoding one would let a small answer grow without bound).
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import aiohttp
from yarl import URL

from pigeon.api.answers import Answer
from pigeon.api.errors import LinkFailure

if TYPE_CHECKING:
    import httpx

MAX_ANSWER_BYTES = 64 * 1024 * 1024
"""The longest answer body Pigeon reads (the README's limits say it): far above any page the service sends, and
a bound on the memory a hostile or broken service can make Pigeon use."""


class AnswerTooLarge(Exception):
    """An answer whose body is longer than :data:`MAX_ANSWER_BYTES`: refused, and its connection dropped."""

    def __init__(self) -> None:
        super().__init__(f"the answer is larger than {MAX_ANSWER_BYTES // (1024 * 1024)} MiB")


class EncodedAnswer(Exception):
    """An answer in a ``Content-Encoding`` other than identity: refused unread; ``encoding`` is as it came."""

    def __init__(self, encoding: str) -> None:
        super().__init__(encoding)
        self.encoding = encoding


@dataclass(frozen=True)
class Timeouts:
    """Seconds to wait to connect, and for each read of an answer (``None``: no limit)."""

    connect: float | None = 5.0
    read: float | None = 30.0


class Sender(Protocol):
    async def send(self, method: str, url: str, headers: list[tuple[str, str]], body: bytes) -> Answer: ...

    async def aclose(self) -> None: ...


def _check_head(encoding: str | None, length: str | None) -> None:
    """Refuse an answer by its head: an encoding Pigeon never asks for, or a length past the cap."""
    if encoding is not None and encoding.strip().lower() not in {"", "identity"}:
        raise EncodedAnswer(encoding)
    length = (length or "").strip()
    if length.isdigit() and int(length) > MAX_ANSWER_BYTES:
        raise AnswerTooLarge


def proxy_for(url: str) -> str | None:
    """The proxy the environment names for ``url`` (as other programs read it), or ``None``. Asked once, by the
    client: aiohttp's own ``trust_env`` asks again in a thread on every request, and reads ``~/.netrc`` too."""
    import urllib.request

    parts = URL(url)
    proxies = urllib.request.getproxies()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass(parts.host or ""):
        return None
    return proxy


class AiohttpSender:
    """Requests through one ``aiohttp.ClientSession``: at most ``connections`` connections, kept alive; no cookies,
    no redirects followed, no decompression; through ``proxy`` when one is given."""

    def __init__(self, *, connections: int, timeouts: Timeouts, proxy: str | None = None) -> None:
        self._connections = connections
        self._timeouts = timeouts
        self._proxy = proxy
        self._session: aiohttp.ClientSession | None = None

    def _open(self) -> aiohttp.ClientSession:
        if self._session is None:  # (made on the first request: a session belongs to the loop it was made in)
            timeout = aiohttp.ClientTimeout(
                total=None, sock_connect=self._timeouts.connect, sock_read=self._timeouts.read
            )
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self._connections),
                timeout=timeout,
                cookie_jar=aiohttp.DummyCookieJar(),
                auto_decompress=False,
                skip_auto_headers=("Accept-Encoding",),
            )
        return self._session

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def send(self, method: str, url: str, headers: list[tuple[str, str]], body: bytes) -> Answer:
        session = self._open()
        try:
            async with session.request(
                method,
                URL(url, encoded=True),
                headers=headers,
                data=body or None,
                allow_redirects=False,
                proxy=self._proxy,
            ) as response:
                _check_head(response.headers.get("Content-Encoding"), response.headers.get("Content-Length"))
                chunks: list[bytes] = []
                size = 0
                async for chunk in response.content.iter_any():
                    size += len(chunk)
                    if size > MAX_ANSWER_BYTES:
                        response.close()  # (the connection is dropped, not drained)
                        raise AnswerTooLarge
                    chunks.append(chunk)
                headers_out = list(response.headers.items())
                return Answer(response.status, response.reason or "", headers_out, b"".join(chunks))
        except (aiohttp.ConnectionTimeoutError, aiohttp.ClientConnectorError) as exc:
            timed_out = isinstance(exc, aiohttp.ConnectionTimeoutError)
            raise LinkFailure(_detail(exc), timed_out=timed_out, never_sent=True) from None
        except (TimeoutError, aiohttp.ServerTimeoutError) as exc:
            raise LinkFailure(_detail(exc), timed_out=True, never_sent=False) from None
        except aiohttp.ClientError as exc:
            raise LinkFailure(_detail(exc), timed_out=False, never_sent=False) from None


def _detail(exc: BaseException) -> str:
    """What went wrong, in a few words (aiohttp's own text names the request's URL, never its headers)."""
    if isinstance(exc, aiohttp.ClientResponseError):
        return f"the service's answer is not HTTP/1.1: {exc.message}"
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "the service closed the connection before the answer ended"
    if isinstance(exc, aiohttp.ClientConnectorError):  # (its own text reads "... ssl:default [Connect call ...]")
        return _os_reason(exc.os_error)
    return str(exc) or type(exc).__name__


def _os_reason(error: OSError) -> str:
    """The system's reason for a failed connection, as it words it ("Connection refused", "Name or service not
    known")."""
    if isinstance(error, socket.gaierror) or not error.errno or error.errno < 0:
        return error.strerror or str(error) or type(error).__name__
    return os.strerror(error.errno)


def httpx_failure(exc: httpx.TransportError) -> LinkFailure:
    """An httpx failure as the one kind the client handles."""
    import httpx

    never_sent = isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout)
    detail = str(exc) or type(exc).__name__
    return LinkFailure(detail, timed_out=isinstance(exc, httpx.TimeoutException), never_sent=never_sent)


class HttpxSender:
    """Requests through an ``httpx.AsyncClient`` that the caller made and closes (tests give one with
    ``httpx.MockTransport`` or ``httpx.ASGITransport``)."""

    def __init__(self, http: httpx.AsyncClient, timeouts: Timeouts) -> None:
        self._http = http
        self._timeouts = timeouts

    async def aclose(self) -> None:
        """The client is its caller's to close."""

    async def send(self, method: str, url: str, headers: list[tuple[str, str]], body: bytes) -> Answer:
        import httpx

        timeout = httpx.Timeout(self._timeouts.read, connect=self._timeouts.connect)
        request = self._http.build_request(method, url, headers=headers, content=body or None, timeout=timeout)
        try:
            response = await self._http.send(request, follow_redirects=False, stream=True)
        except httpx.TransportError as exc:
            raise httpx_failure(exc) from None
        try:
            _check_head(response.headers.get("content-encoding"), response.headers.get("content-length"))
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
        except httpx.TransportError as exc:
            raise httpx_failure(exc) from None
        finally:
            await response.aclose()
        headers = list(response.headers.multi_items())
        return Answer(response.status_code, response.reason_phrase, headers, b"".join(chunks))


__all__ = ["MAX_ANSWER_BYTES", "AiohttpSender", "Answer", "AnswerTooLarge", "EncodedAnswer", "HttpxSender", "Timeouts"]
