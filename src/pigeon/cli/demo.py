"""``pigeon demo``: the reference service on demo mail and the app on it; nothing is kept afterwards.

The service runs in a process of its own (``pigeon_service.demo_process``), started first, so that its imports
and its mail are made on another core while this process imports the app and draws its first frame. The app's
first requests wait in the socket bound here until the service answers. That process gets no terminal (its
output goes to a private temporary file, of which one line is shown if it fails) and none of Pigeon's secrets,
and it stops when this one closes its stdin, or dies. Where a child cannot be handed a socket (not POSIX), the
service runs in a thread of this process instead.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field, replace
from typing import IO, TextIO

from pigeon.children import child_environment
from pigeon.cli.common import config_of
from pigeon.cli.output import EXIT_OK, EXIT_SERVICE, UsageError, fail
from pigeon.cli.serve import SERVICE_PACKAGE, reference_service

STOP_WAIT = 10.0  # seconds the service has to stop once told (it finishes the answers under way)


@dataclass
class DemoProcess:
    """The demo's service, running in a child process (the leader of its own process group)."""

    process: subprocess.Popen[bytes]
    base_url: str
    token: str = field(repr=False)
    output: IO[bytes] = field(repr=False)
    failure: str = ""

    def stop(self) -> str:
        """Stop the service; returns what it said went wrong if it ended by itself (its last line), "" if it
        stopped as asked."""
        if self.output.closed:  # (stopped already)
            return self.failure
        ended = self.process.poll()  # (before this asked: it failed)
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()  # the service's cue to stop (and its mail process's)
        try:
            self.process.wait(STOP_WAIT)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                os.killpg(self.process.pid, signal.SIGKILL)  # the service and its mail process
            self.process.wait()
        if ended is not None and ended != 0:
            self.output.seek(0)
            said = self.output.read().decode(errors="replace").strip().splitlines()
            self.failure = said[-1] if said else f"it ended with exit code {ended}"
        self.output.close()
        return self.failure


def check_service(command: str) -> None:
    """The service package and its libraries are importable, without importing them (a missing one is one line)."""
    with reference_service(command):
        from pigeon_service import LIBRARIES  # (the package alone: a few names, no library)

        for library in LIBRARIES:
            if importlib.util.find_spec(library) is None:
                raise ModuleNotFoundError(name=library)


def start_service(threads: int, *, live: bool) -> DemoProcess:
    """Start the demo's service; it answers once its mail is made (requests until then wait for it)."""
    with reference_service("pigeon demo"):
        from pigeon_service import new_token

    token = new_token()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen(128)
        port = listening.getsockname()[1]
        output = tempfile.TemporaryFile()  # noqa: SIM115 - the DemoProcess closes it (private, gone once closed)
        try:
            process = subprocess.Popen(  # noqa: S603 - this interpreter, a fixed module
                # -P: nothing from the folder the user is in is imported in the service's place
                [sys.executable, "-P", "-m", f"{SERVICE_PACKAGE}.demo_process"],
                stdin=subprocess.PIPE,
                stdout=output,
                stderr=output,
                pass_fds=(listening.fileno(),),
                env=child_environment(),
                start_new_session=True,  # never the terminal's signals: it stops when told, through its stdin
            )
        except OSError as exc:
            output.close()
            raise UsageError(f"pigeon demo could not start its service: {exc}") from None
        demo = DemoProcess(process, f"http://127.0.0.1:{port}", token, output)
        request = {"fd": listening.fileno(), "token": token, "threads": threads, "live": live}
        try:
            assert process.stdin is not None
            process.stdin.write(json.dumps(request).encode() + b"\n")
            process.stdin.flush()
        except OSError:  # it ended at once: what it said is the reason
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(STOP_WAIT)
            raise UsageError(f"pigeon demo could not start its service: {demo.stop() or 'it ended'}") from None
    # (the socket is the child's alone now: if it dies, the app's requests are refused, not left waiting)
    return demo


class DemoThread:
    """The demo's service in a thread of this process, where a child cannot be handed a socket (not POSIX): the
    first frame then waits for the service, as it always did there."""

    def __init__(self, threads: int, *, live: bool) -> None:
        with reference_service("pigeon demo"):
            from pigeon_service.run import start_demo

        self._demo = start_demo(threads=threads, live=live)
        self.base_url = self._demo.base_url
        self.token = self._demo.token

    def stop(self) -> str:
        self._demo.stop()
        return ""


def start(threads: int, *, live: bool, own_process: bool = os.name == "posix") -> DemoProcess | DemoThread:
    """The demo's service: in processes of its own where the system allows it (see the module)."""
    return start_service(threads, live=live) if own_process else DemoThread(threads, live=live)


def cmd_demo(args: argparse.Namespace, out: TextIO) -> int:
    """Start the reference service on demo mail and open the app on it; nothing is kept afterwards."""
    check_service("pigeon demo")
    if args.serve_only:
        return _serve_only(args, out)
    demo = start(args.threads, live=not args.no_live)
    try:
        gc.disable()  # until the first frame: see pigeon.tui.memory.freeze_start_up
        from pigeon.core.mail import MailStore
        from pigeon.tui.app import make_app

        config = replace(config_of(args), base_url=demo.base_url, base_url_source="pigeon demo")
        throwaway = MailStore(":memory:")  # the demo never touches the user's store, nor their settings
        make_app(
            config,
            token=demo.token,
            remember_token=False,
            save_settings=False,
            live=not args.no_live,
            poll_interval=5,
            store=throwaway,
        ).run()
    finally:
        failed = demo.stop()
    return fail(f"the demo service stopped: {failed}", EXIT_SERVICE) if failed else EXIT_OK


def _serve_only(args: argparse.Namespace, out: TextIO) -> int:
    """The demo's service in this process, its address and token printed, until Ctrl-C."""
    with reference_service("pigeon demo"):
        from pigeon_service.run import start_demo

    demo = start_demo(threads=args.threads, live=not args.no_live)
    try:
        out.write(
            f"Pigeon demo service on {demo.base_url} ({args.threads} threads of demo mail).\n"
            f"Demo token (throwaway, valid until you stop): {demo.token}\n"
            "Press Ctrl-C to stop.\n"
        )
        out.flush()
        while demo.service.thread.is_alive():
            demo.service.thread.join(0.5)
        return EXIT_OK
    finally:
        demo.stop()
