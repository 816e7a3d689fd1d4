"""The one error hierarchy of the API client, and the one place that builds errors from responses.

::

    PigeonError
    ├── InvalidInput            the request was refused before sending (bad page size, bad email, ...)
    ├── ConnectionFailed        the service could not be reached
    │   └── Timeout             it did not answer in time
    ├── MalformedResponse       a success status with a body that is not what the spec says
    ├── PaginationError         a page walk that would not end (repeated token, page cap)
    └── StatusError             the service answered with an error status
        ├── Unauthorized        401, 403
        ├── NotFound            404
        ├── Invalid             400, 422 (with field errors when the body has them)
        ├── Conflict            409 (the resource exists already, e.g. an inbox address in use)
        ├── RateLimited         429 (with ``retry_after`` seconds when given)
        └── ServerError         5xx

Every message is one readable line, with untrusted text cleaned and the token removed.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pigeon.sanitize import clean_line

if TYPE_CHECKING:
    from pigeon.api.answers import Answer

DETAIL_LIMIT = 300
"""How many characters of a server's error text an error message keeps."""

REDACTED = "[redacted]"

DESCRIBE_LIMIT = 64 * 1024
"""How many bytes of an error body are read to describe it (a page's title or a JSON error is near its start;
reading no more bounds the work a hostile page can cause)."""

UNREADABLE = "the body could not be read"


@dataclass(frozen=True)
class FieldError:
    """A problem with one field of a request: ``field`` is a dotted path such as ``emails.0.email``."""

    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.field else self.message


class PigeonError(Exception):
    """Base of every error raised by :mod:`pigeon.api`."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class InvalidInput(PigeonError):
    """A request that was refused before it was sent."""

    def __init__(self, message: str, errors: list[FieldError] | None = None) -> None:
        super().__init__(message)
        self.errors: list[FieldError] = list(errors or [])


class ConnectionFailed(PigeonError):
    """The service could not be reached (DNS, refused connection, TLS, dropped connection)."""


class Timeout(ConnectionFailed):
    """The service did not answer within the timeout."""


class LinkFailure(Exception):
    """A request that got no whole answer (the connection failed, timed out or broke off), whichever HTTP library
    sent it: the client turns it into :class:`ConnectionFailed` or :class:`Timeout`, never lets it out.
    ``never_sent``: the request certainly never reached the service (safe to send again, whatever its method)."""

    def __init__(self, detail: str, *, timed_out: bool, never_sent: bool) -> None:
        super().__init__(detail)
        self.timed_out = timed_out
        self.never_sent = never_sent


class MalformedResponse(PigeonError):
    """A success status whose body is not JSON of the shape the spec gives."""


class PaginationError(PigeonError):
    """A page walk stopped because it would not end: a repeated page token, or more pages than the cap."""


@dataclass
class _Described:
    title: str = ""
    detail: str = ""
    errors: list[FieldError] = field(default_factory=list)


class StatusError(PigeonError):
    """The service answered with an error status."""

    def __init__(
        self,
        message: str,
        *,
        status: int,
        method: str,
        path: str,
        title: str = "",
        detail: str = "",
        errors: list[FieldError] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.method = method
        self.path = path
        self.title = title
        self.detail = detail
        self.errors: list[FieldError] = list(errors or [])


class Unauthorized(StatusError):
    """401 or 403: the token is missing, wrong, expired or not allowed to do this."""


class NotFound(StatusError):
    """404: no such resource (or not the caller's)."""


class Invalid(StatusError):
    """400 or 422: the service refused the request's content; ``errors`` says which fields."""


class Conflict(StatusError):
    """409: the request clashes with what exists (an inbox address in use)."""


class RateLimited(StatusError):
    """429: too many requests; ``retry_after`` is the wait in seconds the service asked for, if it said."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class ServerError(StatusError):
    """5xx: the service failed."""


def redact(text: str, secret: str | None) -> str:
    """``text`` with every occurrence of ``secret`` replaced."""
    if secret:
        return text.replace(secret, REDACTED)
    return text


def _short(text: str) -> str:
    return clean_line(text, limit=DETAIL_LIMIT)


def _dotted(parts: Any) -> str:
    """A field path from a JSON pointer (``/emails/0/email``) or a location list (``["body", "emails", 0]``)."""
    if isinstance(parts, str):
        if parts.startswith("#"):
            parts = parts[1:]
        if parts.startswith("/"):
            return ".".join(p.replace("~1", "/").replace("~0", "~") for p in parts[1:].split("/"))
        return str(parts)
    if isinstance(parts, list | tuple):
        items = [str(p) for p in parts]
        if items and items[0] in {"body", "query", "path", "header"}:
            items = items[1:]
        return ".".join(items)
    return ""


def _field_errors(value: Any) -> list[FieldError]:
    """Field errors from the usual shapes: a list of objects, or an object mapping fields to messages."""
    found: list[FieldError] = []
    if isinstance(value, dict):
        for name, messages in value.items():
            items = messages if isinstance(messages, list) else [messages]
            for item in items:
                found.append(FieldError(_short(str(name)), _short(str(item))))
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict):
                where = next((item[k] for k in ("field", "pointer", "loc", "name", "path", "param") if k in item), "")
                text = next((item[k] for k in ("message", "detail", "msg", "title") if k in item), "")
                if text or where:
                    found.append(FieldError(_short(_dotted(where)), _short(str(text))))
            elif isinstance(item, str):
                found.append(FieldError("", _short(item)))
    return found


def _describe_json(body: Any) -> _Described:
    if not isinstance(body, dict):
        return _Described(detail=_short(json.dumps(body)) if body not in (None, "", [], {}) else "")
    out = _Described()
    error = body.get("error")
    if isinstance(error, dict):  # {"error": {"message": ..., "code": ...}}
        out.detail = _short(str(error.get("message") or error.get("detail") or ""))
        out.errors = _field_errors(error.get("errors") or error.get("details") or [])
    elif isinstance(error, str):
        out.detail = _short(error)
    detail = body.get("detail")
    if isinstance(detail, list):  # FastAPI validation errors
        out.errors = out.errors or _field_errors(detail)
    elif detail is not None and not out.detail:
        out.detail = _short(str(detail))
    if body.get("title") is not None:  # RFC 9457 problem details
        out.title = _short(str(body["title"]))
    if not out.detail and body.get("message") is not None:
        out.detail = _short(str(body["message"]))
    if not out.errors and "errors" in body:
        out.errors = _field_errors(body["errors"])
    return out


def _describe_text(text: str, content_type: str) -> _Described:
    looks_html = "html" in content_type or text.lstrip()[:15].lower().startswith(("<!doctype", "<html"))
    if looks_html:
        from pigeon.htmltext import summary

        return _Described(detail=_short(summary(text)))
    return _Described(detail=_short(text))


def describe_body(response: Answer) -> tuple[str, str, list[FieldError]]:
    """``(title, detail, field_errors)`` from an error response of any shape, read from its first
    :data:`DESCRIBE_LIMIT` bytes; never raises (a body that cannot be described says so)."""
    try:
        return _describe(response)
    except Exception:  # (JSON nested past the parser's recursion limit, an unknown charset, ...)
        return "", UNREADABLE, []


def _charset(content_type: str) -> str:
    """The charset a ``Content-Type`` names, if Python knows it; else UTF-8."""
    import codecs

    for part in content_type.split(";")[1:]:
        name, _, value = part.partition("=")
        if name.strip() == "charset":
            try:
                return codecs.lookup(value.strip().strip('"')).name
            except LookupError:
                break
    return "utf-8"


def _describe(response: Answer) -> tuple[str, str, list[FieldError]]:
    content_type = (response.header("content-type") or "").lower()
    text = response.content[:DESCRIBE_LIMIT].decode(_charset(content_type), errors="replace")
    if not text.strip():
        return "", "", []
    if "json" in content_type or text.lstrip()[:1] in "{[":
        try:
            described = _describe_json(json.loads(text))
        except ValueError:
            described = _describe_text(text, content_type)
    else:
        described = _describe_text(text, content_type)
    return described.title, described.detail, described.errors


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delta-seconds or an HTTP date. ``None`` if absent/bad."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        from email.utils import parsedate_to_datetime  # (an HTTP date is rare: the email package loads only then)

        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if not math.isfinite(seconds):
        return None
    return max(seconds, 0.0)


_STATUS_CLASSES: dict[int, type[StatusError]] = {
    400: Invalid,
    401: Unauthorized,
    403: Unauthorized,
    404: NotFound,
    409: Conflict,
    422: Invalid,
    429: RateLimited,
}

_ADVICE: dict[type[StatusError], str] = {
    Unauthorized: "check the token (pigeon login)",
    RateLimited: "try again later",
    ServerError: "the service failed; try again later",
}


def _phrase(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "error"


def status_error(
    response: Answer, *, method: str, path: str, redact: Callable[[str], str] = lambda text: text
) -> StatusError:
    """Build the typed error for an error response; ``redact`` removes the token from every piece of text kept."""
    status = response.status_code
    cls = _STATUS_CLASSES.get(status) or (ServerError if status >= 500 else StatusError)
    title, detail, errors = describe_body(response)
    title, detail = redact(title), redact(detail)
    errors = [FieldError(redact(e.field), redact(e.message)) for e in errors]

    reason = clean_line(response.reason, limit=60) or _phrase(status)
    parts = [f"{method} {path} failed: {status} {reason}"]
    said = detail or (title if title.lower() != reason.lower() else "")
    if said:
        parts.append(said)
    unsaid = [e for e in errors if e.message not in said]
    if unsaid:
        parts.append("; ".join(str(e) for e in unsaid[:5]) + (" …" if len(unsaid) > 5 else ""))
    advice = _ADVICE.get(cls)
    message = ": ".join(parts) + (f" ({advice})" if advice and not said else "")

    kwargs: dict[str, Any] = dict(status=status, method=method, path=path, title=title, detail=detail, errors=errors)
    if cls is RateLimited:
        return RateLimited(message, retry_after=parse_retry_after(response.header("retry-after")), **kwargs)
    return cls(message, **kwargs)
