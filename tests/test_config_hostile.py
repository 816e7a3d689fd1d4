"""A configuration file that cannot be read (nested past the parser's depth, not UTF-8, huge, a folder) stops every
command with one line naming the file, exit 2, never a traceback; writing it back never half-writes it."""

from __future__ import annotations

import io
import tomllib
from pathlib import Path

import pytest

from pigeon import locations
from pigeon.cli import main
from pigeon.config import MAX_CONFIG_BYTES, ConfigError, load_config, update_config_file


def deep(depth: int) -> str:
    return "a = " + "[" * depth + "]" * depth + "\n"


@pytest.fixture
def config_path(isolated_environment: Path) -> Path:
    path = locations.config_file()
    path.parent.mkdir(parents=True)
    return path


@pytest.mark.parametrize(
    ("payload", "words"),
    [
        (deep(5000).encode(), "nests arrays or tables too deeply to read"),
        (b'default_profile = "\xff\xfe"\n', "is not UTF-8 text"),
        (b"# " + b"x" * MAX_CONFIG_BYTES + b"\n", "is over 1024 KiB, too large for a configuration file"),
    ],
    ids=["nested-5000", "not-utf8", "huge"],
)
@pytest.mark.parametrize("command", [["status"], ["views"], ["inboxes", "list"]], ids=" ".join)
def test_an_unreadable_config_is_one_line_naming_the_file_exit_2(
    config_path: Path, payload: bytes, words: str, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    config_path.write_bytes(payload)
    assert main(command, out=io.StringIO()) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"pigeon: error: {config_path} {words}\n"


def test_a_folder_where_the_config_should_be_is_one_line(config_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config_path.mkdir()
    assert main(["status"], out=io.StringIO()) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"pigeon: error: {config_path} cannot be read: ")
    assert err.count("\n") == 1


def test_changing_a_config_too_deep_to_write_back_leaves_it_as_it_was(config_path: Path) -> None:
    def reads(depth: int) -> bool:
        try:
            tomllib.loads(deep(depth))
        except RecursionError:
            return False
        return True

    readable, unreadable = 1, 5000  # the deepest this stack reads, less a margin: tomli_w needs more stack a level
    while unreadable - readable > 1:
        middle = (readable + unreadable) // 2
        readable, unreadable = (middle, unreadable) if reads(middle) else (readable, middle)
    text = deep(max(readable - 20, 1)) + '[profiles.work]\nbase_url = "https://w.example"\n'
    config_path.write_text(text)
    assert load_config(profile="work").base_url == "https://w.example"
    with pytest.raises(ConfigError, match="too deeply") as raised:
        update_config_file(lambda data: data.update(default_profile="work"))
    assert str(config_path) in str(raised.value)
    assert config_path.read_text() == text
