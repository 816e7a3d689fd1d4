"""Pigeon's reference messaging service (``pigeon serve``, ``pigeon demo``)."""

import secrets

# The libraries the service imports, as modules: a client checks them before it starts the service in a process of
# its own, so that a missing one is one line up front. Kept equal to pyproject.toml's dependencies by a test.
LIBRARIES = ("pydantic", "fastapi", "starlette", "uvicorn", "httptools", "httpx", "standardwebhooks", "faker")


def new_token() -> str:
    """A new bearer token: what the service hands out, and what a client starting the demo makes for it."""
    return "pgn_" + secrets.token_urlsafe(32)
