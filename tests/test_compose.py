"""Replies handed off: the draft the editor gets, the message the send command gets, and drafts kept on failure."""

from __future__ import annotations

import email
import io
import json
import stat
import sys
from datetime import UTC, datetime
from email import policy
from pathlib import Path

import pytest

from pigeon.cli import main
from pigeon.config import ComposeConfig, load_config
from pigeon.core.compose import BadDraft, draft_text, mailto_url, message_to_send
from pigeon.core.drafts import Drafts, SendFailed
from pigeon.models import Contact, ContentBlock, Inbox, Message, Recipient, Sender, Thread
from pigeon.store.mail_drafts import MailDrafts

NOW = datetime(2026, 11, 23, 9, 30, tzinfo=UTC)
INBOX = Inbox(id="in1", account_id="a", type="EMAIL_INBOX", status="ACTIVE", email="me@pigeon.test", display_name="Me")


def message(**fields: object) -> Message:
    base: dict[str, object] = {
        "id": "m1",
        "thread_id": "t1",
        "inbox_id": "in1",
        "direction": "MESSAGE_DIRECTION_INBOUND",
        "created_at": datetime(2026, 11, 20, 14, 5, tzinfo=UTC),
        "subject": "Budget for Q4",
        "sender": Sender(contact_id="c1", raw_address="ann@example.com"),
        "recipients": [
            Recipient(raw_address="me@pigeon.test", type="RECIPIENT_TYPE_TO"),
            Recipient(raw_address="bob@example.com", type="RECIPIENT_TYPE_TO"),
            Recipient(raw_address="carol@example.com", type="RECIPIENT_TYPE_CC"),
            Recipient(raw_address="secret@example.com", type="RECIPIENT_TYPE_BCC"),
        ],
        "content_blocks": [
            ContentBlock(type="CONTENT_TYPE_TEXT", mime_type="text/plain", content="Numbers?\nBy Friday.")
        ],
    }
    return Message.model_validate(base | fields)


THREAD = Thread(id="t1", inbox_id="in1", subject="Budget for Q4")
CONTACTS = {"c1": Contact(id="c1", first_name="Ann", last_name="Lee")}


def parsed(text: str) -> email.message.EmailMessage:
    parsed = email.message_from_string(text, policy=policy.default)
    assert isinstance(parsed, email.message.EmailMessage)
    return parsed


def test_a_reply_goes_to_the_sender_from_the_inbox_with_the_text_quoted() -> None:
    draft = parsed(draft_text("reply", THREAD, [message()], [INBOX], CONTACTS))
    assert draft["From"] == "Me <me@pigeon.test>"
    assert draft["To"] == "Ann Lee <ann@example.com>"
    assert draft["Cc"] is None
    assert draft["Subject"] == "Re: Budget for Q4"
    body = draft.get_content()
    assert "On Fri, 20 Nov 2026 at 14:05 UTC, Ann Lee <ann@example.com> wrote:\n> Numbers?\n> By Friday." in body


def test_reply_all_adds_the_others_but_never_oneself_nor_the_blind_copies() -> None:
    draft = parsed(draft_text("reply_all", THREAD, [message()], [INBOX], CONTACTS))
    assert draft["To"] == "Ann Lee <ann@example.com>, bob@example.com"
    assert draft["Cc"] == "carol@example.com"
    assert "secret@" not in str(draft)
    assert "me@pigeon.test" not in str(draft["To"])


def test_a_reply_to_ones_own_message_goes_to_its_recipients_and_re_is_not_doubled() -> None:
    mine = message(
        direction="MESSAGE_DIRECTION_OUTBOUND",
        subject="Re: RE: Budget for Q4",
        sender=Sender(raw_address="me@pigeon.test"),
        recipients=[Recipient(raw_address="bob@example.com", type="RECIPIENT_TYPE_TO")],
    )
    draft = parsed(draft_text("reply", THREAD, [mine], [INBOX], CONTACTS))
    assert draft["To"] == "bob@example.com"
    assert draft["Subject"] == "Re: Budget for Q4"


def test_a_forward_names_no_recipient_and_carries_the_message() -> None:
    draft = parsed(draft_text("forward", THREAD, [message()], [INBOX], CONTACTS))
    assert draft["To"] == ""
    assert draft["Subject"] == "Fwd: Budget for Q4"
    assert "---------- Forwarded message ----------\nFrom: Ann Lee <ann@example.com>" in draft.get_content()


def test_a_newline_in_mail_cannot_add_a_header() -> None:
    hostile = message(
        subject="Hello\r\nBcc: spy@evil.test",
        sender=Sender(raw_address='"Ann\nBcc: spy@evil.test" <ann@example.com>'),
        recipients=[Recipient(raw_address="bob@example.com\nBcc: spy@evil.test", type="RECIPIENT_TYPE_TO")],
    )
    text = draft_text("reply_all", THREAD, [hostile], [INBOX], CONTACTS)
    sent = message_to_send(text + "Fine.\n", now=NOW)
    again = email.message_from_bytes(sent.as_bytes(), policy=policy.default)
    assert again["Bcc"] is None
    assert "\n" not in str(again["Subject"])
    assert {a.addr_spec for a in again["To"].addresses} == {"ann@example.com"}  # the bad address was left out


def test_the_sent_message_has_a_date_an_id_and_the_edited_body() -> None:
    text = draft_text("reply", THREAD, [message()], [INBOX], CONTACTS).replace("\n\n", "\n\nSure, tomorrow.\n", 1)
    sent = message_to_send(text, now=NOW)
    assert sent["Date"] == "Mon, 23 Nov 2026 09:30:00 +0000"
    assert sent["Message-ID"].endswith("@pigeon.test>")
    assert sent.get_content().startswith("Sure, tomorrow.\n")
    assert sent.get_content_charset() == "utf-8"


def test_a_draft_without_a_recipient_cannot_be_sent_by_a_command_but_can_become_a_mailto_link() -> None:
    text = draft_text("forward", THREAD, [message()], [INBOX], CONTACTS)
    with pytest.raises(BadDraft, match="no recipient"):
        message_to_send(text, now=NOW)
    link = mailto_url(message_to_send(text.replace("To: ", "To: x@example.com, y@example.com", 1), now=NOW))
    assert link.startswith("mailto:x@example.com,y@example.com?subject=Fwd%3A%20Budget%20for%20Q4&body=")


# --- the whole hand-off, with a fake editor and a fake send command --------------------------------------------


def script(folder: Path, name: str, body: str) -> list[str]:
    path = folder / name
    path.write_text("import sys, os\n" + body)
    return [sys.executable, str(path)]


@pytest.fixture
def editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """$EDITOR: a program that writes a line at the top of the body of the file it is given."""
    command = script(
        tmp_path,
        "editor.py",
        "p = sys.argv[-1]\ntext = open(p).read()\nhead, _, body = text.partition('\\n\\n')\n"
        "open(p, 'w').write(head + '\\n\\nThanks, will do.\\n' + body)\n",
    )
    monkeypatch.setenv("VISUAL", " ".join(command))
    return tmp_path


def drafts_with(send_command: list[str]) -> Drafts:
    config = load_config()
    config.settings.compose = ComposeConfig(send_command=send_command)
    return Drafts(config, clock=lambda: NOW)


def test_an_edited_reply_reaches_the_send_command_on_its_standard_input(editor: Path) -> None:
    received = editor / "received.eml"
    drafts = drafts_with(script(editor, "send.py", f"open({str(received)!r}, 'wb').write(sys.stdin.buffer.read())"))
    draft = drafts.start("reply", THREAD, [message()], [INBOX], CONTACTS)
    mode = stat.S_IMODE(draft.path.stat().st_mode)
    assert mode == 0o600
    assert drafts.edit(draft).changed
    assert drafts.send(draft) == "Sent with " + Path(sys.executable).name + "."
    sent = email.message_from_bytes(received.read_bytes(), policy=policy.default)
    assert (sent["From"], sent["To"], sent["Subject"]) == (
        "Me <me@pigeon.test>",
        "Ann Lee <ann@example.com>",
        "Re: Budget for Q4",
    )
    assert sent.get_content().startswith("Thanks, will do.\n")
    assert drafts.all() == []  # sent: the draft is gone


def test_a_failed_send_keeps_the_draft_with_the_commands_words_and_pigeon_drafts_sends_it_again(
    editor: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    failing = script(
        editor, "fail.py", "sys.stderr.write('msmtp: cannot connect to smtp.example.com\\n')\nsys.exit(75)"
    )
    drafts = drafts_with(failing)
    draft = drafts.start("reply", THREAD, [message()], [INBOX], CONTACTS)
    drafts.edit(draft)
    with pytest.raises(SendFailed, match=r"exit 75.*cannot connect to smtp\.example\.com.*pigeon drafts send"):
        drafts.send(draft)
    kept = drafts.all()
    assert [d.id for d in kept] == [draft.id]
    assert "cannot connect" in kept[0].error
    assert "Thanks, will do." in draft.path.read_text()

    out = io.StringIO()
    assert main(["drafts"], out) == 0
    assert draft.id in out.getvalue()
    assert "cannot connect" in out.getvalue()

    received = editor / "received.eml"
    sender = script(editor, "send.py", f"open({str(received)!r}, 'wb').write(sys.stdin.buffer.read())")
    Path(load_config().path).parent.mkdir(parents=True, exist_ok=True)
    load_config().path.write_text(f"[compose]\nsend_command = {sender!r}\n".replace("'", '"'))
    out = io.StringIO()
    assert main(["drafts", "send", draft.id[:17]], out) == 0  # a unique beginning of the id will do
    assert "Sent with" in out.getvalue()
    assert "Thanks, will do." in received.read_text()
    assert MailDrafts().all() == []


def test_a_draft_left_unchanged_is_dropped_and_nothing_is_sent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VISUAL", " ".join(script(tmp_path, "look.py", "pass")))
    received = tmp_path / "received.eml"
    drafts = drafts_with(script(tmp_path, "send.py", f"open({str(received)!r}, 'w').write('x')"))
    draft = drafts.start("reply", THREAD, [message()], [INBOX], CONTACTS)
    edited = drafts.edit(draft)
    assert not edited.changed
    assert "not changed" in edited.said
    assert drafts.all() == []
    assert not received.exists()


def test_without_a_send_command_a_new_message_opens_as_a_mailto_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "VISUAL",
        " ".join(
            script(
                tmp_path,
                "write.py",
                "p = sys.argv[-1]\ntext = open(p).read().replace('To: ', 'To: ann@example.com', 1)\n"
                "open(p, 'w').write(text.replace('Subject: ', 'Subject: Hello & welcome', 1) + 'Two words\\n')\n",
            )
        ),
    )
    record = tmp_path / "argv.json"
    opener = script(tmp_path, "open.py", f"import json\nopen({str(record)!r}, 'w').write(json.dumps(sys.argv[1:]))")
    config = load_config()
    config.ui.open_command = opener
    drafts = Drafts(config, clock=lambda: NOW)
    draft = drafts.start("new", None, [], [INBOX], {})
    assert draft.path.read_text().startswith("From: Me <me@pigeon.test>\nTo: \nSubject: \n")
    assert drafts.edit(draft).changed
    assert "mail program" in drafts.send(draft)
    (link,) = json.loads(record.read_text())
    assert link == "mailto:ann@example.com?subject=Hello%20%26%20welcome&body=Two%20words%0A"
    assert drafts.all() == []


def test_without_a_send_command_and_no_opener_the_words_say_how_to_send_and_the_draft_is_kept(
    editor: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = str(tmp_path / "no-such-opener")
    config = load_config()
    config.ui.open_command = [missing]
    drafts = Drafts(config, clock=lambda: NOW)
    draft = drafts.start("reply", THREAD, [message()], [INBOX], CONTACTS)
    assert drafts.edit(draft).changed
    with pytest.raises(SendFailed) as failed:
        drafts.send(draft)
    said = str(failed.value)
    assert "no send_command is set" in said
    assert 'send_command in the [compose] table (e.g. ["msmtp", "-t"])' in said
    assert "open_command in [ui] for the mailto: link" in said
    assert said.endswith(f"The draft is kept: pigeon drafts send {draft.id}")
    assert [d.id for d in drafts.all()] == [draft.id]
    assert "Thanks, will do." in draft.path.read_text()

    Path(load_config().path).parent.mkdir(parents=True, exist_ok=True)
    load_config().path.write_text(f"[ui]\nopen_command = [{missing!r}]\n".replace("'", '"'))
    capsys.readouterr()
    assert main(["drafts", "send", draft.id], io.StringIO()) != 0
    assert 'send_command in the [compose] table (e.g. ["msmtp", "-t"])' in capsys.readouterr().err
    assert [d.id for d in MailDrafts().all()] == [draft.id]


def test_pigeon_drafts_edit_opens_a_kept_draft_and_sends_it_once_changed(editor: Path) -> None:
    received = editor / "received.eml"
    sender = script(editor, "send.py", f"open({str(received)!r}, 'wb').write(sys.stdin.buffer.read())")
    draft = MailDrafts().write("From: me@pigeon.test\nTo: ann@example.com\nSubject: Hi\n\nDraft.\n", kind="new")
    load_config().path.parent.mkdir(parents=True, exist_ok=True)
    load_config().path.write_text(f"[compose]\nsend_command = {json.dumps(sender)}\n")
    out = io.StringIO()
    assert main(["drafts", "edit", draft.id], out) == 0
    assert "Sent with" in out.getvalue()
    assert received.read_text().count("Thanks, will do.") == 1
    assert MailDrafts().all() == []
