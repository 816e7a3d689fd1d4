"""The local store: a cache of the service's mail plus Pigeon's own triage state, in SQLite.

One database per profile (``<data dir>/store/<profile>.sqlite3``, see :func:`store_path`), holding one account's
mail (see :mod:`~pigeon.store.account`). The service has no read, star or archive
operation, so that state lives here, next to a cache of inboxes, threads, messages and contacts, a full-text
index, and an undo stack. Store rows and wire models are separate: the cache keeps each resource's JSON as the
service sent it, and the columns the list and search need. The concerns live in their own modules: the tables in
:mod:`~pigeon.store.schema`, the cache in :mod:`~pigeon.store.cache`, lists in :mod:`~pigeon.store.views`, triage
and undo in :mod:`~pigeon.store.triage`, what the states mean in :mod:`~pigeon.store.predicates`.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from pigeon import locations
from pigeon.sqlite import SchemaTooNew
from pigeon.store.account import Account, AccountStore, OtherAccount
from pigeon.store.cache import CacheStore, UnknownThread, iso
from pigeon.store.pages import PagedStore
from pigeon.store.predicates import SORTS, VIEWS
from pigeon.store.schema import MIGRATIONS, SCHEMA_VERSION
from pigeon.store.screening import ScreeningStore
from pigeon.store.triage import Change, TriageStore, UndoStep
from pigeon.store.views import StoredThread, ViewStore

__all__ = [
    "SCHEMA_VERSION",
    "SORTS",
    "VIEWS",
    "Account",
    "Change",
    "MailStore",
    "OtherAccount",
    "SchemaTooNew",
    "StoredThread",
    "UndoStep",
    "UnknownThread",
    "iso",
    "store_path",
]


PLAIN_NAME_BYTES = 100
"""The longest profile name kept as its store's file name (longer ones get a hash, within a file name's bytes)."""


def store_path(profile: str) -> Path:
    """The store of ``profile``, one file per name: a name of letters, digits, ``-`` and ``_`` is its file's name
    (as it always was); any other gets a safe stem and a hash of the whole name after a dot, which no plain name
    has, so ``work.alice`` and ``work_alice`` never share a store."""
    raw = profile.encode("utf-8", "surrogatepass")  # (a name from argv may hold undecodable bytes)
    if profile and len(raw) <= PLAIN_NAME_BYTES and all(ch.isalnum() or ch in "-_" for ch in profile):
        stem = profile
    else:
        safe = "".join(ch if ch.isascii() and (ch.isalnum() or ch in "-_") else "_" for ch in profile)
        stem = f"{safe[:60] or 'profile'}.{hashlib.sha256(raw).hexdigest()[:16]}"
    return locations.data_dir() / "store" / f"{stem}.sqlite3"


class MailStore(CacheStore, PagedStore, ViewStore, TriageStore, ScreeningStore, AccountStore):
    """The local store of one account. ``path`` may be ``":memory:"`` (``pigeon demo``, tests)."""

    # Its writes keep the references themselves (a thread's messages, lane and outline are written only after its
    # row is found, and no thread row is deleted but with the rest): SQLite's checks cost a sync a seventh of its
    # storing (docs/performance.md).
    foreign_keys = False

    def __init__(self, path: str | Path) -> None:
        super().__init__(path, MIGRATIONS, folder_mode=0o700, readers=True)  # (reads never wait for a sync's writes)

    def _forget_cached(self) -> None:
        self._kept_contacts = None

    @classmethod
    def for_profile(cls, profile: str) -> MailStore:
        return cls(store_path(profile))
