"""Snapshots of the main screens at a fixed size, a fixed clock and seeded data (the same scenes as screenshots/)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.tui.scenes import SCENES, scene_app


@pytest.mark.parametrize("name", sorted(SCENES))
def test_screen_looks_as_before(name: str, snap_compare: Callable[..., bool]) -> None:
    scene = SCENES[name]
    app = scene_app(logged_in=scene.logged_in)
    assert snap_compare(app, terminal_size=scene.size, run_before=scene.run_before)


def test_the_screenshot_script_renders_a_scene(tmp_path: Path) -> None:
    script = Path(__file__).resolve().parents[2] / "scripts" / "screenshots.py"
    done = subprocess.run(  # noqa: S603 - this interpreter, the project's own script
        [sys.executable, str(script), "--out", str(tmp_path), "login"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Log in to your mail service" in (tmp_path / "login.svg").read_text().replace("&#160;", " ")
