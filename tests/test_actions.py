"""The action registry: each action described once reaches its key, the help, the palette and the CLI."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

import pytest
from textual.binding import Binding
from textual.dom import DOMNode

from pigeon.cli.parser import build_parser
from pigeon.core.actions import ACTIONS, BY_ID, Action, describe, verbs
from pigeon.store.triage import Change
from pigeon.tui.app import PigeonApp
from pigeon.tui.commands import PigeonCommands
from pigeon.tui.screens.mail import MainScreen
from pigeon.tui.screens.review import ReviewScreen
from pigeon.tui.widgets.reader import Reader
from tests.server.conftest import make_service
from tests.tui.conftest import SIZE, pigeon_for

HOLDERS: dict[str, type[DOMNode]] = {
    "app": PigeonApp,
    "main": MainScreen,
    "reader": Reader,
    "find": Reader,
    "review": ReviewScreen,
}


def cli_commands() -> set[str]:
    parser = build_parser()
    found: set[str] = set()
    for action in parser._actions:  # argparse offers no public way to list subcommands
        if isinstance(action, argparse._SubParsersAction):
            found |= set(action.choices)
    return found


def test_ids_are_unique_and_keys_do_not_collide_where_both_are_active() -> None:
    assert len(BY_ID) == len(ACTIONS)
    # (a find's keys come before the reader's while it is on: they must not hide a key of the screen or the app)
    for scope, beside in (("main", {"app"}), ("reader", {"app"}), ("find", {"main", "app"}), ("review", {"app"})):
        keys: dict[str, str] = {}
        for action in ACTIONS:
            if action.key and action.scope in {scope, *beside}:
                for key in action.key.split(","):
                    assert key not in keys, f"{key} is both {keys[key]} and {action.id}"
                    keys[key] = action.id


@pytest.mark.parametrize("action", ACTIONS, ids=lambda a: a.id)
def test_each_action_is_bound_where_it_runs_and_has_its_method(action: Action) -> None:
    holder = runner = HOLDERS[action.scope]
    name = action.invoke.split("(")[0]
    if name.startswith("screen."):  # (Textual's namespace: a widget's key that runs its screen's action)
        runner, name = MainScreen, name.removeprefix("screen.")
    assert callable(getattr(runner, f"action_{name}", None)), f"{runner.__name__} has no action_{name}"
    bound = [b for b in holder.BINDINGS if isinstance(b, Binding) and b.id == action.id]
    if action.key:
        assert [(b.key, b.action, b.description) for b in bound] == [(action.key, action.invoke, action.title)]
    else:
        assert not bound


@pytest.mark.parametrize("action", [a for a in ACTIONS if a.op], ids=lambda a: a.id)
def test_every_triage_action_has_a_key_and_a_cli_verb(action: Action) -> None:
    assert action.key
    assert action.verbs
    assert {verb.name for verb in action.verbs} <= cli_commands()


def test_every_cli_verb_of_the_registry_is_a_command() -> None:
    names = [verb.name for _, verb in verbs()]
    assert len(names) == len(set(names))
    assert set(names) <= cli_commands()


@pytest.mark.parametrize("op", ["read", "star", "done", "snooze", "mute", "label"])
def test_every_kind_of_change_is_worded(op: str) -> None:
    detail = {"snooze": datetime(2026, 11, 24, 8, tzinfo=UTC).isoformat(), "label": "work"}.get(op, "")
    on, off = describe(Change(op, 2, True, detail)), describe(Change(op, 1, False, detail))
    assert on.endswith("2 threads")
    assert off.endswith("1 thread")
    assert on != detail


async def test_the_palette_offers_every_action_of_the_screen_it_is_opened_on() -> None:
    service = make_service()
    app = pigeon_for(service)
    names: set[str] = set()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        async for hit in PigeonCommands(app.screen).discover():
            names.add(str(hit.prompt))
    service.db.close()
    assert {a.title for a in ACTIONS if a.palette} <= names
