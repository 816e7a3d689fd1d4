"""Lanes from a thread's mail alone: each lane's signals on a fixture, the rules that break ties, who wrote last."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pigeon.models import Message
from pigeon.store.lanes import READ_AT_MOST, sort_thread

ME = "me@pigeon.example"


def mail(sender: str, body: str, *, subject: str = "Hello", to: int = 1, mine: bool = False, **more: Any) -> Message:
    recipients = [{"raw_address": ME if not mine else f"Friend {n} <Friend{n}@Example.com>"} for n in range(to)]
    return Message.model_validate(
        {
            "direction": "MESSAGE_DIRECTION_OUTBOUND" if mine else "MESSAGE_DIRECTION_INBOUND",
            "subject": subject,
            "sender": {"raw_address": sender},
            "recipients": recipients,
            "content_blocks": [{"type": "CONTENT_TYPE_UNSPECIFIED", "mime_type": "text/plain", "content": body}],
            **more,
        }
    )


def said(messages: list[Message], **kwargs: Any) -> tuple[str, list[str]]:
    found = sort_thread(messages, [ME], **kwargs)
    return found.lane, [s.said for s in found.signals]


def test_a_person_writing_to_you_is_people() -> None:
    lane, signals = said([mail("Ada Lovelace <Ada@Example.com>", "Lunch on Friday?")])
    assert lane == "people"
    assert signals == ["written to you by a person, not to a list"]
    assert sort_thread([mail("Ada <Ada@Example.com>", "hi")], [ME]).sender == "ada@example.com"


def test_a_newsletter_with_an_unsubscribe_link_is_newsletters() -> None:
    body = "<p>This week</p>" + "".join(f'<a href="https://n.example/{n}">story</a>' for n in range(6))
    body += '<a href="https://n.example/unsubscribe">Unsubscribe</a>'
    lane, signals = said([mail("digest@n.example", body, subject="The Digest #12")])
    assert lane == "newsletters"
    assert "it has an unsubscribe link" in signals
    assert "it has many links (7)" in signals
    assert "sent from a list-shaped address (digest@n.example)" in signals


def test_a_no_reply_alert_is_notifications() -> None:
    lane, signals = said([mail("no-reply@status.example", "The error rate rose.", subject="Alert: api down")])
    assert lane == "notifications"
    assert signals == ["sent from an automated address (no-reply@status.example)", "its subject says 'alert'"]


def test_a_receipt_is_receipts() -> None:
    body = "Thank you for your order #40317.\nOrder total $28.50"
    lane, signals = said([mail("orders@books.example", body, subject="Your receipt")])
    assert lane == "receipts"
    assert "it mentions 'receipt'" in signals
    assert "it names an amount ($28.50)" in signals
    assert "sent from a billing address (orders@books.example)" in signals


def test_mail_you_answered_is_people_whatever_it_looks_like() -> None:
    first = mail("hello@shop.example", "Unsubscribe here. Your order total is $5.00", subject="Your receipt")
    lane, signals = said([first, mail(ME, "Where is my parcel?", mine=True)])
    assert lane == "people"
    assert signals == ["you wrote in this thread"]
    lane, signals = said([first], written_to=lambda address: address == "hello@shop.example")
    assert (lane, signals) == ("people", ["you have written to hello@shop.example"])


def test_one_weak_signal_is_not_enough_for_a_lane() -> None:
    lane, _ = said([mail("news@club.example", "See you at the meeting.", to=5)])
    assert lane == "people"  # a list-shaped address alone weighs 1: People, with no signal of its own
    assert said([mail("news@club.example", "See you at the meeting.", to=5)])[1] == []


def test_a_tie_goes_to_the_later_lane() -> None:
    # an unsubscribe link (Newsletters 2) against a receipt's words (Receipts 2): Receipts
    lane, _ = said([mail("shop@x.example", "Your invoice is ready. Unsubscribe", to=5)])
    assert lane == "receipts"


def test_who_wrote_last_and_what_the_user_wrote_to() -> None:
    theirs, mine = mail("ada@example.com", "a question"), mail(ME, "an answer", mine=True)
    found = sort_thread([theirs, mine], [ME])
    assert (found.last_by, found.written_to) == ("me", ("friend0@example.com",))
    assert sort_thread([mine, theirs], [ME]).last_by == "person"
    assert sort_thread([mail("alerts@x.example", "fired")], [ME]).last_by == "automated"
    assert sort_thread([], [ME]).last_by == ""
    # mail from the user's own address counts as the user's when the service names no direction; mail it calls
    # inbound is someone else's, whatever its From says (a forged From: the sender is still screened)
    own = mail(ME, "from my other client", direction="MESSAGE_DIRECTION_UNSPECIFIED")
    assert sort_thread([own], [ME]).sender == ""
    forged = mail(ME, "click here")
    assert sort_thread([forged], [ME]).sender == ME
    assert sort_thread([forged], [ME]).written_to == ()


def test_only_the_first_messages_from_others_are_read() -> None:
    plain = [mail("ada@example.com", "a note") for _ in range(READ_AT_MOST)]
    late = mail("ada@example.com", "Unsubscribe Unsubscribe", subject="Alert")
    assert said([*plain, late]) == said(plain)


def test_a_sender_whose_address_cannot_be_read_is_still_a_sender() -> None:
    for odd in (">spam@evil.example<", "Spam <>", ""):
        found = sort_thread([mail(odd, "buy now")], [ME])
        assert found.sender, odd  # (a thread with a sender is screened; only the user's own has none)


def test_mail_a_person_marked_not_automatic_is_not_a_notification() -> None:
    person = mail("ada@example.com", "Lunch tomorrow?", subject="Reminder: lunch", metadata={"Auto-Submitted": "no"})
    assert said([person])[0] == "people"
    robot = mail(
        "ada@example.com", "Lunch tomorrow?", subject="Reminder: lunch", metadata={"auto-submitted": "auto-generated"}
    )
    assert said([robot])[0] == "notifications"


def test_amounts_are_read_in_their_usual_forms() -> None:
    for text, amount in (("Total 1,234.56 EUR", "1,234.56 EUR"), ("Paid $1,200.00 today", "$1,200.00")):
        assert f"it names an amount ({amount})" in said([mail("a@x.example", f"Your receipt. {text}", to=5)])[1]
    assert said([mail("a@x.example", "Your receipt for version 1.2.3456", to=5)])[1] == ["it mentions 'receipt'"]


RECEIPT_PHRASES = (
    "receipt", "invoice", "order confirmation", "order #40317", "order number", "order no.", "your order",
    "payment received", "payment confirmation", "amount due", "order total", "subtotal", "refund",
)  # fmt: skip
AMOUNTS = ("$5", "€ 12.50", "£3", "¥100", "12.50 USD", "1,200.00 EUR", "9.99 GBP", "4.00 CHF", "3.00 JPY")
FILLER = st.text(alphabet="abc xyz.,\n0123456789", max_size=200)


@given(before=FILLER, phrase=st.sampled_from(RECEIPT_PHRASES), after=FILLER)
def test_every_receipt_word_is_found_wherever_it_stands(before: str, phrase: str, after: str) -> None:
    body = f"{before} {phrase.upper()} {after}"
    _, signals = said([mail("sam@shop.example", body)])
    assert any(s.startswith("it mentions ") for s in signals), body


@given(before=FILLER, amount=st.sampled_from(AMOUNTS), after=FILLER)
def test_every_amount_is_found_wherever_it_stands(before: str, amount: str, after: str) -> None:
    body = f"{before.rstrip('0123456789,.')} {amount} {after.lstrip('0123456789,.')}"
    _, signals = said([mail("orders@shop.example", body)])  # (with the billing address, the amount decides)
    assert any(s.startswith("it names an amount") for s in signals), body
