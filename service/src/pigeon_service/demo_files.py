"""Small real files for the demo's attachments: a PNG and a one-page PDF that image viewers and PDF readers open,
so forwarding, saving and opening them can be tried on something genuine."""

from __future__ import annotations

import base64
import struct
import zlib
from typing import Any

from pigeon.models import ContentType


def png(width: int, height: int, colour: tuple[int, int, int]) -> bytes:
    """A ``width`` x ``height`` RGB image: a gradient from ``colour`` to white, top to bottom."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(
        b"\x00"  # filter: none
        + bytes(channel + (255 - channel) * y // max(height - 1, 1) for channel in colour) * width
        for y in range(height)
    )
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8 bits, truecolour
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def pdf(lines: list[str]) -> bytes:
    """A one-page PDF showing ``lines`` (printable ASCII) in Helvetica, with a correct cross-reference table."""
    text = "\n".join(
        f"BT /F1 {14 if n == 0 else 11} Tf 72 {740 - 22 * n} Td ({_escaped(line)}) Tj ET"
        for n, line in enumerate(lines)
    ).encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(text), text),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    table = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, table)
    return bytes(out)


def _escaped(line: str) -> str:
    return line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def attachment_block(filename: str, mime: str, data: bytes, sequence: int) -> dict[str, Any]:
    """A content block carrying ``data`` as a file, base64 as the demo's attachments are."""
    return {
        "type": ContentType.ATTACHMENT.value,
        "content": base64.b64encode(data).decode(),
        "sequence": sequence,
        "mime_type": mime,
        "filename": filename,
        "size": len(data),
        "metadata": {"encoding": "base64"},
    }
