"""The command palette: every action of the registry that fits the screen, plus jumping to a view, an inbox or a
thread by name (threads are looked up in the store, so what was synced is found offline too), and opening a contact
found by name or email in the address book.

Inbox names and thread subjects are untrusted. Textual's ``Matcher.highlight`` parses its candidate as markup, so
they are highlighted here with :func:`literal_highlight` instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import TYPE_CHECKING

from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Matcher, Provider
from textual.content import Content
from textual.dom import DOMNode

from pigeon.core.actions import ACTIONS, Action
from pigeon.sanitize import clean_line
from pigeon.tui.messages import EditContact
from pigeon.tui.render import relative_time, safe_markup
from pigeon.tui.widgets.inbox_list import view_label

if TYPE_CHECKING:
    from pigeon.tui.screens.mail import MainScreen

MAX_THREAD_HITS = 50
MAX_CONTACT_HITS = 8


def literal_highlight(matcher: Matcher, candidate: str) -> Content:
    """``candidate`` as literal content, with the letters that matched the query highlighted."""
    content = Content(candidate)
    score, offsets = matcher.fuzzy_search.match(matcher.query, candidate)
    if score:
        for offset in offsets:
            if not candidate[offset].isspace():
                content = content.stylize(matcher.match_style, offset, offset + 1)
    return content


class PigeonCommands(Provider):
    """Pigeon's own commands, for the screen the palette was opened on."""

    @property
    def mail(self) -> MainScreen | None:
        """The mail screen, when the palette was opened on it."""
        from pigeon.tui.screens.mail import MainScreen  # (the palette loads with the app; the screen is loaded)

        return self.screen if isinstance(self.screen, MainScreen) else None

    def _target(self, action: Action) -> DOMNode | None:
        """Where an action runs: the app, the mail screen, or its reader (``None``: not on this screen)."""
        from pigeon.tui.widgets.reader import Reader

        mail = self.mail
        if action.scope == "app":
            return self.app
        if mail is None:
            return None
        return mail if action.scope == "main" else mail.query_one(Reader)

    def _actions(self) -> Iterator[tuple[str, str, Callable[[], object], tuple[str, ...]]]:
        """Each action the palette offers: its title, its help, what it does, and its command's words."""
        for action in ACTIONS:
            target = self._target(action) if action.palette else None
            if target is not None:
                key = f" ({self.app.get_key_display(Binding(action.key, action.invoke))})" if action.key else ""
                words = tuple(verb.name for verb in action.verbs)
                yield action.title, f"{action.help}{key}", partial(self.app.run_action, action.invoke, target), words
        mail = self.mail
        if mail is not None:
            for view in mail.views:
                yield (
                    f"View: {view_label(view)}",
                    "Switch the thread list to this view",
                    partial(mail.action_view, view),
                    (),
                )

    async def discover(self) -> Hits:
        for name, help_text, callback, _ in self._actions():
            yield DiscoveryHit(Content(name), callback, text=name, help=safe_markup(help_text))

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback, words in self._actions():
            score = matcher.match(name)
            if score > 0:  # (a label's name is the user's text: highlighted literally, like mail)
                yield Hit(score, literal_highlight(matcher, name), callback, text=name, help=safe_markup(help_text))
                continue
            said = max((matcher.match(word) for word in words), default=0)  # ("sync" finds Refresh: `pigeon sync`)
            if said > 0:
                shown = f"{help_text} · pigeon {' / '.join(words)}"
                yield Hit(said * 0.9, Content(name), callback, text=name, help=safe_markup(shown))
        mail = self.mail
        if mail is None:
            return
        core = mail.core
        inboxes = (
            ("Go to inbox " + clean_line(i.display_name or i.email, limit=60), partial(mail.select_inbox, i.id or ""))
            for i in core.inboxes
        )
        for hit in self._jumps(matcher, inboxes, help_text="Inbox"):
            yield hit
        now = core.clock()
        threads = [
            (
                "Open " + clean_line(subject or "(no subject)", limit=80),
                partial(mail.open_thread, thread_id),
                f"Thread · {clean_line(who, limit=30)} · {relative_time(when, now)}",
            )
            for thread_id, subject, when, who in await core.find_threads(query, MAX_THREAD_HITS)
        ]
        for label, callback, help_text in threads:
            score = max(matcher.match(label), 0.5)  # the store matched its words, in any order
            yield Hit(score, literal_highlight(matcher, label), callback, text=label, help=safe_markup(help_text))
        for label, callback, help_text in await self._contacts(query):
            score = max(matcher.match(label), 0.5)  # the book matched a name's or an email's start
            yield Hit(score, literal_highlight(matcher, label), callback, text=label, help=safe_markup(help_text))

    async def _contacts(self, query: str) -> list[tuple[str, Callable[[], object], str]]:
        """The contacts the address book finds for ``query``, each once, opening the contact editor."""
        mail = self.mail
        if mail is None:
            return []
        core, now = mail.core, mail.core.clock()
        found: list[tuple[str, Callable[[], object], str]] = []
        seen: set[str] = set()
        for entry in await core.address_book.lookup(query, MAX_CONTACT_HITS):
            contact = core.contacts.get(entry.contact_id or "")
            if contact is None or entry.contact_id in seen:  # (its likeliest address stands for it)
                continue
            seen.add(entry.contact_id or "")
            label = f"Contact {entry.name} <{entry.email}>" if entry.name else f"Contact {entry.email}"
            contacted = f" · last contacted {relative_time(entry.last_contacted, now)}" if entry.last_contacted else ""
            found.append((label, partial(mail.post_message, EditContact(contact)), f"Edit the contact{contacted}"))
        return found

    @staticmethod
    def _jumps(
        matcher: Matcher, targets: Iterable[tuple[str, Callable[[], object]]], *, help_text: str, limit: int = 0
    ) -> Iterator[Hit]:
        """Hits for labels made of mail text (highlighted literally), at most ``limit`` of them if given."""
        found = 0
        for label, callback in targets:
            score = matcher.match(label)
            if score > 0:
                yield Hit(score, literal_highlight(matcher, label), callback, text=label, help=safe_markup(help_text))
                found += 1
                if limit and found >= limit:
                    return
