"""Webhooks: creation, the secret shown once, signed deliveries, retries, failure, redirects and private URLs."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import random
import socket
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from pigeon.api import PigeonClient
from pigeon.models import Message, WebhookStatus
from pigeon_service.app import ServerSettings, create_app
from pigeon_service.db import Database
from pigeon_service.demo_mail import populate
from pigeon_service.demo_traffic import live_traffic, new_message
from pigeon_service.run import start_in_thread
from pigeon_service.webhooks import Deliverer, DeliveryPolicy, emit
from tests.server.conftest import Service, make_service


@dataclass
class Receiver:
    """A webhook receiver in the test: answers from a script and verifies every signature."""

    answers: list[int] = field(default_factory=lambda: [200])
    secret: str = ""
    received: list[httpx.Request] = field(default_factory=list)
    verified: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.received.append(request)
        with contextlib.suppress(WebhookVerificationError):
            self.verified.append(Webhook(self.secret).verify(request.content, dict(request.headers)))
        status = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        headers = {"location": "http://elsewhere.test/steal"} if 300 <= status < 400 else {}
        return httpx.Response(status, headers=headers)


@pytest.fixture
def private_service() -> Service:
    return make_service(ServerSettings(deliver_webhooks=False, allow_private_webhooks=True))


@pytest.fixture
async def http(private_service: Service) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=private_service.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://service.test") as client:
        yield client


async def subscribe(
    http: httpx.AsyncClient, service: Service, events: list[str], url: str = "http://hooks.test/in"
) -> dict[str, Any]:
    response = await http.post("/v1/webhooks", json={"url": url, "events": events}, headers=service.alice.headers)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def status_of(service: Service, hook_id: str) -> str:
    hook = service.db.get_webhook(hook_id)
    assert hook is not None
    return hook.status


def deliverer_for(service: Service, receiver: Receiver, max_attempts: int = 3) -> Deliverer:
    policy = DeliveryPolicy(max_attempts=max_attempts, first_delay=0.0, allow_private=True)
    return Deliverer(service.db, policy, http_client=httpx.AsyncClient(transport=httpx.MockTransport(receiver)))


def new_mail(service: Service, deliverer: Deliverer, *, outbound: bool = False) -> Message:
    message = new_message(service.db, deliverer, service.alice.id, random.Random(5), outbound=outbound)
    assert message is not None
    return message


async def test_creation_returns_the_secret_once(private_service: Service, http: httpx.AsyncClient) -> None:
    created = await subscribe(http, private_service, ["message.created", "message.sent"])
    assert created["status"] == "active"
    assert created["events"] == ["message.created", "message.sent"]
    secret = created["secret"]
    assert secret.startswith("whsec_")
    assert len(base64.b64decode(secret.removeprefix("whsec_"))) == 32
    stored = private_service.db.get_webhook(created["id"])
    assert stored is not None
    assert stored.secret is None
    assert secret not in stored.model_dump_json()
    again = await subscribe(http, private_service, ["message.created"])
    assert again["secret"] != secret


async def test_deliveries_are_signed_and_carry_the_message(private_service: Service, http: httpx.AsyncClient) -> None:
    created = await subscribe(http, private_service, ["message.created"])
    receiver = Receiver(secret=created["secret"])
    deliverer = deliverer_for(private_service, receiver)
    message = new_mail(private_service, deliverer)
    assert await deliverer.deliver_due() == 1
    assert len(receiver.verified) == 1
    event = receiver.verified[0]
    assert set(event) == {"id", "type", "created_at", "data"}
    assert event["type"] == "message.created"
    assert event["data"]["message"]["id"] == message.id
    request = receiver.received[0]
    assert request.headers["webhook-id"]
    assert request.headers["webhook-signature"].startswith("v1,")
    assert created["secret"] not in request.content.decode()
    assert await deliverer.deliver_due() == 0  # delivered: nothing more to send


THIN = (  # the documented shape of an event's message: ids, direction, status and times
    {"id", "thread_id", "inbox_id", "parent_id", "direction", "status"}
    | {"created_at", "updated_at", "sent_at", "received_at"}
)


async def test_a_delivery_names_the_message_but_carries_nothing_a_stranger_could_read(
    private_service: Service, http: httpx.AsyncClient
) -> None:
    """Whoever holds the receiver's port (another local user, once Pigeon has quit) reads the delivery: it names
    the message for the receiver to sync, with no subject, text, addresses or contact."""
    created = await subscribe(http, private_service, ["message.created", "message.delivered"])
    receiver = Receiver(secret=created["secret"])
    deliverer = deliverer_for(private_service, receiver)
    inbound = new_mail(private_service, deliverer)
    outbound = new_mail(private_service, deliverer, outbound=True)
    emit(private_service.db, deliverer, private_service.alice.id, "message.delivered", outbound)
    assert await deliverer.deliver_due() == 3
    assert len(receiver.verified) == 3
    for request, event, message in zip(
        receiver.received, receiver.verified, [inbound, outbound, outbound], strict=True
    ):
        secrets_of_mail = [message.subject, *(b.content for b in message.content_blocks)]
        secrets_of_mail += [r.raw_address for r in message.recipients]
        if message.sender is not None:
            secrets_of_mail.append(message.sender.raw_address)
            contact = message.sender.contact
            if contact is not None:
                secrets_of_mail += [contact.name, *(e.email for e in contact.emails)]
        written = [text for text in secrets_of_mail if isinstance(text, str) and len(text) > 3]
        assert len(written) >= 3  # (the mail has a subject, a text and addresses to leak)
        body = request.content.decode()
        assert [text for text in written if text in body] == []
        named = event["data"]["message"]
        assert {"id", "thread_id", "inbox_id", "direction", "status", "created_at"} <= set(named) <= THIN
        assert (named["id"], named["thread_id"], named["inbox_id"]) == (message.id, message.thread_id, message.inbox_id)


async def test_a_forged_signature_does_not_verify(private_service: Service, http: httpx.AsyncClient) -> None:
    created = await subscribe(http, private_service, ["message.created"])
    other_secret = "whsec_" + base64.b64encode(b"k" * 32).decode()
    receiver = Receiver(secret=other_secret)
    deliverer = deliverer_for(private_service, receiver)
    new_mail(private_service, deliverer)
    await deliverer.deliver_due()
    assert len(receiver.received) == 1
    assert receiver.verified == []
    assert created["secret"] != other_secret


async def test_only_the_event_kinds_asked_for_are_sent(private_service: Service, http: httpx.AsyncClient) -> None:
    created = await subscribe(http, private_service, ["message.delivered"])
    receiver = Receiver(secret=created["secret"])
    deliverer = deliverer_for(private_service, receiver)
    message = new_mail(private_service, deliverer)
    assert await deliverer.deliver_due() == 0
    emit(private_service.db, deliverer, private_service.alice.id, "message.delivered", message)
    assert await deliverer.deliver_due() == 1
    assert [e["type"] for e in receiver.verified] == ["message.delivered"]


async def test_a_500_is_retried_with_the_same_id_until_it_succeeds(
    private_service: Service, http: httpx.AsyncClient
) -> None:
    created = await subscribe(http, private_service, ["message.created"])
    receiver = Receiver(answers=[500, 503, 200], secret=created["secret"])
    deliverer = deliverer_for(private_service, receiver, max_attempts=5)
    new_mail(private_service, deliverer)
    for _ in range(5):
        await deliverer.deliver_due()
    assert len(receiver.received) == 3
    assert len({r.headers["webhook-id"] for r in receiver.received}) == 1
    [delivery] = private_service.db.deliveries(created["id"])
    assert (delivery["state"], delivery["attempts"], delivery["last_status"]) == ("delivered", 3, 200)
    assert status_of(private_service, created["id"]) == WebhookStatus.ACTIVE


async def test_exhausted_retries_fail_the_subscription(private_service: Service, http: httpx.AsyncClient) -> None:
    created = await subscribe(http, private_service, ["message.created"])
    receiver = Receiver(answers=[500], secret=created["secret"])
    deliverer = deliverer_for(private_service, receiver, max_attempts=3)
    new_mail(private_service, deliverer)
    for _ in range(6):
        await deliverer.deliver_due()
    assert len(receiver.received) == 3
    assert status_of(private_service, created["id"]) == WebhookStatus.FAILED
    new_mail(private_service, deliverer)
    assert await deliverer.deliver_due() == 0  # a failed subscription gets nothing more


async def test_410_fails_the_subscription_at_once(private_service: Service, http: httpx.AsyncClient) -> None:
    created = await subscribe(http, private_service, ["message.created"])
    receiver = Receiver(answers=[410], secret=created["secret"])
    deliverer = deliverer_for(private_service, receiver, max_attempts=5)
    new_mail(private_service, deliverer)
    await deliverer.deliver_due()
    await deliverer.deliver_due()
    assert len(receiver.received) == 1
    assert status_of(private_service, created["id"]) == WebhookStatus.FAILED


async def test_redirects_are_not_followed(private_service: Service, http: httpx.AsyncClient) -> None:
    created = await subscribe(http, private_service, ["message.created"])
    receiver = Receiver(answers=[302, 200], secret=created["secret"])
    deliverer = deliverer_for(private_service, receiver)
    new_mail(private_service, deliverer)
    await deliverer.deliver_due()
    assert [str(r.url) for r in receiver.received] == ["http://hooks.test/in"]
    [delivery] = private_service.db.deliveries(created["id"])
    assert (delivery["state"], delivery["last_status"]) == ("pending", 302)
    await deliverer.deliver_due()
    assert [str(r.url) for r in receiver.received] == ["http://hooks.test/in"] * 2  # retried at the same URL


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/hook",
        "http://localhost:8080/hook",
        "http://api.localhost/hook",
        "http://10.1.2.3/hook",
        "http://192.168.0.10/hook",
        "http://172.16.5.4/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/hook",
        "http://[::ffff:127.0.0.1]/hook",
        "http://[fd00::1]/hook",
        "http://0.0.0.0/hook",
        "http://100.64.0.1/hook",
    ],
)
async def test_private_urls_are_refused(service: Service, url: str) -> None:
    transport = httpx.ASGITransport(app=service.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://s.test") as http:
        response = await http.post(
            "/v1/webhooks", json={"url": url, "events": ["message.created"]}, headers=service.alice.headers
        )
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == "url"


async def test_a_name_that_later_resolves_to_a_private_address_is_refused_at_delivery(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def resolves_nowhere(*args: object, **kwargs: object) -> list[Any]:
        raise socket.gaierror("no DNS in tests")

    loop = asyncio.get_running_loop()
    monkeypatch.setattr(loop, "getaddrinfo", resolves_nowhere)
    transport = httpx.ASGITransport(app=service.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://s.test") as http:
        response = await http.post(
            "/v1/webhooks",
            json={"url": "http://rebind.example/hook", "events": ["message.created"]},
            headers=service.alice.headers,
        )
    assert response.status_code == 201  # unresolvable at creation: let through, checked at every delivery

    async def resolves_to_loopback(*args: object, **kwargs: object) -> list[Any]:
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", 0))]

    monkeypatch.setattr(loop, "getaddrinfo", resolves_to_loopback)
    receiver = Receiver(secret=response.json()["secret"])
    policy = DeliveryPolicy(max_attempts=2, first_delay=0.0, allow_private=False)
    deliverer = Deliverer(service.db, policy, http_client=httpx.AsyncClient(transport=httpx.MockTransport(receiver)))
    new_mail(service, deliverer)
    await deliverer.deliver_due()
    assert receiver.received == []
    [delivery] = service.db.deliveries(response.json()["id"])
    assert "refused" in delivery["last_error"]


@pytest.mark.parametrize(
    "body",
    [
        {"url": "ftp://h.example/x", "events": ["message.created"]},
        {"url": "not a url", "events": ["message.created"]},
        {"url": "https://h.example/x", "events": ["message.read"]},
        {"url": "https://h.example/x", "events": []},
        {"url": "https://h.example/x"},
        {"events": ["message.created"]},
    ],
)
async def test_invalid_webhook_bodies_are_422(service: Service, body: dict[str, Any]) -> None:
    transport = httpx.ASGITransport(app=service.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://s.test") as http:
        response = await http.post("/v1/webhooks", json=body, headers=service.alice.headers)
    assert response.status_code == 422
    assert response.headers["content-type"].startswith("application/problem+json")


def test_live_traffic_reaches_a_real_receiver_over_loopback() -> None:
    """End to end on 127.0.0.1: a live service delivers a signed message.created to a receiver it reaches."""
    events: list[dict[str, Any]] = []
    secret_box: dict[str, str] = {}

    async def receive(request: Request) -> Response:
        body = await request.body()
        if "secret" in secret_box:
            try:
                events.append(Webhook(secret_box["secret"]).verify(body, dict(request.headers)))
            except WebhookVerificationError:
                return Response(status_code=400)
        return Response(status_code=204)

    receiver = start_in_thread(Starlette(routes=[Route("/hook", receive, methods=["POST"])]))
    db = Database(":memory:")
    account = db.ensure_account("demo")
    populate(db, account, threads=5, contacts=5, seed=3)
    token = db.create_token(account)
    settings = ServerSettings(
        allow_private_webhooks=True,
        delivery=DeliveryPolicy(first_delay=0.05, max_attempts=3),
        background=[live_traffic(0.1, seed=1)],
    )
    service = start_in_thread(create_app(db, settings), db=db)
    try:

        async def subscribe_with_client() -> str:
            async with PigeonClient(service.base_url, token) as client:
                hook = await client.webhooks.create(url=f"{receiver.base_url}/hook", events=["message.created"])
            assert hook.secret is not None
            return hook.secret

        secret_box["secret"] = asyncio.run(subscribe_with_client())
        deadline = time.monotonic() + 15
        while not events and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        service.stop()
        receiver.stop()
        db.close()
    assert events, "no verified event arrived"
    assert events[0]["type"] == "message.created"
    assert json.dumps(events[0]["data"]["message"])
