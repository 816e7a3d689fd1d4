"""The contact book on the command line: ``pigeon contacts list`` and ``pigeon contacts search``, read from the
local store (the contacts met in synced mail: the service cannot list them), so both work offline.

``search`` speaks the formats mail programs ask an address book in: NeoMutt's ``query_command`` (a status line,
then ``address<TAB>name<TAB>note`` lines; no match is a non-zero exit) and aerc's ``address-book-cmd`` (the same
lines without the status line, which aerc would offer as an address)."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from pigeon.cli.common import core_of
from pigeon.cli.output import EXIT_OK, print_json, table, when
from pigeon.sanitize import clean_line

if TYPE_CHECKING:
    from pigeon.core.address_book import AddressEntry
    from pigeon.core.mail import MailCore
    from pigeon.models import Contact

T = TypeVar("T")

EXIT_NO_MATCH = 1
"""What ``search`` exits with when nothing matched (as grep does, and as NeoMutt's query_command expects)."""

FORMATS = ("table", "json", "mutt", "aerc")


def _local(args: argparse.Namespace, call: Callable[[MailCore], Awaitable[T]]) -> T:
    """One call on the profile's mail core over its store alone (no token, no service)."""
    core = core_of(args, online=False)

    async def go() -> T:
        try:
            return await call(core)
        finally:
            await core.close()

    return asyncio.run(go())


def _contact_json(contact: Contact) -> dict[str, Any]:
    return {
        "id": contact.id,
        "name": clean_line(contact.name),
        "emails": [clean_line(e.email) for e in contact.emails if e.email],
        "company": clean_line(contact.company) or None,
        "title": clean_line(contact.title) or None,
        "last_contacted_at": contact.last_contacted_at.isoformat() if contact.last_contacted_at else None,
    }


def _recent_first(contact: Contact) -> tuple[float, str]:
    contacted = contact.last_contacted_at
    return (-contacted.timestamp() if contacted else float("inf"), clean_line(contact.name).casefold())


def cmd_contacts_list(args: argparse.Namespace, out: TextIO) -> int:
    async def every(core: MailCore) -> list[Contact]:
        return sorted(await core.all_contacts(), key=_recent_first)

    contacts = _local(args, every)
    if args.json:
        print_json({"contacts": [_contact_json(c) for c in contacts]}, out)
        return EXIT_OK
    if not contacts:
        out.write("No contacts in the local store: run `pigeon sync` (contacts come with the mail they wrote).\n")
        return EXIT_OK
    rows = [(c.name, ", ".join(e.email for e in c.emails if e.email), when(c.last_contacted_at)) for c in contacts]
    out.write(table(("NAME", "EMAILS", "LAST CONTACTED"), rows) + "\n")
    return EXIT_OK


def _entry_json(entry: AddressEntry) -> dict[str, Any]:
    contacted = entry.last_contacted
    return {
        "name": entry.name,
        "email": entry.email,
        "note": entry.note,
        "written": entry.written,
        "last_contacted_at": contacted.isoformat() if contacted else None,
        "contact_id": entry.contact_id,
    }


def _tabbed(entry: AddressEntry) -> str:
    """``address<TAB>name<TAB>note``: each value is one cleaned line with no tab (``AddressEntry`` cleans them)."""
    return f"{entry.email}\t{entry.name}\t{entry.note}"


def cmd_contacts_search(args: argparse.Namespace, out: TextIO) -> int:
    query = " ".join(args.query)
    shown = clean_line(query, limit=60)
    form = "json" if args.json else args.format
    found = _local(args, lambda core: core.address_book.lookup(query, limit=args.limit))
    if form == "json":
        print_json({"query": query, "addresses": [_entry_json(e) for e in found]}, out)
    elif form == "aerc":  # (no status line: aerc offers every line; nothing found is no completion, not an error)
        out.writelines(_tabbed(e) + "\n" for e in found)
        return EXIT_OK
    elif form == "mutt":
        count = f"{len(found)} address{'es' if len(found) != 1 else ''}"
        status = f"Pigeon: {count} for {shown!r}" if found else f"Pigeon: no address matches {shown!r}"
        out.write(status + "\n")
        out.writelines(_tabbed(e) + "\n" for e in found)
    elif found:
        rows = [(e.name, e.email, e.note, when(e.last_contacted)) for e in found]
        out.write(table(("NAME", "EMAIL", "NOTE", "LAST CONTACTED"), rows) + "\n")
    else:
        out.write(f"No contact matches {shown!r} (contacts come with synced mail: `pigeon sync` brings new ones).\n")
    return EXIT_OK if found else EXIT_NO_MATCH
