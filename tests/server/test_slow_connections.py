"""`pigeon serve` against slow connections: headers have a time limit, open connections a cap, and an honest
client is still answered. Loopback only."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import select
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from pigeon.cli import main
from pigeon_service.app import ServerSettings, create_app
from pigeon_service.connections import ConnectionLimits
from pigeon_service.db import Database
from pigeon_service.run import start_in_thread

SLOW_START = b"GET /v1/inboxes HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: "


async def ending(reader: asyncio.StreamReader) -> bytes:
    """What the service sent before it closed the connection (reset counts as closed)."""
    try:
        return await reader.read()
    except ConnectionError:
        return b""


async def test_slow_headers_are_cut_off_and_open_connections_are_capped() -> None:
    db = Database(":memory:")
    token = db.create_token(db.ensure_account("alice"))
    limits = ConnectionLimits(max_connections=20, header_timeout=1.0)
    app = create_app(db, ServerSettings(deliver_webhooks=False))
    with start_in_thread(app, db=db, limits=limits) as service:
        port = int(service.base_url.rsplit(":", 1)[1])
        slow = [await asyncio.open_connection("127.0.0.1", port) for _ in range(60)]
        for _reader, writer in slow:
            writer.write(SLOW_START)

        async def trickle() -> None:  # a header byte from every slow client, again and again
            while True:
                for _reader, writer in slow:
                    if not writer.is_closing():
                        with contextlib.suppress(ConnectionError):
                            writer.write(b"a")
                await asyncio.sleep(0.1)

        trickling = asyncio.create_task(trickle())
        try:
            async with httpx.AsyncClient(base_url=service.base_url, timeout=10) as http:
                honest = await http.get("/v1/inboxes", headers={"Authorization": f"Bearer {token}"})
            assert honest.status_code == 200
            async with asyncio.timeout(10):  # bounded: without a header time limit they are held for good
                endings = [await ending(reader) for reader, _writer in slow]
        finally:
            trickling.cancel()
            for _reader, writer in slow:
                writer.close()
    timed_out = [e for e in endings if e.startswith(b"HTTP/1.1 408")]
    refused = [e for e in endings if e.startswith(b"HTTP/1.1 503")]
    assert 0 < len(timed_out) <= limits.max_connections  # held at most the cap, then cut off
    assert len(timed_out) + len(refused) + endings.count(b"") == len(slow)  # the rest closed or refused at once
    db.close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def tight_service(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """A real `pigeon serve` on 127.0.0.1 in a process allowed 200 file descriptors; its URL and a token."""
    path = str(tmp_path / "service.sqlite3")
    out = io.StringIO()
    assert main(["serve", "token", "create", "--db", path, "--account", "alice"], out=out) == 0
    port = free_port()
    command = [
        sys.executable,
        "-c",
        "import resource; hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1];"
        " resource.setrlimit(resource.RLIMIT_NOFILE, (200, hard));"
        " from pigeon.cli import main; raise SystemExit(main())",
    ]
    process = subprocess.Popen(  # noqa: S603  (this interpreter, fixed arguments)
        [*command, "serve", "--db", path, "--host", "127.0.0.1", "--port", str(port)],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        env={k: v for k, v in os.environ.items() if k != "PIGEON_TOKEN"},
    )
    try:
        assert process.stderr is not None
        deadline = time.monotonic() + 60
        started = b""
        while b"Uvicorn running on" not in started:  # its start-up line: the service listens
            assert process.poll() is None, started
            assert time.monotonic() < deadline, started
            if select.select([process.stderr], [], [], 1.0)[0]:
                started += os.read(process.stderr.fileno(), 65536)
        yield f"http://127.0.0.1:{port}", out.getvalue().strip()
    finally:
        process.terminate()
        process.wait(30)


def test_pigeon_serve_answers_an_honest_client_past_more_slow_connections_than_it_has_descriptors(
    tight_service: tuple[str, str],
) -> None:
    base_url, token = tight_service
    port = int(base_url.rsplit(":", 1)[1])
    slow: list[socket.socket] = []
    try:
        for _ in range(300):
            connection = socket.create_connection(("127.0.0.1", port), timeout=5)
            with contextlib.suppress(OSError):
                connection.sendall(SLOW_START)
            slow.append(connection)
        answer = httpx.get(f"{base_url}/v1/inboxes", headers={"Authorization": f"Bearer {token}"}, timeout=20)
        assert answer.status_code == 200
    finally:
        for connection in slow:
            connection.close()


async def test_a_body_trickled_past_its_time_is_answered_408_and_the_connection_closed() -> None:
    db = Database(":memory:")
    token = db.create_token(db.ensure_account("alice"))
    app = create_app(db, ServerSettings(deliver_webhooks=False, body_timeout=0.5))
    with start_in_thread(app, db=db) as service:
        port = int(service.base_url.rsplit(":", 1)[1])
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(
            b"POST /v1/inboxes HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
            b"authorization: Bearer " + token.encode() + b"\r\ncontent-length: 100000\r\n\r\n{"
        )

        async def trickle() -> None:  # a body byte now and then, never the whole body
            with contextlib.suppress(ConnectionError):
                while not writer.is_closing():
                    writer.write(b" ")
                    await writer.drain()
                    await asyncio.sleep(0.05)

        trickling = asyncio.create_task(trickle())
        try:
            async with asyncio.timeout(10):  # bounded: without a body time limit no answer ever comes
                answer = await ending(reader)
        finally:
            trickling.cancel()
            writer.close()
    assert answer.startswith(b"HTTP/1.1 408")
    assert b"application/problem+json" in answer
    assert db.list_inboxes(db.account_ids()[0]) == []
    db.close()
