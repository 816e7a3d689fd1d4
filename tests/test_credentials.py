"""The token in the keyring, PIGEON_TOKEN over it, and a plain message when there is no keyring."""

from __future__ import annotations

import sys
from pathlib import Path

import keyring
import pytest
from keyring.backends import fail

from pigeon import credentials
from pigeon.credentials import CredentialsError, TokenSource
from tests.keyrings import MemoryKeyring


def test_store_read_and_delete_per_profile(memory_keyring: MemoryKeyring) -> None:
    credentials.store_token("work", "  tok-work \n")
    credentials.store_token("home", "tok-home")
    assert memory_keyring.secrets[("pigeon", "work")] == "tok-work"
    assert credentials.resolve_token("work") == ("tok-work", TokenSource.KEYRING)
    assert credentials.resolve_token("home") == ("tok-home", TokenSource.KEYRING)
    assert credentials.delete_token("work") is True
    assert credentials.delete_token("work") is False
    assert credentials.resolve_token("work") == (None, TokenSource.NONE)


def test_pigeon_token_overrides_and_is_never_stored(
    memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    credentials.store_token("default", "from-keyring")
    monkeypatch.setenv("PIGEON_TOKEN", "from-env")
    assert credentials.resolve_token("default") == ("from-env", TokenSource.ENVIRONMENT)
    assert "from-env" not in memory_keyring.secrets.values()


def test_an_empty_token_is_not_stored(memory_keyring: MemoryKeyring) -> None:
    with pytest.raises(CredentialsError, match="empty"):
        credentials.store_token("default", "   ")
    assert memory_keyring.secrets == {}


def test_no_backend_says_so_and_names_the_ways_out(isolated_environment: Path) -> None:
    keyring.set_keyring(fail.Keyring())
    for call in (
        lambda: credentials.resolve_token("default"),
        lambda: credentials.store_token("default", "tok"),
        lambda: credentials.delete_token("default"),
    ):
        with pytest.raises(CredentialsError) as caught:
            call()
        message = str(caught.value)
        assert "Secret Service" in message
        assert "keyrings.alt" in message
        assert "PIGEON_TOKEN" in message
    assert credentials.backend_name() == "none"
    leftovers = [p for p in isolated_environment.rglob("*") if p.is_file()]
    assert leftovers == [], "no plain-text fallback may be written"


def test_no_backend_still_allows_pigeon_token(monkeypatch: pytest.MonkeyPatch) -> None:
    keyring.set_keyring(fail.Keyring())
    monkeypatch.setenv("PIGEON_TOKEN", "env-only")
    assert credentials.resolve_token("default") == ("env-only", TokenSource.ENVIRONMENT)


def test_a_keyring_that_writes_a_plain_file_is_used_only_when_agreed(plain_file_keyring: MemoryKeyring) -> None:
    assert credentials.plain_file() == "/home/someone/.local/share/python_keyring/keyring_pass.cfg"
    with pytest.raises(credentials.PlainFileKeyring) as caught:
        credentials.store_token("default", "s3cr3t-value")
    assert plain_file_keyring.secrets == {}
    assert "keyring_pass.cfg" in str(caught.value)
    assert "s3cr3t-value" not in str(caught.value)
    credentials.store_token("default", "tok", plain_file_agreed=True)
    assert plain_file_keyring.secrets == {("pigeon", "default"): "tok"}


def test_an_ordinary_keyring_is_not_a_plain_file(memory_keyring: MemoryKeyring) -> None:
    assert credentials.plain_file() is None


# --- token_command: a program that prints the token ---------------------------------------------------------------


def printing(script: str) -> list[str]:
    """A token_command: this interpreter running ``script``."""
    return [sys.executable, "-c", script]


def test_a_token_command_gives_its_first_line_stripped(memory_keyring: MemoryKeyring) -> None:
    command = printing("print('  tok-from-pass  '); print('login: ada')")
    assert credentials.resolve_token("work", command) == ("tok-from-pass", TokenSource.COMMAND)


def test_precedence_is_pigeon_token_then_token_command_then_keyring(
    memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    credentials.store_token("work", "from-keyring")
    command = printing("print('from-command')")
    assert credentials.resolve_token("work") == ("from-keyring", TokenSource.KEYRING)
    assert credentials.resolve_token("work", command) == ("from-command", TokenSource.COMMAND)
    assert credentials.token_source("work", command) is TokenSource.COMMAND
    monkeypatch.setenv("PIGEON_TOKEN", "from-env")
    assert credentials.resolve_token("work", command) == ("from-env", TokenSource.ENVIRONMENT)
    assert credentials.token_source("work", command) is TokenSource.ENVIRONMENT


def test_a_token_command_runs_without_a_shell_and_without_pigeon_token(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen = tmp_path / "environment"
    script = f"import os, sys; open({str(seen)!r}, 'w').write(repr(sorted(os.environ))); print(sys.argv[1])"
    command = [*printing(script), "$HOME;echo`id`"]  # no shell: the argument arrives as it is
    monkeypatch.setenv("PIGEON_TOKEN", "the-env-token")
    token = credentials.run_token_command("work", command)
    assert token == "$HOME;echo`id`"
    assert "PIGEON_TOKEN" not in seen.read_text()


@pytest.mark.parametrize(
    ("script", "says"),
    [
        (
            "import sys; print('s3cret-out'); sys.stderr.write('pigeon/work is not in the store\\n'); sys.exit(1)",
            "failed (exit status 1): pigeon/work is not in the store",
        ),
        ("import sys; sys.stderr.write('s3cret-out\\n'); print('s3cret-out'); sys.exit(3)", "failed (exit status 3)."),
        ("print('   ')", "printed nothing"),
        ("import sys; sys.stdout.buffer.write(b'\\xff\\xfe s3cret-out')", "not text"),
        ("import time; time.sleep(30)", "did not finish within 0.5 s"),
    ],
)
def test_a_token_command_that_gives_no_token_is_one_clear_line_without_what_it_printed(script: str, says: str) -> None:
    with pytest.raises(credentials.TokenCommandFailed) as caught:
        credentials.run_token_command("work", printing(script), timeout=0.5)
    message = str(caught.value)
    assert says in message
    assert "\n" not in message
    assert "s3cret-out" not in message
    assert "token_command of profile 'work'" in message


def test_a_token_command_that_is_not_there_says_so() -> None:
    with pytest.raises(credentials.TokenCommandFailed, match="was not found"):
        credentials.run_token_command("work", ["/nonexistent/pass\x1b]2;x\x07", "show"])
    with pytest.raises(credentials.TokenCommandFailed) as caught:
        credentials.run_token_command("work", ["/nonexistent/pass\x1b]2;x\x07"])
    assert "\x1b" not in str(caught.value)
    assert "\x07" not in str(caught.value)
