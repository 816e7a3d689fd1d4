"""One store, one account: two accounts' tokens on one profile never mix their mail; a token per profile from its
``token_command``; ``pigeon status`` checking the service and the token."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pigeon import locations
from pigeon.cli import main
from pigeon.store.mailstore import MailStore, store_path
from pigeon_service.app import ServerSettings, create_app
from pigeon_service.run import start_in_thread
from tests.command_line import run
from tests.keyrings import MemoryKeyring
from tests.server.conftest import Account, Service, make_service


@pytest.fixture
def running(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Service, str]]:
    """The reference service (alice: 25 threads, bob: 10) on a local port; the profiles point at it."""
    service = make_service()
    thread = start_in_thread(create_app(service.db, ServerSettings(deliver_webhooks=False)), db=service.db)
    monkeypatch.setenv("PIGEON_BASE_URL", thread.base_url)
    yield service, thread.base_url
    thread.stop()
    service.db.close()


def thread_ids(service: Service, account: Account) -> set[str]:
    threads, _ = service.db.list_threads(account.id, page_size=500, page_token=None)
    return {t.id for t in threads if t.id}


def stored_ids(profile: str = "default") -> set[str]:
    store = MailStore(store_path(profile))
    try:
        return {row["id"] for row in store.rows("SELECT id FROM threads")}
    finally:
        store.close()


def test_a_token_of_another_account_never_writes_into_the_store(
    running: tuple[Service, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    service, _ = running
    monkeypatch.setenv("PIGEON_TOKEN", service.alice.token)
    assert run("sync")[0] == 0
    alice = thread_ids(service, service.alice)
    assert stored_ids() == alice
    views_before = run("views", "--json")[1]

    monkeypatch.setenv("PIGEON_TOKEN", service.bob.token)
    capsys.readouterr()
    code, text = run("sync")
    err = capsys.readouterr().err
    assert code == 2
    assert text == ""
    assert err.count("\n") == 1
    assert "holds the mail of" in err
    assert "nothing was written" in err
    assert service.bob.token not in err
    assert stored_ids() == alice  # not one of bob's threads, none of alice's lost
    assert run("views", "--json")[1] == views_before

    monkeypatch.setenv("PIGEON_TOKEN", service.alice.token)
    assert run("sync")[0] == 0  # the store's own account goes on as before
    assert stored_ids() == alice


def test_logging_in_as_another_account_asks_before_starting_afresh(
    running: tuple[Service, str],
    monkeypatch: pytest.MonkeyPatch,
    memory_keyring: MemoryKeyring,
    capsys: pytest.CaptureFixture[str],
) -> None:
    service, _base_url = running
    monkeypatch.setattr("sys.stdin", io.StringIO(service.alice.token + "\n"))
    assert run("login", "--token-stdin")[0] == 0
    assert run("sync")[0] == 0
    alice = thread_ids(service, service.alice)
    assert stored_ids() == alice
    first = sorted(alice)[0]
    assert run("star", first)[0] == 0

    capsys.readouterr()
    monkeypatch.setattr("sys.stdin", io.StringIO(service.bob.token + "\n"))
    assert run("login", "--token-stdin")[0] == 2  # a script cannot be asked: it must say --start-afresh
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "--start-afresh" in err
    assert memory_keyring.secrets == {("pigeon", "default"): service.alice.token}  # nothing kept
    assert stored_ids() == alice

    monkeypatch.setattr("sys.stdin", io.StringIO(service.bob.token + "\n"))
    code, text = run("login", "--token-stdin", "--start-afresh")
    assert code == 0, text
    assert memory_keyring.secrets == {("pigeon", "default"): service.bob.token}
    assert stored_ids() == set()
    assert json.loads(run("views", "--json")[1])["starred"] == 0  # alice's triage state went with her mail
    assert run("sync")[0] == 0
    assert stored_ids() == thread_ids(service, service.bob)


def test_two_profiles_each_with_its_token_command_keep_their_own_mail(
    running: tuple[Service, str], tmp_path: Path
) -> None:
    service, base_url = running
    tokens = {"home": service.alice.token, "work": service.bob.token}
    lines = ['default_profile = "home"\n']
    for name, token in tokens.items():
        secret = tmp_path / f"{name}.secret"
        secret.write_text(token + "\nsecond line, not the token\n")
        command = json.dumps([sys.executable, "-c", f"print(open({str(secret)!r}).read(), end='')"])
        lines.append(f'[profiles.{name}]\nbase_url = "{base_url}"\ntoken_command = {command}\n')
    locations.config_file().parent.mkdir(parents=True)
    locations.config_file().write_text("\n".join(lines))

    assert run("sync", "--profile", "home")[0] == 0
    assert run("sync", "--profile", "work")[0] == 0
    assert stored_ids("home") == thread_ids(service, service.alice)
    assert stored_ids("work") == thread_ids(service, service.bob)

    status = json.loads(run("status", "--profile", "work", "--json")[1])
    assert status["token_from"] == "token_command"
    assert status["profiles_token_from"] == {"home": "token_command", "work": "token_command"}
    assert status["token_accepted"] is True
    assert service.bob.token not in json.dumps(status)


def test_status_checks_the_service_and_the_token(running: tuple[Service, str], monkeypatch: pytest.MonkeyPatch) -> None:
    service, _ = running
    monkeypatch.setenv("PIGEON_TOKEN", service.alice.token)
    code, text = run("status")
    assert code == 0
    lines = text.splitlines()
    assert "  check:   reachable" in lines
    assert any(line.startswith("  check:   accepted (") for line in lines)
    assert service.alice.token not in text

    monkeypatch.setenv("PIGEON_TOKEN", "pgn_not_a_real_token")
    status = json.loads(run("status", "--json")[1])
    assert (status["service_reachable"], status["token_accepted"]) == (True, False)
    assert "refused by the service" in run("status")[1]

    monkeypatch.delenv("PIGEON_TOKEN")
    status = json.loads(run("status", "--json")[1])
    assert (status["service_reachable"], status["token_accepted"], status["token_from"]) == (True, None, "none")


def test_status_says_when_the_service_cannot_be_reached(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIGEON_TOKEN", "pgn_x")
    code, text = run("status", "--base-url", "http://127.0.0.1:9")  # the discard port: nothing listens
    assert code == 0
    assert "  check:   not reachable:" in text
    assert "  check:   not checked (no answer)" in text
    assert "pgn_x" not in text


BAD_BASE_URLS = ["http://127.0.0.1:99999", "http://127.0.0.1:0", "http://[::1", "http://mail\x1b]2;pwned\x07.example"]


@pytest.mark.parametrize("url", BAD_BASE_URLS)
@pytest.mark.parametrize("argv", [["status"], ["sync"], []])  # [] is the app itself
def test_a_bad_base_url_in_the_file_is_one_clean_line_before_anything_starts(
    url: str, argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import tomli_w

    monkeypatch.setenv("PIGEON_TOKEN", "pgn_x")
    path = locations.config_file()
    path.parent.mkdir(parents=True)
    path.write_text(tomli_w.dumps({"default_profile": "work", "profiles": {"work": {"base_url": url}}}))
    assert main(argv, out=io.StringIO()) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "profiles.work.base_url" in err
    assert str(path) in err
    assert "\x1b" not in err
    assert "\x07" not in err
    assert "Traceback" not in err


@pytest.mark.parametrize("url", BAD_BASE_URLS)
def test_a_bad_base_url_typed_at_login_is_one_clean_line_and_nothing_is_kept(
    url: str, monkeypatch: pytest.MonkeyPatch, memory_keyring: MemoryKeyring, capsys: pytest.CaptureFixture[str]
) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("sys.stdin", Terminal(url + "\npgn_x\n"))
    monkeypatch.setattr("getpass.getpass", lambda prompt: "pgn_x")
    assert main(["login"], out=io.StringIO()) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "The service URL" in err
    assert "\x1b" not in err
    assert memory_keyring.secrets == {}
    assert not locations.config_file().exists() or url not in locations.config_file().read_text()


def test_login_without_a_keyring_keeps_the_url_and_says_how_to_give_the_token(
    running: tuple[Service, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import keyring
    from keyring.backends import fail

    service, base_url = running
    keyring.set_keyring(fail.Keyring())
    monkeypatch.setattr("sys.stdin", io.StringIO(service.alice.token + "\n"))
    code, text = run("login", "--token-stdin", "--profile", "work")
    assert code == 0, text
    assert "not the token: there is no keyring here" in text
    assert "token_command" in text
    assert "PIGEON_TOKEN" in text
    assert service.alice.token not in text
    saved = locations.config_file().read_text()
    assert base_url in saved
    assert service.alice.token not in saved
    assert run("status", "--profile", "work")[0] == 0  # the profile exists now


def test_status_says_where_each_profiles_token_comes_from(
    memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = locations.config_file()
    path.parent.mkdir(parents=True)
    base = 'base_url = "http://127.0.0.1:9"\n'
    path.write_text(
        f'[profiles.a]\n{base}token_command = ["pass", "show", "a"]\n[profiles.b]\n{base}[profiles.c]\n{base}'
    )
    memory_keyring.secrets[("pigeon", "b")] = "kept"
    status = json.loads(run("status", "--profile", "c", "--json")[1])
    assert status["profiles_token_from"] == {"a": "token_command", "b": "keyring", "c": "none"}
    text = run("status", "--profile", "c")[1]
    assert "Tokens:    a: token_command; b: keyring; c: none" in text
    monkeypatch.setenv("PIGEON_TOKEN", "pgn_x")
    status = json.loads(run("status", "--profile", "c", "--json")[1])
    assert set(status["profiles_token_from"].values()) == {"PIGEON_TOKEN environment variable"}


def test_a_failing_token_command_is_one_line_and_status_names_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = locations.config_file()
    path.parent.mkdir(parents=True)
    command = json.dumps([sys.executable, "-c", "import sys; print('s3cret'); sys.exit(4)"])
    path.write_text(f'[profiles.default]\nbase_url = "http://127.0.0.1:9"\ntoken_command = {command}\n')
    assert main(["threads", "list"], out=io.StringIO()) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "failed (exit status 4)" in err
    assert "s3cret" not in err
    code, text = run("status")
    assert code == 0
    assert "Token:     from token_command" in text
    assert "not checked: The token_command of profile 'default'" in text
    assert "s3cret" not in text


class Terminal(io.StringIO):
    """Standard input as a terminal: what a person types, line by line."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("answer", "code"), [("n", 2), ("", 2), ("y", 0)])  # (a bare Enter is No)
def test_login_on_a_terminal_asks_before_starting_another_accounts_store_afresh(
    running: tuple[Service, str],
    monkeypatch: pytest.MonkeyPatch,
    memory_keyring: MemoryKeyring,
    capsys: pytest.CaptureFixture[str],
    answer: str,
    code: int,
) -> None:
    service, _ = running
    monkeypatch.setenv("PIGEON_TOKEN", service.alice.token)
    assert run("sync")[0] == 0
    monkeypatch.delenv("PIGEON_TOKEN")
    monkeypatch.setattr("getpass.getpass", lambda prompt: service.bob.token)
    monkeypatch.setattr("sys.stdin", Terminal(f"\n{answer}\n"))  # the URL as it is; then the answer
    capsys.readouterr()
    assert run("login")[0] == code
    err = capsys.readouterr().err
    assert f"account {service.alice.id}" in err
    assert f"account {service.bob.id}" in err
    assert service.bob.token not in err
    if answer != "y":
        assert stored_ids() == thread_ids(service, service.alice)
        assert memory_keyring.secrets == {}
    else:
        assert stored_ids() == set()
        assert memory_keyring.secrets == {("pigeon", "default"): service.bob.token}


def test_start_afresh_for_the_account_the_store_holds_keeps_the_store(
    running: tuple[Service, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    service, _ = running
    monkeypatch.setattr("sys.stdin", io.StringIO(service.alice.token + "\n"))
    assert run("login", "--token-stdin", "--start-afresh")[0] == 0  # a new store: taken, nothing to empty
    assert run("sync")[0] == 0
    first = sorted(stored_ids())[0]
    assert run("star", first)[0] == 0
    monkeypatch.setattr("sys.stdin", io.StringIO(service.alice.token + "\n"))
    assert run("login", "--token-stdin", "--start-afresh")[0] == 0
    assert stored_ids() == thread_ids(service, service.alice)
    assert json.loads(run("views", "--json")[1])["starred"] == 1


def test_status_makes_one_request_and_never_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    import httpx
    import respx

    monkeypatch.setenv("PIGEON_TOKEN", "pgn_x")
    with respx.mock(base_url="https://mail.example.com", using="pigeon") as router:
        route = router.get("/v1/inboxes").mock(return_value=httpx.Response(503, json={"detail": "busy"}))
        code, text = run("status", "--base-url", "https://mail.example.com")
    assert code == 0
    assert route.call_count == 1
    assert "  check:   reachable, but it answered with an error:" in text
