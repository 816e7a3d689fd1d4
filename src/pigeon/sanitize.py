"""The one path by which untrusted text (mail, names, server error messages) reaches a screen.

Mail is hostile. Before any text from the service is shown, in the terminal UI or on the command line, it goes
through :func:`clean`, which makes terminal control sequences inert:

- whole escape sequences (CSI ``ESC [ ... final``, OSC ``ESC ] ... BEL|ST``, DCS/SOS/PM/APC strings, and two-byte
  ``ESC x`` sequences), and their 8-bit C1 forms, are removed, so no sequence is left half-applied;
- every other C0 and C1 control character is removed, except newline and tab (kept when ``multiline``);
- Unicode bidirectional overrides and isolates (U+202A..U+202E, U+2066..U+2069) and the invisible
  direction marks are removed, so a name cannot visually reorder what follows it;
- characters whose width terminals and Rich disagree on, or that draw nothing, are removed (invisible format
  characters such as zero-width spaces and joiners, variation selectors, emoji skin-tone modifiers, tag
  characters) or shown as U+FFFD (invisible fillers such as U+3164, private-use and lone surrogate code points),
  and a run of combining marks is cut to three: what is measured is what is drawn, so a row never spills into
  the next pane and a run of invisible characters cannot hide what follows it;
- line and paragraph separators (U+2028, U+2029) are line breaks.

Markup is a separate concern: this module returns plain ``str``; widgets must show it as literal text
(``Content``/``Text`` objects or ``markup=False``), never parse it.
"""

from __future__ import annotations

import re

# ESC-introduced strings that run to a terminator: OSC (]), DCS (P), SOS (X), PM (^), APC (_).
# Terminated by BEL, ST (ESC \) or the 8-bit ST (\x9c). An unterminated one ends where another ESC starts (as a
# terminal cancels it there) or at the end of the text. The terminator is optional, so a match at an opener always
# succeeds in one forward scan: a required one made each unterminated opener rescan to the next ESC (quadratic).
_ESC_STRING = r"\x1b[\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
# 8-bit forms of the same strings: OSC \x9d, DCS \x90, SOS \x98, PM \x9e, APC \x9f.
_C1_STRING = r"[\x90\x98\x9d\x9e\x9f][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
# CSI: ESC [ or \x9b, parameter bytes, intermediate bytes, one final byte.
_CSI = r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"
# Any other ESC sequence: ESC, intermediates, one final byte (or a lone ESC at the end).
_ESC_OTHER = r"\x1b[\x20-\x2f]*[\x30-\x7e]?"

_SEQUENCES = re.compile("|".join((_ESC_STRING, _C1_STRING, _CSI, _ESC_OTHER)))

# Invisible format characters (category Cf, the bidi ones apart), variation selectors, emoji modifiers, tags.
_INVISIBLE = re.compile(
    "[\u00ad\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2\u180b-\u180f\u200b-\u200d\u2060-\u2065"
    "\u206a-\u206f\ufe00-\ufe0f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U0001f3fb-\U0001f3ff\U000e0001\U000e0020-\U000e007f"
    "\U000e0100-\U000e01ef]"
)
# Fillers that draw nothing but take cells, private-use characters (a font decides their width), lone surrogates.
_PLACEHOLDER = re.compile("[\u115f\u1160\u3164\uffa0\ud800-\udfff\ue000-\uf8ff\U000f0000-\U0010ffff]")
# A fourth and later combining mark on one character (marks stacked past any script's need draw out of the line).
_STACKED = re.compile(
    "(?<=[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]{3})"
    "[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+"
)
PLACEHOLDER = "\ufffd"
# The characters of ASCII text that cleaning changes: every control character but tab and newline (ESC and CR too).
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")

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
    value = str(text)
    if value.isascii() and _CONTROLS.search(value) is None:  # (most text: nothing in it to take out)
        return value if multiline else value.replace("\n", " ").replace("\t", " ")
    value = value.replace("\r\n", "\n").replace("\r", "\n").replace("\u2028", "\n").replace("\u2029", "\n")
    value = _SEQUENCES.sub("", value)
    value = _INVISIBLE.sub("", value)
    value = _PLACEHOLDER.sub(PLACEHOLDER, value)
    value = _STACKED.sub("", value)
    return value.translate(_DROP_MULTILINE if multiline else _DROP_SINGLE_LINE)


def clean_line(text: object, *, limit: int | None = None) -> str:
    """One line of untrusted text, optionally shortened to ``limit`` characters with an ellipsis."""
    value = " ".join(clean(text, multiline=False).split())
    if limit is not None and len(value) > limit:
        return value[: max(limit - 1, 0)] + "…"
    return value
