"""Page objects and the one page walk every list operation uses.

The spec does not say what ``next_page_token`` is on the last page: an empty string, ``null`` or a missing field
all end the list. A walk that would not end (a token seen before, or more pages than the cap) stops with
:class:`~pigeon.api.errors.PaginationError` instead of looping.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

from pigeon.api.errors import PaginationError

if TYPE_CHECKING:
    from pigeon.models import Unreadable

T = TypeVar("T")

DEFAULT_MAX_PAGES = 1000
"""How many pages one walk fetches at most before it gives up."""


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a list: its items and the token of the next page (``None`` on the last page)."""

    items: list[T]
    next_page_token: str | None = None
    skipped: tuple[Unreadable, ...] = ()
    """Records of this page that could not be read (the rest of the page is in ``items``); ``str()`` of one is
    "its id: why"."""

    @property
    def has_next_page(self) -> bool:
        return bool(self.next_page_token)


async def walk_pages(
    fetch: Callable[[str | None], Awaitable[Page[T]]],
    *,
    what: str,
    max_pages: int = DEFAULT_MAX_PAGES,
    first_token: str | None = None,
) -> AsyncIterator[Page[T]]:
    """Yield every page, calling ``fetch(token)`` from ``first_token`` on until a page has no next token."""
    seen: set[str] = set()
    token = first_token
    if token:
        seen.add(token)
    fetched = 0
    while True:
        page = await fetch(token)
        fetched += 1
        yield page
        if not page.has_next_page:
            return
        next_token = page.next_page_token
        assert next_token is not None
        if next_token in seen:
            raise PaginationError(
                f"Listing {what} stopped after {fetched} page(s): the service sent a page token it had sent before"
            )
        if fetched >= max_pages:
            raise PaginationError(f"Listing {what} stopped at the cap of {max_pages} pages; more pages remain")
        seen.add(next_token)
        token = next_token
