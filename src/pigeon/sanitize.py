"""The one path by which untrusted text (mail, names, server error messages) reaches a screen.

Mail is hostile. Before any text from the service is shown, in the terminal UI or on the command line, it goes
through :func:`clean`, which makes terminal control sequences inert:

- whole escape sequences (CSI ``ESC [ ... final``, OSC ``ESC ] ... BEL|ST``, DCS/SOS/PM/APC strings, and two-byte
  ``ESC x`` sequences), and their 8-bit C1 forms, are removed, so no sequence is left half-applied;
- every other C0 and C1 control character is removed, except newline and tab (kept when ``multiline``);
- Unicode bidirectional overrides and isolates (U+202A..U+202E, U+2066..U+2069) and the invisible
  direction marks are removed, so a name cannot visually reorder what follows it.

Markup is a separate concern: this module returns plain ``str``; widgets must show it as literal text
(``Content``/``Text`` objects or ``markup=False``), never parse it.
"""

from __future__ import annotations

import re

# ESC-introduced strings that run to a terminator: OSC (]), DCS (P), SOS (X), PM (^), APC (_).
# Terminated by BEL, ST (ESC \) or the 8-bit ST (\x9c); an unterminated one runs to the end of the text.
_ESC_STRING = r"\x1b[\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c|$)"
# 8-bit forms of the same strings: OSC \x9d, DCS \x90, SOS \x98, PM \x9e, APC \x9f.
_C1_STRING = r"[\x90\x98\x9d\x9e\x9f][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c|$)"
# CSI: ESC [ or \x9b, parameter bytes, intermediate bytes, one final byte.
_CSI = r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"
# Any other ESC sequence: ESC, intermediates, one final byte (or a lone ESC at the end).
_ESC_OTHER = r"\x1b[\x20-\x2f]*[\x30-\x7e]?"

_SEQUENCES = re.compile("|".join((_ESC_STRING, _C1_STRING, _CSI, _ESC_OTHER)))

_BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
_C0 = "".join(chr(c) for c in range(0x20) if chr(c) not in "\n\t")
_C1 = "".join(chr(c) for c in range(0x7F, 0xA0))
_DROP_MULTILINE = str.maketrans("", "", _C0 + _C1 + _BIDI)
_DROP_SINGLE_LINE = str.maketrans({"\n": " ", "\t": " ", **{c: None for c in _C0 + _C1 + _BIDI}})


def clean(text: object, *, multiline: bool = True) -> str:
    """Return ``text`` with terminal control sequences, control characters and bidi overrides removed.

    ``multiline=False`` also turns newlines and tabs into spaces (for one-line cells: subjects, names).
    ``\\r\\n`` and lone ``\\r`` become newlines first so line structure survives.
    """
    if text is None:
        return ""
    value = str(text).replace("\r\n", "\n").replace("\r", "\n")
    value = _SEQUENCES.sub("", value)
    return value.translate(_DROP_MULTILINE if multiline else _DROP_SINGLE_LINE)


def clean_line(text: object, *, limit: int | None = None) -> str:
    """One line of untrusted text, optionally shortened to ``limit`` characters with an ellipsis."""
    value = " ".join(clean(text, multiline=False).split())
    if limit is not None and len(value) > limit:
        return value[: max(limit - 1, 0)] + "…"
    return value
