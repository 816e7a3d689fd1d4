"""The cyclic garbage collector and Pigeon's start-up (see docs/performance.md)."""

from __future__ import annotations

import gc


def freeze_start_up() -> None:
    """Move every object made so far into the collector's permanent generation and turn the collector back on.

    ``pigeon`` turns the collector off before Textual is imported: start-up makes hundreds of thousands of
    long-lived objects (modules, classes, the DOM, styles), and the collector walked them two or three times before
    the first frame, about 60 ms. They live as long as the app, and unfrozen every full collection walks them all:
    one landed while a thread was opening and held that frame for about 60 ms; after the freeze a full collection
    walks only what was made since. Called after each stage of start-up: the first frame, the models loaded, the
    client made."""
    gc.freeze()
    gc.enable()
