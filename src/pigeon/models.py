"""Wire models of the messaging service (``shared/spec/messaging-service.md``), shared by client and server.

Two families:

- **Resources and responses** (:class:`Resource` subclasses) are *tolerant*: every field is optional unless the
  spec marks it required, unknown fields are kept (and serialised back), and enums are *open*: the known values are
  named constants, an unknown value parses and is kept as its string. Date-times parse to aware UTC datetimes.
- **Request bodies and query parameters** (:class:`RequestBody` subclasses) are *strict*: unknown fields are
  refused, enum values are checked against the spec's lists, URLs and email addresses are validated, and
  ``metadata`` must be a JSON object.

Nothing here is client-only or server-only.
"""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Final

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
)

# --- limits ------------------------------------------------------------------------------------------------

PAGE_SIZE_MIN: Final = 1
PAGE_SIZE_MAX: Final = 100
PAGE_SIZE_DEFAULT: Final = 20
INBOX_DISPLAY_NAME_MAX: Final = 100
# The spec prints "100" and "200" beside update contact without saying what they bound. Pigeon reads them as:
# a first or last name is at most 100 characters; a phone number or username at most 200. (An email address is
# bounded by RFC 5321's 254, below.)
CONTACT_NAME_MAX: Final = 100
CONTACT_VALUE_MAX: Final = 200


# --- shared field types -----------------------------------------------------------------------------------


def _to_utc(value: datetime) -> datetime:
    """Aware datetimes convert to UTC; naive ones are taken as UTC (the spec says date-times are UTC)."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


UTCDateTime = Annotated[datetime, AfterValidator(_to_utc)]
"""An ISO 8601 date-time, always held as an aware UTC ``datetime``."""

Metadata = dict[str, Any]
"""A free-form JSON object."""


# --- enumerations ------------------------------------------------------------------------------------------
# Open enums: a field typed ``X | str`` with left-to-right union mode tries the named values first and keeps any
# other string as it is. Values marked "reference server" are the choices of ``pigeon serve`` where the spec shows
# only the ``*_UNSPECIFIED`` value; a client must not depend on them.


class MessageDirection(StrEnum):
    UNSPECIFIED = "MESSAGE_DIRECTION_UNSPECIFIED"
    INBOUND = "MESSAGE_DIRECTION_INBOUND"  # reference server
    OUTBOUND = "MESSAGE_DIRECTION_OUTBOUND"  # reference server


class MessageStatus(StrEnum):
    UNSPECIFIED = "MESSAGE_STATUS_UNSPECIFIED"
    RECEIVED = "MESSAGE_STATUS_RECEIVED"  # reference server
    PENDING = "MESSAGE_STATUS_PENDING"  # reference server
    SENT = "MESSAGE_STATUS_SENT"  # reference server
    DELIVERED = "MESSAGE_STATUS_DELIVERED"  # reference server
    FAILED = "MESSAGE_STATUS_FAILED"  # reference server


class RecipientType(StrEnum):
    UNSPECIFIED = "RECIPIENT_TYPE_UNSPECIFIED"
    TO = "RECIPIENT_TYPE_TO"  # reference server
    CC = "RECIPIENT_TYPE_CC"  # reference server
    BCC = "RECIPIENT_TYPE_BCC"  # reference server


class ContentType(StrEnum):
    UNSPECIFIED = "CONTENT_TYPE_UNSPECIFIED"
    TEXT = "CONTENT_TYPE_TEXT"  # reference server: a body part, see mime_type
    ATTACHMENT = "CONTENT_TYPE_ATTACHMENT"  # reference server


class EmailType(StrEnum):
    UNSPECIFIED = "EMAIL_TYPE_UNSPECIFIED"
    WORK = "EMAIL_TYPE_WORK"
    PERSONAL = "EMAIL_TYPE_PERSONAL"
    UNKNOWN = "EMAIL_TYPE_UNKNOWN"


class PhoneType(StrEnum):
    UNSPECIFIED = "PHONE_TYPE_UNSPECIFIED"
    WORK = "PHONE_TYPE_WORK"
    PERSONAL = "PHONE_TYPE_PERSONAL"
    UNKNOWN = "PHONE_TYPE_UNKNOWN"


class SocialProfileType(StrEnum):
    UNSPECIFIED = "SOCIAL_PROFILE_TYPE_UNSPECIFIED"
    LINKEDIN = "SOCIAL_PROFILE_TYPE_LINKEDIN"


class ThreadStatus(StrEnum):
    OPEN = "OPEN"


class ParticipantRole(StrEnum):
    OWNER = "OWNER"


class InboxType(StrEnum):
    EMAIL_INBOX = "EMAIL_INBOX"


class InboxStatus(StrEnum):
    ACTIVE = "ACTIVE"
    INACTIVE = "INACTIVE"
    PENDING_VERIFICATION = "PENDING_VERIFICATION"
    FAILED = "FAILED"


class WebhookStatus(StrEnum):
    ACTIVE = "active"
    INACTIVE = "inactive"
    FAILED = "failed"


class EventKind(StrEnum):
    MESSAGE_CREATED = "message.created"
    MESSAGE_UPDATED = "message.updated"
    MESSAGE_SENT = "message.sent"
    MESSAGE_DELIVERED = "message.delivered"
    MESSAGE_FAILED = "message.failed"


_OPEN = Field(union_mode="left_to_right")

OpenMessageDirection = Annotated[MessageDirection | str, _OPEN]
OpenMessageStatus = Annotated[MessageStatus | str, _OPEN]
OpenRecipientType = Annotated[RecipientType | str, _OPEN]
OpenContentType = Annotated[ContentType | str, _OPEN]
OpenEmailType = Annotated[EmailType | str, _OPEN]
OpenPhoneType = Annotated[PhoneType | str, _OPEN]
OpenSocialProfileType = Annotated[SocialProfileType | str, _OPEN]
OpenThreadStatus = Annotated[ThreadStatus | str, _OPEN]
OpenParticipantRole = Annotated[ParticipantRole | str, _OPEN]
OpenInboxType = Annotated[InboxType | str, _OPEN]
OpenInboxStatus = Annotated[InboxStatus | str, _OPEN]
OpenWebhookStatus = Annotated[WebhookStatus | str, _OPEN]
OpenEventKind = Annotated[EventKind | str, _OPEN]


# --- resources (tolerant) ----------------------------------------------------------------------------------


class Resource(BaseModel):
    """Base of everything the service answers with: unknown fields are kept, nothing else is required."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    def to_wire(self) -> dict[str, Any]:
        """The JSON object for this resource: the fields that were set, unknown ones included."""
        return self.model_dump(mode="json", exclude_unset=True)


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
    sequence: int | None = None
    mime_type: str | None = None
    filename: str | None = None
    size: int | None = None
    metadata: Metadata | None = None


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
    message_count: int | None = None
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


# --- requests (strict) -------------------------------------------------------------------------------------


class RequestBody(BaseModel):
    """Base of request bodies and query parameters: unknown fields refused, values checked."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    def to_wire(self) -> dict[str, Any]:
        """The JSON body: only the fields the caller set (PATCH semantics), arrays whole."""
        return self.model_dump(mode="json", exclude_unset=True)


_PORT = r"(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}|0)"
HTTP_URL_PATTERN: Final = r"^https?://[A-Za-z0-9.-]*[A-Za-z0-9][A-Za-z0-9.-]*(?::" + _PORT + r")?(?:[/?#][^\s]*)?$"
"""An absolute http(s) URL: lower-case scheme, a host name or IPv4 address, an optional port, no credentials,
printable ASCII only. The same pattern is the validation and the published JSON schema, so client, server and
schema agree."""
HTTP_URL_MAX = 2048


def _check_http_url(value: str) -> str:
    if not re.fullmatch(HTTP_URL_PATTERN, value):
        raise ValueError("must be an absolute http:// or https:// URL with a host, in printable ASCII, no credentials")
    return value


HttpUrlText = Annotated[
    str,
    Field(max_length=HTTP_URL_MAX, json_schema_extra={"pattern": HTTP_URL_PATTERN}),
    AfterValidator(_check_http_url),
]


EMAIL_PATTERN: Final = (
    r"^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$"
)
"""An email address: an RFC 5322 atext local part, a domain of DNS labels with an alphabetic top level. Like the
URL pattern, it is both the validation and the published schema."""
EMAIL_MAX = 254


def _check_email(value: str) -> str:
    if not re.fullmatch(EMAIL_PATTERN, value):
        raise ValueError("is not a valid email address (like name@example.com)")
    return value


EmailAddress = Annotated[
    str, Field(max_length=EMAIL_MAX, json_schema_extra={"pattern": EMAIL_PATTERN}), AfterValidator(_check_email)
]


def _check_uuid(value: str) -> str:
    """A UUID string, returned in its canonical lower-case hyphenated form."""
    try:
        return str(uuid.UUID(value))
    except ValueError as exc:
        raise ValueError("must be a UUID") from exc


UUIDText = Annotated[str, AfterValidator(_check_uuid)]
"""An identifier the spec types uuid, when a caller sends one."""


class CreateInbox(RequestBody):
    type: InboxType
    email: EmailAddress | None = None
    # Not listed in the spec's body; the Inbox resource has it (at most 100 characters). Sent only when set.
    display_name: str | None = Field(default=None, max_length=INBOX_DISPLAY_NAME_MAX)
    metadata: Metadata | None = None


class ContactEmailInput(RequestBody):
    type: EmailType
    email: EmailAddress


class ContactPhoneInput(RequestBody):
    type: PhoneType
    phone: str = Field(min_length=1, max_length=CONTACT_VALUE_MAX)


class ContactSocialProfileInput(RequestBody):
    type: SocialProfileType
    username: str = Field(min_length=1, max_length=CONTACT_VALUE_MAX)


def _optional_not_nullable(schema: dict[str, Any]) -> None:
    """Publish ``X | None = None`` fields as optional ``X``: leaving one out is fine, sending null is not."""
    for prop in schema.get("properties", {}).values():
        options = prop.get("anyOf")
        if options and {"type": "null"} in options:
            rest = [o for o in options if o != {"type": "null"}]
            prop.pop("anyOf")
            prop.pop("default", None)
            prop.update(rest[0] if len(rest) == 1 else {"anyOf": rest})


class UpdateContact(RequestBody):
    """``PATCH /v1/contacts/{id}``: every field optional; only the fields set are sent; arrays replace whole."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, json_schema_extra=_optional_not_nullable)

    first_name: str | None = Field(default=None, max_length=CONTACT_NAME_MAX)
    last_name: str | None = Field(default=None, max_length=CONTACT_NAME_MAX)
    emails: list[ContactEmailInput] | None = None
    phones: list[ContactPhoneInput] | None = None
    social_profiles: list[ContactSocialProfileInput] | None = None
    metadata: Metadata | None = None

    @field_validator("first_name", "last_name", "emails", "phones", "social_profiles", "metadata", mode="before")
    @classmethod
    def _no_explicit_null(cls, value: Any) -> Any:
        # Runs only for fields that were sent: leaving a field out keeps it; null is not a value.
        if value is None:
            raise ValueError("cannot be null; leave the field out to keep it unchanged")
        return value


class CreateWebhook(RequestBody):
    url: HttpUrlText
    events: list[EventKind] = Field(min_length=1)
    description: str | None = None
    metadata: Metadata | None = None

    @field_validator("events")
    @classmethod
    def _unique_events(cls, events: list[EventKind]) -> list[EventKind]:
        return list(dict.fromkeys(events))


class ListMessagesQuery(RequestBody):
    """Query parameters of ``GET /v1/messages``."""

    thread_id: UUIDText
    message_ids: list[UUIDText] | None = None
    page_size: int = Field(default=PAGE_SIZE_DEFAULT, ge=PAGE_SIZE_MIN, le=PAGE_SIZE_MAX, strict=True)
    page_token: str | None = None

    def to_params(self) -> list[tuple[str, str]]:
        """Query pairs, ``message_ids`` as repeated keys."""
        params = [("thread_id", self.thread_id), ("page_size", str(self.page_size))]
        params += [("message_ids", message_id) for message_id in self.message_ids or ()]
        if self.page_token:
            params.append(("page_token", self.page_token))
        return params


def now_utc() -> datetime:
    """The current time as an aware UTC datetime."""
    return datetime.now(UTC)
