"""``python -m pigeon``: the same as the ``pigeon`` command."""

import sys

from pigeon.cli import main

sys.exit(main())
