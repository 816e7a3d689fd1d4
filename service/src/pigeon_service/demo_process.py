"""The demo's service in a process of its own: ``pigeon demo`` draws its first frame while this one imports its
web framework and has the demo mail made beside it (``demo_mailer``, a process of its own too: the cores work
side by side, where threads would take turns).

The client starts ``python -m pigeon_service.demo_process`` with a listening socket it bound (its first requests
wait in the socket's queue until the service answers, never refused) and writes one JSON line to its stdin: the
socket's descriptor, the token the client will use, how many threads of mail, whether new mail keeps coming. The
service stops when its stdin closes: the client quit, or died. Anything that goes wrong is one line on stderr.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from typing import Any


def _request(line: str) -> dict[str, Any]:
    request = json.loads(line)
    if not isinstance(request, dict) or set(request) != {"fd", "token", "threads", "live"}:
        raise ValueError("the request is not the one pigeon demo writes")
    return request


def main() -> int:
    try:
        request = _request(sys.stdin.readline())
        listening = socket.socket(fileno=int(request["fd"]))
        mailer = subprocess.Popen(  # noqa: S603 - this interpreter, a fixed module
            [sys.executable, "-m", "pigeon_service.demo_mailer", str(int(request["threads"]))],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
        )
        # Imported while the mail is made (the framework is most of this process's start).
        from pigeon_service.app import ServerSettings, create_app
        from pigeon_service.db import Database
        from pigeon_service.demo_traffic import live_traffic
        from pigeon_service.run import quiet_server

        mail, _ = mailer.communicate()
        if mailer.returncode != 0:
            raise RuntimeError("the demo mail could not be made")
        db = Database(":memory:")
        db.load(mail)
        db.create_token(db.account_ids()[0], str(request["token"]))
        settings = ServerSettings(
            allow_loopback_webhooks=True,  # the app's receiver listens on 127.0.0.1
            background=[live_traffic(5.0)] if request["live"] else [],
        )
        server = quiet_server(create_app(db, settings))

        def stop_with_the_client() -> None:
            sys.stdin.read()  # returns at end of file: the client closed its end
            server.should_exit = True

        threading.Thread(target=stop_with_the_client, name="client-watch", daemon=True).start()
        server.run(sockets=[listening])
    except Exception as exc:  # one line for the client to show, never a traceback on its terminal
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
