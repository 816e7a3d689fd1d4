"""The demo's mail made in a process of its own, beside the demo's service importing its web framework: run as
``python -m pigeon_service.demo_mailer THREADS``, it writes the whole database to stdout (SQLite's serialization),
for :meth:`pigeon.sqlite.Database.load`. Anything that goes wrong is one line on stderr."""

from __future__ import annotations

import sys

from pigeon_service.demo_mail import demo_mailbox


def main(argv: list[str]) -> int:
    try:
        (threads,) = argv
        db = demo_mailbox(threads=int(threads))
        sys.stdout.buffer.write(db.dump())
        sys.stdout.buffer.flush()
    except Exception as exc:  # one line for the service to show, never a traceback
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
