"""The user's keymap (``[ui.keymap]``), checked before the app uses it: each key a name Textual knows, so that a
value holding anything else (an escape sequence that would retitle the terminal) is refused with a word."""

from __future__ import annotations

from textual.keys import REPLACED_KEYS, Keys, key_to_character

from pigeon.sanitize import clean_line

MODIFIERS = frozenset({"ctrl", "shift", "alt", "meta", "super", "hyper"})
NAMED_KEYS = frozenset(key.value for key in Keys if "+" not in key.value and not key.value.startswith("<"))


def known_key(key: str) -> bool:
    """Whether ``key`` (``j``, ``ctrl+d``, ``question_mark``, ``pagedown``) is a key name Textual knows."""
    *modifiers, name = key.split("+")
    if not name or not set(modifiers) <= MODIFIERS:
        return False
    if len(name) == 1:
        return name.isprintable() and not name.isspace()
    return name in NAMED_KEYS or key_to_character(REPLACED_KEYS.get(name, name)) is not None


def checked_keymap(keymap: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """The entries whose every key is known, and a one-line warning for each other one (which is left out)."""
    kept: dict[str, str] = {}
    warnings: list[str] = []
    for binding_id, keys in keymap.items():
        names = [name.strip() for name in keys.split(",")]
        if names and all(known_key(name) for name in names):
            kept[binding_id] = keys
        else:
            shown = clean_line(ascii(keys), limit=60)  # (escapes written out, as they would be typed in TOML)
            warnings.append(f'[ui.keymap] "{clean_line(binding_id, limit=60)}" = {shown} is not a key name; ignored.')
    return kept, warnings
