"""The mail screen's attention part: letting a thread's sender in or keeping them out (the Screener), moving a
thread's sender to another lane, "why is this here?", and the user's rules (tried; left out, said once). Each
decision is written where the core keeps it, then the list shows the threads where it put them, and a note says what
was done and where it is kept.

Interface: :meth:`AttentionPart.screen_sender`, :meth:`move_lane`, :meth:`why`, :meth:`try_rules`,
:meth:`rules_left_out`. It is given, at construction, how
the list changes threads. Up: :class:`~pigeon.tui.screens.mail.triage.Triaged`, once threads moved."""

from __future__ import annotations

from textual.content import Content
from textual.screen import Screen

from pigeon.core.attention import LANE_NAMES, LANES, NoSender, Ruling, Screening
from pigeon.core.mail import MailCore
from pigeon.sanitize import clean_line
from pigeon.tui.screens.mail.part import Part
from pigeon.tui.screens.mail.triage import ChangeThreads, Triaged
from pigeon.tui.screens.modals import PickScreen
from pigeon.tui.screens.why import WhyScreen

TRIED_LISTED = 5
"""Threads the tried rules list a rule (``pigeon rules try`` lists more)."""


class AttentionPart(Part):
    """The Screener's and the lanes' decisions, asked for by key, palette or the why dialog."""

    def __init__(self, screen: Screen[None], core: MailCore, change: ChangeThreads) -> None:
        super().__init__(screen, core)
        self._change = change

    def screen_sender(self, ids: list[str], screen: Screening, *, domain: bool, watch: str | None) -> None:
        """Let the senders of threads ``ids`` in, or keep them out (by address, or by ``domain``)."""
        if not ids:
            self.screen.notify("No thread to act on.", markup=False)
            return
        self.run(self._screen, ids, screen, domain, watch, group="attention", description="deciding on the sender")

    async def _screen(self, ids: list[str], screen: Screening, domain: bool, watch: str | None) -> None:
        try:
            rulings = await self.core.attention.screen_all(ids, screen, domain=domain)
        except NoSender as exc:
            self.screen.notify(clean_line(str(exc)), severity="warning", markup=False)
            return
        await self._apply(ids, rulings, watch)

    def move_lane(self, thread_id: str | None, watch: str | None) -> None:
        """Ask which lane the sender of a thread goes to, then teach it."""
        if not thread_id:
            self.screen.notify("No thread to act on.", markup=False)
            return

        def picked(index: int | None) -> None:
            if index is not None:
                lane = LANES[index]
                self.run(self._teach, thread_id, lane, watch, group="attention", description="teaching the lane")

        self.ask(PickScreen("Move the sender's mail to…", [Content(LANE_NAMES[lane]) for lane in LANES]), picked)

    async def _teach(self, thread_id: str, lane: str, watch: str | None) -> None:
        try:
            ruling = await self.core.attention.teach(thread_id, lane)
        except NoSender as exc:
            self.screen.notify(clean_line(str(exc)), severity="warning", markup=False)
            return
        await self._apply([thread_id], [ruling], watch)

    async def _apply(self, ids: list[str], rulings: list[Ruling], watch: str | None) -> None:
        if not rulings:
            return
        changed = await self._change(ids, lambda _: [ruling.apply() for ruling in rulings], watch=watch)
        left = changed.left > 0
        self.screen.post_message(Triaged(ids, left=left, followed=left and changed.watched_left, at=changed.at))
        said = "; ".join(r.words(n) for r, n in zip(rulings, changed.result, strict=True))
        kept_here = any(r.contact is None for r in rulings)
        self.screen.notify(
            clean_line(said, limit=300),
            severity="warning" if kept_here else "information",
            markup=False,
            timeout=8 if kept_here else 4,
        )

    def why(self, thread_id: str | None, watch: str | None) -> None:
        """Say why a thread is where it is, and offer what can move it."""
        if not thread_id:
            self.screen.notify("No thread to explain.", markup=False)
            return
        self.run(self._why, thread_id, watch, group="attention", description="finding why")

    async def _why(self, thread_id: str, watch: str | None) -> None:
        reasons, choices = await self.core.attention.explained(thread_id)

        def chosen(choice: str | None) -> None:
            if choice == "lane":
                self.move_lane(thread_id, watch)
            elif choice in ("in", "out"):
                self.screen_sender([thread_id], "in" if choice == "in" else "out", domain=False, watch=watch)

        self.ask(WhyScreen(reasons, choices), chosen)

    def rules_left_out(self) -> None:
        """Say once, at start, that config.toml has rules that cannot be used (the others run)."""
        mistakes = self.core.rules.mistakes
        if mistakes:
            more = f" (and {len(mistakes) - 1} more: `pigeon rules check`)" if len(mistakes) > 1 else ""
            said = clean_line(f"A rule is left out: {mistakes[0]}{more}", limit=300)
            self.screen.notify(said, title="Rules", severity="warning", markup=False, timeout=10)

    def try_rules(self) -> None:
        """Show what each rule would change now; nothing is changed."""
        self.run(self._try_rules, group="attention", description="trying the rules")

    async def _try_rules(self) -> None:
        tried = await self.core.rules.tried(read_again=True)  # (the file as it is now: edited to be tried)
        lines = [f"Left out: {mistake}" for mistake in self.core.rules.mistakes]
        for found in tried:
            lines.append(found.said())
            lines += [f"  · {t.who} — {t.subject}" for t in found.threads[:TRIED_LISTED]]
            if found.count > min(len(found.threads), TRIED_LISTED):
                lines.append(f"  · and {found.count - min(len(found.threads), TRIED_LISTED)} more")
        lines.append("Nothing was changed." if tried else "No rules in config.toml ([[rules]]: see docs/rules.md).")
        self.ask(WhyScreen(lines, [], title="Rules, tried"), lambda _: None)
