"""The command palette: every action, plus jumping to an inbox or a thread by name.

Inbox names and thread subjects are untrusted. Textual's ``Matcher.highlight`` parses its candidate as markup, so
they are highlighted here with :func:`literal_highlight` instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Matcher, Provider
from textual.content import Content

from pigeon.sanitize import clean_line
from pigeon.store.mailstore import VIEWS
from pigeon.tui.widgets.inbox_list import view_label

if TYPE_CHECKING:
    from pigeon.tui.app import PigeonApp

MAX_THREAD_HITS = 50


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
    """Pigeon's own commands."""

    @property
    def pigeon(self) -> PigeonApp:
        return self.app  # type: ignore[return-value]

    def _actions(self) -> Iterator[tuple[str, str, Callable[[], object]]]:
        yield "Refresh", "Load inboxes and threads again (r)", partial(self.pigeon.run_main, "refresh")
        yield "Filter threads", "Narrow the thread list as you type (/)", partial(self.pigeon.run_main, "filter")
        yield "Zoom reader", "Show the reader full screen (f)", partial(self.pigeon.run_main, "zoom")
        yield "Show quoted text", "Show or fold quoted text in the reader (t)", partial(self.pigeon.run_main, "quotes")
        yield "Save attachment", "Save an attachment of the open thread (a)", partial(self.pigeon.run_main, "save")
        yield "Contacts", "Every contact seen in mail; search, sort, edit (b)", self.pigeon.action_contacts
        yield "Edit sender", "Edit the contact who wrote the open thread (c)", self.pigeon.action_edit_sender
        yield "Create inbox", "Add an inbox to the account", self.pigeon.action_create_inbox
        yield "Create webhook", "Subscribe a URL to message events", self.pigeon.action_create_webhook
        yield "Done", "Out of the inbox until new mail (e)", partial(self.pigeon.run_main, "done")
        yield "Star", "Star or unstar (s)", partial(self.pigeon.run_main, "star")
        yield "Snooze", "Hide until a time or new mail (z)", partial(self.pigeon.run_main, "snooze")
        yield "Label", "Add or remove a label (l)", partial(self.pigeon.run_main, "label")
        yield "Undo", "Take back the last triage action (u)", partial(self.pigeon.run_main, "undo")
        yield "Sort", "By date, sender or subject (o)", partial(self.pigeon.run_main, "sort")
        for view in self.views():
            yield (
                f"View: {view_label(view)}",
                "Switch the thread list to this view",
                partial(self.pigeon.show_view, view),
            )
        yield "Keys", "Every key of the current context (?)", self.pigeon.action_help
        yield "Log out", "Forget the stored token and show the login screen", self.pigeon.action_logout
        yield "Quit", "Leave Pigeon (q)", self.pigeon.action_quit

    def views(self) -> list[str]:
        """Every view, with a view per label the store knows."""
        screen = self.pigeon.main_screen
        labels = [v for v in screen.label_views] if screen is not None else []
        return [*VIEWS, *labels]

    async def discover(self) -> Hits:
        for name, help_text, callback in self._actions():
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback in self._actions():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)
        mailbox = self.pigeon.mailbox
        inboxes = (
            ("Go to inbox " + clean_line(i.display_name or i.email, limit=60), partial(self.pigeon.go_to_inbox, i.id))
            for i in mailbox.inboxes
        )
        for hit in self._jumps(matcher, inboxes, help_text="Inbox"):
            yield hit
        threads = (
            ("Open " + clean_line(t.subject or "(no subject)", limit=80), partial(self.pigeon.go_to_thread, t.id))
            for t in mailbox.threads
        )
        for hit in self._jumps(matcher, threads, help_text="Thread", limit=MAX_THREAD_HITS):
            yield hit

    @staticmethod
    def _jumps(
        matcher: Matcher, targets: Iterable[tuple[str, Callable[[], object]]], *, help_text: str, limit: int = 0
    ) -> Iterator[Hit]:
        """Hits for labels made of mail text (highlighted literally), at most ``limit`` of them if given."""
        found = 0
        for label, callback in targets:
            score = matcher.match(label)
            if score > 0:
                yield Hit(score, literal_highlight(matcher, label), callback, text=label, help=help_text)
                found += 1
                if limit and found >= limit:
                    return
