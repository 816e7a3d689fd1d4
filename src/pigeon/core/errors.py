"""The errors the core's callers handle, in one place: the service's (:mod:`pigeon.api.errors`), the store's, and a
search query's. Screens and commands name them from here, never from the layers below."""

from __future__ import annotations

from pigeon.api.errors import (
    Conflict,
    ConnectionFailed,
    FieldError,
    Invalid,
    InvalidInput,
    MalformedResponse,
    NotFound,
    PigeonError,
    RateLimited,
    ServerError,
    StatusError,
    Timeout,
    Unauthorized,
)
from pigeon.sqlite import SchemaTooNew
from pigeon.store.cache import UnknownThread
from pigeon.store.search import QueryError

__all__ = [
    "Conflict",
    "ConnectionFailed",
    "FieldError",
    "Invalid",
    "InvalidInput",
    "MalformedResponse",
    "NotFound",
    "PigeonError",
    "QueryError",
    "RateLimited",
    "SchemaTooNew",
    "ServerError",
    "StatusError",
    "Timeout",
    "Unauthorized",
    "UnknownThread",
]
