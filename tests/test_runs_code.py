"""Attachments that can run code ask before they open: by a normalised name, by type, and by their contents
whatever their name says."""

from __future__ import annotations

import base64
import io
import zipfile

import pytest

from pigeon.core.runs_code import EXTENSIONS, RUNS_CODE, extension_of, risky
from pigeon.models import ContentBlock


def block(name: str | None, data: bytes = b"", mime: str = "application/octet-stream") -> ContentBlock:
    content = base64.b64encode(data).decode()
    return ContentBlock(filename=name, mime_type=mime, content=content, metadata={"encoding": "base64"})


def zipped(*names: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in names:
            archive.writestr(zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0)), b"x")  # (the same bytes each run)
    return buffer.getvalue()


@pytest.mark.parametrize("extension", sorted(EXTENSIONS))
def test_every_type_of_the_table_asks_first(extension: str) -> None:
    said = f"a .{extension} file can run code when opened ({EXTENSIONS[extension]})"
    assert risky(block(f"file.{extension}")) == said


def test_the_table_covers_the_desktops_pigeon_opens_files_on() -> None:
    expected = (
        "jnlp ps eps mht mhtml odt ods odp odg fodt desktop sh jar appimage deb rpm py pl html svg "
        "app command terminal workflow pkg dmg exe bat cmd com scr msi lnk ps1 vbs js wsf hta reg cpl url library-ms"
    )
    assert set(expected.split()) <= set(EXTENSIONS)
    assert all(why.startswith(("a ", "an ")) for why in RUNS_CODE)


@pytest.mark.parametrize(
    ("name", "extension"),
    [
        ("launch.jnlp", "jnlp"),
        ("report.ps", "ps"),
        ("archive.mht", "mht"),
        ("minutes.odt", "odt"),
        ("trusted.desktop.", "desktop"),
        ("trusted.desktop. . .", "desktop"),
        ("setup.EXE  ", "exe"),
        ("Invoice.PDF.Exe", "exe"),
        ("invoice\u202egpj.exe", "exe"),  # (the right-to-left override that made it read "exe.jpg" is cleaned)
        ("photo.e\u200bxe", "exe"),  # (an invisible character inside the type)
        ("setup.\uff45\uff58\uff45", "exe"),  # (full-width letters)
        ("run.sh\u3000", "sh"),  # (an ideographic space)
    ],
)
def test_names_are_normalised_before_the_check(name: str, extension: str) -> None:
    assert extension_of(name) == extension
    assert risky(block(name))


@pytest.mark.parametrize(
    ("data", "what"),
    [
        (b"#!/bin/sh\nrm -rf ~\n", "a script"),
        (b"[Desktop Entry]\nType=Application\nExec=sh -c evil\n", "a launcher, script or web page"),
        (b"# a comment\n\n[Desktop Entry]\nExec=x\n", "a launcher, script or web page"),
        (b"\x7fELF\x02\x01\x01" + bytes(20), "a program (ELF)"),
        (b"MZ\x90\x00" + bytes(60), "a Windows program"),
        (b"\xcf\xfa\xed\xfe" + bytes(20), "a macOS program"),
        (b"%!PS-Adobe-3.0\n", "a PostScript program"),
        (b"%PDF-1.7\n1 0 obj << /OpenAction << /S /JavaScript /JS (app.alert(1)) >> >>", "a PDF that runs"),
        (b"%PDF-1.7\n1 0 obj << /S /J#61vaScript >>", "a PDF that runs"),
        (zipped("[Content_Types].xml", "word/document.xml", "word/vbaProject.bin"), "an office file with macros"),
        (zipped("mimetype", "content.xml", "Basic/Standard/Module1.xml"), "an OpenDocument file with macros"),
        (zipped("META-INF/MANIFEST.MF", "a/Main.class"), "a Java program"),
        (b'<?xml version="1.0"?>\n<jnlp spec="1.0+" codebase="http://x">', "a launcher, script or web page"),
        (b"<p>hi</p><SCRIPT>alert(1)</SCRIPT>", "a launcher, script or web page"),
        ("<html><body>x</body></html>".encode("utf-16"), "a launcher, script or web page"),
        (b"MIME-Version: 1.0\nContent-Type: multipart/related; boundary=x\n", "a launcher, script or web page"),
        (b"[InternetShortcut]\nURL=file:///c:/x.exe\n", "a launcher, script or web page"),
        (b"{\\rtf1\\ansi x}", "an RTF document"),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(20), "an old office file"),
    ],
)
def test_contents_that_can_run_code_ask_whatever_the_name_says(data: bytes, what: str) -> None:
    said = risky(block("holiday.jpg", data, mime="image/jpeg"))
    assert said.startswith(f"its contents are {what}")


@pytest.mark.parametrize(
    ("name", "data", "mime"),
    [
        ("photo.jpg", b"\xff\xd8\xff\xe0\x00\x10JFIF" + bytes(100), "image/jpeg"),
        ("notes.txt", b"Lunch at noon? The #! key is broken.\n", "text/plain"),
        ("budget.xlsx", zipped("[Content_Types].xml", "xl/workbook.xml"), "application/octet-stream"),
        ("minutes.pdf", b"%PDF-1.7\n1 0 obj << /Type /Catalog >>", "application/pdf"),
        ("trailing.", b"plain words", "application/octet-stream"),
        ("broken.zip", b"PK\x03\x04 not really a zip", "application/zip"),
    ],
)
def test_plain_files_open_without_asking(name: str, data: bytes, mime: str) -> None:
    assert risky(block(name, data, mime)) == ""
