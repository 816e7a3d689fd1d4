"""Snapshots of the main screens at a fixed size, a fixed clock and seeded data (the same scenes as screenshots/)."""

from __future__ import annotations

import pytest

from tests.tui.scenes import SCENES, scene_app


@pytest.mark.parametrize("name", sorted(SCENES))
def test_screen_looks_as_before(name: str, snap_compare) -> None:  # type: ignore[no-untyped-def]
    scene = SCENES[name]
    app = scene_app(logged_in=scene.logged_in)
    assert snap_compare(app, terminal_size=scene.size, run_before=scene.run_before)
