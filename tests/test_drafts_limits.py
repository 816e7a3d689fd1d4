"""Drafts Pigeon cannot send as written: a MIME type, charset or encoding it does not make, and a draft over
MAX_DRAFT_BYTES. Each is refused with words naming what to change, and kept; a list reads a draft's headers alone."""

from __future__ import annotations

import io
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from pigeon.cli import main
from pigeon.config import load_config
from pigeon.core.drafts import Drafts, SendFailed
from pigeon.store.contact_drafts import MAX_BYTES, ContactDrafts
from pigeon.store.mail_drafts import MAX_DRAFT_BYTES, MailDrafts
from tests.test_disk_faults import read_only

T = TypeVar("T")
HEAD = "From: me@pigeon.test\nTo: ann@example.com\nSubject: Numbers\n"


@pytest.fixture
def received(tmp_path: Path) -> Path:
    """The send command (set in the configuration file) writes what it is given here."""
    path = tmp_path / "received.eml"
    sender = tmp_path / "send.py"
    sender.write_text(f"import sys\nopen({str(path)!r}, 'wb').write(sys.stdin.buffer.read())\n")
    config = load_config()
    config.path.parent.mkdir(parents=True, exist_ok=True)
    config.path.write_text(f'[compose]\nsend_command = ["{sys.executable}", "{sender}"]\n')
    return path


def mail_drafts() -> Drafts:
    return Drafts(load_config())


def peak(call: Callable[[], T]) -> tuple[T, int]:
    """What ``call`` returned and the most memory Python held for it at once (bytes)."""
    tracemalloc.start()
    try:
        result = call()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    ("header", "named"),
    [
        ("Content-Type: multipart/mixed; boundary=XYZ", "multipart/mixed"),
        ("Content-Type: text/html", "text/html"),
        ("Content-Type: text/plain; charset=iso-8859-1", "iso-8859-1"),
        ("Content-Transfer-Encoding: base64", "Content-Transfer-Encoding"),
    ],
)
def test_a_draft_pigeon_cannot_send_as_written_is_refused_naming_the_header_and_kept(
    received: Path, header: str, named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    text = f"{HEAD}{header}\n\n--XYZ\nContent-Type: text/plain\n\nThe numbers are in.\n--XYZ--\n"
    draft = MailDrafts().write(text, kind="new")
    with pytest.raises(SendFailed, match="header") as refused:
        mail_drafts().send(draft)
    assert named in str(refused.value)
    assert "remove" in str(refused.value)
    assert "pigeon drafts" in str(refused.value)
    assert not received.exists()  # nothing went out, and certainly not an empty body
    assert draft.path.read_text() == text  # kept as written

    assert main(["drafts", "send", draft.id], io.StringIO()) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert named in err
    assert not received.exists()
    out = io.StringIO()
    assert main(["drafts"], out) == 0
    assert named in out.getvalue()  # the list says why it waits


def test_plain_text_headers_as_pigeon_sends_them_are_accepted(received: Path) -> None:
    text = f"{HEAD}MIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: 8bit\n\nHi.\n"
    draft = MailDrafts().write(text, kind="new")
    assert "Sent with" in mail_drafts().send(draft)
    assert b"Hi." in received.read_bytes()


def refused_again(draft_id: str) -> str:
    try:
        mail_drafts().send(MailDrafts().get(draft_id))
    except SendFailed as exc:
        return str(exc)
    raise AssertionError("sent")


def huge_draft(size: int) -> Path:
    draft = MailDrafts().write(f"{HEAD}\nsmall\n", kind="new")
    with draft.path.open("a") as handle:
        line = "All work and no play makes a very long draft indeed.\n"
        handle.write(line * (size // len(line) + 1))
    return draft.path


def test_a_huge_draft_is_listed_from_its_headers_and_said_too_big(capsys: pytest.CaptureFixture[str]) -> None:
    MailDrafts().write(f"{HEAD}\nsmall\n", kind="new")
    assert main(["drafts"], io.StringIO()) == 0  # (what the command loads once is not this test's)
    size = 6 * MAX_DRAFT_BYTES
    path = huge_draft(size)
    out = io.StringIO()
    code, most = peak(lambda: main(["drafts"], out))
    assert code == 0
    assert most < MAX_DRAFT_BYTES // 4  # the headers, not the draft
    listed = out.getvalue()
    assert "Numbers" in listed
    assert f"{path.stem}: too big to send" in listed
    assert f"up to {MAX_DRAFT_BYTES // (1024 * 1024)} MiB" in listed


def test_a_huge_draft_is_refused_to_send_with_words_and_kept(
    received: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = huge_draft(3 * MAX_DRAFT_BYTES)
    size = path.stat().st_size
    draft = MailDrafts().get(path.stem)
    with pytest.raises(SendFailed, match="too big to send") as refused:
        mail_drafts().send(draft)
    assert "pigeon drafts edit" in str(refused.value)
    _, most = peak(lambda: refused_again(draft.id))
    assert most < MAX_DRAFT_BYTES // 4  # refused before it is read
    assert not received.exists()
    assert path.stat().st_size == size  # kept whole
    assert main(["drafts", "send", path.stem], io.StringIO()) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "too big to send" in err


def test_a_contact_draft_file_too_big_to_be_pigeons_is_not_read_whole_and_left_alone(tmp_path: Path) -> None:
    drafts = ContactDrafts(folder=tmp_path)
    drafts.save("c1", {"first_name": "Ann"})
    assert drafts.load("c1") is not None
    path = tmp_path / "c1.json"
    with path.open("a") as handle:
        handle.write(" " * (20 * MAX_BYTES))
    size = path.stat().st_size
    found, most = peak(lambda: drafts.load("c1"))
    assert found is None
    assert most < 4 * MAX_BYTES
    assert path.stat().st_size == size


def test_a_read_only_drafts_folder_is_one_line_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("VISUAL", f"{sys.executable} -c pass")
    kept = MailDrafts().write(f"{HEAD}\nkept\n", kind="new")
    folder = MailDrafts().folder
    with read_only(folder):
        assert main(["compose"], io.StringIO()) == 2
        assert main(["drafts", "discard", kept.id], io.StringIO()) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2
    assert f"Cannot write the draft in {folder}" in err
    assert f"Cannot discard {kept.id} in {folder}" in err
    assert "Traceback" not in err
    assert [d.id for d in MailDrafts().all()] == [kept.id]
