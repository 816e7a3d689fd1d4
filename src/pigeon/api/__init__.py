"""Async client of the messaging service. No Textual here.

The error types load at once; the client (and aiohttp with it) loads when first used, so a program that only
needs to name errors, or paints its first screen from the local store, starts faster.
"""

from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from pigeon.api.client import DEFAULT_TIMEOUT, PigeonClient
    from pigeon.api.pagination import Page

_LAZY = {"PigeonClient": "pigeon.api.client", "DEFAULT_TIMEOUT": "pigeon.api.client", "Page": "pigeon.api.pagination"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'pigeon.api' has no attribute {name!r}")


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
