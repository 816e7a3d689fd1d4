"""The keys of the action registry (:mod:`pigeon.core.actions`) as Textual bindings: one place turns an action into
its key, its key-bar label and its tooltip; users remap them by id (``[ui.keymap]``)."""

from __future__ import annotations

from textual.binding import Binding, BindingType

from pigeon.core.actions import Scope, actions


def bindings(scope: Scope) -> list[BindingType]:
    return [
        Binding(
            action.key,
            action.invoke,
            action.title,
            id=action.id,
            show=action.show,
            priority=action.priority,
            tooltip=action.help,
        )
        for action in actions(scope)
        if action.key
    ]
