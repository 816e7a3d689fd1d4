"""The command line: every command, its options and its help. Triage commands come from the action registry."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NoReturn

from pigeon import __version__
from pigeon.cli.contacts import FORMATS, cmd_contacts_list, cmd_contacts_search
from pigeon.cli.demo import cmd_demo
from pigeon.cli.drafts import cmd_compose, cmd_drafts
from pigeon.cli.mail import cmd_attention, cmd_search, cmd_sync, cmd_triage, cmd_undo, cmd_views
from pigeon.cli.output import EXIT_USAGE
from pigeon.cli.rules import cmd_rules
from pigeon.cli.serve import cmd_serve, cmd_token_create
from pigeon.cli.service import (
    cmd_contacts_update,
    cmd_inboxes_create,
    cmd_inboxes_list,
    cmd_login,
    cmd_logout,
    cmd_messages_list,
    cmd_status,
    cmd_threads_list,
    cmd_webhooks_create,
)
from pigeon.core.actions import verbs
from pigeon.core.listing import LANE_VIEWS, VIEWS


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


def parse_arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line as the full parser reads it. ``pigeon`` with the app's options alone (how the app is
    started) is read without building every command's parser first, which would delay the app's first row.
    Anything else, ``--help`` included, goes to the full parser."""
    argv = list(sys.argv[1:] if argv is None else argv)
    quick = argparse.ArgumentParser(prog="pigeon", add_help=False, exit_on_error=False, parents=[_common()])
    try:
        args, rest = quick.parse_known_args(argv)
    except argparse.ArgumentError:
        rest = argv
    if not rest:
        return args
    if rest[0] == "search":
        return _search_words_shown(build_parser().parse_args(_search_words_hidden(argv)))
    return build_parser().parse_args(argv)


HIDDEN_DASH = "\ue000"
"""Put before a search word that begins with ``-`` (``-is:read``, ``-invoice``), which argparse would otherwise
take for an unknown option; taken off again once the line is read."""
_DASHED_WORD = re.compile(r"-[^-\d]")
_VALUED = {"--view", "--sort", "--limit", "--profile", "--base-url"}


def _search_words_hidden(argv: list[str]) -> list[str]:
    """``pigeon search ... -is:read ...`` with its dashed words kept from argparse (``--`` works as ever)."""
    if "--" in argv:
        return argv
    at = argv.index("search") + 1
    words = argv[at:]
    hidden = [
        HIDDEN_DASH + word
        if _DASHED_WORD.match(word) and word != "-h" and (n == 0 or words[n - 1] not in _VALUED)
        else word
        for n, word in enumerate(words)
    ]
    return argv[:at] + hidden


def _search_words_shown(args: argparse.Namespace) -> argparse.Namespace:
    args.query = [word.removeprefix(HIDDEN_DASH) for word in args.query]
    return args


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
        command: argparse.ArgumentParser = sub.add_parser(name, help=help_text, description=help_text, parents=chosen)
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
    serve.add_argument(
        "--no-loopback-webhooks",
        action="store_true",
        help="refuse webhook URLs on loopback even when listening on loopback (behind a proxy others reach)",
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
    login.add_argument(
        "--plain-file-keyring",
        action="store_true",
        help="agree to store the token when the only keyring writes it unencrypted to a file",
    )
    login.add_argument(
        "--start-afresh",
        action="store_true",
        help="when the profile's store holds another account's mail, empty it for this one",
    )
    add(commands, "logout", cmd_logout, "remove the stored token")
    add(commands, "status", cmd_status, "show the profile, service and where the token comes from", as_json)

    sync = add(commands, "sync", cmd_sync, "bring the local store up to date (only what changed)", as_json)
    sync.add_argument(
        "-v", "--verbose", action="store_true", help="say the progress, and how many requests are in flight and why"
    )
    search = add(commands, "search", cmd_search, "search the local store", as_json)
    search.add_argument(
        "query",
        nargs="*",
        help="words and from: to: subject: is: has:attachment label: before:yesterday after:3d; "
        "OR between two terms, - before one to exclude it (options go before the words)",
    )
    search.add_argument("--view", default="all", help=f"{', '.join(VIEWS)} or label:NAME")
    search.add_argument("--sort", default="date", choices=["date", "sender", "subject"])
    search.add_argument("--limit", type=_positive, default=50)
    add(commands, "views", cmd_views, "how many threads each view holds", as_json)
    for action, verb in verbs():  # the triage verbs of the action registry
        if action.op is None:
            continue
        triage = add(commands, verb.name, cmd_triage, verb.help)
        triage.set_defaults(action_id=action.id, on=verb.on)
        triage.add_argument("threads", nargs="+", metavar="THREAD")
        if action.op in ("snooze", "remind"):
            triage.add_argument(
                "--until",
                required=True,
                metavar="WHEN",
                help="2h, 15:00, friday 9am, tomorrow, next week, dec 1, 2026-12-01 09:00 (local time)",
            )
        if action.op == "label":
            triage.add_argument("--add", metavar="LABEL")
            triage.add_argument("--remove", metavar="LABEL")
    add(commands, "undo", cmd_undo, "take back the last triage step")
    for action, verb in verbs():  # what needs you: the Screener's decisions, lanes, why
        if not action.id.startswith("attention."):
            continue
        attention = add(commands, verb.name, cmd_attention, verb.help)
        attention.set_defaults(action_id=action.id)
        attention.add_argument("threads", nargs="+" if action.id != "attention.why" else 1, metavar="THREAD")
        if action.id == "attention.lane":
            attention.add_argument("--to", required=True, choices=LANE_VIEWS, dest="lane")
        if action.id in ("attention.let_in", "attention.keep_out"):
            attention.add_argument("--domain", action="store_true", help="everyone at the sender's domain")
    for action, verb in verbs():  # the user's rules: check them, try them
        if action.id == "rules.try":
            rules = add(commands, verb.name, cmd_rules, verb.help)
            rules.add_argument("what", choices=["check", "try"], help="check: a line a mistake; try: changes nothing")
    for action, verb in verbs():  # the hand-off verbs: reply, reply-all, forward, compose
        if action.compose is None:
            continue
        compose = add(commands, verb.name, cmd_compose, verb.help)
        compose.set_defaults(action_id=action.id)
        if action.compose != "new":
            compose.add_argument("thread", metavar="THREAD", help="a thread id, or a unique beginning of one")
            compose.add_argument("--message", metavar="ID", help="the thread's message to answer (default: the latest)")
        if action.compose == "forward":
            compose.add_argument("--attached", action="store_true", help="the message as an attached file")
        compose.add_argument("--send", action="store_true", help="send after the editor without asking")
    drafts = add(commands, "drafts", cmd_drafts, "list the replies not sent yet; send, edit or discard one")
    draft_actions = drafts.add_subparsers(dest="draft_action", metavar="ACTION", parser_class=_Parser)
    for name, help_text in (
        ("send", "give a draft to the send command again"),
        ("edit", "open a draft in the editor, then send it"),
        ("discard", "drop a draft"),
    ):
        one = add(draft_actions, name, cmd_drafts, help_text)
        one.add_argument("draft_id", metavar="ID", help="a draft id, or a unique beginning of one")
        if name == "edit":
            one.add_argument("--send", action="store_true", help="send after the editor without asking")

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

    contacts = commands.add_parser("contacts", help="list, search or update contacts").add_subparsers(
        dest="action", metavar="ACTION", required=True, parser_class=_Parser
    )
    add(contacts, "list", cmd_contacts_list, "every contact met in synced mail, most recently contacted first", as_json)
    search_book = add(
        contacts,
        "search",
        cmd_contacts_search,
        "addresses whose name or email starts with QUERY (for NeoMutt's query_command: --format mutt)",
    )
    search_book.add_argument("query", nargs="+", metavar="QUERY", help="a name, part of one, or an email's start")
    shape = search_book.add_mutually_exclusive_group()
    shape.add_argument("--json", action="store_true", help="print JSON for scripts")
    shape.add_argument(
        "--format",
        choices=FORMATS,
        default="table",
        help="table (default); mutt: a status line, then address<TAB>name<TAB>note; aerc: the same without it",
    )
    search_book.add_argument("--limit", type=_positive, default=50, help="at most this many addresses (default 50)")
    update = add(
        contacts,
        "update",
        cmd_contacts_update,
        "change a contact: --email/--phone/--social add to what it has, --set-* replace the list",
        as_json,
    )
    update.add_argument("contact_id", metavar="ID")
    update.add_argument("--first-name")
    update.add_argument("--last-name")
    for flag, metavar, types in (
        ("email", "TYPE:ADDR", "work|personal|unknown|unspecified"),
        ("phone", "TYPE:NUMBER", "work|personal|unknown|unspecified"),
        ("social", "TYPE:USERNAME", "linkedin|unspecified"),
    ):
        update.add_argument(f"--{flag}", action="append", metavar=metavar, help=f"add one ({types})")
        update.add_argument(
            f"--set-{flag}s", action="append", metavar=metavar, help=f"replace them all with these ({types})"
        )
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
