"""The path to the first screen of mail loads Textual and the store, nothing heavier (docs/performance.md): not
pydantic, httpx, the keyring or the email package."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from pigeon.store.mailstore import MailStore
from pigeon.store.sync import recipients_of, who_of
from pigeon_service.demo_mail import demo_database

# Run in a fresh interpreter: this test process has long since imported everything.
PROBE = """
import json, sys
import pigeon.cli  # what `pigeon` imports before it runs
from pigeon.tui.screens.mail import MainScreen
from pigeon.tui.widgets.thread_list import ThreadList

seen = {}
after_first_frame = MainScreen.after_first_frame

def probe(self):
    heavy = ("pydantic", "pydantic_settings", "pigeon.models", "httpx", "keyring", "inscriptis", "fastapi", "email")
    seen["rows"] = len(self.query_one(ThreadList).source)
    seen["status"] = self.status
    seen["loaded"] = sorted(name for name in heavy if name in sys.modules)
    after_first_frame(self)

MainScreen.after_first_frame = probe

from pigeon.tui.app import PigeonApp
PigeonApp.on_ready = lambda self: self.exit()  # the first frame is on screen: that is all this needs
sys.argv = ["pigeon"]
pigeon.cli.main(["--base-url", "http://127.0.0.1:9"])
print(json.dumps(seen))
"""


def test_the_first_frame_needs_neither_pydantic_nor_httpx_nor_the_email_package(tmp_path: Path) -> None:
    service, _ = demo_database(threads=20)
    account = service.account_ids()[0]
    store = MailStore(tmp_path / "data" / "store" / "default.sqlite3")
    threads, _ = service.list_threads(account, page_size=100, page_token=None)
    store.put_many(
        (thread, messages, who_of(messages), recipients_of(messages))
        for thread in threads
        for messages in [
            service.list_messages(account, thread.id or "", message_ids=None, page_size=100, page_token=None)[0]
        ]
    )
    store.close()
    seen = first_frame(tmp_path)
    assert seen["rows"] == 20
    assert seen["loaded"] == []
    assert "Checking for mail" not in seen["status"]  # the sync waits until the stored mail is on screen


def test_with_nothing_stored_the_first_frame_is_already_checking_for_mail(tmp_path: Path) -> None:
    seen = first_frame(tmp_path)
    assert seen["rows"] == 0
    assert "Checking for mail" in seen["status"]


def first_frame(home: Path) -> dict[str, Any]:
    """What the probe saw when the first frame was on screen, for a profile in ``home``."""
    env = {
        **os.environ,
        "PIGEON_DATA_DIR": str(home / "data"),
        "PIGEON_CONFIG_DIR": str(home / "config"),
        "PIGEON_TOKEN": "probe",
        "TEXTUAL": "headless",
    }
    done = subprocess.run(  # noqa: S603 - this interpreter, a fixed script
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return seen
