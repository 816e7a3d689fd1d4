"""The cyclic garbage collector and Pigeon's frames (see docs/performance.md).

A full collection walks every tracked object. Left to itself, the collector starts one whenever enough objects
were made, which is while the user is working: one landed in the frame of an opened thread and held it, a pause
the user saw. So start-up's objects are frozen (they live as long as the app), and full collections run when
nobody is typing (or at the latest every two minutes); the young generations still collect on their own, quickly.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

IDLE_BEFORE_COLLECTING = 2.0
"""Seconds without a key or a click before a full collection may run."""
LATEST_FULL_COLLECTION = 120.0
"""Seconds after which a full collection runs even while the user is busy."""
NO_AUTOMATIC_FULL_COLLECTION = 1_000_000
"""The collector's third threshold: so many young collections before it starts a full one by itself."""


def freeze_start_up() -> None:
    """Move every object made so far into the collector's permanent generation and turn the collector back on.

    ``pigeon`` turns the collector off before Textual is imported: start-up makes hundreds of thousands of
    long-lived objects (modules, classes, the DOM, styles), and the collector walked them two or three times before
    the first frame. Called after each stage of start-up: the first frame, the models loaded, the
    client made."""
    gc.freeze()
    young, middle, _full = gc.get_threshold()
    gc.set_threshold(young, middle, NO_AUTOMATIC_FULL_COLLECTION)
    gc.enable()


class Collector:
    """Runs the full collections, between the user's keys: :meth:`input` on every key or click, :meth:`tick`
    every few seconds."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.last_input = self.last_full = clock()

    def input(self) -> None:
        self.last_input = self.clock()

    def tick(self) -> bool:
        """Collect if the user worked since the last collection and has now paused, or if the last one is too
        long ago (background work makes garbage too); ``True`` if it did."""
        now = self.clock()
        paused = now - self.last_input >= IDLE_BEFORE_COLLECTING and self.last_input > self.last_full
        if not paused and now - self.last_full < LATEST_FULL_COLLECTION:
            return False
        gc.collect()
        self.last_full = self.clock()
        return True
