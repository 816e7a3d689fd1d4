"""Stored rows read back as models: a row that cannot be read is left out and logged, never a crash."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from pydantic import BaseModel

log = logging.getLogger("pigeon.store")
M = TypeVar("M", bound="BaseModel")


def readable(model: type[M], texts: Iterable[str]) -> Iterator[M]:
    """The rows the model can read; a row it cannot (written by a damaged file or an older Pigeon) is left out
    and logged, so nothing in the store can stop the app from starting. A sync writes it again."""
    for text in texts:
        try:
            yield model.model_validate_json(text)
        except (ValueError, TypeError) as exc:  # (pydantic's ValidationError is a ValueError)
            log.warning("a stored %s could not be read and is left out: %s", model.__name__, str(exc)[:200])
