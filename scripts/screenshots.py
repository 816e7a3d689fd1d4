"""Render screenshots/*.svg from the scenes the snapshot tests check (tests/tui/scenes.py).

uv run python scripts/screenshots.py [NAME ...]
"""

from __future__ import annotations

import asyncio
import sys

from tests.tui.scenes import SCENES, render


async def main(names: list[str]) -> None:
    for name in names or list(SCENES):
        print(await render(name, SCENES[name]))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
