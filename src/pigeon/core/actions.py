"""Every user action, described once: its id (the binding id users remap), what it is called, what it does, its
default key, and its CLI verbs. The TUI builds its bindings, help and palette from this table and the CLI its triage
commands, so a new action appears everywhere at once. How a change is worded is here too (:func:`describe`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Literal

from pigeon.store.triage import Change

Scope = Literal["app", "main", "reader", "find", "review"]
"""Where an action runs: anywhere (the app), on the mail screen, in the reader, in the reader while a find is on
(its keys come before the reader's), or on the review of a draft."""

Op = Literal["read", "star", "done", "snooze", "mute", "label", "remind"]
"""The store's triage operations."""


@dataclass(frozen=True)
class Verb:
    """A CLI command for an action: its name, its help, and the fixed arguments it passes to the operation."""

    name: str
    help: str
    on: bool = True


@dataclass(frozen=True)
class Action:
    id: str
    title: str
    help: str
    key: str | None = None
    invoke: str = ""
    """The action Textual runs for the key and the palette entry (on the scope's node)."""
    scope: Scope = "main"
    show: bool = True
    """Shown in the key bar."""
    palette: bool = True
    priority: bool = False
    op: Op | None = None
    """The store operation of a triage action; ``on`` fixed for it, or ``None`` when the key toggles."""
    on: bool | None = None
    verbs: tuple[Verb, ...] = field(default=())
    compose: str | None = None
    """The draft a hand-off action writes: ``reply``, ``reply_all``, ``forward``, ``forward_attached`` or ``new``."""


def _triage(
    ident: str, title: str, help_text: str, key: str, op: Op, *verbs: Verb, on: bool | None = None, show: bool = True
) -> Action:
    return Action(f"triage.{ident}", title, help_text, key, f"triage('{ident}')", op=op, on=on, verbs=verbs, show=show)


def _compose(kind: str, title: str, help_text: str, key: str, verb: str, *, show: bool = False) -> Action:
    return Action(
        f"compose.{kind}",
        title,
        help_text,
        key,
        f"compose('{kind}')",
        show=show,
        compose=kind,
        verbs=(Verb(verb, f"{help_text[0].lower()}{help_text[1:]} (in $EDITOR, then the send command)"),),
    )


def _review(ident: str, title: str, help_text: str, key: str, invoke: str, *, show: bool = True) -> Action:
    # (the review is its own screen: its keys are not offered in the mail screen's palette)
    return Action(f"review.{ident}", title, help_text, key, invoke, scope="review", show=show, palette=False)


VERB_HELP = {
    "let-in": "let the senders of threads in: their mail comes to the inbox",
    "keep-out": "keep the senders of threads out: their mail goes to Kept out, silently",
    "lane": "send the mail of a thread's sender to a lane from now on",
    "why": "why a thread is in its view and its lane",
    "rules": "check the rules in config.toml (check), or list what each would change now (try)",
}


def _attend(ident: str, title: str, help_text: str, key: str | None, invoke: str, verb: str = "") -> Action:
    verbs = (Verb(verb, VERB_HELP[verb]),) if verb else ()
    return Action(f"attention.{ident}", title, help_text, key, invoke, show=False, verbs=verbs)


def _reader(ident: str, title: str, help_text: str, key: str, invoke: str, *, show: bool = False) -> Action:
    return Action(f"reader.{ident}", title, help_text, key, invoke, "reader", show)


def _view(key: str | None, view: str, title: str) -> Action:
    # (the palette lists every view, labels too, as "View: ...": see the TUI's palette)
    return Action(f"view.{view}", title, f"Show {title.lower()}", key, f"view('{view}')", show=False, palette=False)


ACTIONS: tuple[Action, ...] = (
    # the app, everywhere
    Action("app.quit", "Quit", "Leave Pigeon", "q", "quit", scope="app"),
    Action("app.help", "Help", "Every key of this context", "question_mark", "help", scope="app"),
    Action("app.create_inbox", "Create inbox", "Add an inbox to the account", None, "create_inbox", scope="app"),
    Action("app.create_webhook", "Create webhook", "Subscribe a URL to message events", None, "create_webhook", "app"),
    Action("app.logout", "Log out", "Forget the stored token and show the login screen", None, "logout", scope="app"),
    # the mail screen
    Action("main.back", "Back", "Back to the list; clear the filter", "escape", "back", palette=False),
    Action(
        "main.refresh",
        "Refresh",
        "Load inboxes and threads again",
        "ctrl+r",
        "refresh",
        show=False,  # (mail is checked for on its own; the key is in the help and the palette)
        verbs=(Verb("sync", "bring the local store up to date (only what changed)"),),
    ),
    Action(
        "main.filter",
        "Search",
        "Search as you type (from: to: is: label: ...)",
        "slash",
        "filter",
        priority=True,  # run before the app hands on the keys typed after it, so those reach the search box
        verbs=(Verb("search", "search the local store"),),
    ),
    Action("main.zoom", "Zoom", "Reader full screen (again to go back)", "Z", "zoom", show=False),
    _compose("reply", "Reply", "Reply to the sender", "r", "reply", show=True),  # (early: kept in a narrow key bar)
    Action("main.contacts", "Contacts", "Every contact seen in mail; search, sort, edit", "b", "contacts"),
    _triage(
        "done",
        "Done",
        "Out of the inbox until new mail (in Done: back)",
        "e",
        "done",
        Verb("done", "mark threads done (they leave the inbox until new mail arrives)"),
        Verb("undone", "bring threads back to the inbox", on=False),
    ),
    _triage(
        "star",
        "Star",
        "Star or unstar",
        "s",
        "star",
        Verb("star", "star threads"),
        Verb("unstar", "unstar threads", False),
    ),
    _triage("read", "Read", "Mark read", "m", "read", Verb("read", "mark threads read"), on=True, show=False),
    _triage(
        "unread",
        "Unread",
        "Mark unread",
        "U",
        "read",
        Verb("unread", "mark threads unread", False),
        on=False,
        show=False,
    ),
    _triage(
        "snooze",
        "Snooze",
        "Hide until a time or new mail",
        "z",
        "snooze",
        Verb("snooze", "hide threads until a time or new mail"),
    ),
    _triage(
        "remind",
        "Remind me",
        "If no answer by a time: back in the inbox then (on a thread you wrote last)",
        "T",
        "remind",
        Verb("remind", "bring threads you wrote last back to the inbox at a time if no answer came"),
        show=False,
    ),
    _triage(
        "label", "Label", "Add or remove a label", "l", "label", Verb("label", "add or remove a label"), show=False
    ),
    _triage(
        "mute",
        "Mute",
        "Keep out of the inbox for good",
        "M",
        "mute",
        Verb("mute", "mute threads (they stay out of the inbox)"),
        Verb("unmute", "unmute threads", on=False),
        show=False,
    ),
    Action("triage.select", "Select", "Select for bulk actions", "x", "select", show=False, palette=False),
    Action("triage.select_down", "Select down", "Extend the selection down", "shift+down", "select(1)", show=False),
    Action("triage.select_up", "Select up", "Extend the selection up", "shift+up", "select(-1)", show=False),
    Action("triage.select_all", "Select all", "Select every thread of the view (again: none)", "ctrl+a", "select_all"),
    Action(
        "triage.undo",
        "Undo",
        "Take back the last action",
        "u",
        "undo",
        verbs=(Verb("undo", "take back the last triage step"),),
    ),
    Action("main.sort", "Sort", "By date, sender or subject", "o", "sort", show=False),
    _compose("reply_all", "Reply all", "Reply to everyone on the message", "R", "reply-all"),
    _compose("forward", "Forward", "Forward the message", "f", "forward"),
    _compose("new", "Compose", "Write a new message", "C", "compose"),
    Action("compose.drafts", "Drafts", "Drafts kept unsent: review one to edit, send or discard it", "D", "drafts"),
    _compose(
        "forward_attached", "Forward as attachment", "Forward the message as an attached file", "F", "forward-attached"
    ),
    _view("1", "inbox", "Inbox"),
    _view("2", "unread", "Unread"),
    _view("3", "starred", "Starred"),
    _view("4", "snoozed", "Snoozed"),
    _view("5", "done", "Done view"),
    _view("6", "all", "All mail"),
    _view("7", "people", "People"),
    _view("8", "newsletters", "Newsletters"),
    _view("9", "notifications", "Notifications"),
    _view("0", "receipts", "Receipts"),
    _view("S", "screener", "Screener"),
    _view(None, "owed", "Owed"),
    _view(None, "waiting", "Waiting"),
    _view(None, "kept-out", "Kept out"),
    # what needs you: the Screener's decisions, lanes, why (I and X are named by the Screener's status line)
    _attend(
        "let_in", "Let in", "Let the sender in: their mail comes to the Inbox", "I", "screen_sender('in')", "let-in"
    ),
    _attend(
        "keep_out", "Keep out", "Keep the sender out: to Kept out, silently", "X", "screen_sender('out')", "keep-out"
    ),
    _attend(
        "let_in_domain", "Let in domain", "Let everyone at the sender's domain in", None, "screen_sender('in', True)"
    ),
    _attend(
        "keep_out_domain",
        "Keep out domain",
        "Keep everyone at the sender's domain out",
        None,
        "screen_sender('out', True)",
    ),
    _attend(
        "lane", "Move to lane", "Send the sender's mail to another lane (Pigeon learns it)", "v", "move_lane", "lane"
    ),
    _attend("why", "Why is this here?", "The Screener's decision or the signals behind the lane", "W", "why", "why"),
    Action(
        "rules.try",
        "Try rules",
        "What each rule would change now (nothing is changed)",
        None,
        "try_rules",
        show=False,
        verbs=(Verb("rules", VERB_HELP["rules"]),),
    ),
    # the reader
    Action("reader.next", "Next thread", "Open the next thread of the list", "J", "step(1)", scope="reader"),
    Action("reader.previous", "Previous thread", "Open the previous thread", "K", "step(-1)", "reader", show=False),
    Action("reader.back", "Back", "Back to the list", "h", "screen.back", scope="reader", palette=False),
    Action(
        "reader.links",
        "Links",
        "The message's links: open (enter, 1-9) or copy (y)",
        "L",
        "hand_off('links')",
        "reader",
    ),
    Action("reader.quotes", "Quotes", "Show or fold quoted text", "t", "toggle_quotes", "reader", show=False),
    _reader("save", "Save attachment", "Save an attachment into the download folder", "a", "hand_off('save')"),
    _reader("open", "Open attachment", "Open an attachment with its program", "O", "hand_off('open')"),
    Action("reader.edit_sender", "Edit sender", "Edit the sender's contact", "c", "edit_sender", "reader", False),
    # the reader's message cursor, folds and find
    Action("reader.next_message", "Next msg", "Next message of the thread", "n", "next_message", "reader"),
    Action("reader.previous_message", "Previous msg", "Previous message", "p", "previous_message", "reader", False),
    Action("reader.first_new", "First new", "First message new since you last read", "N", "first_new", "reader", False),
    Action(
        "reader.first_message",
        "First msg",
        "First message of the thread",
        "less_than_sign",
        "first_message",
        "reader",
        False,
    ),
    Action(
        "reader.last_message",
        "Last msg",
        "Last message of the thread",
        "greater_than_sign",
        "last_message",
        "reader",
        False,
    ),
    Action("reader.fold", "Fold", "Fold or unfold the message under the cursor", "enter", "fold", "reader", False),
    Action(
        "reader.unfold_all",
        "Unfold all",
        "Unfold every message (again: fold those read)",
        "E",
        "unfold_all",
        "reader",
        False,
    ),
    Action(
        "reader.find",
        "Find",
        "Find words in the open thread",
        "slash",
        "find",
        "reader",
        palette=False,
        priority=True,  # (as the list's search: the keys typed after it reach the find box)
    ),
    Action("reader.next_hit", "Next hit", "Next place the find found", "n", "next_hit", "find", False, palette=False),
    Action(
        "reader.previous_hit", "Previous hit", "Previous place found", "N", "previous_hit", "find", False, palette=False
    ),
    # the reader: a message's text out of Pigeon (the message under the message cursor)
    Action(
        "reader.raw",
        "Raw message",
        "Every field the service sent for the message",
        "H",
        "hand_off('raw')",
        "reader",
        False,
    ),
    Action(
        "reader.pipe",
        "Pipe",
        "Give the message to a command on its standard input",
        "vertical_line",
        "hand_off('pipe')",
        "reader",
        False,
    ),
    _reader("write", "Write to file", "Write the message as mail text to a file", "w", "hand_off('write')"),
    Action("reader.copy", "Copy", "Copy the message's text to the clipboard", "y", "hand_off('copy')", "reader", False),
    # the review of a draft, after the editor
    _review("send", "Send", "Send the message now", "y", "send"),
    _review("edit", "Edit", "Edit the draft again", "e", "edit"),
    _review("to", "To", "Change the To addresses", "t", "addresses('To')"),
    _review("cc", "Cc", "Change the Cc addresses", "c", "addresses('Cc')"),
    _review("attach", "Attach", "Attach a file (type its path)", "a", "attach"),
    _review("detach", "Remove file", "Remove an attached file", "x", "detach"),
    _review("postpone", "Postpone", "Keep the draft for later (pigeon drafts)", "p", "postpone"),
    _review("discard", "Discard", "Drop the draft (asks first)", "d", "discard"),
    _review("back", "Back", "Close the field typed in; else postpone", "escape", "back", show=False),
)

BY_ID: Mapping[str, Action] = MappingProxyType({action.id: action for action in ACTIONS})


def actions(scope: Scope) -> Iterator[Action]:
    return (action for action in ACTIONS if action.scope == scope)


def verbs() -> Iterator[tuple[Action, Verb]]:
    """Every CLI verb with its action."""
    return ((action, verb) for action in ACTIONS for verb in action.verbs)


# --- wording ----------------------------------------------------------------------------------------------------


def plural(count: int, noun: str = "thread") -> str:
    return f"{count} {noun}{'s' if count != 1 else ''}"


def describe(change: Change) -> str:
    """A change in words, alike in the TUI's notes and the CLI's output."""
    if change.count == 0 and change.kind != "said":
        if change.kind == "label":
            had = "already had" if change.on else "did not have"
            return f"Nothing changed: the threads {had} the label {change.detail!r}"
        return "Nothing changed: the threads were already so"
    threads = plural(change.count)
    if change.kind == "read":
        return f"{'Read' if change.on else 'Unread'}: {threads}"
    if change.kind == "star":
        return f"{'Starred' if change.on else 'Unstarred'}: {threads}"
    if change.kind == "done":
        return f"{'Done' if change.on else 'Back in the inbox'}: {threads}"
    if change.kind == "mute":
        return f"{'Muted' if change.on else 'Unmuted'}: {threads}"
    if change.kind == "label":
        return f"{'Labelled' if change.on else 'Unlabelled'} {change.detail!r}: {threads}"
    if change.kind == "snooze":
        return f"Snoozed until {datetime.fromisoformat(change.detail).astimezone():%a %d %b %H:%M}: {threads}"
    if change.kind == "remind":
        when = datetime.fromisoformat(change.detail).astimezone()
        return f"Back in the inbox {when:%a %d %b %H:%M} if no answer comes: {threads}"
    if change.kind == "rule":
        return f"Rule {change.detail!r}: {threads}"
    return change.detail  # a step recorded as words by an older Pigeon
