"""Async client of the messaging service. No Textual here."""

from pigeon.api.client import DEFAULT_TIMEOUT, PigeonClient
from pigeon.api.errors import (
    Conflict,
    ConnectionFailed,
    FieldError,
    Invalid,
    InvalidInput,
    MalformedResponse,
    NotFound,
    PaginationError,
    PigeonError,
    RateLimited,
    ServerError,
    StatusError,
    Timeout,
    Unauthorized,
)
from pigeon.api.pagination import Page

__all__ = [
    "DEFAULT_TIMEOUT",
    "Conflict",
    "ConnectionFailed",
    "FieldError",
    "Invalid",
    "InvalidInput",
    "MalformedResponse",
    "NotFound",
    "Page",
    "PaginationError",
    "PigeonClient",
    "PigeonError",
    "RateLimited",
    "ServerError",
    "StatusError",
    "Timeout",
    "Unauthorized",
]
