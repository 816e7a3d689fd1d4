"""The errors the core's callers handle, in one place: the service's (:mod:`pigeon.api.errors`), the store's, and a
search query's, and a contact edit's. Screens and commands name them from here, never from the layers below."""

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
from pigeon.store.account import Account, OtherAccount
from pigeon.store.cache import UnknownThread
from pigeon.store.search import QueryError

__all__ = [
    "Account",
    "Conflict",
    "ConnectionFailed",
    "FieldError",
    "Invalid",
    "InvalidInput",
    "MalformedResponse",
    "NotFound",
    "NotSaved",
    "OtherAccount",
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


class NotSaved(Exception):
    """A contact edit the service did not take; the edit is kept as a draft (``draft_error`` says if it could not
    be)."""

    def __init__(self, cause: PigeonError, draft_error: str = "") -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.draft_error = draft_error


def draft_reason(error: PigeonError) -> str:
    """Why an edit was kept as a draft, in a few words."""
    if isinstance(error, Unauthorized):
        return "not logged in"
    if isinstance(error, ConnectionFailed):
        return "no connection"
    if isinstance(error, RateLimited):
        return "too many requests"
    return "the service failed"
