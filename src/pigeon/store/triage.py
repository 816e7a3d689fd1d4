"""Pigeon's own triage state (the service has none): read, starred, done, snoozed, muted, labels; and the undo
stack, kept across restarts. Each change returns what happened (:class:`Change`); the callers word it."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Sequence, Set
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from typing import Any

from pigeon.sanitize import clean_line
from pigeon.sqlite import Database
from pigeon.store.cache import UnknownThread, iso
from pigeon.store.decisions import settle

UNDO_KEEP = 200
LABEL_MAX = 60
KINDS = ("read", "star", "done", "snooze", "mute", "label", "remind", "rule")


class DamagedStep(Exception):
    """The last undo step's changes cannot be read or applied (a damaged store): nothing was changed and the step
    is kept. ``change`` is what the step says it did (the callers word it)."""

    def __init__(self, change: Change) -> None:
        super().__init__(f"the undo step {change.kind!r} is damaged")
        self.change = change


_NO_TRIAGE = {
    "read_upto": None,
    "starred": 0,
    "done_upto": None,
    "snoozed_until": None,
    "snooze_upto": None,
    "muted": 0,
    "remind": 0,
    "lane": "",
    "rule": "",
    "lane_rule": "",
}


def _state(item: dict[str, Any]) -> tuple[Any, ...]:
    """What a snapshot says of a thread, a missing triage row read as the defaults it stands for (the rule that
    last acted on it aside: naming it changes nothing the user sees)."""
    triage = {**_NO_TRIAGE, **(item["triage"] or {})}
    triage.pop("thread_id", None)
    triage.pop("rule", None)
    return tuple(sorted(triage.items())), tuple(sorted(item["labels"]))


def _label(value: object) -> bool:
    return isinstance(value, str) and 0 < len(value) <= LABEL_MAX and value.isprintable()


def _item(item: object, columns: Set[str]) -> bool:
    """Whether one thread's snapshot in an undo step is one Pigeon wrote: the triage table's ``columns``, plain
    values, labels as a label may be."""
    if not isinstance(item, dict) or not isinstance(item.get("thread_id"), str) or not item["thread_id"]:
        return False
    labels, triage = item.get("labels"), item.get("triage")
    if not isinstance(labels, list) or not all(_label(label) for label in labels):
        return False
    if triage is None:
        return True
    return (
        isinstance(triage, dict)
        and set(triage) <= columns
        and triage.get("thread_id", item["thread_id"]) == item["thread_id"]
        and all(value is None or type(value) in (str, int) for value in triage.values())
    )


def _steps(text: object, columns: Set[str]) -> list[dict[str, Any]] | None:
    """An undo step's changes, or ``None`` when its record is damaged (then it is applied in no part)."""
    try:
        items = json.loads(text) if isinstance(text, str | bytes) else None
    except ValueError:
        return None
    if not isinstance(items, list) or not items or not all(_item(item, columns) for item in items):
        return None
    return items


@dataclass(frozen=True)
class Change:
    """What a triage step did: its kind (``read``, ``star``, ``done``, ``snooze``, ``mute``, ``label``), how many
    threads, whether it turned the state on or off, and its detail (the label; the snooze's end, ISO 8601)."""

    kind: str
    count: int
    on: bool = True
    detail: str = ""

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Change:
        """A recorded change; anything else (words of an older Pigeon, a damaged record) as its text, cleaned."""
        try:
            data = json.loads(text)
            change = cls(str(data["kind"]), int(data["count"]), bool(data.get("on", True)), str(data.get("detail", "")))
            if change.kind not in KINDS or change.count < 0 or not change.detail.isprintable():
                raise ValueError(change.kind)
            if change.kind in ("snooze", "remind"):
                datetime.fromisoformat(change.detail)
        except (ValueError, KeyError, TypeError, AttributeError, OverflowError):
            return cls("said", 0, True, clean_line(text, limit=120) or "(a step with no description)")
        return change


@dataclass(frozen=True)
class UndoStep:
    seq: int
    change: Change


Apply = Callable[[sqlite3.Connection, str, str], None]


class _DryRun(Exception):
    """A rule tried: what it would change, its transaction taken back."""

    def __init__(self, changed: list[str]) -> None:
        super().__init__("dry run")
        self.changed = changed


Ruled = Callable[[sqlite3.Connection, dict[str, str]], None]


def _ruled(sql: str) -> Ruled:
    """One thing a rule does, as an UPDATE of the triage row (``:id``, ``:last``: the thread's last message time,
    ``:value``, ``:rule``: its name)."""

    def run(conn: sqlite3.Connection, params: dict[str, str]) -> None:
        conn.execute(sql, params)

    return run


_RULED: dict[str, Ruled] = {
    "label": _ruled("INSERT OR IGNORE INTO labels (thread_id, label) VALUES (:id, :value)"),
    "done": _ruled(
        "UPDATE triage SET done_upto = :last, snoozed_until = NULL, snooze_upto = NULL, remind = 0 "
        "WHERE thread_id = :id"
    ),
    "mute": _ruled("UPDATE triage SET muted = 1 WHERE thread_id = :id"),
    "star": _ruled("UPDATE triage SET starred = 1 WHERE thread_id = :id"),
    "lane": _ruled(  # (a thread already in the lane is left as it is)
        "UPDATE triage SET lane = :value, lane_rule = :rule "
        "WHERE thread_id = :id AND (SELECT lane FROM threads WHERE id = :id) != :value"
    ),
    "snooze": _ruled(
        "UPDATE triage SET snoozed_until = :value, snooze_upto = :last, done_upto = NULL, remind = 0 "
        "WHERE thread_id = :id"
    ),
}
RULE_DOES = tuple(_RULED)
"""What a rule may do."""


class TriageStore(Database):
    """Triage changes, each one undo step."""

    @staticmethod
    def _snapshot(conn: sqlite3.Connection, ids: Iterable[str]) -> list[dict[str, Any]]:
        snapshot = []
        for thread_id in ids:
            row = conn.execute("SELECT * FROM triage WHERE thread_id = ?", (thread_id,)).fetchone()
            labels = [r["label"] for r in conn.execute("SELECT label FROM labels WHERE thread_id = ?", (thread_id,))]
            snapshot.append({"thread_id": thread_id, "triage": dict(row) if row else None, "labels": labels})
        return snapshot

    def _change(self, ids: Sequence[str], change: Change, apply: Apply, *, record: bool = True) -> Change:
        """Run ``apply(conn, thread_id, last_message_at)`` for each thread, recording one undo step (unless
        ``record`` is false: opening a thread marks it read without filling the undo stack)."""
        unique = list(dict.fromkeys(ids))
        with self.transaction() as conn:
            known = {
                r["id"]: r["last_message_at"]
                for r in conn.execute(  # (one parameter for any number of ids: a select-all may name 100,000)
                    "SELECT id, last_message_at FROM threads WHERE id IN (SELECT value FROM json_each(?))",
                    (json.dumps(unique),),
                )
            }
            missing = [i for i in unique if i not in known]
            if missing:
                raise UnknownThread(", ".join(missing))
            before = self._snapshot(conn, unique)
            for thread_id in unique:
                conn.execute("INSERT OR IGNORE INTO triage (thread_id) VALUES (?)", (thread_id,))
                apply(conn, thread_id, known[thread_id])
            after = self._snapshot(conn, unique)
            changed = sum(1 for old, new in zip(before, after, strict=True) if _state(old) != _state(new))
            change = replace(change, count=changed)
            if record and changed:  # a step that changed nothing is no step: undo takes back the last real one
                conn.execute(
                    "INSERT INTO undo (description, changes, created_at) VALUES (?, ?, ?)",
                    (change.to_json(), json.dumps(before), iso(datetime.now(UTC))),
                )
                conn.execute(
                    "DELETE FROM undo WHERE seq NOT IN (SELECT seq FROM undo ORDER BY seq DESC LIMIT ?)", (UNDO_KEEP,)
                )
        return change

    def mark_read(self, ids: Sequence[str], read: bool = True, *, record: bool = True) -> Change:
        def apply(conn: sqlite3.Connection, thread_id: str, last: str) -> None:
            conn.execute("UPDATE triage SET read_upto = ? WHERE thread_id = ?", (last if read else None, thread_id))

        return self._change(ids, Change("read", len(set(ids)), read), apply, record=record)

    def read_upto(self, thread_id: str) -> datetime | None:
        """The moment up to which the thread was read here (its newest message when it was last marked read)."""
        rows = self.rows("SELECT read_upto FROM triage WHERE thread_id = ?", (thread_id,))
        if not rows or not rows[0][0]:
            return None
        try:
            return datetime.fromisoformat(rows[0][0])
        except ValueError:  # a damaged row reads as never read
            return None

    def star(self, ids: Sequence[str], on: bool = True) -> Change:
        def apply(conn: sqlite3.Connection, thread_id: str, last: str) -> None:
            conn.execute("UPDATE triage SET starred = ? WHERE thread_id = ?", (int(on), thread_id))

        return self._change(ids, Change("star", len(set(ids)), on), apply)

    def done(self, ids: Sequence[str], on: bool = True) -> Change:
        def apply(conn: sqlite3.Connection, thread_id: str, last: str) -> None:
            conn.execute(
                "UPDATE triage SET done_upto = ?, snoozed_until = NULL, snooze_upto = NULL, remind = 0 "
                "WHERE thread_id = ?",
                (last if on else None, thread_id),
            )

        return self._change(ids, Change("done", len(set(ids)), on), apply)

    def snooze(self, ids: Sequence[str], until: datetime, *, remind: bool = False) -> Change:
        def apply(conn: sqlite3.Connection, thread_id: str, last: str) -> None:
            conn.execute(
                "UPDATE triage SET snoozed_until = ?, snooze_upto = ?, done_upto = NULL, remind = ? "
                "WHERE thread_id = ?",
                (iso(until), last, int(remind), thread_id),
            )

        kind = "remind" if remind else "snooze"
        return self._change(ids, Change(kind, len(set(ids)), True, until.astimezone(UTC).isoformat()), apply)

    def remind(self, ids: Sequence[str], until: datetime) -> Change:
        """Out of the inbox until ``until``, then back if no answer came (an answer brings it back at once, and
        the reminder is over)."""
        return self.snooze(ids, until, remind=True)

    def mute(self, ids: Sequence[str], on: bool = True) -> Change:
        def apply(conn: sqlite3.Connection, thread_id: str, last: str) -> None:
            conn.execute("UPDATE triage SET muted = ? WHERE thread_id = ?", (int(on), thread_id))

        return self._change(ids, Change("mute", len(set(ids)), on), apply)

    def label(self, ids: Sequence[str], label: str, on: bool = True) -> Change:
        label = " ".join(label.split())
        if not label or len(label) > LABEL_MAX:
            raise ValueError(f"a label is 1 to {LABEL_MAX} characters")
        if not label.isprintable():
            raise ValueError("a label is printable text: no control characters")

        def apply(conn: sqlite3.Connection, thread_id: str, last: str) -> None:
            if on:
                conn.execute("INSERT OR IGNORE INTO labels (thread_id, label) VALUES (?, ?)", (thread_id, label))
            else:
                conn.execute("DELETE FROM labels WHERE thread_id = ? AND label = ?", (thread_id, label))

        return self._change(ids, Change("label", len(set(ids)), on, label), apply)

    def rule(self, ids: Sequence[str], name: str, does: Sequence[tuple[str, str]], *, dry: bool = False) -> list[str]:
        """What rule ``name`` ``does`` (``("label", name)``, ``("done", "")``, ``("mute", "")``, ``("star", "")``,
        ``("lane", lane)``, ``("snooze", iso)``) to the threads ``ids``: one undo step, the rule named on each thread
        it changed. Returns those it changed; ``dry``: those it would change, and nothing is kept."""
        unique = list(dict.fromkeys(ids))
        try:
            with self.transaction() as conn:
                rows = conn.execute(
                    "SELECT id, last_message_at FROM threads WHERE id IN (SELECT value FROM json_each(?))",
                    (json.dumps(unique),),
                )
                known = {r["id"]: r["last_message_at"] for r in rows}
                unique = [i for i in unique if i in known]  # (a thread gone since it was matched is left alone)
                before = self._snapshot(conn, unique)
                for thread_id in unique:
                    conn.execute("INSERT OR IGNORE INTO triage (thread_id) VALUES (?)", (thread_id,))
                    for kind, value in does:
                        _RULED[kind](conn, {"id": thread_id, "last": known[thread_id], "value": value, "rule": name})
                after = self._snapshot(conn, unique)
                changed = [old for old, new in zip(before, after, strict=True) if _state(old) != _state(new)]
                names = [item["thread_id"] for item in changed]
                if dry:
                    raise _DryRun(names)
                marked = json.dumps(names)
                conn.execute(
                    "UPDATE triage SET rule = ? WHERE thread_id IN (SELECT value FROM json_each(?))", (name, marked)
                )
                settle(conn, "id IN (SELECT value FROM json_each(?))", (marked,))
                if changed:
                    change = Change("rule", len(changed), True, name)
                    conn.execute(
                        "INSERT INTO undo (description, changes, created_at) VALUES (?, ?, ?)",
                        (change.to_json(), json.dumps(changed), iso(datetime.now(UTC))),
                    )
                    kept = "SELECT seq FROM undo ORDER BY seq DESC LIMIT ?"
                    conn.execute(f"DELETE FROM undo WHERE seq NOT IN ({kept})", (UNDO_KEEP,))
        except _DryRun as run:
            return run.changed
        return names

    def undo_steps(self) -> list[UndoStep]:
        return [
            UndoStep(r["seq"], Change.from_json(r["description"]))
            for r in self.rows("SELECT seq, description FROM undo ORDER BY seq DESC")
        ]

    def undo_targets(self) -> list[str]:
        """The threads the next :meth:`undo` changes (none when its record is damaged)."""
        rows = self.rows("SELECT changes FROM undo ORDER BY seq DESC LIMIT 1")
        columns = {r["name"] for r in self.rows("PRAGMA table_info(triage)")}
        steps = _steps(rows[0]["changes"], columns) if rows else None
        return [item["thread_id"] for item in steps or []]

    def undo(self) -> Change | None:
        """Undo the last triage step; returns what it had done, or ``None`` when there is nothing to undo.
        :class:`DamagedStep` when its record cannot be read or applied: nothing changes and the step is kept."""
        with self.transaction() as conn:
            row = conn.execute("SELECT * FROM undo ORDER BY seq DESC LIMIT 1").fetchone()
            if row is None:
                return None
            change = Change.from_json(str(row["description"]))
            columns = {r["name"] for r in conn.execute("PRAGMA table_info(triage)")}
            steps = _steps(row["changes"], columns)
            if steps is None:
                raise DamagedStep(change)
            try:
                for item in steps:
                    self._restore(conn, item)
                restored = json.dumps([item["thread_id"] for item in steps])
                settle(conn, "id IN (SELECT value FROM json_each(?))", (restored,))  # (a rule's lane taken back)
            except sqlite3.IntegrityError:  # (a value the table refuses: the transaction takes back what was done)
                raise DamagedStep(change) from None
            conn.execute("DELETE FROM undo WHERE seq = ?", (row["seq"],))
        return change

    @staticmethod
    def _restore(conn: sqlite3.Connection, item: dict[str, Any]) -> None:
        """Put one thread's triage state and labels back as a snapshot had them (its columns checked by
        :func:`_item` against the table's own)."""
        thread_id = item["thread_id"]
        conn.execute("DELETE FROM triage WHERE thread_id = ?", (thread_id,))
        if item["triage"] is not None:
            triage = {**item["triage"], "thread_id": thread_id}
            columns = list(triage)
            conn.execute(
                f"INSERT INTO triage ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                [triage[c] for c in columns],
            )
        conn.execute("DELETE FROM labels WHERE thread_id = ?", (thread_id,))
        conn.executemany(
            "INSERT INTO labels (thread_id, label) VALUES (?, ?)", [(thread_id, lab) for lab in item["labels"]]
        )
