"""Commands that talk to the service: log in and out, status, and the six operations (inboxes, threads, messages,
contacts, webhooks)."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from pigeon import credentials
from pigeon.cli.common import config_of, core_of, json_object, open_store, resolve_token, run, typed_value
from pigeon.cli.output import EXIT_OK, UsageError, enum, print_json, sender, table, when, wire
from pigeon.config import check_base_url
from pigeon.core.errors import Account, OtherAccount
from pigeon.sanitize import clean_line

if TYPE_CHECKING:  # pydantic and the models load in the commands that use them: `pigeon` opens without them
    from pigeon.config import Config
    from pigeon.core.session import PigeonClient
    from pigeon.models import Inbox, Message, Thread, Unreadable, WebhookSubscription

T = TypeVar("T")


def ask(args: argparse.Namespace, call: Callable[[PigeonClient], Awaitable[T]]) -> T:
    """One request of the profile's service, through its mail core."""

    async def go(core: Any) -> T:
        return await call(await core.connect())

    return run(args, go)


def cmd_login(args: argparse.Namespace, out: TextIO) -> int:
    config = config_of(args, creating=True)
    given = getattr(args, "base_url", None)  # (--base-url is left out of args when not given)
    base_url = given or config.base_url
    if not given and sys.stdin.isatty():
        answer = input(f"Service URL [{base_url}]: ").strip()
        base_url = answer or base_url
    try:
        check_base_url(base_url, "The service URL")
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.token_stdin or not sys.stdin.isatty():  # (a pipe is read as given: getpass would ask the terminal)
        token = sys.stdin.readline().strip()
    else:
        try:
            token = getpass.getpass("Token (input hidden): ").strip()
        except EOFError:
            token = ""
    if not token:
        raise UsageError("No token given; nothing was stored.")
    try:  # without a keyring the token is still checked, and the URL kept; the words say how to give the token
        credentials.backend()
        keyring = True
    except credentials.CredentialsError:
        keyring = False
    agreed = _plain_file_agreed(args) if keyring else False

    core = core_of(args, online=False, creating=True)  # the profile's store: the token's account is checked
    core.remember_token = keyring

    async def login() -> int:
        try:
            try:
                warning = await core.login(base_url, token, plain_file_agreed=agreed, start_afresh=args.start_afresh)
            except OtherAccount as exc:
                _afresh_agreed(args, exc)
                warning = await core.login(base_url, token, plain_file_agreed=agreed, start_afresh=True)
        finally:
            await core.close()
        if warning:  # the keyring was usable a moment ago; it is not now
            raise credentials.CredentialsError(warning)
        return len(core.inboxes)

    inboxes = asyncio.run(login())
    profile = config.profile
    if keyring:
        out.write(
            f"Logged in to {base_url} as profile {profile!r}: {inboxes} inbox(es). "
            f"Token stored in the keyring ({credentials.backend_name()}).\n"
        )
    else:
        out.write(
            f"The service at {base_url} took the token: {inboxes} inbox(es). Saved the URL for profile {profile!r}, "
            f"not the token: there is no keyring here. Give the token with token_command = [...] in "
            f"[profiles.{profile}] of {config.path} (a program that prints it), or with PIGEON_TOKEN.\n"
        )
    if credentials.env_token():
        out.write("Note: PIGEON_TOKEN is set in this environment and overrides the stored token.\n")
    elif keyring and config.profile_config.token_command:
        out.write("Note: this profile's token_command gives its token; the keyring's is used only without it.\n")
    return EXIT_OK


def _afresh_agreed(args: argparse.Namespace, refused: OtherAccount) -> None:
    """When the profile's store holds another account's mail: ask before emptying it (or take --start-afresh)."""
    if refused.held is None:  # (the service's answer named several accounts)
        raise UsageError(str(refused))
    held, given = refused.held.words, Account.named(refused.given)
    said = f"The local store of this profile holds the mail of {held}; this token is of {given}."
    if not sys.stdin.isatty() or args.token_stdin:
        raise UsageError(
            f"{said} Nothing was stored. Give --start-afresh to empty that store for this account (its mail, "
            "triage state, labels and undo), or log in to another profile (--profile NAME)."
        )
    sys.stderr.write(said + "\n")
    question = "Start this profile's store afresh (its mail, triage state, labels and undo are removed)? [y/N] "
    if input(question).strip().lower() not in {"y", "yes"}:
        raise UsageError("Nothing was stored. Log in to another profile for this account (--profile NAME).")


def _plain_file_agreed(args: argparse.Namespace) -> bool:
    """When the keyring would write the token to a plain file, say so and ask (or take --plain-file-keyring)."""
    path = credentials.plain_file()
    if path is None:
        return False
    if getattr(args, "plain_file_keyring", False):
        return True
    warning = (
        f"The only keyring on this machine writes secrets unencrypted to a file: {path}. "
        "Anyone who can read that file can use the token."
    )
    if not sys.stdin.isatty() or args.token_stdin:
        raise UsageError(
            f"{warning} Nothing was stored. Give --plain-file-keyring to store it there anyway, "
            "or set PIGEON_TOKEN instead (it is never stored)."
        )
    sys.stderr.write(warning + "\n")
    if input("Store the token in that file anyway? [y/N] ").strip().lower() not in {"y", "yes"}:
        raise UsageError(
            "Nothing was stored. Set PIGEON_TOKEN instead (it is never stored), or start a Secret Service."
        )
    return True


def cmd_logout(args: argparse.Namespace, out: TextIO) -> int:
    config = config_of(args)
    removed = credentials.delete_token(config.profile)
    out.write(
        f"Removed the token of profile {config.profile!r} from the keyring.\n"
        if removed
        else f"No token was stored for profile {config.profile!r}.\n"
    )
    if credentials.env_token():
        out.write("Note: PIGEON_TOKEN is still set in this environment.\n")
    return EXIT_OK


def _new_mail_words(config: Config) -> str:
    """How the app will learn of new mail on this profile, and why: the app's own plan, with the vault it uses."""
    from pigeon.core.live import plan, subscription_vault, vault_name

    profile, vault = config.profile_config, subscription_vault(keeps_nothing=False)
    kept_as = vault_name(config.profile, config.base_url)
    return plan(profile.live, config.base_url, vault, kept_as).words(profile.poll_interval)


def _token_words(source: credentials.TokenSource, config: Config, plain_file: str | None) -> str:
    command = config.profile_config.token_command
    return {
        credentials.TokenSource.ENVIRONMENT: "from the PIGEON_TOKEN environment variable",
        credentials.TokenSource.COMMAND: f"from token_command ({clean_line(' '.join(command[:1]), limit=60)})",
        credentials.TokenSource.KEYRING: f"in the keyring ({credentials.backend_name()})"
        + (f", unencrypted in {plain_file}" if plain_file else ""),
        credentials.TokenSource.NONE: "not set: run `pigeon login`, or give token_command or PIGEON_TOKEN",
    }[source]


def cmd_status(args: argparse.Namespace, out: TextIO) -> int:
    from pigeon.core.session import check_service

    config = config_of(args)
    token: str | None = None
    token_problem = ""
    try:
        token, source = resolve_token(config)
    except credentials.CredentialsError as exc:  # no keyring, or the token_command failed
        source, token_problem = credentials.token_source(config.profile, config.profile_config.token_command), str(exc)
    check = asyncio.run(check_service(config.base_url, token))
    profiles = {
        name: credentials.token_source(name, profile.token_command).value
        for name, profile in sorted(config.settings.profiles.items())
    }
    profiles.setdefault(config.profile, source.value)
    plain_file = credentials.plain_file()
    status = {
        "profile": config.profile,
        "base_url": config.base_url,
        "base_url_from": config.base_url_source,
        "service": check.service_words,
        "service_reachable": check.reachable,
        "config_file": str(config.path),
        "config_file_exists": config.path.exists(),
        "token_from": source.value,
        "token": check.token_words if token else (token_problem or "none"),
        "token_accepted": check.token_accepted,
        "profiles_token_from": profiles,
        "keyring_backend": credentials.backend_name(),
        "keyring_plain_file": plain_file,
        "new_mail": _new_mail_words(config),
    }
    if args.json:
        print_json(status, out)
        return EXIT_OK
    token_check = check.token_words if token else f"not checked: {token_problem or 'no token'}"
    out.write(
        f"Profile:   {config.profile}\n"
        f"Service:   {config.base_url}  ({config.base_url_source})\n"
        f"  check:   {clean_line(check.service_words)}\n"
        f"Token:     {_token_words(source, config, plain_file)}\n"
        f"  check:   {clean_line(token_check)}\n"
        f"Config:    {config.path}{'' if config.path.exists() else '  (not created yet)'}\n"
        f"New mail:  {status['new_mail']}\n"
        f"Tokens:    {'; '.join(f'{name}: {where}' for name, where in profiles.items())}\n"
    )
    return EXIT_OK


def cmd_inboxes_list(args: argparse.Namespace, out: TextIO) -> int:
    inboxes: list[Inbox] = ask(args, lambda c: c.inboxes.list())
    if args.json:
        print_json({"inboxes": wire(inboxes)}, out)
    else:
        rows = [(i.email, i.display_name or "", enum(i.status), i.id) for i in inboxes]
        out.write(table(("EMAIL", "NAME", "STATUS", "ID"), rows) + "\n")
    return EXIT_OK


def cmd_inboxes_create(args: argparse.Namespace, out: TextIO) -> int:
    fields: dict[str, Any] = {"type": args.type}
    if args.email:
        fields["email"] = args.email
    if args.display_name:
        fields["display_name"] = args.display_name
    if args.metadata is not None:
        fields["metadata"] = json_object(args.metadata, "--metadata")
    inbox: Inbox = ask(args, lambda c: c.inboxes.create(**fields))
    if args.json:
        print_json(inbox.to_wire(), out)
    else:
        out.write(f"Created inbox {clean_line(inbox.email)} ({enum(inbox.status)}), id {inbox.id}\n")
    return EXIT_OK


def cmd_threads_list(args: argparse.Namespace, out: TextIO) -> int:
    from pigeon.core.mail import skipped_words

    unreadable: list[Unreadable] = []  # threads the service sent that could not be read: said on stderr

    async def fetch(client: Any) -> list[Thread]:
        loaded: list[Thread] = []
        async for page in client.threads.iter_pages():
            unreadable.extend(page.skipped)
            loaded += page.items
        return loaded

    threads = ask(args, fetch)
    if unreadable:
        sys.stderr.write(f"pigeon: {skipped_words(unreadable, why=True)}\n")
    if args.json:
        print_json({"threads": wire(threads)}, out)
    else:
        rows = [(when(t.last_message_at), t.message_count or 0, t.subject or "", t.id) for t in threads]
        out.write(table(("LAST MESSAGE", "MSGS", "SUBJECT", "ID"), rows) + "\n")
    return EXIT_OK


def cmd_messages_list(args: argparse.Namespace, out: TextIO) -> int:
    from pigeon.core.unreadable import unreadable_words
    from pigeon.models import PAGE_SIZE_DEFAULT

    unreadable: list[Unreadable] = []  # messages the service sent that could not be read: said on stderr

    async def fetch(client: Any) -> tuple[list[Message], str | None]:
        kwargs = {
            "message_ids": args.message_id or None,
            "page_size": PAGE_SIZE_DEFAULT if args.page_size is None else args.page_size,
        }
        if not args.all:
            page = await client.messages.list(args.thread, page_token=args.page_token, **kwargs)
            unreadable.extend(page.skipped)
            return page.items, page.next_page_token
        loaded: list[Message] = []
        async for page in client.messages.iter_pages(args.thread, **kwargs):
            unreadable.extend(page.skipped)
            loaded += page.items
        return loaded, None

    messages, next_token = ask(args, fetch)
    if unreadable:
        sys.stderr.write(f"pigeon: {unreadable_words(unreadable)}\n")
    if args.json:
        data: dict[str, Any] = {"messages": wire(messages)}
        if not args.all:
            data["next_page_token"] = next_token
        print_json(data, out)
        return EXIT_OK
    rows = [(when(m.created_at), sender(m), m.subject or "", len(m.content_blocks), m.id) for m in messages]
    out.write(table(("DATE", "FROM", "SUBJECT", "BLOCKS", "ID"), rows) + "\n")
    if next_token:
        out.write(f"More messages: --page-token {clean_line(next_token)}  (or --all)\n")
    return EXIT_OK


ENTRY_FLAGS = {  # flag -> (field, value key, enum name, enum prefix)
    "email": ("emails", "email", "EmailType", "EMAIL_TYPE_"),
    "phone": ("phones", "phone", "PhoneType", "PHONE_TYPE_"),
    "social": ("social_profiles", "username", "SocialProfileType", "SOCIAL_PROFILE_TYPE_"),
}


def _entries(args: argparse.Namespace, flag: str, known: Any) -> list[dict[str, str]] | None:
    """The new list for ``--FLAG`` (added to what the contact has) or ``--set-FLAGs`` (the list itself)."""
    import pigeon.models as models

    field, key, enum_name, prefix = ENTRY_FLAGS[flag]
    added, whole = getattr(args, flag), getattr(args, f"set_{flag}s")
    if added is None and whole is None:
        return None
    if added is not None and whole is not None:
        raise UsageError(f"Give --{flag} (adds) or --set-{flag}s (replaces), not both.")
    enum = getattr(models, enum_name)
    given = [typed_value(v, enum, prefix, flag) for v in (added or whole)]
    new = [{"type": v["type"], key: v["value"]} for v in given]
    if whole is not None:
        return new
    if known is None:
        raise UsageError(
            f"--{flag} adds to the contact's {field}, and this contact is not in the local store (the service "
            f"cannot list contacts): run `pigeon sync`, or give --set-{flag}s to replace them all."
        )
    have = [{"type": str(getattr(e.type, "value", e.type)), key: getattr(e, key)} for e in getattr(known, field)]
    return have + [entry for entry in new if entry not in have]


def cmd_contacts_update(args: argparse.Namespace, out: TextIO) -> int:
    fields: dict[str, Any] = {}
    if args.first_name is not None:
        fields["first_name"] = args.first_name
    if args.last_name is not None:
        fields["last_name"] = args.last_name
    known = None
    if any(getattr(args, flag) is not None for flag in ENTRY_FLAGS):
        store = open_store(config_of(args))
        known = next((c for c in store.contacts() if c.id == args.contact_id), None)
        store.close()
    for flag, (field, *_) in ENTRY_FLAGS.items():
        entries = _entries(args, flag, known)
        if entries is not None:
            fields[field] = entries
    if args.metadata is not None:
        fields["metadata"] = json_object(args.metadata, "--metadata")
    if not fields:
        raise UsageError("Nothing to update: give at least one of --first-name, --last-name, --email, ...")
    contact = ask(args, lambda c: c.contacts.update(args.contact_id, **fields))
    if args.json:
        print_json(contact.to_wire(), out)
    else:
        out.write(f"Updated contact {clean_line(contact.name) or contact.id}\n")
        for field, key, *_ in ENTRY_FLAGS.values():
            if field in fields:
                shown = ", ".join(clean_line(getattr(e, key)) for e in getattr(contact, field)) or "none"
                out.write(f"  {field.replace('_', ' ')} now: {shown}\n")
    return EXIT_OK


def cmd_webhooks_create(args: argparse.Namespace, out: TextIO) -> int:
    events = [e if e.startswith("message.") else f"message.{e}" for e in args.event]
    fields: dict[str, Any] = {"url": args.url, "events": events}
    if args.description:
        fields["description"] = args.description
    if args.metadata is not None:
        fields["metadata"] = json_object(args.metadata, "--metadata")
    webhook: WebhookSubscription = ask(args, lambda c: c.webhooks.create(**fields))
    if args.json:
        print_json(webhook.to_wire(), out)
        return EXIT_OK
    out.write(f"Created webhook {webhook.id} ({enum(webhook.status)}) for {clean_line(webhook.url)}\n")
    out.write(f"Events: {', '.join(enum(e) for e in webhook.events)}\n")
    if webhook.secret:
        out.write(f"Signing secret (shown only now, keep it safe): {clean_line(webhook.secret)}\n")
    return EXIT_OK
