"""A message's text out of Pigeon, in the core: piped to a command (the mail text on its standard input, no secret,
no shell, bounded and timed), written to a file (never over one unasked), and its raw record (every field)."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pigeon.config import load_config
from pigeon.core import programs
from pigeon.core.handoff import HandOff
from pigeon.core.message_out import file_name, mail_text, raw_text
from pigeon.models import Message

NOW = datetime(2026, 11, 24, 9, 30, tzinfo=UTC)


def message(**fields: object) -> Message:
    record = {
        "id": "m-1",
        "subject": "Re: Q4 plan",
        "created_at": "2026-11-23T16:05:00Z",
        "sender": {"raw_address": "Ann Lee <ann@example.com>"},
        "recipients": [
            {"raw_address": "alice@example.com", "type": "RECIPIENT_TYPE_TO"},
            {"raw_address": "Bob <bob@example.com>", "type": "RECIPIENT_TYPE_CC"},
        ],
        "content_blocks": [{"type": "CONTENT_TYPE_TEXT", "mime_type": "text/plain", "content": "Hello,\nthe plan.\n"}],
        "metadata": {"message_id": "<q4@mail.example.com>"},
        **fields,
    }
    return Message.model_validate(record)


def handoff() -> HandOff:
    return HandOff(load_config(base_url="http://service.test"), clock=lambda: NOW)


def script(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text(f"#!{sys.executable}\nimport os, sys\n{body}\n")
    path.chmod(0o700)
    return path


def test_the_mail_text_has_the_header_lines_a_blank_line_and_the_readable_text() -> None:
    assert mail_text(message(), {}) == (
        "From: Ann Lee <ann@example.com>\n"
        "To: alice@example.com\n"
        "Cc: Bob <bob@example.com>\n"
        "Date: Mon, 23 Nov 2026 16:05:00 +0000\n"
        "Subject: Re: Q4 plan\n"
        "Message-ID: <q4@mail.example.com>\n"
        "\n"
        "Hello,\nthe plan.\n"
    )


def test_hostile_mail_cannot_add_a_header_line_or_an_escape_to_the_text() -> None:
    hostile = message(
        subject="Hi\r\nBcc: eve@evil.example",
        sender={"raw_address": "Ann\n<ann@example.com>\x1b]52;c;cHduZWQ=\x07"},
        content_blocks=[{"mime_type": "text/plain", "content": "red \x1b[31mtext\x1b[0m\x9b2J"}],
    )
    text = mail_text(hostile, {})
    head, body = text.split("\n\n", 1)
    names = [line.split(":", 1)[0] for line in head.splitlines()]
    assert names == ["From", "To", "Cc", "Date", "Subject", "Message-ID"]
    assert "Subject: Hi Bcc: eve@evil.example" in head
    assert body == "red text\n"
    assert "\x1b" not in text
    assert "\x9b" not in text


def test_a_message_without_a_message_id_gets_one_made_from_its_id_the_same_each_time() -> None:
    plain = message(metadata=None)
    assert "Message-ID: <m-1@pigeon.invalid>\n" in mail_text(plain, {})
    assert mail_text(plain, {}) == mail_text(message(metadata=None), {})


async def test_a_piped_command_reads_the_mail_text_byte_for_byte(tmp_path: Path) -> None:
    got = tmp_path / "got"
    program = script(tmp_path, "keep", f"open({str(got)!r}, 'wb').write(sys.stdin.buffer.read()); print('kept')")
    said = await handoff().pipe_message(f"'{program}' --flag", message(), {})
    assert got.read_bytes() == mail_text(message(), {}).encode()
    assert got.read_bytes().startswith(b"From: Ann Lee <ann@example.com>\n")
    assert (said.code, said.output, said.dropped) == (0, "kept\n", 0)


async def test_a_piped_command_gets_no_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIGEON_TOKEN", "tok-secret")
    monkeypatch.setenv("PIGEON_PROFILE", "work")
    got = tmp_path / "env.json"
    program = script(tmp_path, "env", f"import json; json.dump(dict(os.environ), open({str(got)!r}, 'w'))")
    await handoff().pipe_message(str(program), message(), {})
    env = json.loads(got.read_text())
    assert "PIGEON_TOKEN" not in env
    assert "tok-secret" not in env.values()
    assert env["PIGEON_PROFILE"] == "work"


async def test_a_piped_command_runs_in_a_session_of_its_own_with_no_terminal(tmp_path: Path) -> None:
    program = script(tmp_path, "where", "print(os.getsid(0) == os.getpid(), os.isatty(0), os.isatty(1), os.isatty(2))")
    said = await handoff().pipe_message(str(program), message(), {})
    assert said.output == "True False False False\n"


async def test_a_command_not_found_or_unreadable_is_one_line() -> None:
    with pytest.raises(programs.ProgramFailed, match=r"^no-such-program-here was not found$"):
        await handoff().pipe_message("no-such-program-here -x", message(), {})
    with pytest.raises(programs.ProgramFailed, match=r"^the command cannot be read: No closing quotation$"):
        await handoff().pipe_message("grep 'plan", message(), {})
    with pytest.raises(programs.ProgramFailed, match=r"^no command was given$"):
        await handoff().pipe_message("   ", message(), {})


async def test_a_failing_command_gives_its_exit_code_and_what_it_said(tmp_path: Path) -> None:
    program = script(tmp_path, "fail", "sys.stdin.read(); print('no good', file=sys.stderr); sys.exit(3)")
    said = await handoff().pipe_message(str(program), message(), {})
    assert (said.code, said.output) == (3, "no good\n")


def test_a_command_that_does_not_finish_is_stopped(tmp_path: Path) -> None:
    program = script(tmp_path, "stuck", "import time; time.sleep(600)")
    with pytest.raises(programs.ProgramFailed, match=r"^stuck did not finish within 1 s; stopped$"):
        programs.pipe([str(program)], b"x", timeout=1)


def test_the_output_kept_is_bounded(tmp_path: Path) -> None:
    program = script(tmp_path, "loud", "sys.stdout.write('y' * 300_000)")
    said = programs.pipe([str(program)], b"", limit=1000)
    assert (said.output, said.dropped) == ("y" * 1000, 299_000)


async def test_writing_never_replaces_a_file_unless_told(tmp_path: Path) -> None:
    target = tmp_path / "plan.txt"
    target.write_text("mine")
    with pytest.raises(FileExistsError):
        await handoff().write_message(str(target), message(), {})
    assert target.read_text() == "mine"
    written = await handoff().write_message(str(target), message(), {}, overwrite=True)
    assert written == target
    assert target.read_text() == mail_text(message(), {})


async def test_writing_expands_home_and_takes_a_relative_path_in_the_download_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    assert await handoff().write_message("~/q4.txt", message(), {}) == tmp_path / "home" / "q4.txt"
    place = handoff().write_path(message())
    assert place.name == "Q4-plan.txt"
    assert await handoff().write_message("Q4-plan.txt", message(), {}) == place
    assert place.read_text().startswith("From: ")


@pytest.mark.parametrize(
    ("subject", "name"),
    [
        ("Re: Q4 plan", "Q4-plan.txt"),
        ("../../etc/passwd", "etc-passwd.txt"),
        (None, "message.txt"),
        ("…", "message.txt"),
    ],
)
def test_the_file_name_comes_from_the_subject_and_is_never_a_path(subject: str | None, name: str) -> None:
    assert file_name(message(subject=subject)) == name


def test_the_raw_record_has_every_field_unknown_ones_too_and_cuts_long_attachments() -> None:
    big = "QUJD" * 10_000
    raw = message(
        x_spam_score=7.5,
        content_blocks=[
            {"mime_type": "text/plain", "content": "Hi", "x_block_note": "kept"},
            {"mime_type": "text/plain", "content": "words " * 10_000},
            {"type": "CONTENT_TYPE_FILE", "filename": "a.bin", "content": big, "metadata": {"encoding": "base64"}},
        ],
        subject="odd \x1b[2Jsubject",
    )
    shown = json.loads(raw_text(raw))
    assert shown["x_spam_score"] == 7.5
    assert shown["content_blocks"][0]["x_block_note"] == "kept"
    assert shown["metadata"] == {"message_id": "<q4@mail.example.com>"}
    assert shown["content_blocks"][1]["content"] == ("words " * 10_000)[:50_000] + "… (10,000 more characters)"
    assert shown["content_blocks"][2]["content"] == big[:2000] + "… (38,000 more characters)"
    assert shown["subject"] == "odd subject"


def test_a_messages_links_keep_the_numbers_the_reader_gives_them_across_the_thread() -> None:
    from pigeon.core.links import message_links, thread_links

    def html(message_id: str, *targets: str) -> Message:
        anchors = " ".join(f'<a href="{t}">{t.rsplit("/", 1)[-1]}</a>' for t in targets)
        return Message(id=message_id, content_blocks=[{"mime_type": "text/html", "content": f"<p>{anchors}</p>"}])

    first = html("m1", "https://a.test/1", "https://a.test/2")
    second = html("m2", "https://b.test/3")
    plain = Message(
        id="m3", content_blocks=[{"mime_type": "text/plain", "content": "https://c.test/4 https://a.test/1"}]
    )
    thread = [first, second, plain]
    assert [(link.number, link.target) for link in message_links(thread, second)] == [(3, "https://b.test/3")]
    assert [(link.number, link.target) for link in message_links(thread, plain)] == [
        (1, "https://a.test/1"),  # written out here, a footnote of the first message: the number the reader gave it
        (4, "https://c.test/4"),
    ]
    assert message_links(thread, first) == thread_links(thread)[:2]
    assert message_links(thread, html("elsewhere")) == []


@pytest.fixture
def desktop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An X desktop whose only clipboard program is a fake ``xclip`` that keeps what it was given and how."""
    folder = tmp_path / "bin"
    folder.mkdir()
    kept = tmp_path / "clipboard.json"
    body = f"import json; json.dump([sys.argv[1:], sys.stdin.read(), dict(os.environ)], open({str(kept)!r}, 'w'))"
    script(folder, "xclip", body)
    monkeypatch.setenv("PATH", str(folder))
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    monkeypatch.setenv("PIGEON_TOKEN", "tok-secret")
    return kept


async def test_the_desktop_clipboard_program_gets_the_text_and_no_secret(desktop: Path) -> None:
    assert await handoff().copy_to_desktop("The plan.\nAll of it.") == "xclip"
    arguments, text, env = json.loads(desktop.read_text())
    assert (arguments, text) == (["-selection", "clipboard"], "The plan.\nAll of it.")
    assert "PIGEON_TOKEN" not in env


async def test_with_no_display_no_clipboard_program_runs(desktop: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY")
    assert await handoff().copy_to_desktop("text") == ""
    assert not desktop.exists()


async def test_a_failing_clipboard_program_is_one_line(desktop: Path, tmp_path: Path) -> None:
    script(tmp_path / "bin", "xclip", "sys.exit(1)")
    with pytest.raises(programs.ProgramFailed, match=r"^xclip failed \(exit 1\)$"):
        await handoff().copy_to_desktop("text")
