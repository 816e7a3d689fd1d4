"""The service's answers checked against docs/spec-openapi.yaml, written by hand from the spec (not generated from
the code): every operation, with the optional fields present and absent, and fuzzed by schemathesis."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jsonschema_rs
import pytest
import schemathesis
import yaml
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance

from pigeon_service.app import ServerSettings
from tests.server.conftest import Service, make_service

SPEC = yaml.safe_load((Path(__file__).parents[2] / "docs" / "spec-openapi.yaml").read_text())


def conforms(body: Any, schema_name: str) -> None:
    """``body`` is what the spec says a ``schema_name`` is (formats checked, no nulls, required fields present)."""
    validator = jsonschema_rs.validator_for(
        {"$ref": f"#/components/schemas/{schema_name}", "components": SPEC["components"]}, validate_formats=True
    )
    errors = [f"{'/'.join(map(str, e.instance_path))}: {e.message}" for e in validator.iter_errors(body)]
    assert not errors, errors[:5]


def test_the_hand_written_document_catches_what_it_should() -> None:
    inbox = {
        "id": "0b4c1a4e-2b0f-4c37-9f5d-1c2d3e4f5a6b",
        "account_id": "0b4c1a4e-2b0f-4c37-9f5d-1c2d3e4f5a6b",
        "type": "EMAIL_INBOX",
        "status": "ACTIVE",
        "email": "me@example.com",
    }
    conforms(inbox, "Inbox")
    for bad in ({**inbox, "display_name": None}, {**inbox, "created_at": "yesterday"}, {**inbox, "id": "7"}):
        with pytest.raises(AssertionError):
            conforms(bad, "Inbox")
    with pytest.raises(AssertionError):
        conforms({"messages": []}, "ListMessagesResponse")  # next_page_token is required


async def test_every_operation_answers_as_the_spec_says(service: Service, http: httpx.AsyncClient) -> None:
    headers = service.alice.headers
    threads = (await http.get("/v1/threads", headers=headers)).json()
    conforms(threads, "ListThreadsResponse")
    for thread in threads["threads"][:8]:
        token = None
        while True:
            query: dict[str, Any] = {"thread_id": thread["id"], "page_size": 2}
            if token:
                query["page_token"] = token
            page = (await http.get("/v1/messages", params=query, headers=headers)).json()
            conforms(page, "ListMessagesResponse")
            token = page["next_page_token"]
            if not token:
                break
    conforms((await http.get("/v1/inboxes", headers=headers)).json(), "ListInboxesResponse")
    for body in ({"type": "EMAIL_INBOX"}, {"type": "EMAIL_INBOX", "email": "new@example.com", "metadata": {"a": 1}}):
        created = await http.post("/v1/inboxes", json=body, headers=headers)
        assert created.is_success, created.text
        conforms(created.json(), "Inbox")
    contact_id = next(
        p["contact_id"] for t in threads["threads"] for p in t.get("participants", []) if p.get("contact_id")
    )
    change: dict[str, Any]
    for change in (
        {"first_name": "Ada"},
        {"emails": [], "phones": [], "social_profiles": [], "metadata": {}},
        {"emails": [{"type": "EMAIL_TYPE_WORK", "email": "ada@example.com"}], "metadata": {"x": {"y": [1, "z"]}}},
    ):
        updated = await http.patch(f"/v1/contacts/{contact_id}", json=change, headers=headers)
        assert updated.is_success, updated.text
        conforms(updated.json(), "Contact")
    for hook_body in (
        {"url": "https://hooks.example.com/in", "events": ["message.created"]},
        {"url": "https://hooks.example.com/in", "events": ["message.sent"], "description": "d", "metadata": {"k": 1}},
    ):
        hook = await http.post("/v1/webhooks", json=hook_body, headers=headers)
        assert hook.is_success, hook.text
        conforms(hook.json(), "WebhookSubscription")
        assert hook.json()["secret"]


@pytest.fixture(scope="module")
def fuzzed() -> Iterator[Service]:
    made = make_service(ServerSettings(deliver_webhooks=False, allow_private_webhooks=True))
    yield made
    made.db.close()


@pytest.fixture(scope="module")
def spec_schema(fuzzed: Service) -> schemathesis.schemas.BaseSchema:
    schema = schemathesis.openapi.from_dict(SPEC)
    schema.app = fuzzed.app
    return schema


spec = schemathesis.pytest.from_fixture("spec_schema")


@spec.parametrize()
@settings(max_examples=25, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
def test_fuzzed_requests_get_answers_the_spec_allows(case: schemathesis.Case[Any], fuzzed: Service) -> None:
    # Only the two checks the spec can ground: no server error, and a success answer shaped as the spec says.
    # (Error statuses and bodies are "not shown" in the spec, so no status-code conformance is asked.)
    case.call_and_validate(headers=fuzzed.alice.headers, checks=[not_a_server_error, response_schema_conformance])
