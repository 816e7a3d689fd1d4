"""Keyset pagination that survives concurrent inserts, the message_ids filter, and PATCH semantics."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.server.conftest import Service, first_thread


async def walk(
    http: httpx.AsyncClient, service: Service, thread: str, page_size: int, between: Callable[[int], None] | None = None
) -> list[str]:
    seen: list[str] = []
    token = ""
    pages = 0
    while True:
        params: dict[str, str | int] = {"thread_id": thread, "page_size": page_size}
        if token:
            params["page_token"] = token
        response = await http.get("/v1/messages", params=params, headers=service.alice.headers)
        assert response.status_code == 200, response.text
        body = response.json()
        seen += [m["id"] for m in body["messages"]]
        pages += 1
        if between is not None:
            between(pages)
        token = body["next_page_token"]
        if not token:
            return seen
        assert pages < 1000


async def test_a_walk_visits_every_message_exactly_once(service: Service, http: httpx.AsyncClient) -> None:
    thread = first_thread(service, service.alice)
    for _ in range(30):
        service.add_message(service.alice, thread)
    every = [
        m.id
        for m in service.db.list_messages(service.alice.id, thread, message_ids=None, page_size=100, page_token=None)[0]
    ]
    for size in (1, 7, 100):
        assert await walk(http, service, thread, size) == every


async def test_messages_arriving_during_a_walk_are_seen_once(service: Service, http: httpx.AsyncClient) -> None:
    thread = first_thread(service, service.alice)
    for _ in range(20):
        service.add_message(service.alice, thread)
    added: list[str] = []

    def arrive(page: int) -> None:
        if page <= 5:  # new mail lands while the client is between pages
            added.append(service.add_message(service.alice, thread))
            added.append(service.add_message(service.alice, thread))

    seen = await walk(http, service, thread, 4, between=arrive)
    assert len(seen) == len(set(seen))
    assert set(added) <= set(seen)
    final = service.db.list_messages(service.alice.id, thread, message_ids=None, page_size=100, page_token=None)[0]
    assert seen == [m.id for m in final]


async def test_message_ids_restrict_the_result(service: Service, http: httpx.AsyncClient) -> None:
    thread = first_thread(service, service.alice, min_messages=3)
    all_ids = [
        m.id
        for m in service.db.list_messages(service.alice.id, thread, message_ids=None, page_size=100, page_token=None)[0]
    ]
    wanted = [all_ids[0], all_ids[-1], str(uuid.uuid4())]
    response = await http.get(
        "/v1/messages", params={"thread_id": thread, "message_ids": wanted}, headers=service.alice.headers
    )
    assert [m["id"] for m in response.json()["messages"]] == [all_ids[0], all_ids[-1]]
    paged = await http.get(
        "/v1/messages",
        params={"thread_id": thread, "message_ids": wanted, "page_size": 1},
        headers=service.alice.headers,
    )
    assert [m["id"] for m in paged.json()["messages"]] == [all_ids[0]]
    assert paged.json()["next_page_token"]


# --- update contact -------------------------------------------------------------------------------------------


def some_contact(service: Service) -> str:
    thread = first_thread(service, service.alice)
    messages = service.db.list_messages(service.alice.id, thread, message_ids=None, page_size=100, page_token=None)[0]
    return next(m.sender.contact_id for m in messages if m.sender and m.sender.contact_id and m.sender.contact)


async def test_patch_changes_only_what_was_sent(service: Service, http: httpx.AsyncClient) -> None:
    contact_id = some_contact(service)
    before = service.db.get_contact(service.alice.id, contact_id)
    assert before is not None
    response = await http.patch(f"/v1/contacts/{contact_id}", json={"first_name": "Ada"}, headers=service.alice.headers)
    assert response.status_code == 200
    after = response.json()
    assert after["first_name"] == "Ada"
    assert after["last_name"] == before.last_name
    assert after["display_name"] == f"Ada {before.last_name}"
    assert [e["email"] for e in after["emails"]] == [e.email for e in before.emails]
    assert after["company"] == before.company
    assert before.updated_at is not None
    assert after["updated_at"] > before.updated_at.isoformat().replace("+00:00", "Z")


async def test_patch_replaces_arrays_whole_and_keeps_ids_of_entries_that_stay(
    service: Service, http: httpx.AsyncClient
) -> None:
    contact_id = some_contact(service)
    before = service.db.get_contact(service.alice.id, contact_id)
    assert before is not None
    kept = before.emails[0]
    body = {
        "emails": [
            {"type": kept.type, "email": kept.email},
            {"type": "EMAIL_TYPE_PERSONAL", "email": "ada@home.example"},
        ],
        "phones": [],
        "social_profiles": [{"type": "SOCIAL_PROFILE_TYPE_LINKEDIN", "username": "ada-l"}],
        "metadata": {"vip": True},
    }
    after = (await http.patch(f"/v1/contacts/{contact_id}", json=body, headers=service.alice.headers)).json()
    assert [(e["type"], e["email"]) for e in after["emails"]] == [
        (kept.type, kept.email),
        ("EMAIL_TYPE_PERSONAL", "ada@home.example"),
    ]
    assert after["emails"][0]["id"] == kept.id
    assert after["emails"][1]["id"]
    assert after["emails"][1]["id"] != kept.id
    assert after["phones"] == []
    assert after["social_profiles"][0]["username"] == "ada-l"
    assert after["metadata"] == {"vip": True}
    # and the change shows wherever the contact appears
    thread = first_thread(service, service.alice)
    response = await http.get("/v1/messages", params={"thread_id": thread}, headers=service.alice.headers)
    senders = [m["sender"]["contact"] for m in response.json()["messages"] if m["sender"]["contact_id"] == contact_id]
    assert senders
    assert all(s["metadata"] == {"vip": True} for s in senders)


@pytest.mark.parametrize("field", ["id", "account_id", "created_at", "updated_at", "display_name", "company"])
async def test_read_only_or_unknown_fields_are_refused_and_nothing_changes(
    service: Service, http: httpx.AsyncClient, field: str
) -> None:
    contact_id = some_contact(service)
    before = service.db.get_contact(service.alice.id, contact_id)
    response = await http.patch(
        f"/v1/contacts/{contact_id}", json={"first_name": "Changed", field: "x"}, headers=service.alice.headers
    )
    assert response.status_code == 422
    assert response.headers["content-type"].startswith("application/problem+json")
    assert field in [e["field"] for e in response.json()["errors"]]
    assert service.db.get_contact(service.alice.id, contact_id) == before


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"first_name": "x" * 101}, "first_name"),
        ({"last_name": None}, "last_name"),
        ({"emails": [{"type": "EMAIL_TYPE_WORK", "email": "nope"}]}, "emails.0.email"),
        ({"emails": [{"type": "EMAIL_TYPE_HOME", "email": "a@example.com"}]}, "emails.0.type"),
        ({"phones": [{"type": "PHONE_TYPE_WORK", "phone": "1" * 201}]}, "phones.0.phone"),
        ({"social_profiles": [{"type": "SOCIAL_PROFILE_TYPE_LINKEDIN"}]}, "social_profiles.0.username"),
        ({"metadata": "not an object"}, "metadata"),
    ],
)
async def test_validation_errors_point_at_the_field(
    service: Service, http: httpx.AsyncClient, body: dict[str, Any], field: str
) -> None:
    contact_id = some_contact(service)
    response = await http.patch(f"/v1/contacts/{contact_id}", json=body, headers=service.alice.headers)
    assert response.status_code == 422
    problem = response.json()
    assert problem["title"]
    fields = [e["field"] for e in problem["errors"]]
    assert field in fields


async def test_patch_of_an_unknown_contact_is_404(service: Service, http: httpx.AsyncClient) -> None:
    response = await http.patch(f"/v1/contacts/{uuid.uuid4()}", json={"first_name": "x"}, headers=service.alice.headers)
    assert response.status_code == 404
    response = await http.patch("/v1/contacts/not-a-uuid", json={"first_name": "x"}, headers=service.alice.headers)
    assert response.status_code == 422
