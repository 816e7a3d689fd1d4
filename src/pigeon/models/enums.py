"""The spec's enumerations, open in answers: a field typed ``Open...`` takes the named values first and keeps any
other string as it is, shown as it came. Most the spec leaves open (the ``*_UNSPECIFIED`` value is all it shows);
where it lists every value (contact entry types, inbox type and status, webhook status, event kinds), an answer with
another is still kept rather than lose the record it is in. Requests are strict (``requests.py``): Pigeon sends,
and the service takes, only the values the spec lists."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import Field

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
