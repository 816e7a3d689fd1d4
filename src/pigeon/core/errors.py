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
from pigeon.sqlite import Interrupted, SchemaTooNew, StoreUnwritable
from pigeon.store.account import Account, OtherAccount
from pigeon.store.cache import UnknownThread
from pigeon.store.search import QueryError
from pigeon.store.triage import DamagedStep

__all__ = [
    "Account",
    "Conflict",
    "ConnectionFailed",
    "DamagedStep",
    "FieldError",
    "Interrupted",
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
    "StoreUnwritable",
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


def damaged_step_words(error: DamagedStep) -> str:
    """Why ``u`` or ``pigeon undo`` did nothing, in one line (the step's own description cleaned)."""
    from pigeon.core.actions import describe

    return (
        f"Cannot undo ({describe(error.change)}): the step's record in the local store is damaged. "
        "Nothing was changed; the step is kept."
    )


def draft_reason(error: PigeonError) -> str:
    """Why an edit was kept as a draft, in a few words."""
    if isinstance(error, Unauthorized):
        return "not logged in"
    if isinstance(error, ConnectionFailed):
        return "no connection"
    if isinstance(error, RateLimited):
        return "too many requests"
    return "the service failed"
