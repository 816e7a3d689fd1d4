"""Mail out as other mail programs read it: threading headers, forwarded files byte for byte, forward as
attachment, reply-all without the user's own addresses, and the changes the review makes to a draft."""

from __future__ import annotations

import base64
import email
import io
import sys
from email import policy
from email.message import EmailMessage
from pathlib import Path

import pytest

from pigeon.config import ComposeConfig, ConfigError, load_config
from pigeon.core.compose import BadDraft, draft_text
from pigeon.core.drafts import REVIEW_LINES, AttachedTooBig, Drafts, SendFailed
from pigeon.core.message_ids import MAX_REFERENCES, derived_id
from pigeon.models import Contact, ContactEmail, ContentBlock, Message, Participant, Recipient, Thread
from pigeon.store.mail_drafts import MAX_ATTACHED_BYTES, MailDrafts, NewFile
from tests.command_line import run
from tests.server.conftest import Service, first_thread
from tests.test_compose import CONTACTS, INBOX, NOW, THREAD, message, script

PDF = bytes(range(256)) * 40 + b"\x00\r\n\x1a end"
CSV = "name,amount\r\nAnn,3\n"


@pytest.fixture
def received(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """$VISUAL adds a line and a recipient; the send command records its standard input into the returned path."""
    editor = script(
        tmp_path,
        "editor.py",
        "p = sys.argv[-1]\ntext = open(p).read()\nhead, _, body = text.partition('\\n\\n')\n"
        "head = head.replace('\\nTo: \\nSubject', '\\nTo: zed@example.com\\nSubject')\n"
        "open(p, 'w').write(head + '\\n\\nHere it is.\\n' + body)\n",
    )
    monkeypatch.setenv("VISUAL", " ".join(editor))
    path = tmp_path / "received.eml"
    sender = script(tmp_path, "send.py", f"open({str(path)!r}, 'wb').write(sys.stdin.buffer.read())")
    config_path = load_config().path
    config_path.parent.mkdir(parents=True, exist_ok=True)
    config_path.write_text(f"[compose]\nsend_command = [{sys.executable!r}, {sender[1]!r}]\n".replace("'", '"'))
    return path


def drafts() -> Drafts:
    return Drafts(load_config(), clock=lambda: NOW)


def sent_through(kind: str, messages: list[Message], received: Path, **start: object) -> EmailMessage:
    """The draft of ``kind`` started, edited by $VISUAL and sent: what the send command got, parsed."""
    mail = drafts()
    draft = mail.start(kind, THREAD, messages, [INBOX], CONTACTS, **start)  # type: ignore[arg-type]
    assert mail.edit(draft).changed
    mail.send(draft)
    parsed = email.message_from_bytes(received.read_bytes(), policy=policy.default)
    assert isinstance(parsed, EmailMessage)
    return parsed


def chain(count: int, **first: object) -> list[Message]:
    """``count`` messages, each answering the one before."""
    return [
        message(id=f"m{n}", parent_id=f"m{n - 1}" if n else None, **(first if n == 0 else {})) for n in range(count)
    ]


# --- threading headers --------------------------------------------------------------------------------------------


def test_a_reply_threads_under_the_message_id_the_metadata_carries_with_its_ancestors(received: Path) -> None:
    messages = chain(3, metadata={"Message-ID": "<root.1@mail.example.com>"})
    messages[1] = messages[1].model_copy(update={"metadata": {"headers": {"message-id": " <mid@example.com> "}}})
    sent = sent_through("reply", messages, received, message_id="m2")
    assert sent["In-Reply-To"] == "<m2@pigeon.invalid>"
    assert sent["References"] == "<root.1@mail.example.com> <mid@example.com> <m2@pigeon.invalid>"
    assert sent.get_content().startswith("Here it is.\n")


@pytest.mark.parametrize(
    "metadata",
    [
        {"message_id": "<a1@x.example>"},
        {"RFC822_MESSAGE_ID": "<a1@x.example>"},
        {"internet_message_id": "<a1@x.example>"},
    ],
)
def test_each_documented_key_is_read_whatever_its_case(metadata: dict[str, str], received: Path) -> None:
    sent = sent_through("reply", [message(metadata=metadata)], received)
    assert sent["In-Reply-To"] == "<a1@x.example>"
    assert sent["References"] == "<a1@x.example>"


def test_without_one_the_id_is_derived_from_the_services_id_the_same_every_time(received: Path) -> None:
    first = sent_through("reply", [message(id="msg_42")], received)
    second = sent_through("reply_all", [message(id="msg_42")], received)
    assert first["In-Reply-To"] == second["In-Reply-To"] == "<msg_42@pigeon.invalid>"
    odd = derived_id("a b>\nc")
    assert odd == derived_id("a b>\nc")
    assert odd.endswith("@pigeon.invalid>")
    assert "\n" not in odd
    assert " " not in odd


def test_hostile_metadata_cannot_add_a_header(received: Path) -> None:
    hostile = message(metadata={"message_id": "<a@b>\r\nBcc: evil@x", "headers": {"Message-ID": "<x@y> <z@w>"}})
    sent = sent_through("reply", [hostile], received)
    assert sent["Bcc"] is None
    assert "evil@x" not in received.read_text()
    assert sent["In-Reply-To"] == "<m1@pigeon.invalid>"


def test_references_are_bounded_keeping_the_first_and_the_nearest() -> None:
    messages = chain(60)
    text = draft_text("reply", THREAD, messages, [INBOX], CONTACTS, message_id="m59")
    headers = email.message_from_string(text, policy=policy.default)
    ids = str(headers["References"]).split()
    assert len(ids) == MAX_REFERENCES
    assert ids[0] == "<m0@pigeon.invalid>"
    assert ids[-2:] == ["<m58@pigeon.invalid>", "<m59@pigeon.invalid>"]


def test_a_loop_of_parents_ends() -> None:
    looped = [message(id="a", parent_id="b"), message(id="b", parent_id="a")]
    text = draft_text("reply", THREAD, looped, [INBOX], CONTACTS, message_id="a")
    assert "References: <b@pigeon.invalid> <a@pigeon.invalid>\n" in text


# --- forwards -----------------------------------------------------------------------------------------------------


def with_files() -> Message:
    return message(
        content_blocks=[
            ContentBlock(type="CONTENT_TYPE_TEXT", mime_type="text/plain", content="See attached.", sequence=0),
            ContentBlock(
                type="CONTENT_TYPE_FILE",
                mime_type="application/pdf",
                filename="report.pdf",
                content=base64.b64encode(PDF).decode(),
                metadata={"encoding": "base64"},
                sequence=1,
            ),
            ContentBlock(type="CONTENT_TYPE_FILE", mime_type="text/csv", filename="a.csv", content=CSV, sequence=2),
        ]
    )


def test_a_forward_carries_the_attachments_byte_for_byte(received: Path) -> None:
    sent = sent_through("forward", [with_files()], received)
    assert sent["To"] == "zed@example.com"
    parts = {p.get_filename(): p for p in sent.iter_attachments()}
    assert set(parts) == {"report.pdf", "a.csv"}
    assert parts["report.pdf"].get_content_type() == "application/pdf"
    assert parts["report.pdf"].get_payload(decode=True) == PDF
    assert parts["a.csv"].get_payload(decode=True) == CSV.encode()
    assert "Here it is." in str(sent.get_body(("plain",)).get_content())  # type: ignore[union-attr]
    assert MailDrafts().all() == []
    assert not list(MailDrafts().folder.glob("*.part"))  # sent: the kept files are gone too


def test_forward_as_attachment_is_the_message_as_message_rfc822(received: Path) -> None:
    sent = sent_through("forward_attached", [with_files()], received)
    (part,) = list(sent.iter_attachments())
    assert part.get_content_type() == "message/rfc822"
    inner = part.get_content()
    assert inner["Subject"] == "Budget for Q4"
    assert inner["Message-ID"] == "<m1@pigeon.invalid>"
    assert inner["From"] == "Ann Lee <ann@example.com>"
    files = {p.get_filename(): p.get_payload(decode=True) for p in inner.iter_attachments()}
    assert files == {"report.pdf": PDF, "a.csv": CSV.encode()}


def test_files_over_the_limit_are_named_in_the_body_not_attached() -> None:
    big = message(
        content_blocks=[
            ContentBlock(
                filename="huge.bin", mime_type="application/octet-stream", content="x" * (MAX_ATTACHED_BYTES + 1)
            )
        ]
    )
    draft = drafts().start("forward", THREAD, [big], [INBOX], CONTACTS)
    assert draft.files == ()
    assert "not attached, over the size limit: huge.bin" in draft.path.read_text()


def test_a_kept_draft_keeps_its_files_and_pigeon_drafts_sends_them(received: Path) -> None:
    mail = drafts()
    draft = mail.start("forward", THREAD, [with_files()], [INBOX], CONTACTS)
    draft.path.write_text(draft.path.read_text().replace("To: \n", "To: zed@example.com\n"))
    kept = MailDrafts().get(draft.id)
    assert [(f.name, f.size) for f in kept.files] == [("report.pdf", len(PDF)), ("a.csv", len(CSV))]
    assert all(f.path.stat().st_mode & 0o777 == 0o600 for f in kept.files)
    code, listed = run("drafts")
    assert code == 0
    assert "report.pdf" in listed
    assert "a.csv" in listed
    code, said = run("drafts", "send", draft.id)
    assert code == 0, said
    sent = email.message_from_bytes(received.read_bytes(), policy=policy.default)
    assert [p.get_payload(decode=True) for p in sent.iter_attachments()] == [PDF, CSV.encode()]


def test_a_hostile_note_cannot_name_a_file_outside_the_draft(tmp_path: Path) -> None:
    draft = MailDrafts().write("From: a@b.example\nTo: c@d.example\nSubject: x\n\nHi\n", kind="new")
    secret = tmp_path / "secret"
    secret.write_text("private")
    note = draft.path.with_suffix(".json")
    note.write_text(f'{{"kind": "new", "files": [{{"name": "s", "part": "{secret}"}}, {{"part": "../x.0.part"}}]}}')
    assert MailDrafts().get(draft.id).files == ()
    MailDrafts().attach(draft, NewFile("a.txt", "text/plain", b"hi"))
    note.write_text(f'{{"kind": "new", "files": [{{"name": "a\\r\\nBcc: evil@x", "part": "{draft.id}.0.part"}}]}}')
    (kept,) = MailDrafts().get(draft.id).files
    assert "\n" not in kept.name
    assert "\r" not in kept.name


# --- reply-all and the user's own addresses -----------------------------------------------------------------------


def test_reply_all_leaves_out_every_inbox_and_the_owner_participants_emails() -> None:
    owner = Contact(id="me", first_name="Me", emails=[ContactEmail(email="Me@Home.example")])
    contacts = {**CONTACTS, "me": owner}
    thread = Thread(id="t1", inbox_id="in1", participants=[Participant(contact_id="me", role="OWNER")])
    other_inbox = INBOX.model_copy(update={"id": "in2", "email": "team@pigeon.test"})
    mail = message(
        recipients=[
            Recipient(raw_address="me@home.example", type="RECIPIENT_TYPE_TO"),
            Recipient(raw_address="team@pigeon.test", type="RECIPIENT_TYPE_CC"),
            Recipient(raw_address="bob@example.com", type="RECIPIENT_TYPE_CC"),
        ]
    )
    text = draft_text("reply_all", thread, [mail], [INBOX, other_inbox], contacts)
    headers = email.message_from_string(text, policy=policy.default)
    assert headers["To"] == "Ann Lee <ann@example.com>"
    assert headers["Cc"] == "bob@example.com"


# --- what the review changes --------------------------------------------------------------------------------------


def test_the_review_sets_addresses_refusing_one_that_cannot_be_read() -> None:
    mail = drafts()
    draft = mail.start("reply", THREAD, [message()], [INBOX], CONTACTS)
    mail.set_addresses(draft, "Cc", "Bob <bob@example.com>, carol@example.com")
    mail.set_addresses(draft, "To", "dan@example.com")
    shown = mail.review(draft)
    assert (shown.to, shown.cc) == ("dan@example.com", "Bob <bob@example.com>, carol@example.com")
    before = draft.path.read_text()
    with pytest.raises(BadDraft, match="not an address"):
        mail.set_addresses(draft, "To", "dan@example.com, nobody")
    assert draft.path.read_text() == before
    mail.set_addresses(draft, "Cc", "")
    assert mail.review(draft).cc == ""
    assert "In-Reply-To: <m1@pigeon.invalid>" in draft.path.read_text()  # (the other headers stay)


def test_attaching_checks_the_path_and_the_limit(tmp_path: Path) -> None:
    mail = drafts()
    draft = mail.start("new", None, [], [INBOX], {})
    with pytest.raises(FileNotFoundError, match="no file at"):
        mail.attach_file(draft, str(tmp_path / "missing.pdf"))
    with pytest.raises(IsADirectoryError, match="not a regular file"):
        mail.attach_file(draft, str(tmp_path))
    huge = tmp_path / "huge.bin"
    with huge.open("wb") as handle:
        handle.truncate(MAX_ATTACHED_BYTES + 1)
    with pytest.raises(AttachedTooBig, match="too big"):
        mail.attach_file(draft, str(huge))
    notes = tmp_path / "notes.txt"
    notes.write_bytes(b"one\r\ntwo")
    draft = mail.attach_file(draft, str(notes))
    assert [(f.name, f.mime, f.size) for f in draft.files] == [("notes.txt", "text/plain", 8)]
    assert mail.review(draft).files == (("notes.txt", 8),)
    draft = mail.detach(draft, 0)
    assert mail.review(draft).files == ()
    assert not list(MailDrafts().folder.glob("*.part"))


def test_files_need_a_send_command_and_the_draft_is_kept_when_there_is_none(tmp_path: Path) -> None:
    config = load_config()
    config.settings.compose = ComposeConfig(send_command=[])
    mail = Drafts(config, clock=lambda: NOW)
    draft = mail.start("forward", THREAD, [with_files()], [INBOX], CONTACTS)
    with pytest.raises(SendFailed, match="mailto: link cannot carry files"):
        mail.send(draft)
    assert [d.id for d in mail.all()] == [draft.id]
    assert len(mail.all()[0].files) == 2


# --- the command line ---------------------------------------------------------------------------------------------


def thread_with_two(running: Service) -> tuple[str, str, str]:
    """A stored thread and its two newest messages' ids (older, newer), synced."""
    thread_id = first_thread(running, running.alice)
    older = running.add_message(
        running.alice, thread_id, sender_address="ann@example.com", subject="Plan", created_at="2026-11-24T08:00:00Z"
    )
    newer = running.add_message(
        running.alice, thread_id, sender_address="bob@example.com", subject="Plan", created_at="2026-11-24T09:00:00Z"
    )
    assert run("sync")[0] == 0
    return thread_id, older, newer


def test_pigeon_reply_message_answers_that_one_and_asks_before_sending(
    running: Service, received: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    thread_id, older, _newer = thread_with_two(running)
    monkeypatch.setattr("pigeon.cli.drafts.on_terminal", lambda: True)
    monkeypatch.setattr("sys.stdin", io.StringIO("maybe\ne\ny\n"))
    code, out = run("reply", thread_id, "--message", older)
    assert code == 0, out
    assert out.count("Send? [y]es [e]dit [p]ostpone [d]iscard") == 3  # (a word it does not know is asked again)
    sent = email.message_from_bytes(received.read_bytes(), policy=policy.default)
    assert sent["To"] == "ann@example.com"
    assert sent["In-Reply-To"] == derived_id(older)
    assert sent.get_content().count("Here it is.") == 2  # (edited twice)


def test_postpone_keeps_and_discard_drops_and_a_message_of_another_thread_is_refused(
    running: Service, received: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    thread_id, _older, _newer = thread_with_two(running)
    monkeypatch.setattr("pigeon.cli.drafts.on_terminal", lambda: True)
    monkeypatch.setattr("sys.stdin", io.StringIO("p\n"))
    code, out = run("reply", thread_id)
    (kept,) = MailDrafts().all()
    assert code == 0
    assert f"Kept: pigeon drafts send {kept.id}" in out
    monkeypatch.setattr("sys.stdin", io.StringIO("d\n"))
    assert run("drafts", "edit", kept.id)[0] == 0
    assert MailDrafts().all() == []
    assert not received.exists()
    capsys.readouterr()
    assert run("reply", thread_id, "--message", "no-such-message")[0] == 2
    assert "'no-such-message' is not a message of this thread" in capsys.readouterr().err
    assert MailDrafts().all() == []


def test_pigeon_forward_attached_sends_the_message_as_message_rfc822(running: Service, received: Path) -> None:
    thread_id, _older, newer = thread_with_two(running)
    code, out = run("forward", thread_id, "--attached", "--send")
    assert code == 0, out
    sent = email.message_from_bytes(received.read_bytes(), policy=policy.default)
    (part,) = list(sent.iter_attachments())
    assert part.get_content_type() == "message/rfc822"
    assert part.get_content()["Message-ID"] == derived_id(newer)


def test_the_review_shows_every_value_cleaned_to_one_line(tmp_path: Path) -> None:
    draft = MailDrafts().write(
        "From: me@pigeon.test\nTo: =?utf-8?q?Eve=1B[31m?= <eve@example.com>\nSubject: Hi\x1b]0;title\x07 there\n\n"
        "line \x1b[2J one\n" + "more\n" * 20,
        kind="new",
    )
    (tmp_path / "odd\x1b[1m.txt").write_bytes(b"x")
    draft = drafts().attach_file(draft, str(tmp_path / "odd\x1b[1m.txt"))
    shown = drafts().review(draft)
    values = [shown.sender, shown.to, shown.cc, shown.subject, *shown.body, *(name for name, _ in shown.files)]
    assert not any("\x1b" in v or "\x07" in v or "\n" in v for v in values)
    assert "eve@example.com" in shown.to
    assert len(shown.body) < 10


def test_the_review_shows_what_the_user_wrote_above_or_below_the_quote_and_counts_the_rest() -> None:
    quote = "\n\nOn Tue, 24 Nov 2026 at 06:04, Ada wrote:\n> Hey there,\n>\n> Notes from the call.\n"
    head = "From: me@pigeon.test\nTo: ada@example.com\nSubject: Re: Notes\n\n"
    below = MailDrafts().write(head + quote + "\nThanks, noted.\n", kind="reply")
    shown = drafts().review(below)
    assert shown.body == ("Thanks, noted.",)  # (the editor added it under the quote: it is what is shown)
    assert (shown.quoted, shown.more) == (4, 0)
    above = MailDrafts().write(head + "Sure.\n\n\n\nSee you.\n" + quote, kind="reply")
    assert drafts().review(above).body == ("Sure.", "", "See you.")  # (blank runs made one)
    long = MailDrafts().write(head + "".join(f"line {n}\n" for n in range(REVIEW_LINES + 3)) + quote, kind="reply")
    shown = drafts().review(long)
    assert shown.body[-1] == f"line {REVIEW_LINES - 1}"
    assert (shown.more, shown.quoted) == (3, 4)


def test_a_review_setting_that_is_not_true_or_false_is_one_line() -> None:
    path = load_config().path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('[compose]\nreview = "no"\n')
    with pytest.raises(ConfigError, match=r"compose\.review: should be true or false"):
        load_config()
    path.write_text("[compose]\nreview = false\n")
    assert load_config().compose.review is False


def test_sending_a_draft_discarded_meanwhile_says_so_and_leaves_nothing_behind(received: Path) -> None:
    mail = drafts()
    draft = mail.start("forward", THREAD, [with_files()], [INBOX], CONTACTS)
    MailDrafts().discard(draft)
    with pytest.raises(SendFailed, match="is gone"):
        mail.send(draft)
    assert list(MailDrafts().folder.iterdir()) == []
    assert not received.exists()
