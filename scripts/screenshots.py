"""Render screenshots/*.svg from the scenes the snapshot tests check (tests/tui/scenes.py).

uv run python scripts/screenshots.py [--out DIR] [NAME ...]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the scenes live under tests/
from tests.tui.scenes import OUT, SCENES, render


async def main(names: list[str], folder: Path) -> None:
    for name in names or list(SCENES):
        print(await render(name, SCENES[name], folder))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help="scenes (default: all): " + ", ".join(SCENES))
    parser.add_argument("--out", type=Path, default=OUT, help="folder for the SVG files (default: screenshots/)")
    args = parser.parse_args()
    unknown = [name for name in args.names if name not in SCENES]
    if unknown:
        parser.error(f"no scene called {', '.join(unknown)}; the scenes are {', '.join(SCENES)}")
    asyncio.run(main(args.names, args.out))
