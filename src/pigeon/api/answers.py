"""``Answer``: a service's answer as the client read it, whichever HTTP library carried it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class Answer:
    """An answer as it came: status, reason, headers (in order) and the body (not decoded)."""

    status_code: int
    reason: str
    headers: list[tuple[str, str]]
    content: bytes

    @property
    def is_success(self) -> bool:
        return 200 <= self.status_code < 300

    def header(self, name: str) -> str | None:
        wanted = name.lower()
        return next((value for key, value in self.headers if key.lower() == wanted), None)
