"""The ``pigeon`` command.

Exit codes: 0 ok, 1 the service or the network failed, 2 a usage or local setup problem (bad arguments, bad
configuration, not logged in, no keyring). Errors are one clean line on stderr, never a traceback. The commands live
by family: :mod:`.service` (the service's operations), :mod:`.mail` (the local store: sync, search, triage),
:mod:`.serve` (the reference service, the demo, the app); :mod:`.parser` names them all.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TextIO

from pigeon import credentials
from pigeon.cli.output import EXIT_SERVICE, EXIT_USAGE, UsageError, fail
from pigeon.cli.parser import parse_arguments
from pigeon.cli.serve import cmd_tui
from pigeon.config import ConfigError
from pigeon.core.errors import InvalidInput, PigeonError, StoreUnwritable

__all__ = ["main"]


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Entry point of the ``pigeon`` command; returns the exit code."""
    out = out or sys.stdout
    try:
        args = parse_arguments(argv)
    except SystemExit as exc:  # --help, --version and usage errors: argparse has printed what it had to say
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    if not getattr(args, "func", None):
        args.func = cmd_tui
    try:
        code: int = args.func(args, out)
        return code
    except (UsageError, ConfigError, credentials.CredentialsError, InvalidInput, StoreUnwritable) as exc:
        return fail(str(exc), EXIT_USAGE)
    except PigeonError as exc:
        return fail(str(exc), EXIT_SERVICE)
    except KeyboardInterrupt:
        sys.stderr.write("\n")
        return 130
