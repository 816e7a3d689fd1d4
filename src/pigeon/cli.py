"""The ``pigeon`` command.

Exit codes: 0 ok, 1 the service or the network failed, 2 a usage or local setup problem (bad arguments, bad
configuration, not logged in, no keyring). Errors are one clean line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import getpass
import json
import sys
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from pigeon import __version__, credentials, locations
from pigeon.api import InvalidInput, PigeonError
from pigeon.config import Config, ConfigError, load_config, save_profile
from pigeon.sanitize import clean_line

if TYPE_CHECKING:  # pydantic and the models load in the commands that use them: `pigeon` opens without them
    from pigeon.models import Inbox, Message, Resource, Thread, WebhookSubscription

EXIT_OK = 0
EXIT_SERVICE = 1
EXIT_USAGE = 2
CELL_LIMIT = 60


class UsageError(Exception):
    """A problem the user can fix by calling differently or setting things up (exit code 2)."""


# --- output --------------------------------------------------------------------------------------------------


def _table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain, aligned text table; every cell is cleaned of control characters and kept to one line."""
    cells = [[clean_line(c, limit=CELL_LIMIT) for c in row] for row in rows]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    return "\n".join(lines)


def _print_json(data: Any, out: TextIO) -> None:
    # ensure_ascii keeps hostile text (C1 controls, bidi overrides) escaped when a script prints it to a terminal.
    out.write(json.dumps(data, indent=2, ensure_ascii=True) + "\n")


def _wire(items: Sequence[Resource]) -> list[dict[str, Any]]:
    return [item.to_wire() for item in items]


def _when(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M") if value else ""


def _enum(value: Any) -> str:
    return str(value.value if hasattr(value, "value") else value or "")


def _sender(message: Message) -> str:
    from pigeon.store.sync import sender_label

    return sender_label(message) or (message.sender.contact_id or "" if message.sender else "")


# --- plumbing ------------------------------------------------------------------------------------------------


def _config(args: argparse.Namespace) -> Config:
    return load_config(profile=getattr(args, "profile", None), base_url=getattr(args, "base_url", None))


def _client(config: Config) -> Any:
    token, _ = credentials.resolve_token(config.profile)
    if not token:
        raise UsageError(
            f"Not logged in (profile {config.profile!r}): run `pigeon login`, or set PIGEON_TOKEN for scripts."
        )
    from pigeon.api.client import PigeonClient

    return PigeonClient(config.base_url, token)


def _run(args: argparse.Namespace, call: Callable[[Any], Awaitable[Any]]) -> Any:
    """Run one async call with a client built from the configuration, and close the client after."""
    client = _client(_config(args))

    async def go() -> Any:
        async with client:
            return await call(client)

    return asyncio.run(go())


def _json_object(text: str, what: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{what} is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise UsageError(f'{what} must be a JSON object, like \'{{"team": "ops"}}\'')
    return value


def _typed_value(text: str, enum: type[Any], prefix: str, what: str) -> dict[str, str]:
    """``TYPE:VALUE`` with TYPE a short name (``work``) or the full enum value (``EMAIL_TYPE_WORK``)."""
    kind, sep, value = text.partition(":")
    if not sep or not value:
        short = ", ".join(m.name.lower() for m in enum)
        raise UsageError(f"--{what} takes TYPE:VALUE, with TYPE one of {short}; got {text!r}")
    key = kind.strip().upper()
    names = {m.name: m.value for m in enum} | {m.value: m.value for m in enum}
    if key not in names and f"{prefix}{key}" not in names:
        short = ", ".join(m.name.lower() for m in enum)
        raise UsageError(f"--{what}: unknown type {kind!r}; use one of {short}")
    return {"type": names.get(key) or names[f"{prefix}{key}"], "value": value.strip()}


# --- commands ------------------------------------------------------------------------------------------------


def cmd_login(args: argparse.Namespace, out: TextIO) -> int:
    config = _config(args)
    base_url = args.base_url or config.base_url
    if not args.base_url and sys.stdin.isatty():
        answer = input(f"Service URL [{base_url}]: ").strip()
        base_url = answer or base_url
    if args.token_stdin:
        token = sys.stdin.readline().strip()
    else:
        try:
            token = getpass.getpass("Token (input hidden): ").strip()
        except EOFError:
            token = ""
    if not token:
        raise UsageError("No token given; nothing was stored.")
    credentials.backend()  # fail now, before asking the service, if the token could not be kept anyway

    from pigeon.api.client import PigeonClient

    async def verify() -> list[Inbox]:
        async with PigeonClient(base_url, token) as client:
            return await client.inboxes.list()

    inboxes = asyncio.run(verify())
    credentials.store_token(config.profile, token)
    save_profile(config.profile, base_url=base_url, path=config.path)
    out.write(
        f"Logged in to {base_url} as profile {config.profile!r}: {len(inboxes)} inbox(es). "
        f"Token stored in the keyring ({credentials.backend_name()}).\n"
    )
    if credentials.env_token():
        out.write("Note: PIGEON_TOKEN is set in this environment and overrides the stored token.\n")
    return EXIT_OK


def cmd_logout(args: argparse.Namespace, out: TextIO) -> int:
    config = _config(args)
    removed = credentials.delete_token(config.profile)
    out.write(
        f"Removed the token of profile {config.profile!r} from the keyring.\n"
        if removed
        else f"No token was stored for profile {config.profile!r}.\n"
    )
    if credentials.env_token():
        out.write("Note: PIGEON_TOKEN is still set in this environment.\n")
    return EXIT_OK


def cmd_status(args: argparse.Namespace, out: TextIO) -> int:
    config = _config(args)
    keyring_problem = ""
    try:
        _, source = credentials.resolve_token(config.profile)
    except credentials.CredentialsError as exc:
        source, keyring_problem = credentials.TokenSource.NONE, str(exc)
    status = {
        "profile": config.profile,
        "base_url": config.base_url,
        "base_url_from": config.base_url_source,
        "config_file": str(config.path),
        "config_file_exists": config.path.exists(),
        "token_from": source.value,
        "keyring_backend": credentials.backend_name(),
    }
    if args.json:
        _print_json(status, out)
        return EXIT_OK
    token_line = {
        credentials.TokenSource.ENVIRONMENT: "from the PIGEON_TOKEN environment variable",
        credentials.TokenSource.KEYRING: f"in the keyring ({status['keyring_backend']})",
        credentials.TokenSource.NONE: "not set: run `pigeon login`",
    }[source]
    out.write(
        f"Profile:   {config.profile}\n"
        f"Service:   {config.base_url}  ({config.base_url_source})\n"
        f"Config:    {config.path}{'' if config.path.exists() else '  (not created yet)'}\n"
        f"Token:     {token_line}\n"
    )
    if keyring_problem:
        out.write(f"Keyring:   {keyring_problem}\n")
    return EXIT_OK


def cmd_inboxes_list(args: argparse.Namespace, out: TextIO) -> int:
    inboxes: list[Inbox] = _run(args, lambda c: c.inboxes.list())
    if args.json:
        _print_json({"inboxes": _wire(inboxes)}, out)
    else:
        rows = [(i.email, i.display_name or "", _enum(i.status), i.id) for i in inboxes]
        out.write(_table(("EMAIL", "NAME", "STATUS", "ID"), rows) + "\n")
    return EXIT_OK


def cmd_inboxes_create(args: argparse.Namespace, out: TextIO) -> int:
    fields: dict[str, Any] = {"type": args.type}
    if args.email:
        fields["email"] = args.email
    if args.display_name:
        fields["display_name"] = args.display_name
    if args.metadata is not None:
        fields["metadata"] = _json_object(args.metadata, "--metadata")
    inbox: Inbox = _run(args, lambda c: c.inboxes.create(**fields))
    if args.json:
        _print_json(inbox.to_wire(), out)
    else:
        out.write(f"Created inbox {clean_line(inbox.email)} ({_enum(inbox.status)}), id {inbox.id}\n")
    return EXIT_OK


def cmd_threads_list(args: argparse.Namespace, out: TextIO) -> int:
    threads: list[Thread] = _run(args, lambda c: c.threads.list())
    if args.json:
        _print_json({"threads": _wire(threads)}, out)
    else:
        rows = [(_when(t.last_message_at), t.message_count or 0, t.subject or "", t.id) for t in threads]
        out.write(_table(("LAST MESSAGE", "MSGS", "SUBJECT", "ID"), rows) + "\n")
    return EXIT_OK


def cmd_messages_list(args: argparse.Namespace, out: TextIO) -> int:
    from pigeon.models import PAGE_SIZE_DEFAULT

    async def fetch(client: Any) -> tuple[list[Message], str | None]:
        kwargs = {
            "message_ids": args.message_id or None,
            "page_size": PAGE_SIZE_DEFAULT if args.page_size is None else args.page_size,
        }
        if args.all:
            return [m async for m in client.messages.iter(args.thread, **kwargs)], None
        page = await client.messages.list(args.thread, page_token=args.page_token, **kwargs)
        return page.items, page.next_page_token

    messages, next_token = _run(args, fetch)
    if args.json:
        data: dict[str, Any] = {"messages": _wire(messages)}
        if not args.all:
            data["next_page_token"] = next_token
        _print_json(data, out)
        return EXIT_OK
    rows = [(_when(m.created_at), _sender(m), m.subject or "", len(m.content_blocks), m.id) for m in messages]
    out.write(_table(("DATE", "FROM", "SUBJECT", "BLOCKS", "ID"), rows) + "\n")
    if next_token:
        out.write(f"More messages: --page-token {clean_line(next_token)}  (or --all)\n")
    return EXIT_OK


def cmd_contacts_update(args: argparse.Namespace, out: TextIO) -> int:
    from pigeon.models import EmailType, PhoneType, SocialProfileType

    fields: dict[str, Any] = {}
    if args.first_name is not None:
        fields["first_name"] = args.first_name
    if args.last_name is not None:
        fields["last_name"] = args.last_name
    if args.email is not None:
        values = [_typed_value(v, EmailType, "EMAIL_TYPE_", "email") for v in args.email]
        fields["emails"] = [{"type": v["type"], "email": v["value"]} for v in values]
    if args.phone is not None:
        values = [_typed_value(v, PhoneType, "PHONE_TYPE_", "phone") for v in args.phone]
        fields["phones"] = [{"type": v["type"], "phone": v["value"]} for v in values]
    if args.social is not None:
        values = [_typed_value(v, SocialProfileType, "SOCIAL_PROFILE_TYPE_", "social") for v in args.social]
        fields["social_profiles"] = [{"type": v["type"], "username": v["value"]} for v in values]
    if args.metadata is not None:
        fields["metadata"] = _json_object(args.metadata, "--metadata")
    if not fields:
        raise UsageError("Nothing to update: give at least one of --first-name, --last-name, --email, ...")
    contact = _run(args, lambda c: c.contacts.update(args.contact_id, **fields))
    if args.json:
        _print_json(contact.to_wire(), out)
    else:
        out.write(f"Updated contact {clean_line(contact.name) or contact.id}\n")
    return EXIT_OK


def cmd_webhooks_create(args: argparse.Namespace, out: TextIO) -> int:
    events = [e if e.startswith("message.") else f"message.{e}" for e in args.event]
    fields: dict[str, Any] = {"url": args.url, "events": events}
    if args.description:
        fields["description"] = args.description
    if args.metadata is not None:
        fields["metadata"] = _json_object(args.metadata, "--metadata")
    webhook: WebhookSubscription = _run(args, lambda c: c.webhooks.create(**fields))
    if args.json:
        _print_json(webhook.to_wire(), out)
        return EXIT_OK
    out.write(f"Created webhook {webhook.id} ({_enum(webhook.status)}) for {clean_line(webhook.url)}\n")
    out.write(f"Events: {', '.join(_enum(e) for e in webhook.events)}\n")
    if webhook.secret:
        out.write(f"Signing secret (shown only now, keep it safe): {clean_line(webhook.secret)}\n")
    return EXIT_OK


# --- the local store ----------------------------------------------------------------------------------------


def _store(args: argparse.Namespace) -> Any:
    import sqlite3

    from pigeon.store.mailstore import MailStore, SchemaTooNew

    config = _config(args)
    try:
        return MailStore.for_profile(config.profile)
    except (sqlite3.Error, SchemaTooNew, OSError) as exc:
        raise UsageError(f"Cannot open the local store of profile {config.profile!r}: {exc}") from None


def cmd_sync(args: argparse.Namespace, out: TextIO) -> int:
    from pigeon.store.sync import sync

    store = _store(args)
    report = _run(args, lambda client: sync(client, store))
    if args.json:
        _print_json({"threads": report.threads, "fetched": report.fetched, "messages": report.messages}, out)
    else:
        out.write(f"Synced {report.threads} threads ({report.fetched} changed, {report.messages} messages fetched).\n")
    return EXIT_OK


def _thread_json(thread: Any) -> dict[str, Any]:
    return {
        "id": thread.id,
        "inbox_id": thread.inbox_id,
        "subject": thread.subject,
        "who": thread.who,
        "last_message_at": thread.last_message_at.isoformat() if thread.last_message_at else None,
        "message_count": thread.message_count,
        "has_attachment": thread.has_attachment,
        "unread": thread.unread,
        "starred": thread.starred,
        "done": thread.done,
        "snoozed_until": thread.snoozed_until.isoformat() if thread.snoozed_until else None,
        "muted": thread.muted,
        "labels": list(thread.labels),
    }


def cmd_search(args: argparse.Namespace, out: TextIO) -> int:
    from pigeon.store.search import QueryError

    store = _store(args)
    try:
        threads = store.list(args.view, " ".join(args.query), sort=args.sort, limit=args.limit)
    except (QueryError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        _print_json({"threads": [_thread_json(t) for t in threads]}, out)
        return EXIT_OK
    if not threads and not store.count("all"):
        out.write("The local store is empty: run `pigeon sync` first.\n")
        return EXIT_OK
    marks = lambda t: ("●" if t.unread else " ") + ("★" if t.starred else " ")  # noqa: E731
    rows = [(marks(t), _when(t.last_message_at), t.who, t.subject, ",".join(t.labels), t.id) for t in threads]
    out.write(_table(("", "LAST MESSAGE", "FROM", "SUBJECT", "LABELS", "ID"), rows) + "\n")
    return EXIT_OK


def cmd_views(args: argparse.Namespace, out: TextIO) -> int:
    counts = _store(args).view_counts()
    if args.json:
        _print_json(counts, out)
    else:
        out.write(_table(("VIEW", "THREADS"), list(counts.items())) + "\n")
    return EXIT_OK


def cmd_triage(args: argparse.Namespace, out: TextIO) -> int:
    from pigeon.store.mailstore import UnknownThread
    from pigeon.store.times import parse_when

    store = _store(args)
    action = args.triage
    try:
        if action == "snooze":
            from datetime import UTC, datetime

            try:
                until = parse_when(args.until, datetime.now(UTC))
            except ValueError as exc:
                raise UsageError(str(exc)) from None
            said = store.snooze(args.threads, until)
        elif action == "label":
            if not args.add and not args.remove:
                raise UsageError("label needs --add LABEL or --remove LABEL")
            said = store.label(args.threads, args.add or args.remove, on=bool(args.add))
        else:
            said = {
                "done": lambda: store.done(args.threads),
                "undone": lambda: store.done(args.threads, on=False),
                "star": lambda: store.star(args.threads),
                "unstar": lambda: store.star(args.threads, on=False),
                "read": lambda: store.mark_read(args.threads),
                "unread": lambda: store.mark_read(args.threads, read=False),
                "mute": lambda: store.mute(args.threads),
                "unmute": lambda: store.mute(args.threads, on=False),
            }[action]()
    except UnknownThread as exc:
        raise UsageError(f"Not in the local store (run `pigeon sync`?): {exc}") from None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    out.write(f"{said}. `pigeon undo` takes it back.\n")
    return EXIT_OK


def cmd_undo(args: argparse.Namespace, out: TextIO) -> int:
    said = _store(args).undo()
    out.write(f"Undone: {said}\n" if said else "Nothing to undo.\n")
    return EXIT_OK


def _service_db_path(args: argparse.Namespace) -> str:
    return args.db or str(locations.data_dir() / "service.sqlite3")


def _open_service_db(path: str, **kwargs: Any) -> Any:
    import sqlite3

    from pigeon.server.db import SchemaTooNew
    from pigeon.server.run import open_database

    try:
        return open_database(path, **kwargs)
    except (sqlite3.Error, SchemaTooNew, OSError) as exc:
        raise UsageError(f"Cannot open the service database {path}: {exc}") from None


def cmd_serve(args: argparse.Namespace, out: TextIO) -> int:
    from pigeon.server.app import ServerSettings
    from pigeon.server.live import live_traffic
    from pigeon.server.run import serve

    path = _service_db_path(args)
    db = _open_service_db(path, demo_data=args.demo_data, threads=args.threads)
    if not db.account_ids():
        sys.stderr.write(
            f"No accounts yet. Create one and its token with: pigeon serve token create --db {path} --account NAME\n"
        )
    settings = ServerSettings(
        allow_private_webhooks=args.allow_private_webhooks,
        rate_limit_per_minute=args.rate_limit,
        background=[live_traffic(args.live_interval)] if args.live else [],
    )
    serve(db, settings, host=args.host, port=args.port)
    return EXIT_OK


def cmd_token_create(args: argparse.Namespace, out: TextIO) -> int:
    db = _open_service_db(_service_db_path(args))
    token = db.create_token(db.ensure_account(args.account))
    out.write(token + "\n")
    return EXIT_OK


def cmd_demo(args: argparse.Namespace, out: TextIO) -> int:
    """Start the reference service in-process on demo mail and open the app on it; nothing is kept afterwards."""
    from pigeon.server.run import start_demo

    demo = start_demo(threads=args.threads, live=not args.no_live)
    try:
        if args.serve_only:
            out.write(
                f"Pigeon demo service on {demo.base_url} ({args.threads} threads of demo mail).\n"
                f"Demo token (throwaway, valid until you stop): {demo.token}\n"
                "Press Ctrl-C to stop.\n"
            )
            out.flush()
            while demo.service.thread.is_alive():
                demo.service.thread.join(0.5)
            return EXIT_OK
        gc.disable()  # until the first frame: see pigeon.tui.memory.freeze_start_up
        from pigeon.tui.app import make_app

        config = replace(_config(args), base_url=demo.base_url, base_url_source="pigeon demo")
        from pigeon.store.mailstore import MailStore

        throwaway = MailStore(":memory:")  # the demo never touches the user's store
        make_app(
            config, token=demo.token, remember_token=False, live=not args.no_live, poll_interval=5, store=throwaway
        ).run()
    finally:
        demo.stop()
    return EXIT_OK


def cmd_tui(args: argparse.Namespace, out: TextIO) -> int:
    """Open the app for the active profile; without a token it opens on the login screen."""
    gc.disable()  # until the first frame: see pigeon.tui.memory.freeze_start_up
    from pigeon.tui.app import make_app

    config = _config(args)
    try:
        token, _ = credentials.resolve_token(config.profile)
        problem = ""
    except credentials.CredentialsError as exc:  # no keyring: log in for this session, and say why
        token, problem = None, str(exc)
    make_app(config, token=token, remember_token=not credentials.env_token(), login_message=problem).run()
    return EXIT_OK


# --- parser --------------------------------------------------------------------------------------------------


class EventChoices:
    """The event kinds ``--event`` accepts (``message.created`` or ``created``), read from the models only when
    argparse checks or lists them."""

    def _values(self) -> list[str]:
        from pigeon.models import EventKind

        return [e.value for e in EventKind] + [e.value.removeprefix("message.") for e in EventKind]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values())

    def __contains__(self, value: object) -> bool:
        return value in self._values()


def _common() -> argparse.ArgumentParser:
    """Options every command takes, before or after the command name."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--profile", default=argparse.SUPPRESS, help="profile to use (default: from config)")
    common.add_argument("--base-url", default=argparse.SUPPRESS, help="service address, overriding the profile's")
    return common


def _json_flag() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument("--json", action="store_true", help="print JSON for scripts")
    return parent


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not at least 1")
    return value


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"pigeon: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    common, as_json = _common(), _json_flag()
    parser = _Parser(
        prog="pigeon",
        description="Pigeon: a keyboard-driven terminal mail client.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"pigeon {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def add(
        sub: Any, name: str, func: Callable[..., int], help_text: str, *parents: Any, client: bool = True
    ) -> argparse.ArgumentParser:
        """A command; ``client`` commands also take --profile and --base-url."""
        chosen = [common, *parents] if client else list(parents)
        command = sub.add_parser(name, help=help_text, description=help_text, parents=chosen)
        command.set_defaults(func=func)
        return command

    demo = add(commands, "demo", cmd_demo, "open Pigeon on generated demo mail (no account needed)")
    demo.add_argument("--threads", type=_positive, default=300, help="how many threads of demo mail (default 300)")
    demo.add_argument("--no-live", action="store_true", help="no new mail while the demo runs")
    demo.add_argument("--serve-only", action="store_true", help="serve the demo and print its URL and token")

    serve = add(commands, "serve", cmd_serve, "run the reference messaging service", client=False)
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8025, help="port (default 8025)")
    serve.add_argument("--db", metavar="PATH", help="database file (default: in the user data folder)")
    serve.add_argument("--demo-data", action="store_true", help="give every account without mail demo mail")
    serve.add_argument("--threads", type=_positive, default=300, help="threads of demo mail (default 300)")
    serve.add_argument("--live", action="store_true", help="deliver a new message every few seconds")
    serve.add_argument("--live-interval", type=float, default=5.0, metavar="SECONDS", help=argparse.SUPPRESS)
    serve.add_argument(
        "--allow-private-webhooks", action="store_true", help="allow webhook URLs on loopback and private networks"
    )
    serve.add_argument("--rate-limit", type=_positive, metavar="N", help="at most N requests a minute per token")
    serve_commands = serve.add_subparsers(dest="serve_command", metavar="COMMAND", parser_class=_Parser)
    tokens = serve_commands.add_parser("token", help="manage access tokens").add_subparsers(
        dest="token_command", metavar="ACTION", required=True, parser_class=_Parser
    )
    token_create = add(
        tokens, "create", cmd_token_create, "create an account if needed and print a new token", client=False
    )
    token_create.add_argument("--db", metavar="PATH", help="database file (default: in the user data folder)")
    token_create.add_argument("--account", required=True, help="account name")
    login = add(commands, "login", cmd_login, "verify a token and keep it in the OS keyring")
    login.add_argument("--token-stdin", action="store_true", help="read the token from standard input")
    add(commands, "logout", cmd_logout, "remove the stored token")
    add(commands, "status", cmd_status, "show the profile, service and where the token comes from", as_json)

    add(commands, "sync", cmd_sync, "bring the local store up to date (only what changed)", as_json)
    search = add(commands, "search", cmd_search, "search the local store", as_json)
    search.add_argument(
        "query", nargs="*", help="words and from: to: subject: is: has:attachment label: before: after:"
    )
    search.add_argument("--view", default="all", help="inbox, unread, starred, snoozed, done, all or label:NAME")
    search.add_argument("--sort", default="date", choices=["date", "sender", "subject"])
    search.add_argument("--limit", type=_positive, default=50)
    add(commands, "views", cmd_views, "how many threads each view holds", as_json)
    for action, text in (
        ("done", "mark threads done (they leave the inbox until new mail arrives)"),
        ("undone", "bring threads back to the inbox"),
        ("star", "star threads"),
        ("unstar", "unstar threads"),
        ("read", "mark threads read"),
        ("unread", "mark threads unread"),
        ("mute", "mute threads (they stay out of the inbox)"),
        ("unmute", "unmute threads"),
        ("snooze", "hide threads until a time or new mail"),
        ("label", "add or remove a label"),
    ):
        triage = add(commands, action, cmd_triage, text)
        triage.set_defaults(triage=action)
        triage.add_argument("threads", nargs="+", metavar="THREAD")
        if action == "snooze":
            triage.add_argument("--until", required=True, help="later, tomorrow, next-week or 2026-11-23 09:00")
        if action == "label":
            triage.add_argument("--add", metavar="LABEL")
            triage.add_argument("--remove", metavar="LABEL")
    add(commands, "undo", cmd_undo, "take back the last triage step")

    inboxes = commands.add_parser("inboxes", help="list or create inboxes").add_subparsers(
        dest="action", metavar="ACTION", required=True, parser_class=_Parser
    )
    add(inboxes, "list", cmd_inboxes_list, "list inboxes", as_json)
    create = add(inboxes, "create", cmd_inboxes_create, "create an inbox", as_json)
    create.add_argument("--email", help="address of the inbox")
    create.add_argument("--display-name", help="display name (at most 100 characters)")
    create.add_argument("--type", default="EMAIL_INBOX", choices=["EMAIL_INBOX"], help="inbox type")
    create.add_argument("--metadata", metavar="JSON", help="a JSON object")

    threads = commands.add_parser("threads", help="list threads").add_subparsers(
        dest="action", metavar="ACTION", required=True, parser_class=_Parser
    )
    add(threads, "list", cmd_threads_list, "list threads", as_json)

    messages = commands.add_parser("messages", help="list the messages of a thread").add_subparsers(
        dest="action", metavar="ACTION", required=True, parser_class=_Parser
    )
    listing = add(messages, "list", cmd_messages_list, "list the messages of a thread", as_json)
    listing.add_argument("--thread", required=True, metavar="ID", help="thread id")
    listing.add_argument("--all", action="store_true", help="follow page tokens to the end")
    listing.add_argument("--page-size", type=int, default=None, help="1 to 100 (default 20)")
    listing.add_argument("--page-token", help="token from a previous page")
    listing.add_argument("--message-id", action="append", metavar="ID", help="only these messages (repeatable)")

    contacts = commands.add_parser("contacts", help="update contacts").add_subparsers(
        dest="action", metavar="ACTION", required=True, parser_class=_Parser
    )
    update = add(contacts, "update", cmd_contacts_update, "change a contact (arrays are replaced whole)", as_json)
    update.add_argument("contact_id", metavar="ID")
    update.add_argument("--first-name")
    update.add_argument("--last-name")
    update.add_argument("--email", action="append", metavar="TYPE:ADDR", help="work|personal|unknown|unspecified")
    update.add_argument("--phone", action="append", metavar="TYPE:NUMBER", help="work|personal|unknown|unspecified")
    update.add_argument("--social", action="append", metavar="TYPE:USERNAME", help="linkedin|unspecified")
    update.add_argument("--metadata", metavar="JSON", help="a JSON object (replaces the metadata)")

    webhooks = commands.add_parser("webhooks", help="create webhook subscriptions").add_subparsers(
        dest="action", metavar="ACTION", required=True, parser_class=_Parser
    )
    hook = add(webhooks, "create", cmd_webhooks_create, "subscribe a URL to message events", as_json)
    hook.add_argument("--url", required=True, help="absolute http(s) URL that receives events")
    hook.add_argument(
        "--event",
        action="append",
        required=True,
        choices=EventChoices(),
        metavar="EVENT",  # argparse would list the choices at once to make one
        help="event kind, one of %(choices)s (repeatable)",
    )
    hook.add_argument("--description")
    hook.add_argument("--metadata", metavar="JSON", help="a JSON object")
    return parser


def _fail(message: str, code: int) -> int:
    sys.stderr.write(f"pigeon: error: {clean_line(message)}\n")
    return code


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Entry point of the ``pigeon`` command; returns the exit code."""
    out = out or sys.stdout
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version and usage errors: argparse has printed what it had to say
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    if not getattr(args, "func", None):
        args.func = cmd_tui
    try:
        return args.func(args, out)
    except (UsageError, ConfigError, credentials.CredentialsError, InvalidInput) as exc:
        return _fail(str(exc), EXIT_USAGE)
    except PigeonError as exc:
        return _fail(str(exc), EXIT_SERVICE)
    except KeyboardInterrupt:
        sys.stderr.write("\n")
        return 130
