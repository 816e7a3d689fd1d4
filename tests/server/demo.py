"""Reading the demo mail straight from the service's database, every page of it."""

from __future__ import annotations

from pigeon.models import Message
from pigeon_service.db import Database


def every_message(db: Database, account: str, thread_id: str) -> list[Message]:
    """The thread's messages, oldest first, through all its pages (the long conversation has more than one)."""
    messages: list[Message] = []
    token: str | None = None
    while True:
        page, token = db.list_messages(account, thread_id, message_ids=None, page_size=100, page_token=token)
        messages += page
        if not token:
            return messages
