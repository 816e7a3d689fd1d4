"""The API client against respx: requests as sent, pagination, retries, errors, and the token kept secret."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

import httpx
import pytest
import respx

from pigeon.api import (
    ConnectionFailed,
    Invalid,
    InvalidInput,
    MalformedResponse,
    NotFound,
    PaginationError,
    PigeonClient,
    RateLimited,
    ServerError,
    StatusError,
    Timeout,
    Unauthorized,
)
from pigeon.models import Message

BASE = "https://mail.example.com"
TOKEN = "tok_s3cr3t_value_123"
THREAD = "7d0c4a5e-8d3b-4a53-9d55-1f6d2e0b9a11"
CONTACT = "3c9b6c1e-2f4d-4e8a-9a7b-0d1c2b3a4f5e"
M1 = "9b2f1d3c-0e4a-4c59-8f39-5f0c1f7f3c21"
M2 = "1f0e0d0c-0b0a-4909-8807-060504030201"

INBOX = {
    "id": "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
    "account_id": "acc",
    "type": "EMAIL_INBOX",
    "status": "ACTIVE",
    "email": "me@example.com",
}
WEBHOOK = {
    "id": "whk",
    "url": "https://hooks.example/in",
    "events": ["message.created"],
    "status": "active",
    "created_at": "2026-01-01T00:00:00Z",
    "secret": "whsec_abc",
}


class Sleeps:
    """Records the waits the client asks for instead of waiting."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
async def client(sleeps: Sleeps) -> AsyncIterator[PigeonClient]:
    async with PigeonClient(BASE, TOKEN, max_retries=2, sleep=sleeps) as c:
        yield c


@pytest.fixture
def api() -> Iterator[respx.MockRouter]:
    with respx.mock(base_url=BASE, assert_all_called=False, using="pigeon") as router:
        yield router


def page(ids: list[str], token: object = ...) -> httpx.Response:
    body: dict[str, object] = {"messages": [{"id": i, "thread_id": THREAD} for i in ids]}
    if token is not ...:
        body["next_page_token"] = token
    return httpx.Response(200, json=body)


# --- each operation: method, path, query, body, auth ------------------------------------------------------------


async def test_list_inboxes(client: PigeonClient, api: respx.MockRouter) -> None:
    route = api.get("/v1/inboxes").respond(json={"inboxes": [INBOX]})
    inboxes = await client.inboxes.list()
    assert [i.email for i in inboxes] == ["me@example.com"]
    request = route.calls.last.request
    assert request.method == "GET"
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert TOKEN not in str(request.url)


async def test_create_inbox(client: PigeonClient, api: respx.MockRouter) -> None:
    route = api.post("/v1/inboxes").respond(201, json=INBOX)
    inbox = await client.inboxes.create(email="me@example.com", metadata={"team": "ops"})
    assert inbox.id == INBOX["id"]
    request = route.calls.last.request
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert request.headers["content-type"] == "application/json"
    assert json.loads(request.content) == {
        "type": "EMAIL_INBOX",
        "email": "me@example.com",
        "metadata": {"team": "ops"},
    }


async def test_list_threads(client: PigeonClient, api: respx.MockRouter) -> None:
    route = api.get("/v1/threads").respond(json={"threads": [{"id": THREAD, "subject": "Hi", "status": "OPEN"}]})
    threads = await client.threads.list()
    assert [t.subject for t in threads] == ["Hi"]
    assert route.calls.last.request.headers["authorization"] == f"Bearer {TOKEN}"


async def test_list_messages_sends_every_query_parameter(client: PigeonClient, api: respx.MockRouter) -> None:
    route = api.get("/v1/messages").mock(return_value=page([M1], token="next"))
    result = await client.messages.list(THREAD, message_ids=[M1, M2], page_size=100, page_token="tok")
    assert [m.id for m in result.items] == [M1]
    assert result.next_page_token == "next"
    params = route.calls.last.request.url.params
    assert params["thread_id"] == THREAD
    assert params.get_list("message_ids") == [M1, M2]
    assert params["page_size"] == "100"
    assert params["page_token"] == "tok"
    assert route.calls.last.request.headers["authorization"] == f"Bearer {TOKEN}"


async def test_a_page_that_reads_whole_is_read_in_one_pass_and_as_record_by_record(
    client: PigeonClient, api: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = [
        {
            "id": M1,
            "thread_id": THREAD,
            "direction": "MESSAGE_DIRECTION_SOMETHING_NEW",  # an open enum keeps a value it does not name
            "status": "MESSAGE_STATUS_UNSPECIFIED",
            "created_at": "2026-11-01T10:00:00+02:00",  # converted to UTC
            "sender": {"raw_address": "ada@example.com", "contact": {"first_name": "Ada", "tags": ["x"]}},
            "recipients": [{"raw_address": "me@example.com", "type": "RECIPIENT_TYPE_UNSPECIFIED"}],
            "content_blocks": [{"type": "CONTENT_TYPE_UNSPECIFIED", "content": "hi", "sequence": 0, "size": 2}],
            "metadata": {"nested": [1, {"a": None}]},
            "unknown_field": {"kept": True},
        },
        {"id": M2, "thread_id": THREAD},
    ]
    api.get("/v1/messages").respond(json={"messages": records, "next_page_token": "", "extra": 1})
    record_by_record = [Message.model_validate(record) for record in records]

    def not_this_way(*args: object, **kwargs: object) -> None:
        raise AssertionError("a page every record of which reads is validated whole")

    monkeypatch.setattr(Message, "model_validate", not_this_way)
    result = await client.messages.list(THREAD)
    assert result.items == record_by_record
    assert [m.wire_json() for m in result.items] == [m.wire_json() for m in record_by_record]
    assert result.items[0].created_at == datetime(2026, 11, 1, 8, 0, tzinfo=UTC)
    assert result.next_page_token is None
    assert result.skipped == ()


async def test_update_contact_patches_only_the_given_fields(client: PigeonClient, api: respx.MockRouter) -> None:
    route = api.patch(f"/v1/contacts/{CONTACT}").respond(json={"id": CONTACT, "first_name": "Ada"})
    contact = await client.contacts.update(
        CONTACT, first_name="Ada", phones=[{"type": "PHONE_TYPE_WORK", "phone": "+44 20 7946 0000"}]
    )
    assert contact.first_name == "Ada"
    request = route.calls.last.request
    assert request.method == "PATCH"
    assert json.loads(request.content) == {
        "first_name": "Ada",
        "phones": [{"type": "PHONE_TYPE_WORK", "phone": "+44 20 7946 0000"}],
    }
    assert request.headers["authorization"] == f"Bearer {TOKEN}"


async def test_create_webhook(client: PigeonClient, api: respx.MockRouter) -> None:
    route = api.post("/v1/webhooks").respond(201, json=WEBHOOK)
    hook = await client.webhooks.create(url="https://hooks.example/in", events=["message.created"], description="d")
    assert hook.secret == "whsec_abc"
    assert json.loads(route.calls.last.request.content) == {
        "url": "https://hooks.example/in",
        "events": ["message.created"],
        "description": "d",
    }


async def test_invalid_input_is_refused_before_sending(client: PigeonClient, api: respx.MockRouter) -> None:
    anything = api.route().respond(200, json={})
    with pytest.raises(InvalidInput, match="page_size") as caught:
        await client.messages.list(THREAD, page_size=0)
    assert caught.value.errors[0].field == "page_size"
    with pytest.raises(InvalidInput, match="page_size"):
        await client.messages.list(THREAD, page_size=101)
    with pytest.raises(InvalidInput, match="contact_id"):
        await client.contacts.update("../inboxes", first_name="x")
    with pytest.raises(InvalidInput, match=r"emails\.0\.email"):
        await client.contacts.update(CONTACT, emails=[{"type": "EMAIL_TYPE_WORK", "email": "nope"}])
    with pytest.raises(InvalidInput, match="events"):
        await client.webhooks.create(url="https://h.example/", events=["message.read"])
    with pytest.raises(InvalidInput, match="url"):
        await client.webhooks.create(url="javascript:alert(1)", events=["message.sent"])
    assert not anything.called


def test_a_bad_base_url_is_refused() -> None:
    with pytest.raises(InvalidInput, match="http"):
        PigeonClient("mail.example.com", TOKEN)
    with pytest.raises(InvalidInput, match="credentials"):
        PigeonClient("https://user:pw@mail.example.com", TOKEN)
    for url in ("https://mail.example.com/api?v=1", "https://mail.example.com/#top", "https://mail.example.com/?"):
        with pytest.raises(InvalidInput, match="query"):
            PigeonClient(url, TOKEN)
    assert PigeonClient("https://mail.example.com/api/", TOKEN).base_url == "https://mail.example.com/api"


# --- pagination ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("end", ["", None, ...], ids=["empty", "null", "missing"])
async def test_the_page_walk_ends_on_an_empty_null_or_missing_token(
    client: PigeonClient, api: respx.MockRouter, end: object
) -> None:
    route = api.get("/v1/messages").mock(side_effect=[page([M1], token="p2"), page([M2], token=end)])
    messages = [m async for m in client.messages.iter(THREAD, page_size=1)]
    assert [m.id for m in messages] == [M1, M2]
    assert route.call_count == 2
    assert "page_token" not in route.calls[0].request.url.params
    assert route.calls[1].request.url.params["page_token"] == "p2"


async def test_a_repeated_page_token_stops_the_walk(client: PigeonClient, api: respx.MockRouter) -> None:
    api.get("/v1/messages").mock(
        side_effect=[page([M1], token="a"), page([M2], token="b"), page([M1], token="a"), page([], token="")]
    )
    seen: list[str | None] = []

    async def walk() -> None:
        async for message in client.messages.iter(THREAD):
            seen.append(message.id)

    with pytest.raises(PaginationError, match="sent before"):
        await walk()
    assert seen == [M1, M2, M1]


async def test_the_page_cap_stops_the_walk(sleeps: Sleeps, api: respx.MockRouter) -> None:
    counter = iter(range(1000))
    api.get("/v1/messages").mock(side_effect=lambda request: page([M1], token=f"t{next(counter)}"))
    async with PigeonClient(BASE, TOKEN, max_pages=3, sleep=sleeps) as capped:
        pages: list[object] = []

        async def walk() -> None:
            async for p in capped.messages.iter_pages(THREAD):
                pages.append(p)

        with pytest.raises(PaginationError, match="cap of 3 pages"):
            await walk()
    assert len(pages) == 3


async def test_list_threads_and_inboxes_follow_a_next_page_token(client: PigeonClient, api: respx.MockRouter) -> None:
    threads = api.get("/v1/threads").mock(
        side_effect=[
            httpx.Response(200, json={"threads": [{"id": "a"}], "next_page_token": "more"}),
            httpx.Response(200, json={"threads": [{"id": "b"}], "next_page_token": ""}),
        ]
    )
    assert [t.id for t in await client.threads.list()] == ["a", "b"]
    assert threads.calls[1].request.url.params["page_token"] == "more"
    api.get("/v1/inboxes").mock(
        side_effect=[
            httpx.Response(200, json={"inboxes": [INBOX], "next_page_token": "x"}),
            httpx.Response(200, json={"inboxes": [INBOX | {"id": "second"}]}),
        ]
    )
    assert [i.id for i in await client.inboxes.list()] == [INBOX["id"], "second"]


async def test_threads_are_asked_for_in_pages_as_large_as_the_reference_service_gives(
    client: PigeonClient, api: respx.MockRouter
) -> None:
    threads = api.get("/v1/threads").mock(
        side_effect=[
            httpx.Response(200, json={"threads": [{"id": "a"}], "next_page_token": "more"}),
            httpx.Response(200, json={"threads": [{"id": "b"}], "next_page_token": ""}),
        ]
    )
    assert [t.id for t in await client.threads.list()] == ["a", "b"]
    assert [dict(call.request.url.params) for call in threads.calls] == [
        {"page_size": "500"},
        {"page_token": "more", "page_size": "500"},
    ]


@pytest.mark.parametrize("status", [400, 422])
async def test_a_service_that_refuses_a_thread_page_size_is_asked_as_the_spec_shows_and_not_again(
    client: PigeonClient, api: respx.MockRouter, status: int
) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        if "page_size" in request.url.params:
            return httpx.Response(status, json={"title": "Unknown query parameter page_size"})
        return httpx.Response(200, json={"threads": [{"id": "a"}]})

    threads = api.get("/v1/threads").mock(side_effect=answer)
    assert [t.id for t in await client.threads.list()] == ["a"]
    assert [t.id for t in await client.threads.list()] == ["a"]
    assert ["page_size" in call.request.url.params for call in threads.calls] == [True, False, False]


async def test_a_refused_later_thread_page_is_an_error_not_a_walk_begun_again(
    client: PigeonClient, api: respx.MockRouter
) -> None:
    api.get("/v1/threads").mock(
        side_effect=[
            httpx.Response(200, json={"threads": [{"id": "a"}], "next_page_token": "more"}),
            httpx.Response(400, json={"title": "Bad page token"}),
        ]
    )
    with pytest.raises(Invalid):
        await client.threads.list()


# --- retries ------------------------------------------------------------------------------------------------------


async def test_503_then_200_is_retried_after_retry_after(
    client: PigeonClient, api: respx.MockRouter, sleeps: Sleeps
) -> None:
    route = api.get("/v1/threads").mock(
        side_effect=[
            httpx.Response(503, headers={"Retry-After": "2"}),
            httpx.Response(200, json={"threads": []}),
        ]
    )
    assert await client.threads.list() == []
    assert route.call_count == 2
    assert sleeps.waits == [2.0]


async def test_retry_after_as_an_http_date_is_honoured(
    client: PigeonClient, api: respx.MockRouter, sleeps: Sleeps
) -> None:
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=5), usegmt=True)
    api.get("/v1/threads").mock(
        side_effect=[httpx.Response(429, headers={"Retry-After": when}), httpx.Response(200, json={"threads": []})]
    )
    await client.threads.list()
    assert len(sleeps.waits) == 1
    assert 3.0 <= sleeps.waits[0] <= 5.0


async def test_a_retry_after_beyond_the_cap_is_not_slept_through(
    client: PigeonClient, api: respx.MockRouter, sleeps: Sleeps
) -> None:
    route = api.get("/v1/threads").respond(429, headers={"Retry-After": "3600"})
    with pytest.raises(RateLimited) as caught:
        await client.threads.list()
    assert caught.value.retry_after == 3600
    assert route.call_count == 1
    assert sleeps.waits == []


async def test_retries_back_off_with_jitter_then_give_up(
    client: PigeonClient, api: respx.MockRouter, sleeps: Sleeps
) -> None:
    route = api.get("/v1/inboxes").respond(502)
    with pytest.raises(ServerError, match="502"):
        await client.inboxes.list()
    assert route.call_count == 3  # the first try and max_retries=2
    assert len(sleeps.waits) == 2
    assert 0.375 <= sleeps.waits[0] <= 0.5
    assert 0.75 <= sleeps.waits[1] <= 1.0


@pytest.mark.parametrize("status", [400, 401, 404, 500, 501])
async def test_other_statuses_are_not_retried(
    client: PigeonClient, api: respx.MockRouter, sleeps: Sleeps, status: int
) -> None:
    route = api.get("/v1/inboxes").respond(status)
    with pytest.raises(StatusError):
        await client.inboxes.list()
    assert route.call_count == 1


async def test_post_and_patch_are_never_retried_on_error_statuses(
    client: PigeonClient, api: respx.MockRouter, sleeps: Sleeps
) -> None:
    post = api.post("/v1/inboxes").respond(503, headers={"Retry-After": "1"})
    patch = api.patch(f"/v1/contacts/{CONTACT}").respond(504)
    with pytest.raises(ServerError):
        await client.inboxes.create(email="me@example.com")
    with pytest.raises(ServerError):
        await client.contacts.update(CONTACT, first_name="A")
    assert post.call_count == 1
    assert patch.call_count == 1
    assert sleeps.waits == []


async def test_post_is_not_retried_once_the_request_may_have_arrived(
    client: PigeonClient, api: respx.MockRouter
) -> None:
    route = api.post("/v1/webhooks").mock(side_effect=httpx.ReadTimeout("no answer"))
    with pytest.raises(Timeout):
        await client.webhooks.create(url="https://h.example/", events=["message.sent"])
    assert route.call_count == 1


async def test_post_is_retried_when_the_connection_was_never_made(client: PigeonClient, api: respx.MockRouter) -> None:
    route = api.post("/v1/inboxes").mock(side_effect=[httpx.ConnectError("refused"), httpx.Response(201, json=INBOX)])
    assert (await client.inboxes.create(email="me@example.com")).id == INBOX["id"]
    assert route.call_count == 2


async def test_connect_errors_and_read_timeouts_become_typed_errors(
    client: PigeonClient, api: respx.MockRouter
) -> None:
    refused = api.get("/v1/inboxes").mock(side_effect=httpx.ConnectError("Connection refused"))
    with pytest.raises(ConnectionFailed, match="could not reach") as caught:
        await client.inboxes.list()
    assert not isinstance(caught.value, Timeout)
    assert refused.call_count == 3
    slow = api.get("/v1/threads").mock(side_effect=httpx.ReadTimeout("timed out"))
    with pytest.raises(Timeout, match="timed out"):
        await client.threads.list()
    assert slow.call_count == 3


async def test_default_timeouts_are_5s_connect_and_30s_read() -> None:
    async with PigeonClient(BASE, TOKEN) as default:
        assert default.timeout.connect == 5.0
        assert default.timeout.read == 30.0


async def test_redirects_are_not_followed(client: PigeonClient, api: respx.MockRouter) -> None:
    api.get("/v1/inboxes").respond(302, headers={"Location": "https://evil.example/steal"})
    elsewhere = respx.get("https://evil.example/steal").respond(200, json={"inboxes": []})
    with pytest.raises(StatusError, match="302"):
        await client.inboxes.list()
    assert not elsewhere.called


# --- error bodies ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "error_type", "expected"),
    [
        (
            httpx.Response(
                422,
                headers={"content-type": "application/problem+json"},
                json={
                    "type": "about:blank",
                    "title": "Validation failed",
                    "detail": "The request has 1 invalid field",
                    "errors": [{"pointer": "/emails/0/email", "detail": "not an email"}],
                },
            ),
            Invalid,
            ["422", "The request has 1 invalid field", "emails.0.email: not an email"],
        ),
        (httpx.Response(400, json={"error": {"message": "Bad thing", "code": "x"}}), Invalid, ["400", "Bad thing"]),
        (httpx.Response(404, json={"message": "Thread not found"}), NotFound, ["404", "Thread not found"]),
        (httpx.Response(401, json={"detail": "Not authenticated"}), Unauthorized, ["401", "Not authenticated"]),
        (
            httpx.Response(
                422, json={"detail": [{"loc": ["body", "first_name"], "msg": "too long", "type": "string_too_long"}]}
            ),
            Invalid,
            ["first_name: too long"],
        ),
        (httpx.Response(403, text="Forbidden by policy"), Unauthorized, ["403", "Forbidden by policy"]),
        (
            httpx.Response(
                500,
                headers={"content-type": "text/html"},
                text="<html><head><title>500 Internal Oops</title><style>p{}</style></head>"
                "<body><p>Trace...</p></body></html>",
            ),
            ServerError,
            ["500", "Internal Oops"],
        ),
        (httpx.Response(500, text=""), ServerError, ["500 Internal Server Error"]),
    ],
)
async def test_error_bodies_of_each_shape_read_well(
    client: PigeonClient, api: respx.MockRouter, response: httpx.Response, error_type: type, expected: list[str]
) -> None:
    api.get("/v1/inboxes").mock(return_value=response)
    with pytest.raises(error_type) as caught:
        await client.inboxes.list()
    message = str(caught.value)
    for part in expected:
        assert part in message
    assert "\n" not in message
    assert "<" not in message


async def test_field_errors_are_kept_on_invalid(client: PigeonClient, api: respx.MockRouter) -> None:
    api.patch(f"/v1/contacts/{CONTACT}").respond(
        422, json={"title": "Invalid", "errors": {"first_name": ["too long"], "emails.0.email": "bad"}}
    )
    with pytest.raises(Invalid) as caught:
        await client.contacts.update(CONTACT, first_name="A")
    assert [(e.field, e.message) for e in caught.value.errors] == [
        ("first_name", "too long"),
        ("emails.0.email", "bad"),
    ]


async def test_long_and_hostile_error_bodies_are_cut_and_cleaned(client: PigeonClient, api: respx.MockRouter) -> None:
    api.get("/v1/inboxes").respond(500, text="\x1b]52;c;ZXZpbA==\x07boom \x1b[31mred\u202e " + "x" * 5000)
    with pytest.raises(ServerError) as caught:
        await client.inboxes.list()
    message = str(caught.value)
    assert "\x1b" not in message
    assert "\u202e" not in message
    assert "boom red" in message
    assert len(message) < 400


async def test_an_error_page_is_described_from_its_first_bytes_only(
    client: PigeonClient, api: respx.MockRouter
) -> None:
    from pigeon.api.errors import DESCRIBE_LIMIT

    page = "<html><body><p>" + "filler " * (DESCRIBE_LIMIT // 7 + 1000) + "</p><title>Late title</title></body></html>"
    api.get("/v1/inboxes").respond(500, headers={"content-type": "text/html"}, text=page)
    with pytest.raises(ServerError) as caught:
        await client.inboxes.list()
    message = str(caught.value)
    assert "Late title" not in message  # (it lies past what is read)
    assert "500 Internal Server Error: filler filler" in message
    assert "\n" not in message


async def test_an_error_body_that_cannot_be_read_says_so_in_one_line(
    client: PigeonClient, api: respx.MockRouter
) -> None:
    nested = b"[" * 100_000 + b"]" * 100_000  # (past the JSON parser's recursion limit)
    api.get("/v1/inboxes").respond(500, headers={"content-type": "application/json"}, content=nested)
    with pytest.raises(ServerError) as caught:
        await client.inboxes.list()
    assert str(caught.value) == "GET /v1/inboxes failed: 500 Internal Server Error: the body could not be read"


@pytest.mark.parametrize(
    "response",
    [
        httpx.Response(200, text="<html>not json</html>"),
        httpx.Response(200, json=["a", "list"]),
        httpx.Response(200, json={"threads": "not a list"}),
        httpx.Response(200, json={"inboxes": []}),
    ],
)
async def test_a_malformed_success_body_is_an_error(
    client: PigeonClient, api: respx.MockRouter, response: httpx.Response
) -> None:
    api.get("/v1/threads").mock(return_value=response)
    with pytest.raises(MalformedResponse, match="GET /v1/threads"):
        await client.threads.list()


# --- the token stays secret --------------------------------------------------------------------------------------


@pytest.mark.parametrize("token", ["abc\r\nX-Injected: 1", "abc\x00def", "abc\ndef"])
def test_a_token_with_a_line_break_or_control_character_is_refused_without_being_shown(token: str) -> None:
    with pytest.raises(InvalidInput, match="control character or a line break") as caught:
        PigeonClient(BASE, token)
    assert "abc" not in str(caught.value)
    assert "abc" not in repr(caught.value.errors)


async def test_the_token_never_appears_in_errors_logs_or_repr(
    client: PigeonClient, api: respx.MockRouter, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    api.get("/v1/inboxes").respond(401, json={"detail": f"token {TOKEN} is not valid"})
    api.get("/v1/threads").mock(side_effect=httpx.ConnectError(f"failed with {TOKEN}"))
    api.post("/v1/webhooks").respond(422, json={"errors": [{"field": TOKEN, "message": TOKEN}]})
    texts = [repr(client), str(client.__dict__)]
    for call in (
        client.inboxes.list(),
        client.threads.list(),
        client.webhooks.create(url="https://h.example/", events=["message.sent"]),
    ):
        with pytest.raises(Exception) as caught:  # noqa: PT011  (each raises a different PigeonError)
            await call
        texts += [str(caught.value), repr(caught.value), repr(vars(caught.value))]
    texts.append(caplog.text)
    assert caplog.records, "the client should log its requests at debug level"
    for text in texts:
        assert TOKEN not in text
    assert "[redacted]" in " ".join(texts)


def test_the_app_s_client_loads_no_httpx_nor_its_command_line_program(tmp_path: Path) -> None:
    """What the app's session makes for a service: requests go through aiohttp, so no httpx, httpcore, anyio or h11
    is loaded, nor httpx's command line (click, Pygments)."""
    probe = (
        "import asyncio, sys\nfrom pathlib import Path\n"
        "from pigeon.config import load_config\n"
        "from pigeon.core.session import Session\n"
        f"config = load_config(Path({str(tmp_path / 'config.toml')!r}), base_url='http://127.0.0.1:1')\n"
        "asyncio.run(Session(config, token='token').connect())\n"
        "loaded = {name for name, module in sys.modules.items() if module is not None}\n"
        "unwanted = {'click', 'pygments', 'httpx', 'httpcore', 'anyio', 'h11'}\n"
        "print(sorted({name for name in loaded if name.split('.')[0] in unwanted}))\n"
    )
    done = subprocess.run(  # noqa: S603  (this interpreter, a fixed script)
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("metadata", "why"),
    [("9" * 5000, "metadata.n: a number of 5000 digits"), ("[" * 300 + "]" * 300, "metadata: nested 301 levels")],
    ids=["long-number", "nested-300"],
)
async def test_an_answer_the_store_could_not_keep_is_malformed(
    client: PigeonClient, api: respx.MockRouter, metadata: str, why: str
) -> None:
    answer = f'{{"id": "{CONTACT}", "first_name": "Ada", "metadata": {{"n": {metadata}}}}}'
    api.patch(f"/v1/contacts/{CONTACT}").respond(content=answer.encode(), content_type="application/json")
    with pytest.raises(MalformedResponse, match=f"not a valid Contact \\({why}"):
        await client.contacts.update(CONTACT, first_name="Ada")
