"""`pigeon demo`'s service in a process of its own: it answers the requests made before it was ready, gets no
terminal and none of Pigeon's secrets, stops when told (or when Pigeon goes), and says in one line what went wrong."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from pigeon.cli.demo import DemoProcess, DemoThread, start, start_service


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
    assert demo.token.encode() not in Path(f"/proc/{pid}/cmdline").read_bytes()  # (given on stdin, never in argv)
    assert demo.token not in repr(demo)
    stdin, stdout, stderr = (os.readlink(f"/proc/{pid}/fd/{fd}") for fd in (0, 1, 2))
    assert stdin.startswith("pipe:")  # Pigeon's end: its cue to stop
    assert stdout == stderr == os.readlink(f"/proc/self/fd/{demo.output.fileno()}")  # the private output file
    assert os.getsid(pid) == pid  # a session of its own: the terminal's signals never reach it


def test_pigeon_quitting_while_the_mail_is_made_stops_the_service_and_its_mail_process() -> None:
    demo = start_service(20_000, live=False)  # (its mail takes seconds to make)
    assert demo.stop() == ""  # a quit, not a failure
    assert demo.process.returncode == 0
    with pytest.raises(ProcessLookupError):
        os.killpg(demo.process.pid, 0)  # nothing is left of its process group: the mail process went too


def test_the_service_goes_when_pigeon_dies() -> None:
    pigeon = subprocess.Popen(  # a Pigeon that starts the demo's service and then is killed
        [
            sys.executable,
            "-c",
            "from pigeon.cli.demo import start_service; import sys, time\n"
            "demo = start_service(3, live=False); print(demo.process.pid, flush=True); time.sleep(600)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert pigeon.stdout is not None
    service = int(pigeon.stdout.readline())
    pigeon.kill()
    pigeon.wait()
    deadline = time.monotonic() + 60
    while _alive(service):  # (its stdin's end is closed with Pigeon: it stops by itself)
        assert time.monotonic() < deadline, "the service outlived Pigeon"
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a process that ended but was not waited for, whose parent died, counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


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
    process.wait(60)  # (it ends by itself: a failure, unlike a stop Pigeon asked for)
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


def test_where_a_child_cannot_be_handed_a_socket_the_service_runs_in_a_thread() -> None:
    demo = start(3, live=False, own_process=False)  # (as on a system that is not POSIX)
    assert isinstance(demo, DemoThread)
    try:
        answer = httpx.get(f"{demo.base_url}/v1/threads", headers={"Authorization": f"Bearer {demo.token}"}, timeout=60)
        assert answer.status_code == 200
        assert len(answer.json()["threads"]) == 3
        assert demo.token not in repr(demo)
    finally:
        assert demo.stop() == ""


def test_the_demo_services_process_starts_without_what_it_needs_only_later() -> None:
    """The service's process imports its framework while the demo mail is made: not the webhooks' HTTP client
    (made at the first delivery), nor the library that makes up people (the mail process's alone)."""
    probe = (
        "import sys\nimport pigeon_service.run\n"
        "loaded = {name for name, module in sys.modules.items() if module is not None}\n"
        "print(sorted({name for name in loaded if name.split('.')[0] in {'httpx', 'faker'}}))\n"
    )
    done = subprocess.run(  # noqa: S603  (this interpreter, a fixed script)
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
