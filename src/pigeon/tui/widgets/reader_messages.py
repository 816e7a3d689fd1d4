"""What the reader asks of the screen it is on: a hand-off of the message under its cursor, the sender's contact
to edit, the next or previous thread (handled as ``on_reader_...``)."""

from __future__ import annotations

from textual.message import Message


class HandOff(Message, namespace="reader"):
    """Hand the message under the cursor (or its attachments, links, sender) to the screen's hand-off: ``what``
    is ``save``, ``open``, ``links``, ``raw``, ``pipe``, ``write`` or ``copy``."""

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what


class EditSender(Message, namespace="reader"):
    """Edit the contact who wrote the open thread."""


class Step(Message, namespace="reader"):
    """Open the next (``1``) or previous (``-1``) thread of the list."""

    def __init__(self, delta: int) -> None:
        super().__init__()
        self.delta = delta
