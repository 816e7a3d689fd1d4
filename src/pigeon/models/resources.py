"""What the service answers with (tolerant): every field optional unless the spec marks it required, unknown fields
kept and serialised back, enums open, date-times as aware UTC datetimes."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, Strict

from pigeon.models.enums import (
    OpenContentType,
    OpenEmailType,
    OpenEventKind,
    OpenInboxStatus,
    OpenInboxType,
    OpenMessageDirection,
    OpenMessageStatus,
    OpenParticipantRole,
    OpenPhoneType,
    OpenRecipientType,
    OpenSocialProfileType,
    OpenThreadStatus,
    OpenWebhookStatus,
)

# --- shared field types -----------------------------------------------------------------------------------


def _to_utc(value: datetime) -> datetime:
    """Aware datetimes convert to UTC; naive ones are taken as UTC (the spec says date-times are UTC)."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:  # (year 9999 ahead of UTC, or year 1 behind it): no such moment in UTC
        raise ValueError("a date-time outside the years 1 to 9999 in UTC") from None


Integer = Annotated[int, Strict(), Field(ge=-(2**53), le=2**53)]
"""What the spec calls an integer: a JSON whole number (not a string, a fraction or a boolean) that JSON carries
exactly and SQLite can hold. Any such value is kept, an odd one too (a size of -1): strict about the type, tolerant
about the value."""


UTCDateTime = Annotated[datetime, AfterValidator(_to_utc)]
"""An ISO 8601 date-time, always held as an aware UTC ``datetime``."""

Metadata = dict[str, Any]
"""A free-form JSON object."""


# --- resources (tolerant) ----------------------------------------------------------------------------------


class Resource(BaseModel):
    """Base of everything the service answers with: unknown fields are kept, nothing else is required."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    def to_wire(self) -> dict[str, Any]:
        """The JSON object for this resource: the fields that were set, unknown ones included."""
        return self.model_dump(mode="json", exclude_unset=True)

    def wire_json(self) -> str:
        """:meth:`to_wire` as JSON text, written by pydantic's serialiser (a third of the time of ``json.dumps`` of
        :meth:`to_wire`: a first sync writes every message once). A lone surrogate the service sent (JSON can carry
        one, UTF-8 cannot, and pydantic reads no JSON that has one) becomes U+FFFD, so the text can be read back."""
        try:
            return self.model_dump_json(exclude_unset=True)
        except ValueError:  # (pydantic_core's PydanticSerializationError)
            text = json.dumps(self.to_wire(), ensure_ascii=False)
            return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class ContactEmail(Resource):
    id: str | None = None
    type: OpenEmailType | None = None
    email: str | None = None


class ContactPhone(Resource):
    id: str | None = None
    type: OpenPhoneType | None = None
    phone: str | None = None


class ContactSocialProfile(Resource):
    id: str | None = None
    type: OpenSocialProfileType | None = None
    username: str | None = None


class Contact(Resource):
    id: str | None = None
    created_at: UTCDateTime | None = None
    account_id: str | None = None
    first_name: str | None = None
    last_name: str | None = None
    display_name: str | None = None
    company: str | None = None
    title: str | None = None
    emails: list[ContactEmail] = Field(default_factory=list)
    phones: list[ContactPhone] = Field(default_factory=list)
    social_profiles: list[ContactSocialProfile] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    metadata: Metadata | None = None
    updated_at: UTCDateTime | None = None
    last_contacted_at: UTCDateTime | None = None

    @property
    def name(self) -> str:
        """The best human name the contact has: display name, then first + last, then the first email."""
        if self.display_name:
            return self.display_name
        full = " ".join(part for part in (self.first_name, self.last_name) if part)
        if full:
            return full
        for entry in self.emails:
            if entry.email:
                return entry.email
        return ""


class Sender(Resource):
    contact_id: str | None = None
    contact: Contact | None = None
    raw_address: str | None = None


class Recipient(Resource):
    contact_id: str | None = None
    raw_address: str | None = None
    type: OpenRecipientType | None = None


class ContentBlock(Resource):
    type: OpenContentType | None = None
    content: str | None = None
    sequence: Integer | None = None
    mime_type: str | None = None
    filename: str | None = None
    size: Integer | None = None
    metadata: Metadata | None = None

    @property
    def base_mime(self) -> str:
        """The MIME type without its parameters, lower case; none given: text/plain."""
        return (self.mime_type or "text/plain").split(";")[0].strip().lower()

    @property
    def attached(self) -> bool:
        """Shown as an attachment: it has a filename, or a MIME type that is not text."""
        mime = self.base_mime
        return bool(self.filename) or not (mime.startswith("text/") or mime in {"", "application/json"})


class Message(Resource):
    id: str | None = None
    thread_id: str | None = None
    inbox_id: str | None = None
    direction: OpenMessageDirection | None = None
    status: OpenMessageStatus | None = None
    created_at: UTCDateTime | None = None
    parent_id: str | None = None
    subject: str | None = None
    sender: Sender | None = None
    recipients: list[Recipient] = Field(default_factory=list)
    content_blocks: list[ContentBlock] = Field(default_factory=list)
    metadata: Metadata | None = None
    updated_at: UTCDateTime | None = None
    sent_at: UTCDateTime | None = None
    received_at: UTCDateTime | None = None


class Participant(Resource):
    contact_id: str | None = None
    role: OpenParticipantRole | None = None
    last_read_at: UTCDateTime | None = None


class Thread(Resource):
    id: str | None = None
    inbox_id: str | None = None
    status: OpenThreadStatus | None = None
    created_at: UTCDateTime | None = None
    subject: str | None = None
    participants: list[Participant] = Field(default_factory=list)
    last_message_at: UTCDateTime | None = None
    message_count: Integer | None = None
    metadata: Metadata | None = None
    updated_at: UTCDateTime | None = None


class Inbox(Resource):
    # Required by the spec: id, account_id, type, status, email.
    id: str
    account_id: str
    type: OpenInboxType
    status: OpenInboxStatus
    email: str
    display_name: str | None = None
    metadata: Metadata | None = None
    created_at: UTCDateTime | None = None
    updated_at: UTCDateTime | None = None


class WebhookSubscription(Resource):
    # Required by the spec: id, url, events, status, created_at.
    id: str
    url: str
    events: list[OpenEventKind]
    status: OpenWebhookStatus
    created_at: UTCDateTime
    description: str | None = None
    secret: str | None = None
    metadata: Metadata | None = None
    updated_at: UTCDateTime | None = None


class ListMessagesResponse(Resource):
    messages: list[Message]
    # Required by the spec, but its value on the last page is not shown: empty, null or missing all end the list.
    next_page_token: str | None = None


class ListThreadsResponse(Resource):
    threads: list[Thread]
    next_page_token: str | None = None


class ListInboxesResponse(Resource):
    inboxes: list[Inbox]
    next_page_token: str | None = None
