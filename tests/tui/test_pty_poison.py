"""The real app under a pseudo-terminal, on a service whose every field is poisoned (escape sequences of every
family in 7- and 8-bit forms, C1 bytes, bidi and width-confusing characters, markup, huge values): it visits every
screen and dialog, and the bytes written to the terminal carry no OSC, DCS, APC, PM or SOS sequence and no C1
control beyond what Textual itself writes to draw (found by running the same walk on a clean mailbox)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from pigeon_service.app import ServerSettings, create_app
from pigeon_service.db import Database
from pigeon_service.run import start_in_thread
from tests.terminal import Terminal

MARK = "PWN"
POISONS = [
    f"\x1b]52;c;{MARK}\x07",  # OSC 52: write the clipboard
    f"\x1b]0;{MARK}title\x1b\\",  # OSC 0: the window title, ST-terminated
    f"\x1b]8;;https://{MARK}.example/\x07link\x1b]8;;\x07",  # OSC 8 hyperlink
    f"\x1bP{MARK}q#0;2;0;0;0\x1b\\",  # DCS (sixel)
    f"\x1b_{MARK}G\x1b\\",  # APC (kitty graphics)
    f"\x1b^{MARK}\x1b\\",  # PM
    f"\x1bX{MARK}\x1b\\",  # SOS
    f"\x9d52;c;{MARK}\x9c",  # 8-bit OSC ... ST
    f"\x90{MARK}\x9c",  # 8-bit DCS
    f"\x9b2J{MARK}",  # 8-bit CSI: clear the screen
    f"\x9f{MARK}\x9c\x9e{MARK}\x98{MARK}",  # 8-bit APC, PM, SOS
    f"\x1b[2J\x1b[H{MARK}",  # CSI: clear, home
    f"\u202e{MARK}\u2066\u200b\u2028\u115f\u3164",  # bidi override, isolate, zero-width, fillers
    f"[bold red]{MARK}[/] [@click=app.quit]q[/] [link=https://{MARK}.example]x[/link]",  # markup
]
POISON = "".join(POISONS)
FAMILIES = re.compile(r"\x1b[\]P_^X]|[\x80-\x9f]")


def poisoned(text: str = "") -> str:
    return f"{text}{POISON}"


def fill(db: Database, account: str, *, hostile: bool) -> None:
    """One inbox, contacts and threads; with ``hostile``, every text field carries every poison."""
    p = poisoned if hostile else (lambda text="": text or "plain")
    with db.transaction() as conn:
        inbox = db.insert_inbox(
            conn, account, {"email": "me@example.com", "display_name": p("Inbox"), "metadata": {"k": p()}}
        )
        contacts = [
            db.insert_contact(
                conn,
                account,
                {
                    "first_name": p("Eve"),
                    "last_name": p("Mallory"),
                    "display_name": p("PayPal Security <service@paypal.com>"),
                    "company": p("Corp"),
                    "title": p("Boss"),
                    "emails": [{"type": p("EMAIL_TYPE_WORK"), "email": p(f"eve{n}@example.com")}],
                    "phones": [{"type": "PHONE_TYPE_WORK", "phone": p("+1 555")}],
                    "social_profiles": [{"type": p("X"), "username": p("eve")}],
                    "tags": [p("tag")],
                    "metadata": {p("key"): p("value"), "n": 10**30, "deep": {"a": [p()]}},
                    "last_contacted_at": "2026-11-01T10:00:00Z",
                },
            )
            for n in range(3)
        ]
        for n in range(4):
            thread = db.insert_thread(
                conn,
                account,
                {
                    "inbox_id": inbox,
                    "subject": p(f"Subject {n}"),
                    "status": p("OPEN"),
                    "created_at": f"2026-11-0{n + 1}T09:00:00Z",
                    "participants": [{"contact_id": contacts[n % 3], "role": p("OWNER")}],
                    "metadata": {"m": p()},
                },
            )
            for m in range(2):
                db.insert_message(
                    conn,
                    account,
                    {
                        "thread_id": thread,
                        "inbox_id": inbox,
                        "direction": "MESSAGE_DIRECTION_INBOUND",
                        "status": p("MESSAGE_STATUS_RECEIVED"),
                        "subject": p(f"Subject {n}"),
                        "sender_contact_id": contacts[(n + m) % 3],
                        "sender_address": p("attacker@evil.example"),
                        "recipients": [{"raw_address": p("me@example.com"), "type": p("RECIPIENT_TYPE_TO")}],
                        "content_blocks": [
                            {"type": "CONTENT_TYPE_TEXT", "mime_type": "text/plain", "content": p("Hello\n> quoted")},
                            {
                                "type": "CONTENT_TYPE_TEXT",
                                "mime_type": "text/html",
                                "content": f'<p>{p("html")}</p><a href="https://evil.example/{p()}">'
                                f"{p('https://bank.example/')}</a>",
                            },
                            {
                                "type": "CONTENT_TYPE_ATTACHMENT",
                                "mime_type": p("application/pdf"),
                                "filename": p("../../invoice.pdf"),
                                "size": 2**53,  # the largest the models take
                                "content": "SGVsbG8=",
                            },
                        ],
                        "metadata": {p(): p()},
                        "created_at": f"2026-11-0{n + 1}T1{m}:00:00Z",
                    },
                )


ESC = "\x1b"
WALK: list[tuple[str, ...]] = [
    ("j", "k", "\r"),  # open the newest thread
    ("t", "t", "Z", "Z"),  # quotes shown and hidden, zoomed and back
    ("L",),  # the links list: the poisoned targets and words
    (ESC,),
    ("J", "K"),  # the next thread and back
    ("j", "\r", ESC, "j", "\r", "j"),
    ("a",),  # save the attachment (its name is poisoned and climbs folders)
    (ESC,),
    (ESC,),
    ("?",),  # help
    (ESC,),
    ("\x10",),  # ctrl+p: the palette, every command
    ("V", "i", "e", "w"),
    (ESC,),
    ("\x10", "i", "n", "b", "o", "x", "\r"),  # the create-inbox dialog
    (ESC,),
    ("\x10", "w", "e", "b", "h", "o", "o", "k", "\r"),  # the create-webhook dialog
    (ESC,),
    ("/",),
    ("S", "u", "b"),
    ("\r",),
    (ESC,),
    ("z",),  # the snooze picker
    (ESC,),
    ("b",),  # the contact book
    ("\x1b[B", "\x1b[B"),  # arrows from its search box
    ("\r",),  # the contact editor
    ("\t", "\t", "\t"),
    (ESC,),
    (ESC,),
]


def walk(tmp_path: Path, *, hostile: bool) -> tuple[str, int]:
    db = Database(tmp_path / f"service-{hostile}.sqlite3")
    account = db.ensure_account("eve")
    fill(db, account, hostile=hostile)
    token = db.create_token(account)
    service = start_in_thread(create_app(db, ServerSettings(deliver_webhooks=False)), db=db)
    home = tmp_path / f"home-{hostile}"
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "TERM": "xterm-256color",
        "COLORTERM": "truecolor",
        "LANG": "C.UTF-8",
        "PIGEON_TOKEN": token,
        "PIGEON_BASE_URL": service.base_url,
        "PIGEON_CONFIG_DIR": str(home / "config"),
        "PIGEON_DATA_DIR": str(home / "data"),
        "PIGEON_DOWNLOAD_DIR": str(home / "downloads"),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
    }
    terminal = Terminal(env, [sys.executable, "-m", "pigeon"])
    try:
        terminal.wait_for("4 threads")
        terminal.quiet()
        for keys in WALK:
            terminal.keys(*keys)
        terminal.keys("q")
        code = terminal.close()
    finally:
        if terminal.process.poll() is None:
            terminal.close()
        service.stop()
        db.close()
    escaped = [p for p in home.rglob("*invoice*") if (home / "downloads") not in p.parents]
    assert not escaped, escaped
    return terminal.text(), code


def sequences(text: str) -> set[str]:
    """Every OSC/DCS/APC/PM/SOS sequence (up to its terminator) and every C1 control in ``text``."""
    found: set[str] = set()
    for match in FAMILIES.finditer(text):
        start = match.start()
        if text[start] == ESC:
            end = min(
                (i for i in (text.find("\x07", start), text.find("\x1b\\", start)) if i != -1), default=start + 40
            )
            found.add(text[start : end + 2])
        else:
            found.add(text[start])
    return found


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_no_poison_reaches_the_terminal_on_any_screen(tmp_path: Path) -> None:
    clean_text, clean_code = walk(tmp_path, hostile=False)
    hostile_text, hostile_code = walk(tmp_path, hostile=True)
    assert clean_code == 0
    assert hostile_code == 0, hostile_text[-2000:]
    assert "Traceback" not in hostile_text
    assert MARK in hostile_text  # the poisoned fields were drawn: the walk reached them
    assert "4 threads" in hostile_text
    ours = sequences(clean_text)  # what Textual itself writes on this walk (terminal queries, modes)
    extra = sequences(hostile_text) - ours
    assert not extra, sorted(extra)[:10]
    for sequence in sequences(hostile_text):
        assert MARK not in sequence
