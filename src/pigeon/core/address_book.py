"""The address book: every email of every known contact as an address to write to, found by what a person types
(a name, part of one, the start of an email), most recently contacted first. Used by the address fields of the
review, the palette and ``pigeon contacts``. No Textual here."""

from __future__ import annotations

import asyncio
import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from pigeon.sanitize import clean_line

if TYPE_CHECKING:
    from pigeon.models import Contact


class KnowsContacts(Protocol):
    """What the book reads of the mail core: the contacts it knows, and a way to learn those the store kept."""

    contacts: dict[str, Contact]

    async def learn_stored_contacts(self) -> None: ...


_WORD_BREAK = re.compile(r"[^\w]+")
_NEVER = float("inf")  # never contacted: after every date


def folded(text: str) -> str:
    """``text`` as matching compares it: accents dropped, case folded (``Zoë`` and ``zoe`` are one)."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


@dataclass(frozen=True)
class AddressEntry:
    """One address of one contact, every value cleaned to one line."""

    name: str
    email: str
    note: str = ""
    last_contacted: datetime | None = None
    contact_id: str | None = None

    def __post_init__(self) -> None:  # (cleaned however made: a name can never carry a line break into a header)
        for name in ("name", "email", "note"):
            object.__setattr__(self, name, clean_line(getattr(self, name)))

    @property
    def written(self) -> str:
        """``Name <email>`` as a mail header holds it: a name with commas, quotes or angle brackets is quoted, so it
        can never read as another address."""
        from email.headerregistry import Address  # (loaded on first use: the first frame does not wait on it)

        return str(Address(display_name=self.name, addr_spec=self.email))


@dataclass
class _Indexed:
    entry: AddressEntry
    name: str  # folded
    email: str  # folded
    words: str  # " word word ...": the folded words of the name and parts of the email, each after a space

    def order(self) -> tuple[float, str, str]:
        contacted = self.entry.last_contacted
        return (-contacted.timestamp() if contacted else _NEVER, self.name, self.email)


def _name(contact: Contact) -> str:
    """A person's name, not ``Contact.name``'s fallback to the email (the address already says that)."""
    full = contact.display_name or " ".join(p for p in (contact.first_name, contact.last_name) if p)
    return clean_line(full)


def _entries_of(contact: Contact) -> list[_Indexed]:
    from email.errors import HeaderParseError
    from email.headerregistry import Address

    name = _name(contact)
    note = clean_line(" · ".join(p for p in (contact.title, contact.company) if p))
    made: list[_Indexed] = []
    for item in contact.emails:
        email = clean_line(item.email or "")
        try:  # an email that is not one address (spaces, commas, nothing at all) cannot be written to
            Address(display_name=name, addr_spec=email)
        except (ValueError, IndexError, HeaderParseError):
            continue
        entry = AddressEntry(name, email, note, contact.last_contacted_at, contact.id)
        words = _WORD_BREAK.split(folded(name)) + _WORD_BREAK.split(folded(email)) + [folded(email)]
        made.append(_Indexed(entry, folded(name), folded(email), "".join(f" {w}" for w in words if w)))
    return made


class AddressBook:
    """The addresses of the contacts the core knows (those met in synced mail: the service cannot list them)."""

    def __init__(self, core: KnowsContacts) -> None:
        self.core = core
        self._learned = False
        self._made: dict[str, tuple[Contact, list[_Indexed]]] = {}  # by contact id, with the version it was made of
        self._ordered: list[_Indexed] = []  # every entry, most recently contacted first

    async def _indexed(self) -> list[_Indexed]:
        """Every entry in order; the contacts new or changed since the last call made ready off the event loop."""
        if not self._learned:  # the store's contacts once; sync and opened mail keep the core's up to date after
            await self.core.learn_stored_contacts()
            self._learned = True
        changed, gone = self._changes()
        if not changed and not gone:
            return self._ordered
        for contact_id in gone:
            del self._made[contact_id]
        if changed:
            built = await asyncio.to_thread(lambda: [(i, (c, _entries_of(c))) for i, c in changed])
            self._made.update(built)
        everything = [item for _, entries in self._made.values() for item in entries]
        self._ordered = sorted(everything, key=_Indexed.order)
        return self._ordered

    def _changes(self) -> tuple[list[tuple[str, Contact]], set[str]]:
        """The contacts new or changed since the entries were made, and the ids of those gone."""
        contacts = self.core.contacts
        changed = [(i, c) for i, c in contacts.items() if (made := self._made.get(i)) is None or made[0] is not c]
        return changed, self._made.keys() - contacts.keys()

    async def prepare(self) -> None:
        """Make the entries ready (as the first lookup would), so that lookups can answer at once."""
        await self._indexed()

    async def entries(self) -> list[AddressEntry]:
        """Every address, most recently contacted first (then by name)."""
        return _unique(await self._indexed())

    async def lookup(self, text: str, limit: int = 8) -> list[AddressEntry]:
        """The addresses ``text`` finds: those whose name or email starts with it first, then those where each word
        typed starts a word of the name or a part of the email; each group most recently contacted first."""
        query = " ".join(folded(text).split())
        if not query:
            return []
        ordered = await self._indexed()
        if len(ordered) < SCAN_IN_LOOP:
            return _search(ordered, query, limit)
        return await asyncio.to_thread(_search, ordered, query, limit)

    def lookup_at_once(self, text: str, limit: int = 8) -> list[AddressEntry] | None:
        """What :meth:`lookup` answers, given at once when that needs no waiting (the book made, unchanged and small
        enough to scan on the event loop): a field's candidates then come with the letter typed. None otherwise."""
        if not self._learned or len(self._ordered) >= SCAN_IN_LOOP or any(self._changes()):
            return None
        query = " ".join(folded(text).split())
        return _search(self._ordered, query, limit) if query else []


SCAN_IN_LOOP = 2000
"""Entries scanned on the event loop; a bigger book is scanned in a thread, so typing never waits on it."""


def _search(ordered: list[_Indexed], query: str, limit: int) -> list[AddressEntry]:
    needles = [f" {token}" for token in query.split()]
    starts: list[_Indexed] = []  # the name or email starts with the query
    others: list[_Indexed] = []  # each word typed starts a word of the name or a part of the email
    for item in ordered:  # (in order: enough of the first group ends the search)
        if item.name.startswith(query) or item.email.startswith(query):
            starts.append(item)
            if len(starts) >= 2 * limit and len(_unique(starts)) >= limit:
                break
        elif len(others) < 2 * limit and all(needle in item.words for needle in needles):
            others.append(item)
    return _unique(starts + others)[:limit]


def _unique(items: list[_Indexed]) -> list[AddressEntry]:
    """One entry per address (two contacts can share one): the first, so the likeliest, kept."""
    seen: set[str] = set()
    kept: list[AddressEntry] = []
    for item in items:
        if item.email not in seen:
            seen.add(item.email)
            kept.append(item.entry)
    return kept
