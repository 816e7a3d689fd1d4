"""Pigeon's command line run in-process, as the tests of its commands use it."""

from __future__ import annotations

import io

from pigeon.cli import main


def run(*argv: str) -> tuple[int, str]:
    """``pigeon *argv``: its exit code and what it printed."""
    out = io.StringIO()
    return main(list(argv), out=out), out.getvalue()
