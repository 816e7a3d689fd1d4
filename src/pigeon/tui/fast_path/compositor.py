"""Textual's compositor, drawing only the lines a partial update needs.

For an update of part of the screen (``j`` changes two rows of the thread list), Textual's compositor asks every
widget whose *clip* (its container's region) meets the changed area for *all* of its lines: the sidebar, the key
bar, the reader and the containers behind them, each line passed through the line filters and cut into pieces,
before the two that changed are written.

Here a partial update asks only the widgets whose visible part meets one of the changed regions, front to back,
and only for the lines of those regions (whole visible width, so the pieces still line up with the screen's cuts;
each run of changed lines on its own, so a pane's title and status lines are not the pane from top to bottom);
a region that one widget covers is not asked of the widgets behind it (Textual keeps the first paint of each
piece). The regions are taken one by one, not as the rectangle around them: opening a thread changes the list, the
reader and the key bar, whose rectangle is the whole screen.

A full update (the first frame, a resize) is one region, the screen: a widget whose visible part lies wholly behind
the widgets in front of it (the screen and the containers behind the panes) is not asked for its lines.
``_get_renders`` is private to Textual: ``tests/tui/test_key_path.py`` holds this to what Textual's own compositor
writes for the same update, against the installed version. docs/fast-path.md has the figures.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual._compositor import ChopsUpdate, Compositor
from textual.geometry import Region
from textual.strip import Strip

TextualCompositor = Compositor
"""Textual's own compositor: the stock path's, and what tests hold :class:`LineCompositor` to."""


class LineCompositor(Compositor):
    _update_regions: list[Region] | None = None  # the changed regions of the partial update being rendered

    def render_partial_update(self) -> ChopsUpdate | None:
        self._update_regions = list(self._dirty_regions)  # (Textual's keeps only the rectangle around them)
        try:
            return super().render_partial_update()
        finally:
            self._update_regions = None

    def _get_renders(self, crop: Region | None = None) -> Iterable[tuple[Region, Region, list[Strip]]]:
        if crop is None:
            yield from super()._get_renders(crop)
            return
        remaining = [region.intersection(crop) for region in self._update_regions or [crop]]
        remaining = [region for region in remaining if region]
        for widget, (region, clip) in self.visible_widgets.items():
            if not remaining:
                return
            visible = region.intersection(clip)
            touching = [changed for changed in remaining if changed.overlaps(visible)]
            if not touching:
                continue
            for top, bottom in _bands(touching, visible):
                lines = Region(visible.x, top, visible.width, bottom - top)
                yield (
                    region,
                    lines,
                    widget.render_lines(Region(lines.x - region.x, lines.y - region.y, lines.width, lines.height)),
                )
            # (front to back: what lies behind what this widget shows is hidden, and the first paint wins)
            remaining = [piece for changed in remaining for piece in _minus(changed, visible)]


def _bands(changed: list[Region], visible: Region) -> list[tuple[int, int]]:
    """The runs of lines of ``visible`` that ``changed`` covers, top to bottom: a pane's title and status lines are
    two runs of one line, not the pane from top to bottom."""
    bands: list[tuple[int, int]] = []
    for top, bottom in sorted((max(visible.y, c.y), min(visible.bottom, c.bottom)) for c in changed):
        if bands and top <= bands[-1][1]:
            bands[-1] = (bands[-1][0], max(bands[-1][1], bottom))
        else:
            bands.append((top, bottom))
    return bands


def _minus(part: Region, cover: Region) -> list[Region]:
    """What of ``part`` lies outside ``cover``: at most four rectangles."""
    if not part.overlaps(cover):
        return [part]
    inside = part.intersection(cover)
    pieces = [
        Region(part.x, part.y, part.width, inside.y - part.y),  # above
        Region(part.x, inside.bottom, part.width, part.bottom - inside.bottom),  # below
        Region(part.x, inside.y, inside.x - part.x, inside.height),  # left
        Region(inside.right, inside.y, part.right - inside.right, inside.height),  # right
    ]
    return [piece for piece in pieces if piece.width > 0 and piece.height > 0]
