"""Mail drafts from the command line: ``pigeon reply THREAD`` (and ``reply-all``, ``forward``, ``compose``: the
hand-off verbs of the action registry) opens the editor here, then, on a terminal, asks whether to send, edit again,
postpone or discard (``--send`` or ``[compose] review = false``: it sends at once); ``pigeon drafts`` lists what is
waiting, ``pigeon drafts send ID`` tries again, ``edit`` and ``discard`` too."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from pigeon.cli.common import core_of
from pigeon.cli.output import EXIT_OK, EXIT_SERVICE, UsageError, fail, table, when
from pigeon.core.actions import BY_ID
from pigeon.sanitize import clean_line

if TYPE_CHECKING:
    from pigeon.core.drafts import Drafts, MailDraft
    from pigeon.models import Message, Thread


def cmd_compose(args: argparse.Namespace, out: TextIO) -> int:
    """A hand-off verb of the registry (``args.action_id``): write the draft, edit it here, send it."""
    from pigeon.core.compose import KINDS
    from pigeon.core.errors import UnknownThread

    core = core_of(args, online=False)
    kind = next(k for k in KINDS if k == BY_ID[args.action_id].compose)
    if kind == "forward" and getattr(args, "attached", False):
        kind = "forward_attached"
    thread_id = ""
    if kind != "new":
        try:
            thread_id = core.resolve_threads([args.thread])[0]
        except UnknownThread as exc:
            raise UsageError(f"Not in the local store (run `pigeon sync`?): {exc}") from None

    async def prepare() -> tuple[Thread | None, Sequence[Message]]:
        await core.load_saved()
        return await core.stored_thread(thread_id) if thread_id else (None, [])

    thread, messages = asyncio.run(prepare())
    if kind != "new" and not messages:
        raise UsageError("The thread's messages are not in the local store: run `pigeon sync` first.")
    message_id = _message_of(messages, getattr(args, "message", None))
    drafts = core.handoff.drafts
    try:
        draft = drafts.start(kind, thread, messages, core.inboxes, core.contacts, message_id=message_id)
    except OSError as exc:  # (a full disk, a read-only data folder)
        raise UsageError(f"Cannot write the draft in {drafts.folder}: {exc.strerror or exc}") from None
    return _edit_then_send(drafts, draft, out, ask=_asks(drafts, args))


def _message_of(messages: Sequence[Message], given: str | None) -> str | None:
    """The id of the thread's message ``given`` names (whole, or a unique beginning); ``None`` when not given."""
    if given is None:
        return None
    text = given.strip()
    found = [m.id for m in messages if m.id and text and m.id.startswith(text)]
    if text in found:
        return text
    if len(found) != 1:
        why = "names several of its messages; give more of the id" if found else "is not a message of this thread"
        raise UsageError(f"{clean_line(given, limit=40)!r} {why} (pigeon messages list --thread THREAD lists them)")
    return found[0]


def _asks(drafts: Drafts, args: argparse.Namespace) -> bool:
    """Whether to ask before sending: on a terminal, unless ``--send`` or ``[compose] review = false``."""
    return drafts.config.compose.review and not getattr(args, "send", False) and on_terminal()


def on_terminal() -> bool:
    return sys.stdin.isatty()


ANSWERS = {"y": "send", "yes": "send", "e": "edit", "edit": "edit", "p": "postpone", "postpone": "postpone"}
ANSWERS |= {"d": "discard", "discard": "discard"}


def _edit_then_send(
    drafts: Drafts, draft: MailDraft, out: TextIO, *, drop_unchanged: bool = True, ask: bool = False
) -> int:
    """The editor on the draft here, then the send command if it was changed (a new draft left as it was is
    dropped; a kept one stays). With ``ask``, the user says first: send, edit again, postpone or discard."""
    from pigeon.core.programs import ProgramFailed

    while True:
        try:
            edited = drafts.edit(draft, drop_unchanged=drop_unchanged)
        except ProgramFailed as exc:
            raise UsageError(f"{exc} (the draft is kept: pigeon drafts)") from None
        if not edited.changed and drop_unchanged:
            out.write(edited.said + "\n")
            return EXIT_OK
        if not ask:
            if not edited.changed:
                out.write(edited.said + "\n")
                return EXIT_OK
            return _send(drafts, draft, out)
        answer = _answer(out)
        if answer == "send":
            return _send(drafts, draft, out)
        if answer == "discard":
            drafts.discard(draft)
            out.write(f"Discarded {draft.id}.\n")
            return EXIT_OK
        if answer == "postpone":
            out.write(f"Kept: pigeon drafts send {draft.id} (or edit {draft.id}).\n")
            return EXIT_OK
        drop_unchanged = False  # (edit again: a draft left as it was is kept, and asked about again)


def _answer(out: TextIO) -> str:
    """What the user answers to "Send?" (asked again until it is one of the four; the end of input postpones)."""
    while True:
        out.write("Send? [y]es [e]dit [p]ostpone [d]iscard ")
        out.flush()
        line = sys.stdin.readline()
        if not line:
            out.write("\n")
            return "postpone"
        found = ANSWERS.get(line.strip().lower())
        if found:
            return found


def _send(drafts: Drafts, draft: MailDraft, out: TextIO) -> int:
    from pigeon.core.drafts import SendFailed

    try:
        out.write(drafts.send(draft) + "\n")
    except SendFailed as exc:
        return fail(str(exc), EXIT_SERVICE)
    return EXIT_OK


def cmd_drafts(args: argparse.Namespace, out: TextIO) -> int:
    """List the drafts not sent, or send, edit or discard one."""
    from pigeon.core.drafts import UnknownDraft, size_words

    drafts = core_of(args, online=False, local=False).handoff.drafts
    action = getattr(args, "draft_action", None) or "list"
    if action == "list":
        waiting = drafts.all()
        if not waiting:
            out.write("No drafts waiting: every reply was sent.\n")
            return EXIT_OK
        rows = [(d.id, when(d.saved_at), *drafts.summary(d)) for d in waiting]
        out.write(table(("ID", "WRITTEN", "TO", "SUBJECT"), rows) + "\n")
        for draft in waiting:  # (the command's own words, whole: a table cell would cut them)
            out.write(f"{draft.id}: {clean_line(drafts.status(draft))}\n")
            if draft.files:
                files = ", ".join(f"{clean_line(f.name, limit=80)} ({size_words(f.size)})" for f in draft.files)
                out.write(f"{draft.id}: attached {files}\n")
        out.write("pigeon drafts send ID sends one again; edit ID opens it; discard ID drops it.\n")
        return EXIT_OK
    try:
        draft = drafts.get(args.draft_id)
    except UnknownDraft as exc:
        raise UsageError(str(exc)) from None
    if action == "discard":
        try:
            drafts.discard(draft)
        except OSError as exc:
            raise UsageError(f"Cannot discard {draft.id} in {drafts.folder}: {exc.strerror or exc}") from None
        out.write(f"Discarded {draft.id}.\n")
        return EXIT_OK
    if action == "edit":
        return _edit_then_send(drafts, draft, out, drop_unchanged=False, ask=_asks(drafts, args))
    return _send(drafts, draft, out)
