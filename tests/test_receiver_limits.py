"""The live receiver holds against another local process: a crowd of half-sent requests neither uses up Pigeon's
file descriptors nor keeps an honest delivery out, and a request that sends nothing is closed in time."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from pigeon.api import receiver as receiver_module
from pigeon.api.receiver import MAX_CONNECTIONS, WebhookReceiver
from pigeon.models.events import WebhookEvent
from tests.tui.test_live import EVENT, SECRET, signed

CHILD = f"""
import asyncio, json, os, resource, sys
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
from pigeon.api.receiver import WebhookReceiver

async def main():
    got = []
    receiver = WebhookReceiver(got.append)
    receiver.secret = {SECRET!r}
    await receiver.start()
    print(receiver.url, flush=True)
    loop = asyncio.get_running_loop()
    while command := (await loop.run_in_executor(None, sys.stdin.readline)).strip():
        if command == "stats":
            said = {{"connections": receiver.connections, "dropped": receiver.dropped, "received": len(got)}}
        else:
            try:
                files = [open(os.devnull) for _ in range(64)]
                said = {{"opened": len(files)}}
            except OSError as exc:
                said = {{"opened": 0, "error": str(exc)}}
        print(json.dumps(said), flush=True)

asyncio.run(main())
"""
HALF_OPEN = 253


class Child:
    def __init__(self) -> None:
        self.process = subprocess.Popen(  # noqa: S603
            [sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().strip()

    def ask(self, command: str) -> dict[str, Any]:
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())  # type: ignore[no-any-return]


@pytest.fixture
def child() -> Iterator[Child]:
    child = Child()
    yield child
    child.process.kill()
    child.process.wait()


def test_half_sent_requests_leave_the_process_its_files_and_let_a_delivery_in(child: Child) -> None:
    host, port = "127.0.0.1", int(child.url.split(":")[2].split("/")[0])
    path = "/" + child.url.split("/", 3)[3]
    crowd = []
    try:
        for _ in range(HALF_OPEN):
            peer = socket.create_connection((host, port))
            peer.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Le".encode())
            crowd.append(peer)
        deadline = time.monotonic() + 30
        while (stats := child.ask("stats"))["connections"] + stats["dropped"] < HALF_OPEN:
            assert time.monotonic() < deadline, stats
        assert stats["connections"] <= MAX_CONNECTIONS
        assert child.ask("files") == {"opened": 64}
        body, headers = signed(EVENT)
        assert httpx.post(child.url, content=body, headers=headers, timeout=10).status_code == 204
        assert child.ask("stats")["received"] == 1
    finally:
        for peer in crowd:
            peer.close()


async def test_a_delivery_gets_in_when_every_connection_is_taken_by_an_unfinished_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(receiver_module, "MAX_CONNECTIONS", 4)
    received: list[WebhookEvent] = []
    receiver = WebhookReceiver(received.append)
    await receiver.start()
    receiver.secret = SECRET
    crowd = []
    try:
        for _ in range(6):
            _, writer = await asyncio.open_connection("127.0.0.1", receiver.port)
            writer.write(b"POST / HTTP/1.1\r\nHo")
            crowd.append(writer)
        for _ in range(1000):  # (until the receiver has taken every one of them in)
            if receiver.connections + receiver.dropped >= 6:
                break
            await asyncio.sleep(0.01)
        assert receiver.connections == 4
        async with httpx.AsyncClient() as http:
            body, headers = signed(EVENT)
            assert (await http.post(receiver.url, content=body, headers=headers)).status_code == 204
        assert received == [WebhookEvent.model_validate(EVENT)]
    finally:
        for writer in crowd:
            writer.close()
        await receiver.stop()


async def test_a_request_that_sends_no_headers_is_closed_in_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(receiver_module, "HEADER_TIMEOUT", 0.2)
    receiver = WebhookReceiver(lambda event: None)
    await receiver.start()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", receiver.port)
        writer.write(b"POST / HTTP/1.1\r\n")  # ...and then nothing, for longer than the whole-request limit allows
        async with asyncio.timeout(receiver_module.READ_TIMEOUT / 2):
            answer = await reader.read()
        assert answer.startswith(b"HTTP/1.1 400")
        writer.close()
    finally:
        await receiver.stop()


async def test_many_idle_connections_stay_bounded_and_do_not_starve_a_delivery(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(receiver_module, "MAX_CONNECTIONS", 4)
    received: list[WebhookEvent] = []
    receiver = WebhookReceiver(received.append)
    await receiver.start()
    receiver.secret = SECRET
    crowd = []
    try:
        for _ in range(20):  # connected, and silent
            _, writer = await asyncio.open_connection("127.0.0.1", receiver.port)
            crowd.append(writer)
        for _ in range(1000):  # (until the receiver has taken every one of them in)
            if receiver.connections + receiver.dropped >= 20:
                break
            await asyncio.sleep(0.01)
        assert receiver.connections == 4
        async with httpx.AsyncClient() as http:
            body, headers = signed(EVENT)
            assert (await http.post(receiver.url, content=body, headers=headers)).status_code == 204
        assert received == [WebhookEvent.model_validate(EVENT)]
        assert receiver.connections <= 4
    finally:
        for writer in crowd:
            writer.close()
        await receiver.stop()
