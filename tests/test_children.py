"""Every program Pigeon starts gets Pigeon's environment less its secrets: the attachment opener, the browser (a
desktop one and a console one), the editor and the send command."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pigeon.children import child_environment
from pigeon.core import programs
from tests.conftest import Recorded, recording_program

SECRETS = {"PIGEON_TOKEN": "tok-secret", "KEYRING_CRYPTFILE_PASSWORD": "kr-secret", "PIGEON_WEBHOOK_SECRET": "wh"}


@pytest.fixture
def program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Recorded]:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PIGEON_PROFILE", "work")  # a setting, not a secret: children keep it
    return recording_program(tmp_path / "bin", "child", monkeypatch)


def only_run(record: Recorded) -> dict[str, Any]:
    runs = record.runs()
    assert len(runs) == 1
    return runs[0]


def assert_clean(env: dict[str, str]) -> None:
    assert not set(SECRETS) & set(env)
    assert not any(value in SECRETS.values() for value in env.values())
    assert env["PIGEON_PROFILE"] == "work"
    assert env["PATH"]


def test_the_attachment_opener_gets_no_secret(program: tuple[Path, Recorded], tmp_path: Path) -> None:
    path, record = program
    programs.open_with([str(path)], str(tmp_path / "report.pdf"))
    assert_clean(only_run(record)["env"])


def test_a_desktop_browser_gets_no_secret(program: tuple[Path, Recorded], monkeypatch: pytest.MonkeyPatch) -> None:
    path, record = program
    monkeypatch.setenv("BROWSER", str(path))
    monkeypatch.setenv("DISPLAY", ":0")
    assert programs.open_link("https://example.com/") == []
    assert_clean(only_run(record)["env"])


def test_a_console_browser_gets_no_secret(program: tuple[Path, Recorded], monkeypatch: pytest.MonkeyPatch) -> None:
    path, record = program
    console = path.with_name("w3m")
    path.rename(console)
    monkeypatch.setenv("BROWSER", str(console))
    command = programs.open_link("https://example.com/")
    assert command == [str(console), "https://example.com/"]
    programs.run_in_terminal(command)
    assert_clean(only_run(record)["env"])


def test_the_editor_gets_no_secret(
    program: tuple[Path, Recorded], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path, record = program
    monkeypatch.setenv("VISUAL", str(path))
    programs.edit(str(tmp_path / "draft.eml"))
    assert_clean(only_run(record)["env"])


def test_the_send_command_gets_no_secret(program: tuple[Path, Recorded]) -> None:
    path, record = program
    programs.send([str(path), "-t"], b"To: a@example.com\n\nhi\n")
    assert_clean(only_run(record)["env"])


def test_only_secrets_are_left_out() -> None:
    base = {"PATH": "/bin", "PIGEON_TOKEN": "x", "pigeon_api_key": "y", "PIGEON_DATA_DIR": "/d", "TOKEN": "z"}
    assert child_environment(base) == {"PATH": "/bin", "PIGEON_DATA_DIR": "/d", "TOKEN": "z"}


def test_a_token_command_gets_no_secret(program: tuple[Path, Recorded]) -> None:
    from pigeon import credentials

    path, record = program
    with pytest.raises(credentials.TokenCommandFailed):  # (the recorder prints no token)
        credentials.run_token_command("work", [str(path)])
    assert_clean(only_run(record)["env"])
