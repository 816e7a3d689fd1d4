"""The mail screen's triage part: the registry's triage actions on threads (asking first before a big bulk change,
a time for a snooze, a name for a label), undo, and marking an opened thread read; each change is said in a note.

Interface: :meth:`TriagePart.act` (a triage key), :meth:`run` (a change on threads), :meth:`undo`,
:meth:`mark_read`. It is given, at construction, how the list changes threads (:data:`ChangeThreads`). Up:
:class:`Triaged`, once a change is made."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

from textual.content import Content
from textual.message import Message
from textual.screen import Screen

from pigeon.core.actions import BY_ID, Action, describe
from pigeon.core.mail import MailCore
from pigeon.sanitize import clean_line
from pigeon.tui.screens.mail.part import Part
from pigeon.tui.screens.mail.threads import Changed
from pigeon.tui.screens.modals import ConfirmScreen, InputScreen
from pigeon.tui.screens.pickers import SnoozePicker

BULK_CONFIRM = 50  # a bulk action on more threads than this asks first (marking read never does: two keys)

ChangeThreads = Callable[..., Awaitable[Changed]]
"""The list's :meth:`~pigeon.tui.screens.mail.threads.ThreadsPart.change`: a change made off the UI's path, then
the list as it is after it."""


class Triaged(Message, bubble=False):
    """A change was made on threads ``ids``: ``left`` if it took threads out of the view, ``followed`` if the
    thread open in the reader was one of them (the cursor was at ``at``)."""

    def __init__(self, ids: list[str], *, left: bool, followed: bool, at: int) -> None:
        super().__init__()
        self.ids = ids
        self.left = left
        self.followed = followed
        self.at = at


class TriagePart(Part):
    """Changes to threads: done, star, snooze, mute, label, read, and undo."""

    def __init__(self, screen: Screen[None], core: MailCore, change: ChangeThreads) -> None:
        super().__init__(screen, core)
        self._change = change

    def act(self, action_id: str, ids: list[str], *, turns_on: bool, watch: str | None) -> None:
        """A triage action of the registry on threads ``ids`` (``turns_on``: what a toggling key does; ``watch``,
        the thread open in the reader). On more than ``BULK_CONFIRM`` threads it asks first, saying how many
        (marking read aside)."""
        action = BY_ID[f"triage.{action_id}"]
        if len(ids) > BULK_CONFIRM and action.op != "read":
            question = Content(f"{action.title}: all {len(ids):,} selected threads? (u takes it back in one step)")

            def answer(yes: bool | None) -> None:
                if yes:
                    self._act_on(action, ids, turns_on, watch)

            self.ask(ConfirmScreen(question, yes=action.title, no="Cancel"), answer)
            return
        self._act_on(action, ids, turns_on, watch)

    def _act_on(self, action: Action, ids: list[str], turns_on: bool, watch: str | None) -> None:
        core = self.core
        if not ids:
            self.screen.notify("No thread to act on.", markup=False)
        elif action.op in ("snooze", "remind"):

            def picked(when: datetime | None) -> None:
                if when is not None:
                    self.run_change(ids, lambda chosen: core.apply(action, chosen, until=when), watch=watch)

            title = "Back in the inbox, if no answer, on…" if action.op == "remind" else "Snooze until…"
            self.ask(SnoozePicker(core.clock, title=title), picked)
        elif action.op == "label":

            def typed(text: str | None) -> None:
                if text:
                    name, on = (text[1:], False) if text.startswith("-") else (text, True)
                    self.run_change(ids, lambda chosen: core.apply(action, chosen, label=name, on=on), watch=watch)

            self.ask(InputScreen("Label", "A label to add; -label removes it"), typed)
        else:
            on = turns_on if action.on is None else action.on
            self.run_change(ids, lambda chosen: core.apply(action, chosen, on=on), watch=watch)

    def run_change(self, ids: list[str], change: Callable[[list[str]], Any], *, watch: str | None = None) -> None:
        """Make ``change`` on threads ``ids``, then say what it did (u undoes it)."""
        self.run(self._run, ids, change, watch, group="triage", description="changing the threads")

    async def _run(self, ids: list[str], change: Callable[[list[str]], Any], watch: str | None) -> None:
        try:
            changed = await self._change(ids, change, watch=watch)
            said = describe(changed.result)
        except ValueError as exc:  # a label too long, say
            self.screen.notify(clean_line(str(exc)), severity="warning", markup=False)
            return
        left = changed.left > 0
        followed = left and watch is not None and changed.watched_left
        self.screen.post_message(Triaged(ids, left=left, followed=followed, at=changed.at))
        self.screen.notify(f"{said} — u to undo" if changed.result.count else said, markup=False, timeout=4)

    def undo(self) -> None:
        """Take the last change back."""
        self.run(self._undo, group="triage", description="undoing")

    async def _undo(self) -> None:
        from pigeon.core.errors import DamagedStep, damaged_step_words

        core = self.core
        try:
            changed = await self._change(lambda: core.undo_targets(), lambda _: core.undo(), back=True)
        except DamagedStep as exc:
            self.screen.notify(damaged_step_words(exc), severity="warning", markup=False, timeout=8)
            return
        change = changed.result
        self.screen.notify(f"Undone: {describe(change)}" if change else "Nothing to undo.", markup=False, timeout=4)

    def mark_read(self, thread_id: str) -> None:
        """Mark a thread read (it was opened)."""
        self.run(self._mark_read, thread_id, group="mark-read", description="marking the thread read")

    async def _mark_read(self, thread_id: str) -> None:
        await self._change([thread_id], self.core.mark_opened)
