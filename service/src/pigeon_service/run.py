"""Running the service: in the foreground (``pigeon serve``) or in a background thread (``pigeon demo``, tests)."""

from __future__ import annotations

import logging
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import uvicorn
from starlette.types import ASGIApp

from pigeon_service.app import ServerSettings, create_app
from pigeon_service.connections import ConnectionLimits, guarded_http
from pigeon_service.db import Database
from pigeon_service.demo_mail import DEFAULT_THREADS, demo_database, ensure_demo_mail
from pigeon_service.demo_traffic import live_traffic

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8025
STARTUP_TIMEOUT = 30.0
DEMO_LIVE_INTERVAL = 12.0  # seconds between the demo's new messages: mail is seen to come, and its notes seldom meet


def serve(
    db: Database,
    settings: ServerSettings,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    limits: ConnectionLimits | None = None,
) -> None:
    """Serve until interrupted, logging one line per request (the token travels in a header, never logged)."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    limits = limits or ConnectionLimits()
    uvicorn.run(
        create_app(db, settings),
        host=host,
        port=port,
        log_level="info",
        access_log=True,
        lifespan="on",
        http=guarded_http(limits),
        timeout_keep_alive=limits.keep_alive,
    )


def quiet_server(app: ASGIApp, limits: ConnectionLimits | None = None) -> uvicorn.Server:
    """A server for ``app`` that logs only warnings: one the user does not watch (the demo's, a test's)."""
    limits = limits or ConnectionLimits()
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="on",
        http=guarded_http(limits),
        timeout_keep_alive=limits.keep_alive,
    )
    return uvicorn.Server(config)


@dataclass
class ServiceThread:
    """The service running on its own event loop in a background thread."""

    server: uvicorn.Server
    thread: threading.Thread
    base_url: str
    db: Database | None = None

    def stop(self, timeout: float = 10.0) -> None:
        self.server.should_exit = True
        self.thread.join(timeout)

    def __enter__(self) -> ServiceThread:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def start_in_thread(
    app: ASGIApp,
    *,
    db: Database | None = None,
    host: str = DEFAULT_HOST,
    port: int = 0,
    limits: ConnectionLimits | None = None,
) -> ServiceThread:
    """Start an ASGI ``app`` on ``host`` (port 0: a free one) in a daemon thread; return once it accepts requests."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    bound_port = sock.getsockname()[1]
    server = quiet_server(app, limits)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="pigeon-service", daemon=True)
    thread.start()
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            raise RuntimeError("the service did not start")
        time.sleep(0.01)
    return ServiceThread(server, thread, f"http://{host}:{bound_port}", db)


@dataclass(frozen=True)
class DemoService:
    service: ServiceThread
    token: str = field(repr=False)

    @property
    def base_url(self) -> str:
        return self.service.base_url

    def stop(self) -> None:
        self.service.stop()
        if self.service.db is not None:
            self.service.db.close()


def start_demo(
    *,
    threads: int = DEFAULT_THREADS,
    live: bool = True,
    live_interval: float = DEMO_LIVE_INTERVAL,
    seed: int | None = None,
) -> DemoService:
    """The demo's service in a thread of this process (``pigeon demo --serve-only``, tests): a fresh in-memory
    service with demo mail and a new token, on 127.0.0.1. Nothing is written to disk; everything is gone after
    :meth:`DemoService.stop`."""
    db, token = demo_database(threads=threads, seed=seed)
    settings = demo_settings(live=live, live_interval=live_interval, seed=seed)
    return DemoService(start_in_thread(create_app(db, settings), db=db), token)


def demo_settings(*, live: bool, live_interval: float = DEMO_LIVE_INTERVAL, seed: int | None = None) -> ServerSettings:
    """The demo service's settings: the app's receiver on 127.0.0.1 allowed, and new mail every few seconds."""
    return ServerSettings(
        allow_loopback_webhooks=True,  # the demo's own receiver listens on 127.0.0.1
        background=[live_traffic(live_interval, seed=seed)] if live else [],
    )


def open_database(path: Path | str, *, demo_data: bool = False, threads: int = DEFAULT_THREADS) -> Database:
    """The service's database at ``path``, with demo mail for every account that has none when asked."""
    db = Database(path)
    if demo_data:
        ensure_demo_mail(db, threads=threads)
    return db
