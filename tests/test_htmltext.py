"""HTML to text: links are numbered by their real targets, in linear work, whatever their text says."""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import partial
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

    from pigeon_service.demo_mail import _fill
    from pigeon_service.demo_text import NEWSLETTER

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


def test_the_title_is_the_documents_own_not_text_that_looks_like_one() -> None:
    page = '<html><head><script>var s = "<title>fake</title>"</script><title>\n 503  Busy </title ></head></html>'
    assert summary(page) == "503 Busy"
    assert summary("<html><body><p>No title, <b>only</b> text</p></body></html>") == "No title, only text"


def _nested(depth: int, inside: str) -> str:
    return "<p>visible</p>" + "<div>" * depth + inside + "</div>" * depth + "<p>after</p>"


def test_deeply_nested_html_keeps_every_word_for_the_reader_and_the_index() -> None:
    for depth in (255, 300, 5_000):
        html = _nested(depth, "<b>deep</b> words")
        assert readable(html).split() == ["visible", "deep", "words", "after"], depth
        assert words_of(html) == "visible deep words after", depth


def test_flattening_a_deep_document_reveals_nothing_that_was_not_shown() -> None:
    inside = (
        '<script>var secret = 1</script><style>p { x: 1 }</style><div style="display: none">preheader</div>'
        "<span>shown</span><div><p>next</p></div>"
    )
    html = '<p>see <a href="https://a.example">here</a></p>' + _nested(1_000, inside)
    assert words_of(html) == "see here visible shown next after"
    text = readable(html)
    assert text.split("Links:")[0].split() == ["see", "here", "[1]", "visible", "shown", "next", "after"]
    assert text.endswith("[1] https://a.example")


def test_a_text_longer_than_the_parsers_default_limit_is_kept() -> None:
    html = "<p>" + "word " * 2_200_000 + "</p><p>after</p>"  # (11 MB in one text node)
    assert words_of(html).endswith("word word after")


def test_hostile_markup_in_a_deep_document_keeps_the_words_before_it_and_the_work_grows_linearly() -> None:
    for opener in ("<!--", "<a", "</", "<!", "<?", '<div a="', "<script>", "<b>x<!--", "<div/>"):
        html = "<p>before</p>" + "<div>" * 300 + "text " + opener * 2_000
        assert words_of(html).startswith("before text"), opener
        small = _calls(partial(words_of, "<div>" * 300 + opener * 1_000))
        large = _calls(partial(words_of, "<div>" * 300 + opener * 4_000))
        assert large < 5 * small, opener
