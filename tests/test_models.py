"""Wire models: tolerant responses, strict requests."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from pigeon.models import (
    Contact,
    ContentType,
    CreateInbox,
    CreateWebhook,
    EventKind,
    Inbox,
    ListMessagesQuery,
    ListMessagesResponse,
    Message,
    MessageDirection,
    RecipientType,
    Thread,
    UpdateContact,
    WebhookSubscription,
)

THREAD = "7d0c4a5e-8d3b-4a53-9d55-1f6d2e0b9a11"

MESSAGE = {
    "id": "9b2f1d3c-0e4a-4c59-8f39-5f0c1f7f3c21",
    "thread_id": THREAD,
    "direction": "MESSAGE_DIRECTION_SIDEWAYS",
    "status": "MESSAGE_STATUS_UNSPECIFIED",
    "created_at": "2026-03-01T10:00:00+02:00",
    "subject": "Hello",
    "sender": {"raw_address": "a@example.com", "contact": {"first_name": "Ada", "nickname": "ada"}},
    "recipients": [{"raw_address": "b@example.com", "type": "RECIPIENT_TYPE_SECRET_COPY"}],
    "content_blocks": [{"type": "CONTENT_TYPE_HOLOGRAM", "content": "hi", "sequence": 0, "future": [1, 2]}],
    "brand_new_field": {"nested": True},
}


def test_unknown_enum_values_and_extra_fields_survive_a_round_trip() -> None:
    message = Message.model_validate(MESSAGE)

    assert message.direction == "MESSAGE_DIRECTION_SIDEWAYS"
    assert message.recipients[0].type == "RECIPIENT_TYPE_SECRET_COPY"
    assert message.content_blocks[0].type == "CONTENT_TYPE_HOLOGRAM"
    wire = message.to_wire()
    assert wire["brand_new_field"] == {"nested": True}
    assert wire["content_blocks"][0]["future"] == [1, 2]
    assert wire["sender"]["contact"]["nickname"] == "ada"
    assert Message.model_validate(wire).to_wire() == wire


def test_known_enum_values_become_named_constants() -> None:
    message = Message.model_validate(
        {
            "direction": "MESSAGE_DIRECTION_UNSPECIFIED",
            "recipients": [{"type": "RECIPIENT_TYPE_UNSPECIFIED"}],
            "content_blocks": [{"type": "CONTENT_TYPE_UNSPECIFIED"}],
        }
    )
    assert message.direction is MessageDirection.UNSPECIFIED
    assert message.recipients[0].type is RecipientType.UNSPECIFIED
    assert message.content_blocks[0].type is ContentType.UNSPECIFIED


def test_date_times_parse_to_aware_utc() -> None:
    message = Message.model_validate(MESSAGE)
    assert message.created_at == datetime(2026, 3, 1, 8, 0, tzinfo=UTC)
    assert message.created_at is not None
    assert message.created_at.tzinfo is UTC
    naive = Thread.model_validate({"last_message_at": "2026-03-01T10:00:00"})
    assert naive.last_message_at == datetime(2026, 3, 1, 10, 0, tzinfo=UTC)


def test_everything_is_optional_in_messages_threads_and_contacts() -> None:
    assert Message.model_validate({}).to_wire() == {}
    assert Thread.model_validate({}).participants == []
    assert Contact.model_validate({}).name == ""


def test_required_fields_of_inbox_and_webhook_are_required() -> None:
    with pytest.raises(ValidationError, match="email"):
        Inbox.model_validate({"id": "x", "account_id": "y", "type": "EMAIL_INBOX", "status": "ACTIVE"})
    with pytest.raises(ValidationError, match="events"):
        WebhookSubscription.model_validate({"id": "x", "url": "https://h.example/", "status": "active"})


def test_list_messages_response_tolerates_a_missing_or_null_token() -> None:
    assert ListMessagesResponse.model_validate({"messages": []}).next_page_token is None
    assert ListMessagesResponse.model_validate({"messages": [], "next_page_token": None}).next_page_token is None
    with pytest.raises(ValidationError):
        ListMessagesResponse.model_validate({"next_page_token": "x"})


def test_contact_name_prefers_display_name_then_full_name_then_email() -> None:
    assert Contact(display_name="The Boss", first_name="Ada").name == "The Boss"
    assert Contact(first_name="Ada", last_name="Lovelace").name == "Ada Lovelace"
    assert Contact.model_validate({"emails": [{"email": "ada@example.com"}]}).name == "ada@example.com"


# --- requests -------------------------------------------------------------------------------------------------


def test_update_contact_sends_only_what_was_set() -> None:
    body = UpdateContact(first_name="Ada", emails=[{"type": "EMAIL_TYPE_WORK", "email": "ada@example.com"}])
    assert body.to_wire() == {
        "first_name": "Ada",
        "emails": [{"type": "EMAIL_TYPE_WORK", "email": "ada@example.com"}],
    }
    assert UpdateContact(phones=[]).to_wire() == {"phones": []}


@pytest.mark.parametrize(
    ("fields", "complaint"),
    [
        ({"emails": [{"type": "EMAIL_TYPE_HOME", "email": "a@example.com"}]}, "EMAIL_TYPE_WORK"),
        ({"emails": [{"type": "EMAIL_TYPE_WORK", "email": "not an address"}]}, "email"),
        ({"phones": [{"type": "PHONE_TYPE_CAR", "phone": "1"}]}, "PHONE_TYPE_WORK"),
        ({"social_profiles": [{"type": "SOCIAL_PROFILE_TYPE_MYSPACE", "username": "a"}]}, "LINKEDIN"),
        ({"metadata": ["not", "an", "object"]}, "dictionary"),
        ({"first_name": "x" * 101}, "at most 100"),
        ({"first_name": None}, "cannot be null"),
        ({"nickname": "Ada"}, "Extra inputs"),
    ],
)
def test_invalid_update_contact_is_rejected_clearly(fields: dict[str, object], complaint: str) -> None:
    with pytest.raises(ValidationError, match=complaint):
        UpdateContact(**fields)


def test_create_inbox_is_strict_and_sends_its_type() -> None:
    body = CreateInbox(type="EMAIL_INBOX", email="me@example.com")
    assert body.to_wire() == {"type": "EMAIL_INBOX", "email": "me@example.com"}
    with pytest.raises(ValidationError, match="type"):
        CreateInbox.model_validate({"email": "me@example.com"})
    with pytest.raises(ValidationError, match="EMAIL_INBOX"):
        CreateInbox(type="SMS_INBOX")
    with pytest.raises(ValidationError, match="email"):
        CreateInbox(type="EMAIL_INBOX", email="me@")
    with pytest.raises(ValidationError, match="at most 100"):
        CreateInbox(type="EMAIL_INBOX", email="me@example.com", display_name="n" * 101)
    assert CreateInbox(type="EMAIL_INBOX", display_name="n" * 100).to_wire()["display_name"] == "n" * 100


@pytest.mark.parametrize(
    "url", ["ftp://h.example/x", "/relative/path", "https://", "http:///nohost", "https://h.example:99999/"]
)
def test_create_webhook_needs_an_absolute_http_url(url: str) -> None:
    with pytest.raises(ValidationError, match="url"):
        CreateWebhook(url=url, events=["message.created"])


def test_create_webhook_checks_event_kinds_and_keeps_the_url_exactly() -> None:
    body = CreateWebhook(url="https://h.example/hook?x=1", events=["message.sent", "message.sent", "message.failed"])
    assert body.to_wire() == {"url": "https://h.example/hook?x=1", "events": ["message.sent", "message.failed"]}
    with pytest.raises(ValidationError, match=r"message\.created"):
        CreateWebhook(url="https://h.example/", events=["message.read"])
    with pytest.raises(ValidationError, match="at least 1"):
        CreateWebhook(url="https://h.example/", events=[])
    assert {e.value for e in EventKind} == {
        "message.created",
        "message.updated",
        "message.sent",
        "message.delivered",
        "message.failed",
    }


@pytest.mark.parametrize("size", [0, 101, -1])
def test_page_size_out_of_bounds_is_rejected(size: int) -> None:
    with pytest.raises(ValidationError, match="page_size"):
        ListMessagesQuery(thread_id=THREAD, page_size=size)


def test_list_messages_query_sends_message_ids_as_repeated_keys() -> None:
    other = "1f0e0d0c-0b0a-4909-8807-060504030201"
    query = ListMessagesQuery(thread_id=THREAD, message_ids=[THREAD, other], page_size=100, page_token="t")
    assert query.to_params() == [
        ("thread_id", THREAD),
        ("page_size", "100"),
        ("message_ids", THREAD),
        ("message_ids", other),
        ("page_token", "t"),
    ]
    with pytest.raises(ValidationError, match="UUID"):
        ListMessagesQuery(thread_id="../../etc/passwd")


@given(st.text())
def test_any_unknown_enum_string_is_kept_as_it_is(value: str) -> None:
    message = Message.model_validate({"status": value, "recipients": [{"type": value}]})
    assert message.status == value
    assert message.recipients[0].type == value


@pytest.mark.parametrize("subject", ["Lunch", "caf\u00e9 \U0001f600"])
def test_wire_json_is_to_wire_as_text(subject: str) -> None:
    message = Message.model_validate(
        {"id": "m1", "thread_id": "t1", "subject": subject, "created_at": "2026-11-20T03:50:57.98Z", "extra": [1]}
    )
    assert json.loads(message.wire_json()) == message.to_wire()
    assert Message.model_validate_json(message.wire_json()) == message


def test_a_lone_surrogate_is_stored_as_a_replacement_character() -> None:
    # JSON can escape one (a hostile service's "\ud800"); UTF-8 cannot hold it, and pydantic reads no JSON that has
    # one: the store's text has U+FFFD there instead, and reads back.
    message = Message.model_validate({"id": "m1", "thread_id": "t1", "subject": "lone \ud800 surrogate"})
    assert Message.model_validate_json(message.wire_json()).subject == "lone \ufffd surrogate"


# --- any value of the right type is read ---------------------------------------------------------------------

JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
INTEGER = st.integers(min_value=-(2**53), max_value=2**53)
DATE_TIME = st.datetimes(min_value=datetime(2, 1, 1), max_value=datetime(9998, 12, 31)).map(
    lambda moment: moment.isoformat() + "Z"
)
TEXT = st.text()


def _optional(**fields: st.SearchStrategy[object]) -> st.SearchStrategy[dict[str, object]]:
    return st.fixed_dictionaries({}, optional=fields)


CONTACT = _optional(
    id=TEXT,
    created_at=DATE_TIME,
    display_name=TEXT,
    first_name=TEXT,
    emails=st.lists(_optional(id=TEXT, type=TEXT, email=TEXT), max_size=3),
    tags=st.lists(TEXT, max_size=3),
    metadata=st.dictionaries(TEXT, JSON_VALUE, max_size=3),
    future_field=JSON_VALUE,
)
BLOCK = _optional(
    type=TEXT, content=TEXT, sequence=INTEGER, size=INTEGER, mime_type=TEXT, filename=TEXT, metadata=st.none()
)
MESSAGE_RECORD = _optional(
    id=TEXT,
    thread_id=TEXT,
    direction=TEXT,
    status=TEXT,
    created_at=DATE_TIME,
    subject=TEXT,
    sender=_optional(contact_id=TEXT, raw_address=TEXT, contact=CONTACT),
    recipients=st.lists(_optional(contact_id=TEXT, raw_address=TEXT, type=TEXT), max_size=3),
    content_blocks=st.lists(BLOCK, max_size=3),
    metadata=st.dictionaries(TEXT, JSON_VALUE, max_size=3),
    sent_at=DATE_TIME,
    future_field=JSON_VALUE,
)
THREAD_RECORD = _optional(
    id=TEXT,
    status=TEXT,
    subject=TEXT,
    last_message_at=DATE_TIME,
    message_count=INTEGER,
    participants=st.lists(_optional(contact_id=TEXT, role=TEXT, last_read_at=DATE_TIME), max_size=3),
)


@given(MESSAGE_RECORD)
def test_any_message_whose_values_have_the_spec_types_is_read_and_kept(record: dict[str, Any]) -> None:
    message = Message.model_validate_json(json.dumps(record))
    blocks: list[dict[str, Any]] = record.get("content_blocks") or []
    assert [b.sequence for b in message.content_blocks] == [b.get("sequence") for b in blocks]
    assert [b.size for b in message.content_blocks] == [b.get("size") for b in blocks]
    assert message.status == record.get("status")


@given(THREAD_RECORD)
def test_any_thread_whose_values_have_the_spec_types_is_read_and_kept(record: dict[str, object]) -> None:
    thread = Thread.model_validate_json(json.dumps(record))
    assert thread.message_count == record.get("message_count")
    assert thread.status == record.get("status")


@pytest.mark.parametrize("value", ["5", 5.5, True, [5]])
def test_an_integer_field_refuses_a_value_of_another_type(value: object) -> None:
    with pytest.raises(ValidationError, match=r"content_blocks\.0\.size"):
        Message.model_validate_json(json.dumps({"content_blocks": [{"size": value}]}))


def test_an_enum_the_spec_lists_whole_keeps_another_value_in_an_answer_and_refuses_it_in_a_request() -> None:
    inbox = {"id": "i", "account_id": "a", "type": "EMAIL_INBOX", "status": "ARCHIVED", "email": "me@example.com"}
    assert Inbox.model_validate(inbox).status == "ARCHIVED"  # the inbox is kept, its status shown as it came
    contact = Contact.model_validate({"emails": [{"type": "EMAIL_TYPE_HOME", "email": "a@example.com"}]})
    assert contact.emails[0].type == "EMAIL_TYPE_HOME"
    with pytest.raises(ValidationError, match="EMAIL_TYPE_WORK"):
        UpdateContact(emails=[{"type": "EMAIL_TYPE_HOME", "email": "a@example.com"}])
    with pytest.raises(ValidationError, match="EMAIL_INBOX"):
        CreateInbox(type="OTHER_INBOX", email="me@example.com")
