"""The ``pigeon`` command: JSON output parsed back, exit codes, clean one-line errors, login/logout/status."""

from __future__ import annotations

import io
import json
import stat
import subprocess
import sys
from collections.abc import Iterator
from typing import Any
from unittest.mock import patch

import httpx
import pytest
import respx

from pigeon import credentials, locations
from pigeon.cli import main
from pigeon.cli.parser import build_parser, parse_arguments
from tests.command_line import run
from tests.keyrings import MemoryKeyring

BASE = "https://mail.example.com"
TOKEN = "tok_cli_secret_42"
THREAD = "7d0c4a5e-8d3b-4a53-9d55-1f6d2e0b9a11"
CONTACT = "3c9b6c1e-2f4d-4e8a-9a7b-0d1c2b3a4f5e"
INBOX = {"id": "i1", "account_id": "a", "type": "EMAIL_INBOX", "status": "ACTIVE", "email": "me@example.com"}


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.MockRouter]:
    monkeypatch.setenv("PIGEON_TOKEN", TOKEN)
    monkeypatch.setenv("PIGEON_BASE_URL", BASE)
    with respx.mock(base_url=BASE, assert_all_called=False, using="pigeon") as router:
        yield router


def run_json(*argv: str) -> dict[str, Any]:
    code, text = run(*argv, "--json")
    assert code == 0, text
    answer = json.loads(text)
    assert isinstance(answer, dict)
    return answer


def test_inboxes_list_and_create(api: respx.MockRouter) -> None:
    api.get("/v1/inboxes").respond(json={"inboxes": [INBOX | {"display_name": "Me", "unknown": 1}]})
    assert run_json("inboxes", "list") == {"inboxes": [INBOX | {"display_name": "Me", "unknown": 1}]}

    route = api.post("/v1/inboxes").respond(201, json=INBOX | {"metadata": {"k": "v"}})
    created = run_json("inboxes", "create", "--email", "me@example.com", "--metadata", '{"k": "v"}')
    assert created["metadata"] == {"k": "v"}
    assert json.loads(route.calls.last.request.content) == {
        "type": "EMAIL_INBOX",
        "email": "me@example.com",
        "metadata": {"k": "v"},
    }


def test_threads_list(api: respx.MockRouter) -> None:
    api.get("/v1/threads").respond(json={"threads": [{"id": THREAD, "subject": "Plans", "message_count": 3}]})
    assert run_json("threads", "list")["threads"][0]["subject"] == "Plans"
    code, text = run("threads", "list")
    assert code == 0
    assert "Plans" in text
    assert THREAD in text


def test_messages_list_one_page_and_all(api: respx.MockRouter) -> None:
    route = api.get("/v1/messages").mock(
        side_effect=[
            httpx.Response(200, json={"messages": [{"id": "m1"}], "next_page_token": "p2"}),
            httpx.Response(200, json={"messages": [{"id": "m1"}], "next_page_token": "p2"}),
            httpx.Response(200, json={"messages": [{"id": "m2"}], "next_page_token": ""}),
        ]
    )
    one = run_json("messages", "list", "--thread", THREAD, "--page-size", "1")
    assert one == {"messages": [{"id": "m1"}], "next_page_token": "p2"}
    everything = run_json("messages", "list", "--thread", THREAD, "--all")
    assert [m["id"] for m in everything["messages"]] == ["m1", "m2"]
    assert route.calls[0].request.url.params["page_size"] == "1"


def test_contacts_update_email_adds_to_what_the_contact_has_and_set_emails_replaces(
    api: respx.MockRouter, capsys: pytest.CaptureFixture[str]
) -> None:
    from pigeon.models import Contact
    from pigeon.store.mailstore import MailStore

    assert run("contacts", "update", CONTACT, "--email", "work:new@example.com")[0] == 2
    assert "not in the local store" in capsys.readouterr().err  # nothing to add to: said, nothing sent
    store = MailStore.for_profile("default")
    store.put_contact(
        Contact.model_validate(
            {"id": CONTACT, "emails": [{"id": "e1", "type": "EMAIL_TYPE_PERSONAL", "email": "old@example.com"}]}
        )
    )
    store.close()
    route = api.patch(f"/v1/contacts/{CONTACT}").respond(json={"id": CONTACT})
    assert run("contacts", "update", CONTACT, "--email", "work:new@example.com")[0] == 0
    assert json.loads(route.calls.last.request.content) == {
        "emails": [
            {"type": "EMAIL_TYPE_PERSONAL", "email": "old@example.com"},
            {"type": "EMAIL_TYPE_WORK", "email": "new@example.com"},
        ]
    }
    assert run("contacts", "update", CONTACT, "--set-emails", "work:only@example.com")[0] == 0
    assert json.loads(route.calls.last.request.content) == {
        "emails": [{"type": "EMAIL_TYPE_WORK", "email": "only@example.com"}]
    }
    assert run("contacts", "update", CONTACT, "--email", "work:a@x.example", "--set-emails", "work:b@x.example")[0] == 2


def test_contacts_update_sends_typed_arrays(api: respx.MockRouter) -> None:
    route = api.patch(f"/v1/contacts/{CONTACT}").respond(json={"id": CONTACT, "first_name": "Ada"})
    result = run_json(
        "contacts",
        "update",
        CONTACT,
        "--first-name",
        "Ada",
        "--set-emails",
        "work:ada@example.com",
        "--set-emails",
        "EMAIL_TYPE_PERSONAL:ada@home.example",
        "--set-phones",
        "personal:+1 555 0100",
        "--set-socials",
        "linkedin:ada",
        "--metadata",
        '{"vip": true}',
    )
    assert result == {"id": CONTACT, "first_name": "Ada"}
    assert json.loads(route.calls.last.request.content) == {
        "first_name": "Ada",
        "emails": [
            {"type": "EMAIL_TYPE_WORK", "email": "ada@example.com"},
            {"type": "EMAIL_TYPE_PERSONAL", "email": "ada@home.example"},
        ],
        "phones": [{"type": "PHONE_TYPE_PERSONAL", "phone": "+1 555 0100"}],
        "social_profiles": [{"type": "SOCIAL_PROFILE_TYPE_LINKEDIN", "username": "ada"}],
        "metadata": {"vip": True},
    }


def test_webhooks_create_shows_the_secret_once(api: respx.MockRouter) -> None:
    body: dict[str, Any] = {
        "id": "w1",
        "url": "https://hooks.example/in",
        "events": ["message.created", "message.failed"],
        "status": "active",
        "created_at": "2026-01-01T00:00:00Z",
        "secret": "whsec_xyz",
    }
    route = api.post("/v1/webhooks").respond(201, json=body)
    assert (
        run_json("webhooks", "create", "--url", body["url"], "--event", "created", "--event", "message.failed") == body
    )
    assert json.loads(route.calls.last.request.content)["events"] == ["message.created", "message.failed"]
    code, text = run("webhooks", "create", "--url", body["url"], "--event", "created")
    assert code == 0
    assert "whsec_xyz" in text
    assert "shown only now" in text


@pytest.mark.parametrize(
    "argv",
    [
        ["messages", "list"],
        ["messages", "list", "--thread", THREAD, "--page-size", "0"],
        ["messages", "list", "--thread", "not-a-uuid"],
        ["contacts", "update", CONTACT],
        ["contacts", "update", CONTACT, "--email", "home:ada@example.com"],
        ["contacts", "update", CONTACT, "--email", "ada@example.com"],
        ["contacts", "update", CONTACT, "--metadata", "[1, 2]"],
        ["webhooks", "create", "--url", "ftp://x.example", "--event", "sent"],
        ["webhooks", "create", "--url", "https://x.example", "--event", "read"],
        ["inboxes", "frobnicate"],
    ],
)
def test_usage_errors_exit_2_with_one_clean_line(
    api: respx.MockRouter, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    anything = api.route().respond(200, json={})
    assert main(argv, out=io.StringIO()) == 2
    err = capsys.readouterr().err
    assert "pigeon: error:" in err
    assert "Traceback" not in err
    assert not anything.called


@pytest.mark.parametrize(
    ("response", "fragment"),
    [
        (httpx.Response(401, json={"detail": "bad token"}), "401"),
        (httpx.Response(500, text="oops"), "500"),
        (httpx.ConnectError("refused"), "could not reach"),
        (httpx.Response(200, text="not json"), "not JSON"),
    ],
)
def test_service_errors_exit_1_with_one_clean_line(
    api: respx.MockRouter, response: httpx.Response | Exception, fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    api.get("/v1/inboxes").mock(side_effect=[response] * 3)
    assert main(["inboxes", "list"], out=io.StringIO()) == 1
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert fragment in lines[0]
    assert TOKEN not in err


def test_help_and_version_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"], out=io.StringIO()) == 0
    assert "pigeon" in capsys.readouterr().out
    assert main(["--help"], out=io.StringIO()) == 0
    assert "login" in capsys.readouterr().out


def test_not_logged_in_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["threads", "list"], out=io.StringIO()) == 2
    assert "pigeon login" in capsys.readouterr().err


def test_login_verifies_then_stores_in_the_keyring(
    memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(TOKEN + "\n"))
    with respx.mock(base_url=BASE, using="pigeon") as router:
        route = router.get("/v1/inboxes").respond(json={"inboxes": [INBOX]})
        code, text = run("login", "--base-url", BASE, "--profile", "work", "--token-stdin")
    assert code == 0, text
    assert route.calls.last.request.headers["authorization"] == f"Bearer {TOKEN}"
    assert memory_keyring.secrets == {("pigeon", "work"): TOKEN}
    path = locations.config_file()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert BASE in path.read_text()
    assert TOKEN not in path.read_text()
    assert TOKEN not in text

    status = run_json("status", "--profile", "work")
    assert status["base_url"] == BASE
    assert status["token_from"] == "keyring"
    assert TOKEN not in json.dumps(status)

    assert run("logout", "--profile", "work")[0] == 0
    assert memory_keyring.secrets == {}
    assert run_json("status", "--profile", "work")["token_from"] == "none"


def test_login_reads_a_piped_token_without_asking_the_terminal(
    memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    def ask_the_terminal(prompt: str = "") -> str:
        raise AssertionError("getpass would wait on the terminal, not read the pipe")

    monkeypatch.setattr("getpass.getpass", ask_the_terminal)
    monkeypatch.setattr("sys.stdin", io.StringIO(TOKEN + "\n"))  # (not a terminal: a pipe, as in a script)
    with respx.mock(base_url=BASE, using="pigeon") as router:
        router.get("/v1/inboxes").respond(json={"inboxes": [INBOX]})
        code, text = run("login", "--base-url", BASE, "--profile", "work")
    assert code == 0, text
    assert memory_keyring.secrets == {("pigeon", "work"): TOKEN}


def test_login_with_a_rejected_token_stores_nothing(
    memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("wrong\n"))
    with respx.mock(base_url=BASE, using="pigeon") as router:
        router.get("/v1/inboxes").respond(401, json={"detail": "Invalid token"})
        code, _ = run("login", "--base-url", BASE, "--token-stdin")
    assert code == 1
    assert memory_keyring.secrets == {}
    assert not locations.config_file().exists()
    assert "401" in capsys.readouterr().err


def test_status_never_shows_the_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIGEON_TOKEN", TOKEN)
    code, text = run("status")
    assert code == 0
    assert "PIGEON_TOKEN environment variable" in text
    assert TOKEN not in text
    credentials.store_token("default", "stored-one")
    assert run_json("status")["token_from"] == "PIGEON_TOKEN environment variable"


def test_hostile_text_from_the_service_is_cleaned_in_tables(api: respx.MockRouter) -> None:
    api.get("/v1/threads").respond(json={"threads": [{"id": "t", "subject": "\x1b]52;c;ZXZpbA==\x07Hi\u202e\nthere"}]})
    code, text = run("threads", "list")
    assert code == 0
    assert "\x1b" not in text
    assert "\u202e" not in text
    assert "Hi there" in text


def test_python_dash_m_pigeon_is_the_pigeon_command() -> None:
    import subprocess
    import sys

    from pigeon import __version__

    done = subprocess.run(
        [sys.executable, "-m", "pigeon", "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"pigeon {__version__}"


def test_login_asks_before_writing_the_token_to_a_plain_file(
    plain_file_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(TOKEN + "\n"))
    with respx.mock(base_url=BASE, assert_all_called=False, using="pigeon") as router:
        route = router.get("/v1/inboxes").respond(json={"inboxes": [INBOX]})
        code, _ = run("login", "--base-url", BASE, "--token-stdin")
    assert code == 2
    assert plain_file_keyring.secrets == {}
    assert not route.called  # refused before the token went anywhere
    error = capsys.readouterr().err
    assert "keyring_pass.cfg" in error
    assert "--plain-file-keyring" in error
    assert "Traceback" not in error

    monkeypatch.setattr("sys.stdin", io.StringIO(TOKEN + "\n"))
    with respx.mock(base_url=BASE, using="pigeon") as router:
        router.get("/v1/inboxes").respond(json={"inboxes": [INBOX]})
        code, text = run("login", "--base-url", BASE, "--token-stdin", "--plain-file-keyring")
    assert code == 0, text
    assert plain_file_keyring.secrets == {("pigeon", "default"): TOKEN}
    assert "keyring_pass.cfg" in run("status")[1]


def test_status_says_how_new_mail_will_come_and_why(memory_keyring: MemoryKeyring) -> None:
    near = run_json("status", "--base-url", "http://127.0.0.1:8025")["new_mail"]
    assert near.startswith("live: webhooks")
    far = run("status", "--base-url", "https://mail.example.com")[1]
    assert "New mail:  a check every 60 s; no webhooks: the service is not on this machine" in far


def test_importing_the_commands_leaves_a_collector_turned_off_by_the_importer_off() -> None:
    probe = "import gc, json\ngc.disable()\nimport pigeon.cli\nprint(json.dumps(gc.isenabled()))\n"
    done = subprocess.run(  # noqa: S603 - this interpreter, a fixed script
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert json.loads(done.stdout) is False


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--profile", "work"],
        ["--profile=work"],
        ["--base-url", "http://127.0.0.1:9"],
        ["--prof", "w", "--base", "u"],
    ],
)
def test_the_apps_own_options_are_read_as_the_full_parser_reads_them_without_building_it(argv: list[str]) -> None:
    full = vars(build_parser().parse_args(argv))
    with patch("pigeon.cli.parser.build_parser", side_effect=AssertionError("built")):
        quick = vars(parse_arguments(argv))
    assert {key: full.get(key) for key in ("profile", "base_url")} == {
        key: quick.get(key) for key in ("profile", "base_url")
    }
    assert full.get("func") is None  # both open the app
    assert quick.get("func") is None


@pytest.mark.parametrize("argv", [["sync"], ["--profile", "work", "status"], ["-h"], ["--version"], ["--profile"]])
def test_anything_else_goes_to_the_full_parser(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    try:
        expected: object = vars(build_parser().parse_args(argv))
    except SystemExit as exc:
        expected = ("exit", exc.code, capsys.readouterr())
    try:
        got: object = vars(parse_arguments(argv))
    except SystemExit as exc:
        got = ("exit", exc.code, capsys.readouterr())
    assert got == expected
