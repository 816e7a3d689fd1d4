"""Async client of the messaging service. No Textual here.

The error types load at once; the client (and httpx with it) loads when first used, so a program that only
needs to name errors, or paints its first screen from the local store, starts faster.
"""

import sys
from typing import TYPE_CHECKING, Any

# httpx's package imports its command-line program when it can (``httpx._main``: click, Pygments and its lexers, 40
# modules), and Pigeon never runs it. A ``None`` in ``sys.modules`` makes that import fail, which httpx expects (it
# then defines a ``main`` that says what to install). Measured: 2.9 MiB less resident memory for the app's imports,
# 1.1-1.3 MiB less at its peak at 100,000 threads (issue 16 asks for 80 MiB there). Set before anything here imports
# httpx.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

from pigeon.api.errors import (  # noqa: E402  (after the line above)
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
