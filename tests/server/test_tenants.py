"""The service holds against its tenants: answers in the spec's types (no null), refused nulls, NaN and metadata
nested past any use, page tokens it did not give out refused with 400."""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx
import pytest

from pigeon.models import METADATA_DEPTH_MAX
from tests.server.conftest import Service, first_thread
from tests.server.test_operations import assert_problem


def nulls_in(value: Any, where: str = "$") -> list[str]:
    """Where ``value`` (parsed JSON) holds a null."""
    if value is None:
        return [where]
    if isinstance(value, dict):
        return [spot for key, child in value.items() for spot in nulls_in(child, f"{where}.{key}")]
    if isinstance(value, list):
        return [spot for n, child in enumerate(value) for spot in nulls_in(child, f"{where}[{n}]")]
    return []


async def test_no_answer_of_any_operation_holds_a_null(service: Service, http: httpx.AsyncClient) -> None:
    headers = service.alice.headers
    contact = service.db.rows("SELECT id FROM contacts WHERE account_id = ? LIMIT 1", (service.alice.id,))[0]["id"]
    answers = [
        await http.get("/v1/inboxes", headers=headers),
        await http.get("/v1/threads", headers=headers),
        await http.get("/v1/messages", params={"thread_id": first_thread(service, service.alice)}, headers=headers),
        await http.post("/v1/inboxes", json={"type": "EMAIL_INBOX"}, headers=headers),
        await http.patch(f"/v1/contacts/{contact}", json={"first_name": "Ada"}, headers=headers),
        await http.post(
            "/v1/webhooks", json={"url": "https://hooks.example.com/x", "events": ["message.created"]}, headers=headers
        ),
    ]
    for answer in answers:
        assert answer.status_code in {200, 201}, answer.text
        assert nulls_in(answer.json()) == [], answer.request.url


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/inboxes", {"type": "EMAIL_INBOX", "display_name": None}),
        ("/v1/inboxes", {"type": "EMAIL_INBOX", "metadata": None}),
        ("/v1/webhooks", {"url": "https://hooks.example.com/x", "events": ["message.created"], "description": None}),
    ],
)
async def test_null_where_the_spec_says_string_or_object_is_refused(
    service: Service, http: httpx.AsyncClient, path: str, body: dict[str, Any]
) -> None:
    problem = assert_problem(await http.post(path, json=body, headers=service.alice.headers), 422)
    assert "null" in json.dumps(problem)


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity"])
async def test_nan_and_infinity_in_metadata_are_refused(service: Service, http: httpx.AsyncClient, number: str) -> None:
    body = '{"type": "EMAIL_INBOX", "metadata": {"score": ' + number + "}}"
    headers = {**service.alice.headers, "content-type": "application/json"}
    assert_problem(await http.post("/v1/inboxes", content=body, headers=headers), 422)


async def test_metadata_nested_past_the_limit_is_refused_and_the_account_stays_readable(
    service: Service, http: httpx.AsyncClient
) -> None:
    deep: Any = "bottom"
    for _ in range(300):
        deep = {"x": deep}
    headers = service.alice.headers
    assert_problem(await http.post("/v1/inboxes", json={"type": "EMAIL_INBOX", "metadata": deep}, headers=headers), 422)
    fits: Any = "bottom"
    for _ in range(METADATA_DEPTH_MAX - 1):
        fits = {"x": fits}
    created = await http.post("/v1/inboxes", json={"type": "EMAIL_INBOX", "metadata": fits}, headers=headers)
    assert created.status_code == 201, created.text
    assert (await http.get("/v1/inboxes", headers=headers)).status_code == 200


def forged(*keys: Any, kind: str = "threads", scope: str = "") -> str:
    return base64.urlsafe_b64encode(json.dumps([kind, scope, *keys]).encode()).decode().rstrip("=")


async def test_page_tokens_the_service_did_not_give_out_are_400(service: Service, http: httpx.AsyncClient) -> None:
    headers, account = service.alice.headers, service.alice.id
    thread = first_thread(service, service.alice)
    for token in [
        forged({"a": 1}, [2], scope=account),
        forged(10**40, "x", scope=account),
        forged("x" * 500, "y", scope=account),  # (a key no page of this service ever ends on)
        forged(True, "y", scope=account),
        "not base64 at all!",
    ]:
        assert_problem(await http.get("/v1/threads", params={"page_token": token}, headers=headers), 400)
        messages = {"thread_id": thread, "page_token": token.replace(account, thread)}
        assert_problem(await http.get("/v1/messages", params=messages, headers=headers), 400)
    too_long = {"page_token": "x" * 1001}  # past what the parameter takes at all: a plain 422
    assert_problem(await http.get("/v1/threads", params=too_long, headers=headers), 422)
    huge = forged("2026-01-01T00:00:00.000000Z", 10**30, kind="messages", scope=thread)
    assert_problem(
        await http.get("/v1/messages", params={"thread_id": thread, "page_token": huge}, headers=headers), 400
    )
