"""The fast path's key path: a key pressed on a widget whose keys are all bindings runs its binding at once, and
its frame is drawn as the binding returns."""

from __future__ import annotations

from typing import Any

from textual import events
from textual.app import App

from pigeon.tui.fast_path.guard import running


async def run_bound_key(app: App[Any], event: events.Key) -> bool:
    """Run the binding of a key pressed on a widget whose keys are all bindings (``KEYS_ARE_BINDINGS``: the thread
    list, the reader) at once; False, and the key goes Textual's way, when the fast path is off or no binding takes
    it. Textual would first hand the key to the widget and bubble it up through each container, one message queue
    at a time, to reach the same bindings. Priority bindings still come first."""
    from pigeon.tui.fast_path import attached  # (the package's registry of screens)

    focused, screen = app.focused, app.screen
    if focused is None or not getattr(focused, "KEYS_ARE_BINDINGS", False) or screen.maximized is not None:
        return False
    if not running(app, "key_path"):
        return False
    if not await _run_binding(app, event.key):
        return False
    frames = attached(screen)
    if frames is not None and app._message_queue.empty():
        # (with more keys waiting, as when j is held or pasted, Textual's timer draws them in one frame)
        frames.draw_key(focused)
    return True


async def _run_binding(app: App[Any], key: str) -> bool:
    """Textual's ``_check_bindings`` with priority, then without, on one binding chain: Textual builds the chain
    (copying every bindings map on the way) for each of the two."""
    chain = app.screen._binding_chain
    modal = next((index for index, (node, _) in enumerate(chain, 1) if node.is_modal), len(chain))
    for priority, namespaces in ((True, reversed(chain)), (False, chain[:modal])):
        for namespace, keys in namespaces:
            for binding in keys.key_to_bindings.get(key, ()):
                if binding.priority == priority and await app.run_action(binding.action, namespace):
                    return True
    return False
