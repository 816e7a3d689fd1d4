"""The six operations over HTTP: happy paths, bounds, auth, isolation between accounts, and error shapes."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from pigeon.models import ListInboxesResponse, ListMessagesResponse, ListThreadsResponse
from pigeon_service.app import ServerSettings
from tests.server.conftest import Service, first_thread, make_service

PROBLEM = "application/problem+json"


UNKNOWN = "5e0c1a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b"  # fixed: test ids must match in every process collecting them


def assert_problem(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    body: dict[str, Any] = response.json()
    assert body["status"] == status
    assert body["title"]
    assert "Traceback" not in response.text
    return body


# --- 1. list messages --------------------------------------------------------------------------------------------


async def test_list_messages_oldest_first_with_a_token_always_present(
    service: Service, http: httpx.AsyncClient
) -> None:
    thread = first_thread(service, service.alice, min_messages=3)
    response = await http.get("/v1/messages", params={"thread_id": thread}, headers=service.alice.headers)
    assert response.status_code == 200
    body = response.json()
    assert body["next_page_token"] == ""
    page = ListMessagesResponse.model_validate(body)
    assert len(page.messages) >= 3
    stamps = [m.created_at for m in page.messages if m.created_at]
    assert len(stamps) == len(page.messages)
    assert stamps == sorted(stamps)
    assert all(m.thread_id == thread for m in page.messages)
    replies = page.messages[1:]
    assert all(m.parent_id for m in replies)
    assert page.messages[0].sender is not None


@pytest.mark.parametrize(("size", "status"), [(0, 422), (1, 200), (100, 200), (101, 422), ("abc", 422), (-5, 422)])
async def test_page_size_bounds(service: Service, http: httpx.AsyncClient, size: int | str, status: int) -> None:
    thread = first_thread(service, service.alice)
    response = await http.get(
        "/v1/messages", params={"thread_id": thread, "page_size": size}, headers=service.alice.headers
    )
    assert response.status_code == status
    if status == 422:
        body = assert_problem(response, 422)
        assert body["errors"][0]["field"] == "page_size"


async def test_default_page_size_is_20(service: Service, http: httpx.AsyncClient) -> None:
    thread = first_thread(service, service.alice)
    for _ in range(25):
        service.add_message(service.alice, thread)
    response = await http.get("/v1/messages", params={"thread_id": thread}, headers=service.alice.headers)
    assert len(response.json()["messages"]) == 20
    assert response.json()["next_page_token"]


@pytest.mark.parametrize(
    "params",
    [{}, {"thread_id": "not-a-uuid"}, {"thread_id": UNKNOWN, "message_ids": "nope"}],
    ids=["missing thread_id", "bad thread_id", "bad message id"],
)
async def test_bad_message_list_queries_are_422(
    service: Service, http: httpx.AsyncClient, params: dict[str, Any]
) -> None:
    assert_problem(await http.get("/v1/messages", params=params, headers=service.alice.headers), 422)


async def test_at_most_100_message_ids(service: Service, http: httpx.AsyncClient) -> None:
    thread = first_thread(service, service.alice)
    ids = [str(uuid.uuid4()) for _ in range(101)]
    response = await http.get(
        "/v1/messages", params={"thread_id": thread, "message_ids": ids}, headers=service.alice.headers
    )
    assert assert_problem(response, 422)["errors"][0]["field"] == "message_ids"
    ok = await http.get(
        "/v1/messages", params={"thread_id": thread, "message_ids": ids[:100]}, headers=service.alice.headers
    )
    assert ok.status_code == 200


async def test_a_bad_page_token_is_400(service: Service, http: httpx.AsyncClient) -> None:
    thread = first_thread(service, service.alice)
    for token in ("garbage!!", "e30", "WyJ0aHJlYWRzIiwieCIsMSwyXQ"):
        response = await http.get(
            "/v1/messages", params={"thread_id": thread, "page_token": token}, headers=service.alice.headers
        )
        assert_problem(response, 400)


async def test_a_page_token_of_another_thread_is_refused(service: Service, http: httpx.AsyncClient) -> None:
    threads, _ = service.db.list_threads(service.alice.id, page_size=500, page_token=None)
    big = [t.id for t in threads if (t.message_count or 0) >= 2]
    first = await http.get("/v1/messages", params={"thread_id": big[0], "page_size": 1}, headers=service.alice.headers)
    token = first.json()["next_page_token"]
    response = await http.get(
        "/v1/messages", params={"thread_id": big[1], "page_token": token}, headers=service.alice.headers
    )
    assert "another list" in assert_problem(response, 400)["detail"]


# --- 2. list threads ---------------------------------------------------------------------------------------------


async def test_list_threads_latest_activity_first(service: Service, http: httpx.AsyncClient) -> None:
    response = await http.get("/v1/threads", headers=service.alice.headers)
    assert response.status_code == 200
    page = ListThreadsResponse.model_validate(response.json())
    assert len(page.threads) == 25
    stamps = [t.last_message_at for t in page.threads if t.last_message_at]
    assert len(stamps) == len(page.threads)
    assert stamps == sorted(stamps, reverse=True)
    assert page.next_page_token == ""
    assert all(t.status == "OPEN" for t in page.threads)
    assert all(any(p.role == "OWNER" for p in t.participants) for t in page.threads)


async def test_list_threads_pages_when_asked(service: Service, http: httpx.AsyncClient) -> None:
    seen: list[str] = []
    token = None
    while True:
        params = {"page_size": 7} | ({"page_token": token} if token else {})
        body = (await http.get("/v1/threads", params=params, headers=service.alice.headers)).json()
        seen += [t["id"] for t in body["threads"]]
        token = body["next_page_token"]
        if not token:
            break
    assert len(seen) == len(set(seen)) == 25


# --- 3 and 4. inboxes --------------------------------------------------------------------------------------------


async def test_list_inboxes(service: Service, http: httpx.AsyncClient) -> None:
    response = await http.get("/v1/inboxes", headers=service.alice.headers)
    inboxes = ListInboxesResponse.model_validate(response.json()).inboxes
    assert [i.email for i in inboxes][:2] == ["you@pigeon.example", "team@pigeon.example"]
    assert {i.status for i in inboxes} == {"ACTIVE", "PENDING_VERIFICATION", "INACTIVE"}
    assert all(i.account_id == service.alice.id for i in inboxes)


@pytest.mark.parametrize("path", ["/v1/inboxes", "/v1/inboxes/"])
async def test_create_inbox_with_or_without_trailing_slash(
    service: Service, http: httpx.AsyncClient, path: str
) -> None:
    body = {"type": "EMAIL_INBOX", "email": f"new-{len(path)}@pigeon.example", "metadata": {"team": "ops"}}
    response = await http.post(path, json=body, headers=service.alice.headers)
    assert response.status_code == 201, response.text
    created = response.json()
    assert created["status"] == "ACTIVE"
    assert created["email"] == body["email"]
    assert created["metadata"] == {"team": "ops"}
    listed = (await http.get("/v1/inboxes", headers=service.alice.headers)).json()["inboxes"]
    assert created["id"] in [i["id"] for i in listed]
    other = (await http.get("/v1/inboxes", headers=service.bob.headers)).json()["inboxes"]
    assert created["id"] not in [i["id"] for i in other]


async def test_create_inbox_without_an_address_gets_one(service: Service, http: httpx.AsyncClient) -> None:
    response = await http.post("/v1/inboxes", json={"type": "EMAIL_INBOX"}, headers=service.alice.headers)
    assert response.status_code == 201
    assert "@" in response.json()["email"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"type": "SMS_INBOX"}, "type"),
        ({}, "type"),
        ({"type": "EMAIL_INBOX", "email": "nope"}, "email"),
        ({"type": "EMAIL_INBOX", "metadata": [1]}, "metadata"),
        ({"type": "EMAIL_INBOX", "display_name": "x" * 101}, "display_name"),
    ],
)
async def test_invalid_inbox_bodies_are_422_with_the_field(
    service: Service, http: httpx.AsyncClient, body: dict[str, Any], field: str
) -> None:
    problem = assert_problem(await http.post("/v1/inboxes", json=body, headers=service.alice.headers), 422)
    assert field in [e["field"] for e in problem["errors"]]


async def test_a_duplicate_inbox_address_is_409(service: Service, http: httpx.AsyncClient) -> None:
    body = {"type": "EMAIL_INBOX", "email": "YOU@pigeon.example"}
    problem = assert_problem(await http.post("/v1/inboxes", json=body, headers=service.alice.headers), 409)
    assert problem["errors"][0]["field"] == "email"


async def test_a_body_that_is_not_json_is_400(service: Service, http: httpx.AsyncClient) -> None:
    headers = service.alice.headers | {"content-type": "application/json"}
    assert_problem(await http.post("/v1/inboxes", content=b"{not json", headers=headers), 400)


# --- auth and isolation -------------------------------------------------------------------------------------------

OPERATIONS = [
    ("GET", "/v1/messages", {"params": {"thread_id": UNKNOWN}}),
    ("GET", "/v1/threads", {}),
    ("GET", "/v1/inboxes", {}),
    ("POST", "/v1/inboxes", {"json": {"type": "EMAIL_INBOX"}}),
    ("PATCH", f"/v1/contacts/{UNKNOWN}", {"json": {"first_name": "x"}}),
    ("POST", "/v1/webhooks", {"json": {"url": "https://h.example/x", "events": ["message.created"]}}),
]


@pytest.mark.parametrize(("method", "path", "kwargs"), OPERATIONS, ids=[f"{m} {p[:15]}" for m, p, _ in OPERATIONS])
@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer nope"}, {"Authorization": "Basic dXNlcjpwdw=="}, {"Authorization": "Bearer "}],
    ids=["none", "unknown", "basic", "empty"],
)
async def test_every_operation_needs_a_valid_bearer_token(
    service: Service, http: httpx.AsyncClient, method: str, path: str, kwargs: dict[str, Any], headers: dict[str, Any]
) -> None:
    response = await http.request(method, path, headers=headers, **kwargs)
    assert_problem(response, 401)
    assert response.headers["www-authenticate"] == "Bearer"


async def test_another_accounts_thread_is_404(service: Service, http: httpx.AsyncClient) -> None:
    bobs = first_thread(service, service.bob)
    response = await http.get("/v1/messages", params={"thread_id": bobs}, headers=service.alice.headers)
    assert_problem(response, 404)
    assert (await http.get("/v1/messages", params={"thread_id": bobs}, headers=service.bob.headers)).status_code == 200


async def test_another_accounts_messages_are_invisible(service: Service, http: httpx.AsyncClient) -> None:
    alices = first_thread(service, service.alice)
    bob_message_ids = [
        m.id
        for t in service.db.list_threads(service.bob.id, page_size=500, page_token=None)[0]
        if t.id
        for m in service.db.list_messages(service.bob.id, t.id, message_ids=None, page_size=100, page_token=None)[0]
    ][:5]
    params = {"thread_id": alices, "message_ids": bob_message_ids}
    response = await http.get("/v1/messages", params=params, headers=service.alice.headers)
    assert response.json()["messages"] == []


async def test_another_accounts_contact_is_404_and_unchanged(service: Service, http: httpx.AsyncClient) -> None:
    bob_message = service.db.list_messages(
        service.bob.id, first_thread(service, service.bob), message_ids=None, page_size=100, page_token=None
    )[0]
    contact_id = next(m.sender.contact_id for m in bob_message if m.sender and m.sender.contact_id)
    before = service.db.get_contact(service.bob.id, contact_id)
    response = await http.patch(
        f"/v1/contacts/{contact_id}", json={"first_name": "Hacked"}, headers=service.alice.headers
    )
    assert_problem(response, 404)
    assert service.db.get_contact(service.bob.id, contact_id) == before


async def test_threads_and_inboxes_are_per_account(service: Service, http: httpx.AsyncClient) -> None:
    alice = (await http.get("/v1/threads", headers=service.alice.headers)).json()["threads"]
    bob = (await http.get("/v1/threads", headers=service.bob.headers)).json()["threads"]
    assert len(alice) == 25
    assert len(bob) == 10
    assert not {t["id"] for t in alice} & {t["id"] for t in bob}


# --- protocol-level errors ---------------------------------------------------------------------------------------


async def test_unknown_paths_are_404_and_wrong_methods_405_with_allow(
    service: Service, http: httpx.AsyncClient
) -> None:
    assert_problem(await http.get("/v1/nothing", headers=service.alice.headers), 404)
    response = await http.delete("/v1/threads", headers=service.alice.headers)
    assert_problem(response, 405)
    assert response.headers["allow"] == "GET"


async def test_bodies_over_1_mib_are_413(service: Service, http: httpx.AsyncClient) -> None:
    big = {"type": "EMAIL_INBOX", "metadata": {"blob": "x" * (1024 * 1024)}}
    assert_problem(await http.post("/v1/inboxes", json=big, headers=service.alice.headers), 413)

    async def chunks() -> AsyncIterator[bytes]:  # no content-length: the limit holds while streaming too
        for _ in range(20):
            yield b"x" * 100_000

    headers = service.alice.headers | {"content-type": "application/json"}
    assert_problem(await http.post("/v1/webhooks", content=chunks(), headers=headers), 413)


async def test_rate_limit_answers_429_with_retry_after() -> None:
    limited = make_service(ServerSettings(deliver_webhooks=False, rate_limit_per_minute=3))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=limited.app), base_url="http://s.test") as http:
        statuses = [(await http.get("/v1/inboxes", headers=limited.alice.headers)).status_code for _ in range(4)]
        assert statuses == [200, 200, 200, 429]
        response = await http.get("/v1/inboxes", headers=limited.alice.headers)
        assert_problem(response, 429)
        assert int(response.headers["retry-after"]) >= 1
        assert (await http.get("/v1/inboxes", headers=limited.bob.headers)).status_code == 200  # per token


async def test_rate_limit_is_off_by_default(service: Service, http: httpx.AsyncClient) -> None:
    statuses = {(await http.get("/v1/inboxes", headers=service.alice.headers)).status_code for _ in range(50)}
    assert statuses == {200}


async def test_an_unexpected_failure_is_a_problem_500_without_a_trace(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(service.db, "list_inboxes", boom)
    transport = httpx.ASGITransport(app=service.app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://s.test") as http:
        response = await http.get("/v1/inboxes", headers=service.alice.headers)
    assert_problem(response, 500)
    assert "secret internals" not in response.text
