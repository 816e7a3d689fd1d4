"""``pigeon rules check`` (the rules in config.toml, a line a mistake) and ``pigeon rules try`` (what each would
change now in the local store; nothing is changed)."""

from __future__ import annotations

import argparse
import asyncio
from datetime import UTC, datetime
from typing import TextIO

from pigeon.cli.common import config_of, core_of
from pigeon.cli.output import EXIT_OK, EXIT_USAGE, table, when
from pigeon.core.actions import plural
from pigeon.core.rules import check_rules
from pigeon.sanitize import clean_line


def cmd_rules(args: argparse.Namespace, out: TextIO) -> int:
    config = config_of(args)
    if args.what == "check":
        checked = check_rules(config.settings.rules, datetime.now(UTC))
        for mistake in checked.mistakes:
            out.write(clean_line(mistake) + "\n")
        if checked.mistakes:
            return EXIT_USAGE
        count = len(checked.rules)
        said = f"{plural(count, 'rule')} in {config.path}, all good." if count else f"No rules in {config.path}."
        out.write(said + "\n")
        return EXIT_OK
    core = core_of(args, online=False)
    for mistake in core.rules.mistakes:
        out.write(f"Left out: {clean_line(mistake)}\n")
    tried = asyncio.run(core.rules.tried())
    for found in tried:
        out.write(clean_line(found.said()) + "\n")
        if found.threads:
            rows = [(when(t.last_message_at), t.who, t.subject, t.id) for t in found.threads]
            out.write(table(("LAST MESSAGE", "FROM", "SUBJECT", "ID"), rows) + "\n")
        if found.count > len(found.threads):
            out.write(f"and {found.count - len(found.threads)} more\n")
    out.write("Nothing was changed.\n" if tried else f"No rules in {config.path}.\n")
    return EXIT_USAGE if core.rules.mistakes else EXIT_OK
