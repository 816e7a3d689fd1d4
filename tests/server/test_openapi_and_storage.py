"""The OpenAPI document matches the spec; storage is versioned; demo data is deterministic; the serve CLI works."""

from __future__ import annotations

import io
import re
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from pigeon.cli import main
from pigeon_service.app import create_app
from pigeon_service.db import SCHEMA_VERSION, Database, SchemaTooNew
from pigeon_service.demo_mail import ensure_demo_mail, populate
from pigeon_service.run import start_demo
from tests.server.demo import every_message

NOW = datetime(2026, 6, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def openapi() -> dict[str, Any]:
    return create_app(Database(":memory:")).openapi()


def test_the_document_has_exactly_the_six_operations(openapi: dict[str, Any]) -> None:
    operations = {(method.upper(), path) for path, item in openapi["paths"].items() for method in item}
    assert operations == {
        ("GET", "/v1/messages"),
        ("GET", "/v1/threads"),
        ("GET", "/v1/inboxes"),
        ("POST", "/v1/inboxes"),
        ("POST", "/v1/inboxes/"),
        ("PATCH", "/v1/contacts/{contactId}"),
        ("POST", "/v1/webhooks"),
    }


def test_every_operation_requires_the_bearer_token(openapi: dict[str, Any]) -> None:
    schemes = openapi["components"]["securitySchemes"]
    assert any(s == {"type": "http", "scheme": "bearer", "description": s.get("description")} for s in schemes.values())
    for item in openapi["paths"].values():
        for operation in item.values():
            assert operation["security"], operation["summary"]
            assert "401" in operation["responses"]


def test_list_messages_parameters_are_the_specs(openapi: dict[str, Any]) -> None:
    params = {p["name"]: p for p in openapi["paths"]["/v1/messages"]["get"]["parameters"]}
    assert set(params) == {"thread_id", "message_ids", "page_size", "page_token"}
    assert params["thread_id"]["required"] is True
    assert params["thread_id"]["schema"]["format"] == "uuid"
    assert params["page_size"]["schema"] == {
        "type": "integer",
        "maximum": 100,
        "minimum": 1,
        "default": 20,
        "title": "Page Size",
    }
    assert not params["page_size"].get("required")
    ids = params["message_ids"]["schema"]["anyOf"][0]
    assert ids["type"] == "array"
    assert ids["items"]["format"] == "uuid"
    response = openapi["paths"]["/v1/messages"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert response["$ref"].endswith("/ListMessagesResponse")


def test_request_bodies_are_the_specs(openapi: dict[str, Any]) -> None:
    schemas = openapi["components"]["schemas"]
    update = schemas["UpdateContact"]
    assert set(update["properties"]) == {"first_name", "last_name", "emails", "phones", "social_profiles", "metadata"}
    assert not update.get("required")
    assert update["additionalProperties"] is False
    webhook = schemas["CreateWebhook"]
    assert set(webhook["required"]) == {"url", "events"}
    events = schemas[webhook["properties"]["events"]["items"]["$ref"].rsplit("/", 1)[1]]["enum"]
    assert events == ["message.created", "message.updated", "message.sent", "message.delivered", "message.failed"]
    inbox = schemas["CreateInbox"]
    assert inbox["required"] == ["type"]
    assert schemas["InboxType"]["enum"] == ["EMAIL_INBOX"]
    path_param = openapi["paths"]["/v1/contacts/{contactId}"]["patch"]["parameters"][0]
    assert (path_param["name"], path_param["in"], path_param["required"]) == ("contactId", "path", True)


def test_a_value_the_bodies_strip_to_nothing_is_invalid_by_the_document_too(openapi: dict[str, Any]) -> None:
    # Request bodies strip whitespace before checking a length: a blank phone is refused, so the document says so,
    # or a client (and schemathesis) would take "\u00a0" for a valid phone number.
    non_empty = {
        (name, field): prop
        for name, schema in openapi["components"]["schemas"].items()
        for field, prop in schema.get("properties", {}).items()
        if prop.get("type") == "string" and prop.get("minLength")
    }
    assert {("ContactPhoneInput", "phone"), ("ContactSocialProfileInput", "username")} <= set(non_empty)
    for where, prop in non_empty.items():
        assert re.search(prop.get("pattern", ""), "\u00a0\t ") is None, where
        assert re.search(prop.get("pattern", ""), " +1 555 "), where


def test_success_statuses(openapi: dict[str, Any]) -> None:
    paths = openapi["paths"]
    assert "201" in paths["/v1/inboxes"]["post"]["responses"]
    assert "201" in paths["/v1/webhooks"]["post"]["responses"]
    assert "200" in paths["/v1/contacts/{contactId}"]["patch"]["responses"]
    assert "200" in paths["/v1/threads"]["get"]["responses"]


# --- storage ---------------------------------------------------------------------------------------------------


def test_a_file_database_is_versioned_in_wal_mode_with_foreign_keys(tmp_path: Path) -> None:
    path = tmp_path / "service.sqlite3"
    db = Database(path)
    assert db.schema_version == SCHEMA_VERSION
    db.close()
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    raw.close()
    again = Database(path)  # opening again migrates nothing and keeps the data
    assert again.schema_version == SCHEMA_VERSION
    again.close()


def test_a_database_from_a_newer_pigeon_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.sqlite3"
    raw = sqlite3.connect(path)
    raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    raw.close()
    with pytest.raises(SchemaTooNew, match="schema version"):
        Database(path)


def test_tokens_are_stored_hashed(tmp_path: Path) -> None:
    db = Database(tmp_path / "s.sqlite3")
    token = db.create_token(db.ensure_account("alice"))
    db.close()
    assert token.encode() not in (tmp_path / "s.sqlite3").read_bytes()
    assert not any(token.encode() in p.read_bytes() for p in tmp_path.iterdir() if p.is_file())


def test_demo_data_is_deterministic_for_a_seed() -> None:
    def snapshot(seed: int) -> list[str]:
        db = Database(":memory:")
        account = db.ensure_account("x")
        populate(db, account, threads=15, contacts=20, seed=seed, now=NOW)
        threads, _ = db.list_threads(account, page_size=500, page_token=None)
        messages = [m for t in threads if t.id for m in every_message(db, account, t.id)]
        return [t.model_dump_json(exclude={"updated_at"}) for t in threads] + [
            m.model_dump_json(exclude={"updated_at", "sender"}) for m in messages
        ]

    assert snapshot(7) == snapshot(7)
    assert snapshot(7) != snapshot(8)


def test_demo_data_has_what_the_reader_needs() -> None:
    db = Database(":memory:")
    account = db.ensure_account("x")
    summary = populate(db, account, threads=120, contacts=60, seed=3, now=NOW)
    assert (summary.inboxes, summary.contacts, summary.threads) == (4, 61, 120)
    threads, _ = db.list_threads(account, page_size=500, page_token=None)
    messages = [m for t in threads if t.id for m in every_message(db, account, t.id)]
    assert summary.messages == len(messages)
    mimes = {b.mime_type for m in messages for b in m.content_blocks}
    assert {"text/plain", "text/html", "text/markdown"} <= mimes
    assert any(b.filename and b.size for m in messages for b in m.content_blocks)
    assert {r.type for m in messages for r in m.recipients} >= {"RECIPIENT_TYPE_TO", "RECIPIENT_TYPE_CC"}
    assert {m.direction for m in messages} == {"MESSAGE_DIRECTION_INBOUND", "MESSAGE_DIRECTION_OUTBOUND"}
    assert any(m.parent_id for m in messages)
    assert any("\n> " in (b.content or "") for m in messages for b in m.content_blocks)  # quoted replies
    assert all((t.message_count or 0) >= 1 for t in threads)
    assert all(m.created_at and m.created_at <= NOW for m in messages)
    contact = next(m.sender.contact for m in messages if m.sender and m.sender.contact and m.sender.contact.phones)
    assert contact.emails
    assert contact.company


def test_ensure_demo_mail_fills_only_accounts_without_mail() -> None:
    db = Database(":memory:")
    assert [s.threads for s in ensure_demo_mail(db, threads=5)] == [5]  # creates the demo account
    db.ensure_account("newcomer")
    assert [s.threads for s in ensure_demo_mail(db, threads=5)] == [5]  # only the newcomer
    assert ensure_demo_mail(db, threads=5) == []


# --- the serve CLI -------------------------------------------------------------------------------------------------


def test_token_create_prints_only_a_token_that_works(tmp_path: Path) -> None:
    out = io.StringIO()
    assert main(["serve", "token", "create", "--db", str(tmp_path / "s.db"), "--account", "carol"], out=out) == 0
    token = out.getvalue().strip()
    assert out.getvalue() == token + "\n"
    db = Database(tmp_path / "s.db")
    ensure_demo_mail(db, threads=3)
    account = db.account_for_token(token)
    assert account is not None
    assert db.has_mail(account)


def test_a_database_that_cannot_be_opened_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "not-a-db"
    bad.write_bytes(b"this is not sqlite" * 100)
    assert main(["serve", "token", "create", "--db", str(bad), "--account", "x"], out=io.StringIO()) == 2
    err = capsys.readouterr().err
    assert "Cannot open the service database" in err
    assert "Traceback" not in err


def test_start_demo_serves_demo_mail_on_loopback_and_leaves_nothing_behind(isolated_environment: Path) -> None:
    demo = start_demo(threads=12, live=False, seed=5)
    try:
        assert demo.base_url.startswith("http://127.0.0.1:")
        response = httpx.get(f"{demo.base_url}/v1/threads", headers={"Authorization": f"Bearer {demo.token}"})
        assert response.status_code == 200
        assert len(response.json()["threads"]) == 12
    finally:
        demo.stop()
    assert not demo.service.thread.is_alive()
    assert not any(isolated_environment.rglob("*.sqlite3"))
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{demo.base_url}/v1/threads", timeout=2)
