"""A reference service with two accounts, each with its own small demo mailbox, reached in-process."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from pigeon_service.app import ServerSettings, create_app
from pigeon_service.db import Database, iso
from pigeon_service.demo_mail import populate

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


@dataclass
class Account:
    id: str
    token: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


@dataclass
class Service:
    db: Database
    app: FastAPI
    alice: Account
    bob: Account

    def add_message(self, account: Account, thread_id: str, **fields: Any) -> str:
        """Insert a message into a thread, as new mail arriving now."""
        thread = next(
            t for t in self.db.list_threads(account.id, page_size=500, page_token=None)[0] if t.id == thread_id
        )
        with self.db.transaction() as conn:
            return self.db.insert_message(
                conn,
                account.id,
                {
                    "thread_id": thread_id,
                    "inbox_id": thread.inbox_id,
                    "direction": "MESSAGE_DIRECTION_INBOUND",
                    "status": "MESSAGE_STATUS_RECEIVED",
                    "subject": "new",
                    "created_at": fields.pop("created_at", iso(datetime.now(UTC))),
                    **fields,
                },
            )


def make_service(settings: ServerSettings | None = None) -> Service:
    db = Database(":memory:")
    alice, bob = db.ensure_account("alice"), db.ensure_account("bob")
    # small mailboxes, without the demo's long conversation: every test of the client syncs them
    populate(db, alice, threads=25, contacts=30, seed=1, now=NOW, conversation=0)
    populate(db, bob, threads=10, contacts=10, seed=2, now=NOW, conversation=0)
    settings = settings or ServerSettings(deliver_webhooks=False)
    return Service(
        db, create_app(db, settings), Account(alice, db.create_token(alice)), Account(bob, db.create_token(bob))
    )


@pytest.fixture
def service() -> Iterator[Service]:
    made = make_service()
    yield made
    made.db.close()


@pytest.fixture
async def http(service: Service) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=service.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://service.test") as client:
        yield client


def first_thread(service: Service, account: Account, *, min_messages: int = 1) -> str:
    threads, _ = service.db.list_threads(account.id, page_size=500, page_token=None)
    return next(t.id for t in threads if t.id and (t.message_count or 0) >= min_messages)
