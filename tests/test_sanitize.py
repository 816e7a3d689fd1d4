"""The one sanitising function: terminal control sequences and bidi overrides made inert."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pigeon.sanitize import clean, clean_line

DANGEROUS = {chr(c) for c in range(0x20) if chr(c) not in "\n\t"} | {chr(c) for c in range(0x7F, 0xA0)}
BIDI = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")


@pytest.mark.parametrize(
    ("hostile", "shown"),
    [
        ("\x1b]52;c;ZXZpbA==\x07after", "after"),  # OSC 52 clipboard write, BEL-terminated
        ("\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\", "click"),  # OSC 8 hyperlink, ST-terminated
        ("\x1b[2J\x1b[31mred\x1b[0m", "red"),  # CSI clear screen and colour
        ("\x9b31mred", "red"),  # 8-bit CSI
        ("\x9d52;c;ZXZpbA==\x9cafter", "after"),  # 8-bit OSC with 8-bit ST
        ("\x1bPq#0;2;0;0;0\x1b\\text", "text"),  # DCS (sixel)
        ("\x1b_Gf=100;AAAA\x1b\\img", "img"),  # APC (kitty graphics)
        ("a\x1b7b\x1b8c", "abc"),  # save/restore cursor
        ("name\u202egnp.exe", "namegnp.exe"),  # right-to-left override
        ("x\u2067y\u2069z", "xyz"),  # isolates
        ("bell\x07 back\x08space", "bell backspace"),
        ("unterminated \x1b]0;title", "unterminated "),
        ("lone escape at end\x1b", "lone escape at end"),
        ("[@click=app.quit]quit[/]", "[@click=app.quit]quit[/]"),  # markup is not this function's job: kept as text
    ],
)
def test_hostile_sequences_are_removed_whole(hostile: str, shown: str) -> None:
    assert clean(hostile) == shown


def test_line_structure_survives_and_carriage_returns_become_newlines() -> None:
    assert clean("one\r\ntwo\rthree\n\tfour") == "one\ntwo\nthree\n\tfour"


def test_clean_line_folds_whitespace_and_shortens() -> None:
    assert clean_line("  Re:\n  the\tplan  ") == "Re: the plan"
    assert clean_line("x" * 50, limit=10) == "x" * 9 + "…"


def test_ordinary_text_is_untouched() -> None:
    text = "Grüße, 你好, emoji 🐦, quotes “ok” — and [brackets]"
    assert clean(text) == text


@given(st.text())
def test_no_control_or_bidi_character_survives(text: str) -> None:
    out = clean(text)
    assert not (set(out) & (DANGEROUS | BIDI))
    assert not (set(clean_line(text)) & (DANGEROUS | BIDI | {"\n", "\t"}))


@pytest.mark.parametrize(
    ("hostile", "shown"),
    [
        ("pay\u200bpal", "paypal"),  # zero-width space
        ("\u2764\ufe0f", "\u2764"),  # a variation selector turns a one-cell symbol into a two-cell emoji
        ("\U0001f44d\U0001f3fd", "\U0001f44d"),  # a skin-tone modifier (measured 0, drawn 2 when alone)
        ("\u3164\u3164\u3164paypal.com", "\ufffd\ufffd\ufffdpaypal.com"),  # fillers: measured 0, drawn as blanks
        ("x\ud800y", "x\ufffdy"),  # a lone surrogate (from JSON) would not even encode for the terminal
        ("icon\ue0b0", "icon\ufffd"),  # private use: the font decides its width
        ("Z\u0301\u0302\u0303\u0304\u0305\u0306o", "Z\u0301\u0302\u0303o"),  # stacked marks cut to three
        ("tag\U000e0041\U000e007f", "tag"),  # tag characters
        ("one\u2028two", "one\ntwo"),  # a line separator is a line break
    ],
)
def test_characters_that_lie_about_their_width_are_removed_or_shown(hostile: str, shown: str) -> None:
    assert clean(hostile) == shown


@given(st.text())
def test_what_is_measured_is_what_is_drawn(text: str) -> None:
    import unicodedata

    from rich.cells import get_character_cell_size

    for ch in clean_line(text):
        category = unicodedata.category(ch)
        assert category not in {"Cc", "Cf", "Co", "Cs", "Zl", "Zp"}, repr(ch)
        if get_character_cell_size(ch) == 0:  # only marks that join the character before them draw no cell
            jamo = 0x1160 <= ord(ch) <= 0x11FF or 0xD7B0 <= ord(ch) <= 0xD7FF  # Hangul vowels and finals
            newer = category == "Cn"  # marks newer than this Python's Unicode tables
            assert category in {"Mn", "Me", "Mc"} or jamo or newer, f"{ch!r} ({unicodedata.name(ch, '?')})"


@pytest.mark.parametrize(
    ("hostile", "shown"),
    [
        ("\x9d0;title\x1bA rest", " rest"),  # 8-bit OSC cut by another sequence: its payload is not shown
        ("\x1b]0;title\x1bA rest", " rest"),
        ("\x90\x90payload\x1bAok", "ok"),  # (8-bit DCS)
        ("\x1bPq#0\x1b[31mred", "red"),  # the CSI that cuts a DCS is removed as well
    ],
)
def test_an_unterminated_string_ends_where_the_next_sequence_starts(hostile: str, shown: str) -> None:
    assert clean(hostile) == shown


_OPENERS = "\x1b\x9b\x90\x98\x9d\x9e\x9f"


@given(st.text(alphabet=_OPENERS + "\x07\x9c\\]PX^_A[0;a", max_size=60))
def test_every_sequence_opener_matches_in_one_forward_scan(text: str) -> None:
    # The linear-time property without a clock: a match attempt at an opener never fails. A pattern whose
    # terminator is required fails at an unterminated opener after scanning ahead to the next ESC, and does it
    # again at each following opener: the quadratic work a hostile subject was made of.
    from pigeon.sanitize import _SEQUENCES

    for at, char in enumerate(text):
        if char in _OPENERS:
            assert _SEQUENCES.match(text, at) is not None, (text, at)


@given(st.text(alphabet=st.characters(max_codepoint=0x7F)), st.booleans())
def test_plain_ascii_is_cleaned_as_the_full_path_would_clean_it(text: str, multiline: bool) -> None:
    # A NUL (dropped whatever comes before it) sends the text down the full path: both must agree.
    assert clean(text, multiline=multiline) == clean(text + "\x00", multiline=multiline)
