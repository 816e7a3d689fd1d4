"""``WebhookEvent``: a webhook delivery's event, read once where it arrives (after its signature is checked).

An event is a reason to sync, never the mail itself: a service may send the message whole or thin, and only its
type and ids are read here. An event that names no thread is still an event (a delivery came); it names nothing to
read again.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

ID_LONGEST = 200
"""Characters: an id longer than this is no id of the service's."""


def _id(value: object) -> str:
    return value if isinstance(value, str) and 0 < len(value) <= ID_LONGEST else ""


class WebhookEvent(BaseModel):
    """A verified event: its type, and the message it is about (new or changed) by id, ``""`` where not named."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    type: str
    message_id: str = ""
    thread_id: str = ""

    @model_validator(mode="before")
    @classmethod
    def _from_wire(cls, data: Any) -> Any:
        """From the wire's shape, ``{"type": ..., "data": {"message": {"id": ..., "thread_id": ...}}}``."""
        if not isinstance(data, dict) or "data" not in data:
            return data
        payload = data.get("data")
        message = payload.get("message") if isinstance(payload, dict) else None
        message = message if isinstance(message, dict) else {}
        return {
            "type": data.get("type"),
            "message_id": _id(message.get("id")),
            "thread_id": _id(message.get("thread_id")),
        }

    @classmethod
    def read(cls, data: object) -> WebhookEvent | None:
        """The event in a delivery's parsed body; ``None`` when it is not an event (no type)."""
        try:
            return cls.model_validate(data)
        except ValidationError:
            return None
