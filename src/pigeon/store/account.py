"""Which account (on which service) a store holds: a store belongs to one, and another's mail never goes into it.

The account is learnt from the inboxes the service lists (each names its ``account_id``), so the check needs no
request of its own: a sync makes it before it writes anything, and a login before it keeps the token.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from pigeon.sanitize import clean_line
from pigeon.sqlite import Database

if TYPE_CHECKING:
    from pigeon.models import Inbox

_DEFAULT_PORTS = {"http": 80, "https": 443}
_TABLES = (
    "messages",
    "outlines",
    "lanes",
    "threads",
    "inboxes",
    "contacts",
    "triage",
    "labels",
    "undo",
    "search",
    "senders",
    "written_to",
    "let_in_at_start",
)
"""Everything a store holds of an account (messages first: they point at threads)."""


def service_key(base_url: str) -> str:
    """The service's address as compared: scheme and host in lower case, the port spelt out, no trailing slash."""
    try:
        parts = urlsplit(base_url.strip())
        port = parts.port or _DEFAULT_PORTS.get(parts.scheme.lower(), 0)
    except ValueError:
        return base_url.strip()
    host = (parts.hostname or "").lower()
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    return f"{parts.scheme.lower()}://{host}:{port}{parts.path.rstrip('/')}"


@dataclass(frozen=True)
class Account:
    """An account on a service: its id, the service's address, and an inbox address to name it by."""

    account_id: str
    base_url: str
    email: str = ""

    @property
    def words(self) -> str:
        """The account as a person reads it: its id (two accounts may have inboxes of one address), an inbox's
        address when known, and the service."""
        email = f" ({clean_line(self.email, limit=60)})" if self.email else ""
        return f"account {clean_line(self.account_id, limit=60)}{email} at {clean_line(self.base_url, limit=80)}"

    @staticmethod
    def named(account: Account | None) -> str:
        """``words``, or what is known of an account the service listed no inbox of."""
        return account.words if account is not None else "an account with no inbox (Pigeon cannot tell which)"

    def same(self, other: Account) -> bool:
        return self.account_id == other.account_id and service_key(self.base_url) == service_key(other.base_url)


class OtherAccount(Exception):
    """A token of another account than the one the store holds (or whose account cannot be told); nothing was
    written. ``held`` is the store's account, ``given`` the token's (``None`` when the service named none)."""

    def __init__(self, message: str, held: Account | None = None, given: Account | None = None) -> None:
        super().__init__(message)
        self.held, self.given = held, given

    @classmethod
    def refused(cls, held: Account, given: Account | None, store: str) -> OtherAccount:
        if given is None:
            told = "the service lists no inbox for this token, so Pigeon cannot tell whose account it is"
        else:
            told = f"this token is of {given.words}"
        return cls(
            f"The local store {store} holds the mail of {held.words}, and {told}: nothing was written to it. "
            "Use another profile for this account (--profile NAME), or log in again (`pigeon login`) to start this "
            "profile's store afresh.",
            held,
            given,
        )


def account_of(inboxes: Sequence[Inbox], base_url: str) -> Account | None:
    """The account the service's inboxes belong to; ``None`` when it lists none."""
    ids = {inbox.account_id for inbox in inboxes}
    if len(ids) > 1:
        raise OtherAccount("The service's inboxes name several accounts; nothing was written to the local store.")
    if not ids:
        return None
    return Account(ids.pop(), base_url, inboxes[0].email or "")


class AccountStore(Database):
    """The store's one row saying whose mail it holds."""

    def held_account(self) -> Account | None:
        row = self.row("SELECT account_id, base_url, email FROM account WHERE id = 1")
        return Account(row["account_id"], row["base_url"], row["email"]) if row is not None else None

    def claim(self, given: Account | None) -> None:
        """Take the store for ``given`` if it holds no account yet; :class:`OtherAccount` if it holds another."""
        with self.transaction() as conn:
            row = conn.execute("SELECT account_id, base_url, email FROM account WHERE id = 1").fetchone()
            if row is None:
                if given is not None:
                    self._record(conn, given)
                return
            held = Account(row["account_id"], row["base_url"], row["email"])
            if given is None or not held.same(given):
                raise OtherAccount.refused(held, given, self.path)

    def start_afresh(self, given: Account | None) -> None:
        """Empty the store (mail, triage state, labels, undo) and take it for ``given`` (if the service named it),
        in one transaction."""
        with self.transaction() as conn:
            for table in _TABLES:
                conn.execute(f"DELETE FROM {table}")  # (table names from the list above)
            conn.execute("DELETE FROM account")
            conn.execute("UPDATE screening SET since = NULL")  # (a new account's mail is new)
            if given is not None:
                self._record(conn, given)
        self._forget_cached()

    def _forget_cached(self) -> None:
        """What the store keeps in memory of what it held (the cache's contacts)."""

    @staticmethod
    def _record(conn: sqlite3.Connection, given: Account) -> None:
        conn.execute(
            "INSERT INTO account (id, account_id, base_url, email) VALUES (1, ?, ?, ?)",
            (given.account_id, given.base_url, given.email),
        )
