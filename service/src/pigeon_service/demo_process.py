"""The demo's service in a process of its own: ``pigeon demo`` draws its first frame while this one imports its
web framework and has the demo mail made beside it (``demo_mailer``, a process of its own too: the cores work
side by side, where threads would take turns).

The client starts ``python -m pigeon_service.demo_process`` with a listening socket it bound (its first requests
wait in the socket's queue until the service answers, never refused) and writes one JSON line to its stdin: the
socket's descriptor, the token the client will use, how many threads of mail, whether new mail keeps coming. The
service stops when its stdin closes: the client quit, or died; the mail process with it, if it is still at work.
Anything that goes wrong is one line on stderr.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any


def _request(line: str) -> dict[str, Any]:
    request = json.loads(line)
    if not isinstance(request, dict) or set(request) != {"fd", "token", "threads", "live"}:
        raise ValueError("the request is not the one pigeon demo writes")
    return request


class _Client:
    """Watches stdin: at its end (the client quit, or died) whatever is under way is stopped."""

    def __init__(self) -> None:
        self.gone = threading.Event()
        self._stops: list[Callable[[], None]] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._watch, name="client-watch", daemon=True).start()

    def _watch(self) -> None:
        sys.stdin.read()  # returns at end of file
        with self._lock:
            self.gone.set()
            stops = list(self._stops)
        for stop in stops:
            stop()

    def on_gone(self, stop: Callable[[], None]) -> None:
        """Call ``stop`` when the client goes (at once if it has gone)."""
        with self._lock:
            self._stops.append(stop)
            gone = self.gone.is_set()
        if gone:
            stop()


def _mail(threads: int, client: _Client) -> bytes:
    """The demo's mail, made by the mail process (stopped if the client goes meanwhile)."""
    mailer = subprocess.Popen(  # noqa: S603 - this interpreter, a fixed module
        [sys.executable, "-P", "-m", "pigeon_service.demo_mailer", str(threads)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    client.on_gone(mailer.kill)
    try:
        # Imported while the mail is made (the framework is most of this process's start).
        import pigeon_service.run  # noqa: F401  (the web framework, the server, the database)

        mail, said = mailer.communicate()
    finally:
        if mailer.poll() is None:
            mailer.kill()
            mailer.wait()
    if mailer.returncode != 0 and not client.gone.is_set():
        lines = said.decode(errors="replace").strip().splitlines()
        raise RuntimeError(f"the demo mail could not be made: {lines[-1] if lines else mailer.returncode}")
    return mail


def main() -> int:
    try:
        request = _request(sys.stdin.readline())
        listening = socket.socket(fileno=int(request["fd"]))
        client = _Client()
        mail = _mail(int(request["threads"]), client)
        if client.gone.is_set():
            return 0
        from pigeon_service.app import create_app
        from pigeon_service.db import Database
        from pigeon_service.run import demo_settings, quiet_server

        db = Database(":memory:")
        db.load(mail)
        db.create_token(db.account_ids()[0], str(request["token"]))
        server = quiet_server(create_app(db, demo_settings(live=bool(request["live"]))))

        def stop() -> None:
            server.should_exit = True

        client.on_gone(stop)
        server.run(sockets=[listening])
    except Exception as exc:  # one line for the client to show, never a traceback on its terminal
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
