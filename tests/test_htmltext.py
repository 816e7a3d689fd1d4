"""HTML to text: links are numbered by their real targets, in linear work, whatever their text says."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from pigeon.htmltext import readable, summary, text_of, words_of


def test_a_link_whose_text_looks_like_another_link_shows_its_real_target() -> None:
    html = '<p>Pay at <a href="https://evil.example/x">[https://bank.example](https://bank.example)</a></p>'
    text = readable(html)
    assert text.endswith("Links:\n[1] https://evil.example/x")
    assert "[1] https://bank.example" not in text


def test_each_target_is_listed_once_in_the_order_first_seen() -> None:
    html = (
        '<a href="https://a.example">A</a> <a href="https://b.example"><b>B</b></a> <a href="https://a.example">A2</a>'
    )
    text = readable(html)
    assert "A [1]" in text
    assert "B [2]" in text
    assert "A2 [1]" in text
    assert text.split("Links:\n")[1].splitlines() == ["[1] https://a.example", "[2] https://b.example"]


def _calls(work: Callable[[], Any]) -> int:
    """How many Python and C functions ``work`` calls: a measure of work that does not depend on the clock."""
    count = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal count
        if event in {"call", "c_call"}:
            count += 1

    sys.setprofile(profile)
    try:
        work()
    finally:
        sys.setprofile(None)
    return count


def _links(n: int) -> str:
    return "<p>" + "".join(f'<a href="https://x.example/{i}">link {i}</a> ' for i in range(n)) + "</p>"


def test_forty_thousand_links_are_all_listed_and_the_work_grows_linearly() -> None:
    text = readable(_links(40_000))
    listed = text.split("Links:\n")[1].splitlines()
    assert listed == [f"[{i + 1}] https://x.example/{i}" for i in range(40_000)]
    small, large = _calls(lambda: readable(_links(500))), _calls(lambda: readable(_links(2_000)))
    assert large < 5 * small  # four times the links: about four times the work, not sixteen


def test_error_pages_are_summed_up_by_their_title_or_text() -> None:
    assert text_of("<p>Hello <b>there</b></p><script>alert(1)</script>") == "Hello there"
    assert summary("<html><head><title>502 Bad Gateway</title></head><body>x</body></html>") == "502 Bad Gateway"


def test_the_index_gets_the_words_a_reader_is_shown_and_no_others() -> None:
    html = (
        "<html><head><title>head words</title><style>p { color: red }</style></head><body>"
        '<div style="DISPLAY: none">preheader</div><p>Hello <b>th</b>ere<script>alert(1)</script></p>'
        '<p>next<span style="color:red;display:none">hidden</span>tail<!-- a comment --></p>'
        '<div style="visibility:hidden">still laid out</div>\x1b[31mred</body></html>'
    )
    # ("nexttail": the reader shows the two pieces around the hidden one as one word, and so does the index)
    assert words_of(html) == "Hello there nexttail still laid out red"
    assert text_of(html).split() == ["Hello", "there", "nexttail", "still", "laid", "out", "\x1b[31mred"]
    assert words_of('<div style="display:none">all of it</div>') == ""
    assert words_of("<table><tr><td>a</td><td>b</td></tr></table>x<br>y<ul><li>c</li><li>d</li></ul>") == "a b x y c d"
    assert words_of("") == words_of("   ") == ""


def test_the_index_has_the_words_of_the_reader_for_the_demo_newsletter() -> None:
    import random
    import re

    from pigeon.server.demo import _fill
    from pigeon.server.demo_text import NEWSLETTER

    names = {"name": "Ada", "other": "Grace", "company": "Analytical Engines", "title": "Engineer"}
    html = _fill(NEWSLETTER, random.Random(3), names)
    assert "preheader" in html  # (the newsletter hides one, as newsletters do)
    words = re.compile(r"\w+")
    assert sorted(words.findall(words_of(html))) == sorted(words.findall(text_of(html)))


def test_control_characters_and_escape_sequences_in_an_anchor_do_not_break_the_footnotes() -> None:
    from pigeon.htmltext import readable

    text = readable('<p>hi\x1b]52;c;PWN\x07</p><a href="https://evil.example/\x00x">\x1b[2Jbank\x01</a>')
    assert "bank [1]" in text
    assert "[1] https://evil.example/x" in text
    assert "\x1b" not in text
    assert "\x00" not in text
