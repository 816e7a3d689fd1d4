"""Pigeon's one-line text field: Textual's ``Input`` whose typing lays out nothing but the field itself.

Textual's ``Input`` sets its virtual size (the text's width) on every change of its value, and a change of a
widget's virtual size asks for a layout of the whole screen: every pane measured again for each letter typed
(docs/fast-path.md). A field of a fixed size scrolls its text within itself, so here the virtual size only repaints
the field. A field sized by its content (``width: auto``) still asks for the layout: ``Input`` does that itself.
"""

from __future__ import annotations

from textual.geometry import Size
from textual.reactive import Reactive
from textual.widgets import Input


class TextInput(Input):
    virtual_size: Reactive[Size] = Reactive(Size(0, 0), repaint=True, layout=False)
    """The text's width, for scrolling within the field: a repaint, not a layout of the screen."""
