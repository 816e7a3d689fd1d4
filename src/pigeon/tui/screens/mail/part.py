"""What every part of the mail screen holds: the screen it works on (its widgets, timers and workers, which stay
the screen's so that a failed worker is reported like any other) and the mail core. A part knows no other part:
the screen hands it what it needs at construction and calls down into it."""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from textual.screen import Screen
from textual.worker import Worker

from pigeon.core.mail import MailCore

T = TypeVar("T")


class Part:
    """One part of the mail screen: state and behaviour, no widgets of its own."""

    def __init__(self, screen: Screen[None], core: MailCore) -> None:
        self.screen = screen
        self.core = core

    def run(
        self,
        job: Callable[..., Coroutine[Any, Any, object]],
        *args: Any,
        group: str,
        description: str,
        exclusive: bool = False,
    ) -> Worker[Any]:
        """Run ``job(*args)`` in a worker of the screen (``exclusive``: it replaces the one of its group under
        way)."""
        work = functools.partial(job, *args)  # (a partial of a coroutine function: Textual awaits it in the worker)
        return self.screen.run_worker(
            work, group=group, description=description, exclusive=exclusive, exit_on_error=False
        )

    def ask(self, dialog: Screen[T], then: Callable[[T | None], None]) -> None:
        """Show ``dialog`` over the screen; ``then`` gets the answer."""
        self.screen.app.push_screen(dialog, then)
