"""Where Pigeon keeps its files.

Every path is computed when asked for, never at import time, so tests and scripts can redirect them with
environment variables before calling in:

- ``PIGEON_CONFIG_DIR``: the folder of ``config.toml`` (default: the platform's user config dir);
- ``PIGEON_DATA_DIR``: local databases (default: the platform's user data dir);
- ``PIGEON_DOWNLOAD_DIR``: where saved attachments go (default: the platform's downloads folder).
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "pigeon"


def _override(variable: str) -> Path | None:
    value = os.environ.get(variable, "").strip()
    return Path(value).expanduser() if value else None


def config_dir() -> Path:
    """The folder that holds ``config.toml``."""
    return _override("PIGEON_CONFIG_DIR") or Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def config_file() -> Path:
    """The user's configuration file."""
    return config_dir() / "config.toml"


def data_dir() -> Path:
    """The folder for local databases (the reference server's and the client's store)."""
    return _override("PIGEON_DATA_DIR") or Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def opened_dir() -> Path:
    """The private folder attachments are opened from (under the data folder; 0700, files 0600)."""
    return data_dir() / "opened"


def download_dir() -> Path:
    """The folder attachments are saved into."""
    return _override("PIGEON_DOWNLOAD_DIR") or Path(platformdirs.user_downloads_dir()) / APP_NAME
