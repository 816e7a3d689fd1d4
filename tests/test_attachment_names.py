"""Attachment names longer than a file system takes (255 bytes, not characters) are cut to a byte budget, never
inside a character, keeping the extension, so such an attachment can be saved and opened."""

from __future__ import annotations

from pathlib import Path

import pytest

from pigeon.core.attachments import NAME_BYTES, attachment_filename, place_for_opening, save_into
from pigeon.core.runs_code import extension_of
from pigeon.models import ContentBlock


@pytest.mark.parametrize(
    ("name", "extension"),
    [
        ("報告" * 100 + ".pdf", ".pdf"),  # 3 bytes a character: 200 characters are 600 bytes
        ("🐦" * 100 + ".png", ".png"),  # 4 bytes a character
        ("é" * 300 + ".tar.gz", ".gz"),
        ("x" * 300 + ".desktop.", ".desktop."),  # (the type a desktop reads stays where it was)
    ],
    ids=["cjk", "emoji", "accents-double-extension", "trailing-dot"],
)
def test_a_long_multibyte_name_is_saved_cut_to_the_budget_with_its_extension(
    tmp_path: Path, name: str, extension: str
) -> None:
    saved = save_into(tmp_path / "downloads", name, b"data", overwrite=False)
    assert saved.read_bytes() == b"data"
    assert saved.name == attachment_filename(name)
    assert len(saved.name.encode()) <= NAME_BYTES
    assert saved.name.endswith(extension)
    stem = saved.name.removesuffix(extension)
    assert len(stem) > 40  # (cut, not emptied)
    assert name.startswith(stem)  # (whole characters, from the start)
    assert extension_of(saved.name) == extension_of(name)


def test_a_name_without_an_extension_is_cut_on_a_character_boundary() -> None:
    name = "a" + "報" * 200
    cut = attachment_filename(name)
    assert len(cut.encode()) <= NAME_BYTES
    assert len(cut.encode()) > NAME_BYTES - 3
    assert name.startswith(cut)


def test_a_name_within_the_budget_is_kept_whole() -> None:
    for name in ("a" * 230 + ".pdf", "報" * 78 + ".pdf", "report.pdf"):
        assert len(name.encode()) <= NAME_BYTES
        assert attachment_filename(name) == name


def test_a_long_multibyte_attachment_can_be_opened(tmp_path: Path) -> None:
    block = ContentBlock(filename="議事録" * 80 + ".txt", mime_type="text/plain", content="minutes")
    placed = place_for_opening(tmp_path / "opened", block)
    assert placed.read_text() == "minutes"
    assert placed.suffix == ".txt"
