"""Links and attachments leaving Pigeon: numbered as the reader numbers them, asked about when they mislead or can
run code, opened from a private folder with the user's program and nothing else."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest

from pigeon import locations
from pigeon.core.attachments import place_for_opening
from pigeon.core.links import named_host, thread_links
from pigeon.core.programs import ProgramFailed, open_link, open_with
from pigeon.core.runs_code import risky
from pigeon.htmltext import readable
from pigeon.models import ContentBlock, Message


def html_message(html: str, message_id: str = "m1") -> Message:
    return Message(id=message_id, content_blocks=[ContentBlock(mime_type="text/html", content=html)])


def test_links_are_numbered_across_the_thread_as_the_reader_numbers_its_footnotes() -> None:
    first = (
        '<p><a href="https://a.test/1">one</a> <a href="https://b.test/2">two</a> <a href="https://a.test/1">x</a></p>'
    )
    second = '<p>See <a href="https://c.test/3">three</a></p>'
    plain = Message(id="m3", content_blocks=[ContentBlock(mime_type="text/plain", content="Or https://d.test/4.")])
    links = thread_links([html_message(first), html_message(second, "m2"), plain])
    assert [(link.number, link.target) for link in links] == [
        (1, "https://a.test/1"),
        (2, "https://b.test/2"),
        (3, "https://c.test/3"),
        (4, "https://d.test/4"),
    ]
    assert "three [3]" in readable(second, 3)  # the reader numbers the second message's link on from the first's
    assert "[3] https://c.test/3" in readable(second, 3)


def test_a_link_whose_words_name_another_host_is_flagged_and_a_matching_one_is_not() -> None:
    links = thread_links(
        [
            html_message(
                '<a href="https://evil.test/login">Click here</a> <a href="https://evil.test/login">www.paypal.com</a>'
                ' <a href="https://www.example.com/a">example.com</a>'
                ' <a href="mailto:ann@example.com">ann@example.com</a>'
            )
        ]
    )
    flagged = {link.target: link.named_host for link in links}
    assert flagged == {
        "https://evil.test/login": "www.paypal.com",
        "https://www.example.com/a": "",
        "mailto:ann@example.com": "",
    }
    assert links[0].text == "www.paypal.com"  # the misleading words are the ones shown
    assert named_host("Read more", "https://x.test") == ""


def test_only_web_and_mail_links_are_opened() -> None:
    for target in ("javascript:alert(1)", "file:///etc/passwd", "data:text/html,x", "-oProxyCommand=x"):
        with pytest.raises(ProgramFailed, match="opens only http, https and mailto"):
            open_link(target)


def test_a_web_link_goes_to_the_browser_webbrowser_picks(browser: list[str]) -> None:
    open_link("https://example.com/a?b=1")
    assert browser == ["https://example.com/a?b=1"]


@pytest.mark.parametrize(
    ("filename", "mime", "asks"),
    [
        ("invoice.pdf.exe", "application/pdf", True),
        ("report.docm", "application/octet-stream", True),
        ("setup.sh", "text/plain", True),
        ("page.html", "text/html", True),
        ("notes", "application/x-msdownload", True),
        ("budget.xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", False),
        ("photo.jpg", "image/jpeg", False),
        ("minutes.pdf", "application/pdf", False),
    ],
)
def test_types_that_can_run_code_ask_first(filename: str, mime: str, asks: bool) -> None:
    assert bool(risky(ContentBlock(filename=filename, mime_type=mime))) is asks


def test_an_opened_attachment_is_private_not_executable_and_given_as_one_argument(tmp_path: Path) -> None:
    block = ContentBlock(filename="../../evil name.sh", mime_type="text/x-shellscript", content="echo hi")
    folder = locations.opened_dir()
    path = place_for_opening(folder, block)
    assert path.parent == folder.resolve()
    assert path.name == "evil name.sh"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    record = tmp_path / "argv.json"
    recorder = tmp_path / "recorder.py"
    recorder.write_text(f"import json, sys\nopen({str(record)!r}, 'w').write(json.dumps(sys.argv[1:]))\n")
    open_with([sys.executable, str(recorder), "--flag"], str(path))
    assert json.loads(record.read_text()) == ["--flag", str(path)]


def test_a_handler_that_fails_says_so_in_one_line(tmp_path: Path) -> None:
    failing = tmp_path / "fail.py"
    failing.write_text("import sys\nsys.stderr.write('no application for this type\\n')\nsys.exit(3)\n")
    with pytest.raises(ProgramFailed, match=r"failed \(exit 3\): no application for this type"):
        open_with([sys.executable, str(failing)], str(tmp_path / "x.pdf"))
    with pytest.raises(ProgramFailed, match="was not found"):
        open_with(["no-such-program-pigeon"], str(tmp_path / "x.pdf"))
