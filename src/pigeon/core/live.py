"""Live updates: webhooks to a receiver on 127.0.0.1 when the service runs on this machine, else polling. The
caller (the TUI) gets each verified event as a :class:`LiveEvent` and does its own timing. No Textual here."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pigeon.api import PigeonError

if TYPE_CHECKING:
    from pigeon.api.client import PigeonClient
    from pigeon.api.receiver import WebhookReceiver
    from pigeon.models import Message

log = logging.getLogger("pigeon.core.live")


def is_loopback(base_url: str) -> bool:
    host = (urlsplit(base_url).hostname or "").lower()
    return host in {"localhost", "::1"} or host.startswith("127.")


@dataclass(frozen=True)
class LiveEvent:
    """A verified event about a message: ``created`` (new mail) or a change of the message."""

    created: bool
    message: Message


def parse_event(data: dict[str, Any]) -> LiveEvent | None:
    """The event's message, if it carries a valid one."""
    from pydantic import ValidationError

    from pigeon.api.receiver import event_message
    from pigeon.models import EventKind
    from pigeon.models import Message as MailMessage

    raw = event_message(data)
    try:
        message = MailMessage.model_validate(raw) if raw else None
    except ValidationError:
        return None
    if message is None or not message.thread_id:
        return None
    return LiveEvent(data.get("type") == EventKind.MESSAGE_CREATED, message)


class Live:
    """One profile's live updates: :meth:`start` says which way they come."""

    def __init__(self) -> None:
        self._receiver: WebhookReceiver | None = None

    @property
    def receiver(self) -> WebhookReceiver | None:
        """The receiver of webhook deliveries, while live updates come that way."""
        return self._receiver

    async def start(self, client: PigeonClient, on_event: Callable[[dict[str, Any]], None]) -> bool:
        """Subscribe a receiver when the service is on this machine; ``False`` means: poll instead."""
        from pigeon.api.receiver import WebhookReceiver  # only when live updates are on
        from pigeon.models import EventKind

        if not is_loopback(client.base_url):
            return False
        receiver = WebhookReceiver(on_event)
        await receiver.start()
        try:
            hook = await client.webhooks.create(
                url=receiver.url, events=[kind.value for kind in EventKind], description="Pigeon live updates"
            )
        except PigeonError as exc:
            await receiver.stop()
            log.info("webhook subscription refused, polling instead: %s", exc)
            return False
        receiver.secret = hook.secret
        self._receiver = receiver
        return True

    async def stop(self) -> None:
        if self._receiver is not None:
            await self._receiver.stop()
            self._receiver = None
