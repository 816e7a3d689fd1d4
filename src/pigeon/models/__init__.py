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

from datetime import UTC, datetime

from pigeon.models.enums import (
    ContentType,
    EmailType,
    EventKind,
    InboxStatus,
    InboxType,
    MessageDirection,
    MessageStatus,
    OpenContentType,
    OpenMessageDirection,
    OpenMessageStatus,
    OpenParticipantRole,
    OpenRecipientType,
    OpenThreadStatus,
    ParticipantRole,
    PhoneType,
    RecipientType,
    SocialProfileType,
    ThreadStatus,
    WebhookStatus,
)
from pigeon.models.requests import (
    CONTACT_NAME_MAX,
    CONTACT_VALUE_MAX,
    EMAIL_MAX,
    EMAIL_PATTERN,
    HTTP_URL_MAX,
    HTTP_URL_PATTERN,
    INBOX_DISPLAY_NAME_MAX,
    METADATA_DEPTH_MAX,
    PAGE_SIZE_DEFAULT,
    PAGE_SIZE_MAX,
    PAGE_SIZE_MIN,
    Body,
    ContactEmailInput,
    ContactPhoneInput,
    ContactSocialProfileInput,
    CreateInbox,
    CreateWebhook,
    EmailAddress,
    HttpUrlText,
    ListMessagesQuery,
    MetadataIn,
    RequestBody,
    UpdateContact,
    UUIDText,
)
from pigeon.models.resources import (
    Contact,
    ContactEmail,
    ContactPhone,
    ContactSocialProfile,
    ContentBlock,
    Inbox,
    ListInboxesResponse,
    ListMessagesResponse,
    ListThreadsResponse,
    Message,
    Metadata,
    Participant,
    Recipient,
    Resource,
    Sender,
    Thread,
    UTCDateTime,
    WebhookSubscription,
)
from pigeon.models.unreadable import Unreadable, unreadable

__all__ = [
    "CONTACT_NAME_MAX",
    "CONTACT_VALUE_MAX",
    "EMAIL_MAX",
    "EMAIL_PATTERN",
    "HTTP_URL_MAX",
    "HTTP_URL_PATTERN",
    "INBOX_DISPLAY_NAME_MAX",
    "METADATA_DEPTH_MAX",
    "PAGE_SIZE_DEFAULT",
    "PAGE_SIZE_MAX",
    "PAGE_SIZE_MIN",
    "Body",
    "Contact",
    "ContactEmail",
    "ContactEmailInput",
    "ContactPhone",
    "ContactPhoneInput",
    "ContactSocialProfile",
    "ContactSocialProfileInput",
    "ContentBlock",
    "ContentType",
    "CreateInbox",
    "CreateWebhook",
    "EmailAddress",
    "EmailType",
    "EventKind",
    "HttpUrlText",
    "Inbox",
    "InboxStatus",
    "InboxType",
    "ListInboxesResponse",
    "ListMessagesQuery",
    "ListMessagesResponse",
    "ListThreadsResponse",
    "Message",
    "MessageDirection",
    "MessageStatus",
    "Metadata",
    "MetadataIn",
    "OpenContentType",
    "OpenMessageDirection",
    "OpenMessageStatus",
    "OpenParticipantRole",
    "OpenRecipientType",
    "OpenThreadStatus",
    "Participant",
    "ParticipantRole",
    "PhoneType",
    "Recipient",
    "RecipientType",
    "RequestBody",
    "Resource",
    "Sender",
    "SocialProfileType",
    "Thread",
    "ThreadStatus",
    "UTCDateTime",
    "UUIDText",
    "Unreadable",
    "UpdateContact",
    "WebhookStatus",
    "WebhookSubscription",
    "now_utc",
    "unreadable",
]


def now_utc() -> datetime:
    """The current time as an aware UTC datetime."""
    return datetime.now(UTC)
