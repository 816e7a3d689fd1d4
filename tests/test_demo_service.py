"""`pigeon demo`'s service in a process of its own: it answers the requests made before it was ready, gets no
terminal and none of Pigeon's secrets, stops when told (or when Pigeon goes), and says in one line what went wrong."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from pigeon.cli.demo import DemoProcess, start_service


@pytest.fixture
def demo(monkeypatch: pytest.MonkeyPatch) -> Iterator[DemoProcess]:
    monkeypatch.setenv("PIGEON_TOKEN", "pgn_the_users_own")  # Pigeon's secret, to be kept from the child
    started = start_service(3, live=False)
    try:
        yield started
    finally:
        started.stop()


def threads(demo: DemoProcess) -> httpx.Response:
    return httpx.get(f"{demo.base_url}/v1/threads", headers={"Authorization": f"Bearer {demo.token}"}, timeout=60)


def test_a_request_made_at_once_waits_for_the_service_and_gets_the_demo_mail(demo: DemoProcess) -> None:
    answer = threads(demo)  # (made while the service is still importing: queued at the socket, never refused)
    assert answer.status_code == 200
    assert len(answer.json()["threads"]) == 3
    wrong = httpx.get(f"{demo.base_url}/v1/threads", headers={"Authorization": "Bearer pgn_not_it"}, timeout=60)
    assert wrong.status_code == 401


def test_the_service_has_no_terminal_and_none_of_pigeons_secrets(demo: DemoProcess) -> None:
    assert threads(demo).status_code == 200
    pid = demo.process.pid
    environment = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    assert not any(entry.startswith(b"PIGEON_TOKEN=") for entry in environment)
    for fd in (0, 1, 2):
        target = os.readlink(f"/proc/{pid}/fd/{fd}")
        assert not target.startswith(("/dev/pts", "/dev/tty")), target
    assert os.getsid(pid) == pid  # a session of its own: the terminal's signals never reach it


def test_it_stops_when_pigeon_closes_its_end_and_the_port_is_let_go(demo: DemoProcess) -> None:
    assert threads(demo).status_code == 200
    assert demo.stop() == ""
    assert demo.process.returncode == 0
    with pytest.raises(httpx.ConnectError):
        threads(demo)


def test_a_service_that_cannot_start_says_why_in_one_line() -> None:
    output = tempfile.TemporaryFile()  # noqa: SIM115 - the DemoProcess closes it
    process = subprocess.Popen(  # (this interpreter, the module pigeon demo starts)
        [sys.executable, "-m", "pigeon_service.demo_process"], stdin=subprocess.PIPE, stdout=output, stderr=output
    )
    assert process.stdin is not None
    process.stdin.write(b'{"fd": 0}\n')  # not what pigeon demo writes
    process.stdin.flush()
    failed = DemoProcess(process, "http://127.0.0.1:9", "pgn_x", output)
    assert failed.stop() == "ValueError: the request is not the one pigeon demo writes"
    assert process.returncode == 1
    assert failed.stop() == "ValueError: the request is not the one pigeon demo writes"  # (asked again)


def test_the_mail_made_in_one_process_is_the_same_mail_in_the_other() -> None:
    from pigeon_service.db import Database
    from pigeon_service.demo_mail import demo_mailbox

    made = demo_mailbox(threads=4)
    handed = Database(":memory:")
    handed.load(made.dump())  # (what demo_mailer writes and demo_process reads)
    (account,) = made.account_ids()
    assert handed.account_ids() == [account]
    sent, _ = made.list_threads(account, page_size=10, page_token=None)
    received, _ = handed.list_threads(account, page_size=10, page_token=None)
    assert received == sent
    assert len(received) == 4
    token = handed.create_token(account, "pgn_made_by_the_client")  # (writable once loaded)
    assert handed.account_for_token(token) == account
    made.close()
    handed.close()
