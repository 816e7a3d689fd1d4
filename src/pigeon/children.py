"""The environment of every program Pigeon starts (the editor, the send command, the browser, the attachment
opener, a token command): Pigeon's own, without the secrets Pigeon holds. A child needs the user's settings
(``PATH``, ``HOME``, ``DISPLAY``, ``LANG``, proxies), never the token that reads the mailbox. Neutral: it uses no
other part of Pigeon, so any layer may start a program through it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

SECRET_VARIABLES = frozenset(
    {
        "PIGEON_TOKEN",  # the service's token (credentials.TOKEN_ENV)
        "KEYRING_CRYPTFILE_PASSWORD",  # the password of keyrings.alt's encrypted file, where the token may live
    }
)
"""Variables a child never gets, whatever their value."""

_SECRET_NAME = re.compile(r"^PIGEON_.*(?:TOKEN|SECRET|PASSWORD|PASSWD|KEY|CREDENTIAL)", re.IGNORECASE)
"""Any other variable of Pigeon's whose name says it is a secret (kept out before it exists, not after)."""


def is_secret(name: str) -> bool:
    """Whether the variable ``name`` holds one of Pigeon's secrets."""
    return name.upper() in SECRET_VARIABLES or _SECRET_NAME.match(name) is not None


def child_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a program Pigeon starts: ``base`` (Pigeon's own by default) without its secrets."""
    source = os.environ if base is None else base
    return {name: value for name, value in source.items() if not is_secret(name)}
