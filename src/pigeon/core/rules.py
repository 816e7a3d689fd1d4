"""Rules the user writes in ``config.toml`` as ``[[rules]]`` tables: a ``name``, a ``match`` in the search box's
words, and what to do (``label``, ``done``, ``mute``, ``lane``, ``star``, ``snooze``). Checked with one line a
mistake (a bad rule is left out, the others run); tried without changing anything; run on the new mail of each sync,
each rule's changes one undo step named after it, and named by "why is this here?". docs/rules.md has the words."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from pigeon.config import Config, ConfigError, read_rules
from pigeon.core.actions import plural
from pigeon.core.listing import parse_query
from pigeon.core.when import moment
from pigeon.sanitize import clean_line
from pigeon.store.cache import iso
from pigeon.store.lanes import LANES
from pigeon.store.search import FTS_COLUMNS, OPERATORS
from pigeon.store.triage import LABEL_MAX, RULE_DOES

if TYPE_CHECKING:
    from pigeon.store.mailstore import MailStore
    from pigeon.store.sync import SyncReport
    from pigeon.store.views import StoredThread

KEYS = ("name", "match", *RULE_DOES)
_OPERATOR_LIKE = re.compile(r"[a-z]+:", re.IGNORECASE)
SWITCHES = ("done", "mute", "star")
"""What a rule does by ``= true``."""
RULES_AT_MOST = 100
TRIED_SHOWN = 20
"""Threads a try lists a rule (it counts them all)."""


@dataclass(frozen=True)
class Rule:
    """A rule as checked: its name, its match as written (read again at each run: ``after:3d`` moves with the
    clock), and what it does, in order (the snooze as written)."""

    name: str
    match: str
    does: tuple[tuple[str, str], ...]

    def words(self) -> str:
        """What it does, for people: "label news, done, snooze 2d"."""
        return ", ".join(kind if kind in SWITCHES else f"{kind} {value}" for kind, value in self.does)

    def steps(self, now: datetime) -> list[tuple[str, str]]:
        """What it does as the store takes it (the snooze's end read as of ``now``)."""
        return [(kind, iso(moment(value, now)) if kind == "snooze" else value) for kind, value in self.does]


@dataclass(frozen=True)
class Checked:
    rules: tuple[Rule, ...]
    mistakes: tuple[str, ...]
    """One line a mistake, each naming the rule."""


def check_rules(raw: object, now: datetime) -> Checked:
    """The ``rules`` of a configuration file read (``None``: there are none), each mistake in one line."""
    if raw is None:
        return Checked((), ())
    if not isinstance(raw, list) or not all(isinstance(item, dict) for item in raw):
        return Checked((), ("rules: write each rule as a [[rules]] table (name, match, and what to do)",))
    rules: list[Rule] = []
    mistakes: list[str] = []
    names: dict[str, int] = {}
    for number, item in enumerate(raw[:RULES_AT_MOST], 1):
        found = _check_one(number, item, names, now)
        if isinstance(found, Rule):
            rules.append(found)
        else:
            mistakes.append(found)
    if len(raw) > RULES_AT_MOST:
        mistakes.append(f"rules: {len(raw)} rules; the first {RULES_AT_MOST} are read")
    return Checked(tuple(rules), tuple(mistakes))


def _check_one(number: int, item: dict[str, Any], names: dict[str, int], now: datetime) -> Rule | str:
    """Rule ``number`` checked: the rule, or its first mistake in words."""
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        return f"rule {number}: needs a name (name = \"...\")"
    name = clean_line(name, limit=60)
    where = f"rule {number} ({name!r})"
    if name in names:
        return f"{where}: rule {names[name]} has the same name; each rule needs its own (undo and why name it)"
    names[name] = number
    unknown = sorted(str(key) for key in item if key not in KEYS)
    if unknown:
        return f"{where}: unknown key {unknown[0]!r}; a rule has {', '.join(KEYS)}"
    match = item.get("match")
    if not isinstance(match, str) or not match.strip():
        return f"{where}: needs a match, in the search box's words (match = \"from:news@example.com\")"
    try:
        query = parse_query(match, now)
    except (ValueError, OverflowError) as exc:  # (a QueryError, a WhenError)
        return f"{where}: match: {exc}"
    if not query.searching:  # ("*", "-": no words at all) it would act on all new mail
        return f"{where}: match has no words to look for; it would act on all new mail"
    guess = next((t.value for t in query.terms if t.kind == "word" and _OPERATOR_LIKE.match(t.value)), None)
    if guess is not None:  # (the search box reads "frm:ada" as words; a rule that does is a typo acting on mail)
        known = ", ".join(f"{name}:" for name in (*FTS_COLUMNS, *sorted(OPERATORS)))
        return f"{where}: match: {clean_line(guess, limit=40)!r} is no operator; they are {known}"
    does: list[tuple[str, str]] = []
    for kind in RULE_DOES:
        if kind not in item:
            continue
        value = item[kind]
        if kind in SWITCHES:
            if not isinstance(value, bool):
                return f"{where}: {kind} is true or false"
            does += [(kind, "")] if value else []
        elif kind == "label":
            labels = [value] if isinstance(value, str) else value
            if not isinstance(labels, list) or not all(_label(label) for label in labels):
                return f"{where}: label is a label or a list of them, each 1 to {LABEL_MAX} printable characters"
            does += [("label", " ".join(label.split())) for label in labels]
        elif kind == "lane":
            if value not in LANES:
                return f"{where}: lane {clean_line(str(value), limit=40)!r} is none of {', '.join(LANES)}"
            does.append(("lane", value))
        else:
            if not isinstance(value, str):
                return f"{where}: snooze is a time in words (snooze = \"2d\" or \"monday 9am\")"
            try:
                moment(value, now)  # (not the picker's words: "later" is offered at some hours only)
            except (ValueError, OverflowError) as exc:
                return f"{where}: snooze: {exc}"
            does.append(("snooze", value))
    kinds = {kind for kind, _ in does}
    if not does:
        return f"{where}: does nothing; give it one of {', '.join(RULE_DOES)}"
    if {"done", "snooze"} <= kinds:
        return f"{where}: done and snooze both; a thread is done or snoozed, not both"
    return Rule(name, match, tuple(does))


def _label(value: object) -> bool:
    return isinstance(value, str) and 0 < len(" ".join(value.split())) <= LABEL_MAX and value.isprintable()


@dataclass(frozen=True)
class Tried:
    """What a rule would change now: how many threads, and the first of them."""

    rule: Rule
    count: int
    threads: tuple[StoredThread, ...]

    def said(self) -> str:
        """"Rule 'news' (label news, done) would change 3 threads"."""
        return f"Rule {self.rule.name!r} ({self.rule.words()}) would change {plural(self.count)}"


class Ruled(Protocol):
    """What this reads of the mail core."""

    store: MailStore
    clock: Callable[[], datetime]
    config: Config


class Rules:
    """The profile's rules as the core runs them (``core.rules``): on the new mail of each sync but a store's
    first (whose mail is all new), once it is in the search index (a rule's words are looked for there)."""

    def __init__(self, core: Ruled, raw: object) -> None:
        self.core = core
        checked = check_rules(raw, core.clock())
        self.rules, self.mistakes = checked.rules, checked.mistakes
        self.moved = False
        """The last run changed threads (the lists may need showing again)."""
        self._arrived: set[str] = set()
        self._ran: list[tuple[Rule, int]] = []

    def said(self, name: str) -> str:
        """The line "why is this here?" gives a thread a rule changed."""
        rule = next((r for r in self.rules if r.name == name), None)
        if rule is None:
            return f"Changed by the rule '{name}' (no longer in config.toml)."
        return f"Changed by the rule '{name}' ({rule.words()}; match: {clean_line(rule.match, limit=80)})."

    def arrived(self, report: SyncReport, *, first: bool) -> None:
        """Note the threads a sync brought new mail from others to (none on a store's first sync)."""
        from pigeon.core.conversation import outbound

        if self.rules and not first:
            self._arrived |= {m.thread_id for m in report.new_messages if m.thread_id and m.direction != outbound()}

    async def run_arrived(self) -> list[tuple[Rule, int]]:
        """Run the rules on the threads that new mail came to, in order: each rule that changed any, and how many."""
        store = self.core.store
        ids = await asyncio.to_thread(store.indexed_among, sorted(self._arrived)) if self._arrived else []
        ran = await asyncio.to_thread(self._run, ids) if ids else []  # (a failure keeps them for the next run)
        self._arrived.difference_update(ids)  # (those whose text is not in the index yet wait for the next run)
        self.moved = bool(ran)
        self._ran += ran
        return ran

    def news(self) -> str:
        """What the rules did since this was last asked, in a line ("" if nothing): the app's note."""
        ran, self._ran = self._ran, []
        if not ran:
            return ""
        return "Rules: " + "; ".join(f"{rule.name!r} changed {plural(count)}" for rule, count in ran)

    def _run(self, ids: Sequence[str]) -> list[tuple[Rule, int]]:
        store, now, ran = self.core.store, self.core.clock(), []
        for rule in self.rules:
            try:
                query, steps = parse_query(rule.match, now), rule.steps(now)
            except (ValueError, OverflowError) as exc:  # (checked at start: a clock moved past a year's end?)
                self.mistakes += (f"rule {rule.name!r} did not run: {exc}",)
                continue
            changed = store.rule(store.view_ids("all", query, now=now, among=ids), rule.name, steps)
            if changed:
                ran.append((rule, len(changed)))
        return ran

    async def tried(self, *, read_again: bool = False) -> list[Tried]:
        """What each rule would change now in all the mail stored, each on its own; nothing is changed. With
        ``read_again``, the rules config.toml holds now (edited since the start), which then run on new mail."""
        if read_again:
            await asyncio.to_thread(self.read_again)
        return await asyncio.to_thread(self._tried)

    def read_again(self) -> None:
        """Take the rules config.toml holds now; a file that cannot be read keeps the rules there were, and says so
        among the mistakes."""
        try:
            raw = read_rules(self.core.config.path)
        except ConfigError as exc:
            self.mistakes = (f"config.toml could not be read again (the rules read before still run): {exc}",)
            return
        checked = check_rules(raw, self.core.clock())
        self.rules, self.mistakes = checked.rules, checked.mistakes

    def _tried(self) -> list[Tried]:
        store, now, found = self.core.store, self.core.clock(), []
        for rule in self.rules:
            try:
                query, steps = parse_query(rule.match, now), rule.steps(now)
            except (ValueError, OverflowError):  # (said by the run, as above)
                continue
            would = store.rule(store.view_ids("all", query, now=now), rule.name, steps, dry=True)
            shown = store.list_threads("all", limit=TRIED_SHOWN, now=now, among=would) if would else []
            found.append(Tried(rule, len(would), tuple(shown)))
        return found
