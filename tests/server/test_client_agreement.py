"""The API client and the reference service agree on every operation (in-process, through ASGITransport)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import httpx
import pytest

from pigeon.api import Conflict, Invalid, NotFound, PigeonClient, Unauthorized
from pigeon.models import EmailType, InboxStatus
from tests.server.conftest import Service, first_thread


@pytest.fixture
async def client(service: Service) -> AsyncIterator[PigeonClient]:
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=service.app))
    async with PigeonClient("http://service.test", service.alice.token, http_client=http) as pigeon:
        yield pigeon
    await http.aclose()


async def test_inboxes(client: PigeonClient) -> None:
    before = await client.inboxes.list()
    assert {i.status for i in before} >= {InboxStatus.ACTIVE, InboxStatus.INACTIVE}
    created = await client.inboxes.create(email="fresh@pigeon.example", display_name="Fresh", metadata={"a": 1})
    assert created.status is InboxStatus.ACTIVE
    after = await client.inboxes.list()
    assert [i.id for i in after] == [i.id for i in before] + [created.id]


async def test_threads_walk_every_page(client: PigeonClient, service: Service) -> None:
    threads = await client.threads.list()
    assert len(threads) == 25
    assert len({t.id for t in threads}) == 25


async def test_messages_walk_across_pages_with_contacts_embedded(client: PigeonClient, service: Service) -> None:
    thread = first_thread(service, service.alice, min_messages=3)
    for _ in range(7):
        service.add_message(service.alice, thread)
    pages = [page async for page in client.messages.iter_pages(thread, page_size=2)]
    messages = [m for page in pages for m in page.items]
    assert len(pages) == (len(messages) + 1) // 2
    assert pages[-1].next_page_token is None
    assert len({m.id for m in messages}) == len(messages) >= 10
    named = [m for m in messages if m.sender and m.sender.contact]
    assert named
    sender = named[0].sender
    assert sender is not None
    assert sender.contact is not None
    assert sender.contact.name
    wanted = [m.id for m in messages[:2] if m.id]
    assert len(wanted) == 2
    only = await client.messages.list(thread, message_ids=wanted)
    assert [m.id for m in only.items] == wanted


async def test_update_contact(client: PigeonClient, service: Service) -> None:
    thread = first_thread(service, service.alice)
    contact_id = next(
        m.sender.contact_id for m in (await client.messages.list(thread)).items if m.sender and m.sender.contact_id
    )
    updated = await client.contacts.update(
        contact_id,
        last_name="Lovelace",
        emails=[{"type": "EMAIL_TYPE_WORK", "email": "ada@engine.example"}],
        metadata={"met": "2026"},
    )
    assert updated.last_name == "Lovelace"
    assert [(e.type, e.email) for e in updated.emails] == [(EmailType.WORK, "ada@engine.example")]
    assert updated.metadata == {"met": "2026"}


async def test_create_webhook(client: PigeonClient) -> None:
    hook = await client.webhooks.create(
        url="https://hooks.example.com/pigeon", events=["message.created", "message.failed"], description="CI"
    )
    assert hook.secret is not None
    assert hook.secret.startswith("whsec_")
    assert hook.description == "CI"


async def test_errors_map_to_the_typed_hierarchy(client: PigeonClient, service: Service) -> None:
    with pytest.raises(NotFound, match="No such thread"):
        await client.messages.list(str(uuid.uuid4()))
    with pytest.raises(NotFound):
        await client.contacts.update(str(uuid.uuid4()), first_name="x")
    with pytest.raises(Conflict, match="409") as caught:
        await client.inboxes.create(email="you@pigeon.example")
    assert [e.field for e in caught.value.errors] == ["email"]
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=service.app))
    async with PigeonClient("http://service.test", "wrong", http_client=http) as stranger:
        with pytest.raises(Unauthorized, match="not valid"):
            await stranger.inboxes.list()
    await http.aclose()


async def test_server_field_errors_reach_the_client(client: PigeonClient, service: Service) -> None:
    thread = first_thread(service, service.alice)
    contact_id = next(
        m.sender.contact_id for m in (await client.messages.list(thread)).items if m.sender and m.sender.contact_id
    )
    # Bypass the client's own validation to see the server's answer.
    with pytest.raises(Invalid) as caught:
        await client.request("PATCH", f"/v1/contacts/{contact_id}", body={"emails": [{"type": "X", "email": "y"}]})
    fields = {e.field for e in caught.value.errors}
    assert {"emails.0.type", "emails.0.email"} <= fields
