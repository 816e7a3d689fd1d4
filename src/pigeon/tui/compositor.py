"""Textual's compositor, drawing only the lines a partial update needs.

For an update of part of the screen (``j`` changes two rows of the thread list), Textual 8's compositor asks every
widget whose *clip* (its container's region) meets the changed area for *all* of its lines: the sidebar, the key
bar, the reader and the containers behind them, about 300 cached lines a frame at 160x45, each passed through the
line filters and cut into pieces, before the two that changed are written. Measured at a pseudo-terminal (issue 16,
1,000 threads, 160x45): the frame of one ``j`` took 2.3-3.5 ms of the key's 5 ms, with 2 lines rendered anew.

Here a partial update asks only the widgets whose visible part meets the changed area, front to back, and only for
the changed area's lines (whole visible width, so the pieces still line up with the screen's cuts); once one widget
covers the area, those behind it are not asked (Textual keeps the first paint of each piece). A full update (crop
None) is Textual's own. ``_get_renders`` is private to Textual: ``tests/tui/test_key_path.py`` holds this to what
Textual's own compositor writes for the same update, against the installed version.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual._compositor import Compositor
from textual.geometry import Region
from textual.strip import Strip


class LineCompositor(Compositor):
    def _get_renders(self, crop: Region | None = None) -> Iterable[tuple[Region, Region, list[Strip]]]:
        if crop is None:
            yield from super()._get_renders(crop)
            return
        for widget, (region, clip) in self.visible_widgets.items():
            visible = region.intersection(clip)
            if not crop.overlaps(visible):
                continue
            lines = visible.intersection(Region(visible.x, crop.y, visible.width, crop.height))
            if lines:
                yield (
                    region,
                    lines,
                    widget.render_lines(Region(lines.x - region.x, lines.y - region.y, lines.width, lines.height)),
                )
                if visible.contains_region(crop):  # (front to back: what lies behind it is hidden, first paint wins)
                    return
