"""What "unread", "done", "snoozed", "muted" and "starred" mean, and what each view holds, written once as SQL
conditions over ``threads t LEFT JOIN triage tr`` (``:now`` is the current time). Views and search operators use
these.

Triage rules, all relative to the thread's ``last_message_at``:

- *unread* until read up to the latest message (a new message makes it unread again);
- *done* leaves the inbox until a message newer than the moment it was done arrives;
- *snoozed* leaves the inbox until the snooze is due or a newer message arrives;
- *muted* leaves the inbox for good (new messages do not bring it back).

What needs the user (``store/screening.py`` keeps the columns): mail from a sender not let in waits in the
Screener, and mail kept out has a view of its own, both out of the inbox; the inbox's lanes are its threads by
lane; Owed is the People lane's threads whose last message a person wrote (oldest first); Waiting, the threads whose
last message the user wrote.
"""

from __future__ import annotations

UNREAD = "(tr.read_upto IS NULL OR t.last_message_at > tr.read_upto)"
READ = f"(NOT {UNREAD})"
DONE = "(tr.done_upto IS NOT NULL AND t.last_message_at <= tr.done_upto)"
SNOOZED = "(tr.snoozed_until IS NOT NULL AND tr.snoozed_until > :now AND t.last_message_at <= tr.snooze_upto)"
MUTED = "(COALESCE(tr.muted, 0) = 1)"
STARRED = "(COALESCE(tr.starred, 0) = 1)"
REMINDED = (
    "(COALESCE(tr.remind, 0) = 1 AND tr.snoozed_until IS NOT NULL AND tr.snoozed_until <= :now "
    "AND t.last_message_at <= tr.snooze_upto)"
)
"""A reminder come due with no answer since it was set."""

STATES = {
    "unread": UNREAD,
    "read": READ,
    "starred": STARRED,
    "done": DONE,
    "snoozed": SNOOZED,
    "muted": MUTED,
    "reminded": REMINDED,
}
"""The ``is:`` operator's values."""

LET_IN = "t.screen = 0"
STAYS = f"NOT {DONE} AND NOT {SNOOZED} AND NOT {MUTED}"
"""Not triaged out of the inbox (a thread with no triage row never is)."""
TRIAGED_OUT = "(tr.done_upto IS NOT NULL OR tr.snoozed_until IS NOT NULL OR COALESCE(tr.muted, 0) = 1)"
"""What a triage row triaged out of the inbox has (and more: a test on the row alone, before its thread is read)."""
INBOX = f"{LET_IN} AND {STAYS}"

INBOX_VIEWS = {
    "inbox": LET_IN,
    "people": f"t.lane = 'people' AND {LET_IN}",
    "newsletters": f"t.lane = 'newsletters' AND {LET_IN}",
    "notifications": f"t.lane = 'notifications' AND {LET_IN}",
    "receipts": f"t.lane = 'receipts' AND {LET_IN}",
    "owed": f"t.last_by = 'person' AND t.lane = 'people' AND {LET_IN}",
}
"""The inbox and its lanes, each by its condition on the thread alone: with ``STAYS``, the view's condition."""

VIEW_CONDITIONS = {  # (the cheap test that rules most threads out first: one pass counts every view)
    **{view: f"{condition} AND {STAYS}" for view, condition in INBOX_VIEWS.items()},
    "waiting": f"t.last_by = 'me' AND {LET_IN} AND NOT {MUTED}",
    "screener": f"t.screen = 1 AND NOT {DONE} AND NOT {MUTED}",
    "unread": f"t.screen != 2 AND {UNREAD} AND NOT {MUTED}",
    "starred": STARRED,
    "snoozed": SNOOZED,
    "done": DONE,
    "kept-out": "t.screen = 2",
    "all": "1",
}
VIEWS = tuple(VIEW_CONDITIONS)
LANE_VIEWS = ("people", "newsletters", "notifications", "receipts")
"""The inbox's lanes, as views."""
OLDEST_FIRST = frozenset({"owed"})
"""Views whose date order is the oldest first (what has waited longest)."""
LABEL_VIEW = "label:"

OLDEST = "t.last_message_at ASC, t.id"

SORTS = {
    "date": "t.last_message_at DESC, t.id",
    # By the other party: "You, Mike" sorts as Mike (a thread you answered last is still Mike's). t.id last: one
    # order, so pages never overlap.
    "sender": "CASE WHEN t.who LIKE 'You, %' THEN substr(t.who, 6) ELSE t.who END COLLATE NOCASE, "
    "t.last_message_at DESC, t.id",
    "subject": "t.subject COLLATE NOCASE, t.last_message_at DESC, t.id",
}
