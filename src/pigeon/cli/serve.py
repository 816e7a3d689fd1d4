"""Commands that run something: the reference service, its tokens, the demo, and the app itself."""

from __future__ import annotations

import argparse
import contextlib
import gc
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from pigeon import credentials, locations
from pigeon.cli.common import config_of, open_store, resolve_token
from pigeon.cli.output import EXIT_OK, UsageError

SERVICE_PACKAGE = "pigeon_service"


@contextlib.contextmanager
def reference_service(command: str) -> Iterator[None]:
    """Where the client imports the reference service, a package of its own that a client installed alone lacks:
    its absence is one line saying how to get it."""
    try:
        yield
    except ModuleNotFoundError as exc:
        missing = exc.name or "?"
        install = "install both with `uv tool install . --with ./service` from a clone of Pigeon"
        if missing.split(".")[0] != SERVICE_PACKAGE:
            raise UsageError(f"{command} needs {missing!r}, which the reference service uses; {install}.") from None
        raise UsageError(
            f"{command} needs the reference service (the pigeon-service package), not installed here: "
            f"from a clone of Pigeon, `uv run {command}`; or {install}."
        ) from None


def _service_db_path(args: argparse.Namespace) -> str:
    return args.db or str(locations.data_dir() / "service.sqlite3")


def _open_service_db(command: str, path: str, **kwargs: Any) -> Any:
    import sqlite3

    with reference_service(command):
        from pigeon_service.db import SchemaTooNew
        from pigeon_service.run import open_database

    try:
        return open_database(path, **kwargs)
    except (sqlite3.Error, SchemaTooNew, OSError) as exc:
        raise UsageError(f"Cannot open the service database {path}: {exc}") from None


def cmd_serve(args: argparse.Namespace, out: TextIO) -> int:
    with reference_service("pigeon serve"):
        from pigeon_service.app import ServerSettings
        from pigeon_service.demo_traffic import live_traffic
        from pigeon_service.run import serve
        from pigeon_service.webhook_targets import is_loopback_host

    path = _service_db_path(args)
    db = _open_service_db("pigeon serve", path, demo_data=args.demo_data, threads=args.threads)
    if not db.account_ids():
        sys.stderr.write(
            f"No accounts yet. Create one and its token with: pigeon serve token create --db {path} --account NAME\n"
        )
    settings = ServerSettings(
        allow_private_webhooks=args.allow_private_webhooks,
        # Callers of a service on loopback are on this machine already (unless a proxy says otherwise).
        allow_loopback_webhooks=is_loopback_host(args.host) and not args.no_loopback_webhooks,
        rate_limit_per_minute=args.rate_limit,
        background=[live_traffic(args.live_interval)] if args.live else [],
    )
    serve(db, settings, host=args.host, port=args.port)
    return EXIT_OK


def cmd_token_create(args: argparse.Namespace, out: TextIO) -> int:
    db = _open_service_db("pigeon serve token create", _service_db_path(args))
    token = db.create_token(db.ensure_account(args.account))
    out.write(token + "\n")
    return EXIT_OK


def cmd_tui(args: argparse.Namespace, out: TextIO) -> int:
    """Open the app for the active profile; without a token it opens on the login screen."""
    gc.disable()  # until the first frame: see pigeon.tui.memory.freeze_start_up
    from pigeon.tui.app import make_app

    config = config_of(args, creating=True)  # the app's login screen makes a new profile
    try:
        token, _ = resolve_token(config)
        problem = ""
    except credentials.CredentialsError as exc:  # no keyring: log in for this session, and say why
        token, problem = None, str(exc)
    store = open_store(config)  # a store that cannot be opened is a one-line error, before any screen
    make_app(config, token=token, remember_token=not credentials.env_token(), login_message=problem, store=store).run()
    return EXIT_OK
