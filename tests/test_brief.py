"""The brief of what is new in a thread: who wrote, the first words of the newest messages with quotes, greetings
and signatures out, the dates, amounts, links (their real targets) and files in them; and, on a 500-message
thread, each new message read once and no more of it than a bound, however long it is (linear in the thread)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from pigeon.core import brief as brief_module
from pigeon.core.brief import NEWEST, READ_AT_MOST, SAID, brief
from pigeon.models import Message, Thread
from pigeon.tui.widgets.thread_brief import brief_of
from pigeon.tui.widgets.thread_view import ThreadView
from tests.server.conftest import NOW

KELLY = """Hi Lisa,

Thanks for sending this over. The budget comes to $4,200 and we could meet on Friday at 10:00 to go through it.
The plan is at https://plans.example/q4?draft=2 for now.

Cheers,
Kelly
--
Kelly Jackson, Rose & Jackson

On Mon, 2 Nov 2026 at 09:00, Lisa wrote:
> The old numbers were $9,999 and tomorrow at 3pm.
"""


def message(number: int, text: str, *, who: str = "kelly@rose.example", **more: Any) -> Message:
    return Message.model_validate(
        {
            "id": f"m{number}",
            "thread_id": "t",
            "direction": "MESSAGE_DIRECTION_INBOUND",
            "sender": {"raw_address": who},
            "created_at": (NOW + timedelta(minutes=number)).isoformat(),
            "content_blocks": [
                {"type": "CONTENT_TYPE_TEXT", "mime_type": "text/plain", "content": text, "sequence": 0},
                *more.pop("blocks", []),
            ],
            **more,
        }
    )


def name(m: Message) -> str:
    return (m.sender.raw_address or "") if m.sender else ""


def test_the_brief_says_who_wrote_their_first_words_and_what_is_in_them() -> None:
    html = (
        '<p>Dear all,</p><p>Please read <a href="https://evil.example/login">paypal.com</a> by '
        "2026-12-01.</p><p>Best regards,</p><p>Ana</p>"
    )
    new = [
        message(1, KELLY),
        message(
            2,
            "Thanks!",
            who="lisa@stone.example",
            blocks=[
                {"type": "CONTENT_TYPE_ATTACHMENT", "filename": "budget.xlsx", "content": "", "sequence": 1},
            ],
        ),
        message(
            3,
            "",
            who="ana@other.example",
            blocks=[{"type": "CONTENT_TYPE_TEXT", "mime_type": "text/html", "content": html, "sequence": 1}],
        ),
        message(4, "Sounds good.\n\nBest,\nKelly"),
    ]
    found = brief(new, 6, name)
    assert found.new == 6
    assert found.writers == (("kelly@rose.example", 2), ("lisa@stone.example", 1), ("ana@other.example", 1))
    assert [(g.who, g.words) for g in found.gists] == [
        ("lisa@stone.example", "Thanks!"),  # (a message that is all sign-off keeps it)
        ("ana@other.example", "Please read paypal.com by 2026-12-01."),
        ("kelly@rose.example", "Sounds good."),
    ]
    assert len(found.gists) == SAID
    assert found.dates == ("2026-12-01", "Friday at 10:00")  # the newest first (not the quoted "tomorrow at 3pm")
    assert found.amounts == ("$4,200",)  # (not the quoted $9,999)
    assert found.links[0].startswith("evil.example/login (careful: its words name paypal.com but it goes to")
    assert found.links[1] == "plans.example/q4?draft=2"
    assert found.files == ("budget.xlsx",)
    lines = found.lines(lambda moment: f"{moment:%H:%M}" if moment else "")
    assert lines[0] == (
        "New since you last read it: 6 new messages from kelly@rose.example (2), lisa@stone.example, ana@other.example"
    )
    assert lines[1] == "lisa@stone.example · 12:02 — Thanks!"
    assert lines[-1].startswith("Dates: 2026-12-01, Friday at 10:00 · Amounts: $4,200 · Links: evil.example/login")
    assert lines[-1].endswith(" · Files: budget.xlsx")
    assert brief([message(1, "Hi,\nSee you soon")], 1, name, read_before=False).lines(str)[0] == (
        "Not read yet: 1 new message from kelly@rose.example"
    )
    two = brief([message(1, "Hi"), message(2, "Again")], 2, name, read_before=False)  # one writer: counted once
    assert two.lines(str)[0] == "Not read yet: 2 new messages from kelly@rose.example"
    plain = brief([message(1, "Morning standup moved to 3pm.\nWe decided 4 things; the market 5 more.")], 1, name)
    assert plain.gists[0].words == "Morning standup moved to 3pm. We decided 4 things; the market 5 more."
    assert plain.dates == ("3pm",)  # (not "decided 4", nor "market 5")


def test_the_brief_of_a_500_message_thread_reads_each_new_message_once_and_a_bounded_part_of_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read: list[int] = []
    real = brief_module._text

    def counted(m: Message) -> str:
        text = real(m)
        read.append(len(text))
        return text

    monkeypatch.setattr(brief_module, "_text", counted)
    huge = "Friday " + "word " * 200_000 + " and $5.00 at https://late.example/ the very end"  # (past what is read)
    messages = [message(n, huge if n == 499 else f"Message {n} on Monday.") for n in range(500)]
    thread = Thread.model_validate({"id": "t", "subject": "Long", "message_count": 500})
    view = ThreadView(thread, messages, {})
    found = brief_of(view, NOW + timedelta(minutes=100))  # (read up to the 101st: 399 new)
    assert found is not None
    assert found.new == 399
    assert len(read) == NEWEST  # the newest new ones, each read once
    assert max(read) <= READ_AT_MOST
    assert found.amounts == ()
    assert found.links == ()  # (links too are looked for in what is read, no further)
    assert "Friday" in found.dates
    assert brief_of(view, NOW + timedelta(minutes=100)) is found  # (kept on the view: not made again)
    assert len(read) == NEWEST
    assert brief_of(view, NOW + timedelta(days=1)) is None  # nothing new
    one = ThreadView(thread, messages[:1], {})
    assert brief_of(one, None) is None  # a thread of one message has no brief


def test_a_markdown_messages_first_words_read_without_its_marks() -> None:
    notes = (
        "# Tidepool: weekly notes\n\n**Status:** on track, with *one* risk, see [the plan](https://plans.example/q4)."
        "\n\n## Done\n- Shipped the `importer`\n\n---\n> an older note, quoted\n"
    )
    found = brief(
        [
            message(
                1,
                "",
                blocks=[{"type": "CONTENT_TYPE_TEXT", "mime_type": "text/markdown", "content": notes, "sequence": 1}],
            )
        ],
        1,
        name,
    )
    assert found.gists[0].words == (
        "Tidepool: weekly notes Status: on track, with one risk, see the plan. Done Shipped the importer"
    )
    assert found.links == ("plans.example/q4",)  # (the link's target is still found)
    ruled = "* * *\n\n***Very*** important: `__init__` and snake_case_names stay.\n"
    block = {"type": "CONTENT_TYPE_TEXT", "mime_type": "text/markdown", "content": ruled, "sequence": 1}
    again = brief([message(1, "", blocks=[block])], 1, name)
    assert again.gists[0].words == "Very important: __init__ and snake_case_names stay."
