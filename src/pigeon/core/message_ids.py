"""Message-IDs for threading: the id a message of the service goes by in mail (the ``Message-ID`` its metadata
carries, else one derived from the service's own id, the same every time) and the ``In-Reply-To`` and
``References`` of a reply to it. Only a well-formed ``<left@right>`` on one line is ever taken from mail, so hostile
metadata cannot add a header. No Textual here.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pigeon.models import Message

ID_KEYS = ("message_id", "message-id", "rfc822_message_id", "internet_message_id")
"""The keys of a message's metadata that may hold its Message-ID (read case-insensitively; ``Message-ID`` is
``message-id``), then ``headers`` -> ``Message-ID`` when ``headers`` is an object."""
DERIVED_DOMAIN = "pigeon.invalid"
"""The right side of an id derived from the service's message id (``.invalid`` names no real host)."""
MAX_REFERENCES = 20
"""The most ids a ``References`` header lists: the thread's first, then the nearest ancestors."""
MAX_ID_CHARS = 250

_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_DOT_ATOM = rf"{_ATOM}(?:\.{_ATOM})*"
_WELL_FORMED = re.compile(rf"<{_DOT_ATOM}@(?:{_DOT_ATOM}|\[[\x21-\x5a\x5e-\x7e]*\])>")


def well_formed(value: object) -> str | None:
    """``value`` when it is one Message-ID, ``<left@right>`` on one line (outer spaces aside), else ``None``."""
    if not isinstance(value, str):
        return None
    text = value.strip(" \t")
    if len(text) > MAX_ID_CHARS or not _WELL_FORMED.fullmatch(text):
        return None
    return text


def _lowered(mapping: Mapping[Any, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in mapping.items():
        if isinstance(key, str):
            found.setdefault(key.lower(), value)
    return found


def carried_id(message: Message) -> str | None:
    """The Message-ID the service carries for ``message`` in its metadata (see :data:`ID_KEYS`), if well formed."""
    metadata = message.metadata if isinstance(message.metadata, Mapping) else {}
    keys = _lowered(metadata)
    for key in ID_KEYS:
        found = well_formed(keys.get(key))
        if found:
            return found
    headers = keys.get("headers")
    if isinstance(headers, Mapping):
        return well_formed(_lowered(headers).get("message-id"))
    return None


def derived_id(service_id: str) -> str:
    """The id a message without one goes by: ``<service id@pigeon.invalid>`` when the service's id can be written
    so, else a digest of it; the same every time, so replies to one message thread together."""
    plain = well_formed(f"<{service_id}@{DERIVED_DOMAIN}>")
    if plain:
        return plain
    return f"<{hashlib.sha256(service_id.encode()).hexdigest()[:32]}@{DERIVED_DOMAIN}>"


def message_id_of(message: Message) -> str | None:
    """The Message-ID ``message`` goes by in mail; ``None`` for a message with no id at all."""
    return carried_id(message) or (derived_id(message.id) if message.id else None)


def threading_headers(message: Message, messages: Sequence[Message]) -> tuple[str, str]:
    """``In-Reply-To`` and ``References`` of a reply to ``message``: its id, and its ancestors' ids (by
    ``parent_id``, oldest first) then its own, at most :data:`MAX_REFERENCES` (the oldest kept, as RFC 5322 asks).
    Empty strings for a message with no id."""
    own = message_id_of(message)
    if own is None:
        return "", ""
    by_id = {m.id: m for m in messages if m.id}
    chain: list[str] = []
    seen = {message.id}
    parent = by_id.get(message.parent_id or "")
    while parent is not None and parent.id not in seen:  # (a loop of parents ends)
        seen.add(parent.id)
        found = message_id_of(parent)
        if found:
            chain.append(found)
        parent = by_id.get(parent.parent_id or "")
    chain.reverse()
    references = [*dict.fromkeys(i for i in chain if i != own), own]
    if len(references) > MAX_REFERENCES:
        references = [references[0], *references[-(MAX_REFERENCES - 1) :]]
    return own, " ".join(references)
