"""What is sent to the service (strict): unknown fields refused, enum values checked against the spec's lists, URLs
and email addresses validated, ``metadata`` a JSON object. Limits of the spec are here too."""

from __future__ import annotations

import math
import re
import uuid
from typing import Annotated, Any, Final

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from pigeon.models.enums import (
    EmailType,
    EventKind,
    InboxType,
    PhoneType,
    SocialProfileType,
)
from pigeon.models.resources import Metadata

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
NOT_BLANK: Final = r"\S"
"""A value that strips to nothing is refused (by its length); the pattern says so in the OpenAPI document."""


# --- requests (strict) -------------------------------------------------------------------------------------


METADATA_DEPTH_MAX: Final = 32
"""How deeply ``metadata`` may nest: enough for any real use, little enough that it can always be sent back."""


def _check_json(value: Metadata) -> Metadata:
    """A JSON object of finite numbers, nested at most ``METADATA_DEPTH_MAX`` deep (walked without recursion)."""
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if depth > METADATA_DEPTH_MAX:
            raise ValueError(f"nests deeper than {METADATA_DEPTH_MAX} levels")
        if isinstance(item, float) and not math.isfinite(item):
            raise ValueError("holds NaN or Infinity, which JSON has no room for")
        if isinstance(item, dict):
            pending += [(child, depth + 1) for child in item.values()]
        elif isinstance(item, list):
            pending += [(child, depth + 1) for child in item]
    return value


MetadataIn = Annotated[Metadata, AfterValidator(_check_json)]
"""``metadata`` as a request may carry it."""


class RequestBody(BaseModel):
    """Base of request bodies and query parameters: unknown fields refused, values checked."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    def to_wire(self) -> dict[str, Any]:
        """The JSON body: only the fields the caller set (PATCH semantics), arrays whole."""
        return self.model_dump(mode="json", exclude_unset=True)


def _optional_not_nullable(schema: dict[str, Any]) -> None:
    """Publish ``X | None = None`` fields as optional ``X``: leaving one out is fine, sending null is not."""
    for prop in schema.get("properties", {}).values():
        options = prop.get("anyOf")
        if options and {"type": "null"} in options:
            rest = [o for o in options if o != {"type": "null"}]
            prop.pop("anyOf")
            prop.pop("default", None)
            prop.update(rest[0] if len(rest) == 1 else {"anyOf": rest})


class Body(RequestBody):
    """A request body: a field is either sent with a value or left out; ``null`` is no value of the spec's types
    (and the published schema says so)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, json_schema_extra=_optional_not_nullable)

    @field_validator("*", mode="before")
    @classmethod
    def _not_null(cls, value: Any) -> Any:
        if value is None:
            raise ValueError("null is not a value here: leave the field out")
        return value


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


class CreateInbox(Body):
    type: InboxType
    email: EmailAddress | None = None
    # Not listed in the spec's body; the Inbox resource has it (at most 100 characters). Sent only when set.
    display_name: str | None = Field(default=None, max_length=INBOX_DISPLAY_NAME_MAX)
    metadata: MetadataIn | None = None


class ContactEmailInput(Body):
    type: EmailType
    email: EmailAddress


class ContactPhoneInput(Body):
    type: PhoneType
    phone: str = Field(min_length=1, max_length=CONTACT_VALUE_MAX, pattern=NOT_BLANK)


class ContactSocialProfileInput(Body):
    type: SocialProfileType
    username: str = Field(min_length=1, max_length=CONTACT_VALUE_MAX, pattern=NOT_BLANK)


class UpdateContact(Body):
    """``PATCH /v1/contacts/{id}``: every field optional; only the fields set are sent; arrays replace whole."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, json_schema_extra=_optional_not_nullable)

    first_name: str | None = Field(default=None, max_length=CONTACT_NAME_MAX)
    last_name: str | None = Field(default=None, max_length=CONTACT_NAME_MAX)
    emails: list[ContactEmailInput] | None = None
    phones: list[ContactPhoneInput] | None = None
    social_profiles: list[ContactSocialProfileInput] | None = None
    metadata: MetadataIn | None = None

    @field_validator("first_name", "last_name", "emails", "phones", "social_profiles", "metadata", mode="before")
    @classmethod
    def _no_explicit_null(cls, value: Any) -> Any:
        # Runs only for fields that were sent: leaving a field out keeps it; null is not a value.
        if value is None:
            raise ValueError("cannot be null; leave the field out to keep it unchanged")
        return value


class CreateWebhook(Body):
    url: HttpUrlText
    events: list[EventKind] = Field(min_length=1)
    description: str | None = None
    metadata: MetadataIn | None = None

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
