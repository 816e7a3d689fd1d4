"""Contacts as the editor and the book see them: form values, what changed, where an error belongs, and what a
search matches. No Textual here."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from pydantic import ValidationError

from pigeon.api import FieldError
from pigeon.models import Contact, EmailType, PhoneType, SocialProfileType, UpdateContact
from pigeon.sanitize import clean, clean_line

ENTRY_KINDS: dict[str, tuple[str, type[StrEnum]]] = {
    "emails": ("email", EmailType),
    "phones": ("phone", PhoneType),
    "social_profiles": ("username", SocialProfileType),
}
"""Array field -> (the value's key, the enum of its types)."""

NEW_ENTRY_TYPES: dict[str, str] = {
    "emails": EmailType.WORK.value,
    "phones": PhoneType.WORK.value,
    "social_profiles": SocialProfileType.LINKEDIN.value,
}
"""The type a newly added row starts with: the likeliest one, not ``*_UNSPECIFIED``."""

KIND_TITLES = {"emails": "Emails", "phones": "Phones", "social_profiles": "Social profiles"}


SPELLED = {"Linkedin": "LinkedIn"}
"""Names that ``title()`` spells otherwise than their owners do."""


def type_label(value: str) -> str:
    """``EMAIL_TYPE_WORK`` as ``Work``: cleaned, since an unknown type is the service's text (and cleaned first:
    ``title()`` would turn an escape sequence's introducer into another)."""
    label = clean_line(clean_line(value).split("_TYPE_", 1)[-1].replace("_", " ").title())
    return SPELLED.get(label, label)


def on_screen(value: str) -> str:
    """How a field's value is shown in its box: cleaned of anything that would act on the terminal."""
    return clean(value, multiline=False)


def kept(shown: str, raw: str) -> str:
    """The value to save from a box that showed ``on_screen(raw)`` and now holds ``shown``: the service's own
    value while the user has not changed what was shown (an invisible mark in it is not the user's to lose)."""
    return raw if shown == on_screen(raw) else shown


def _json_escape(ch: str) -> str:
    code = ord(ch)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def safe_json(value: Any) -> str:
    """``value`` as indented JSON that is safe on a screen and means the same: every character the terminal must
    not see (controls, bidi, invisible ones) is written as its ``\\uXXXX`` escape."""
    text = json.dumps(value, indent=2, ensure_ascii=False)
    return "".join(ch if ch == "\n" or clean(ch) == ch else _json_escape(ch) for ch in text)


def contact_haystack(contact: Contact) -> str:
    """Everything a search of the contact book matches, lower case."""
    parts = [contact.name, contact.first_name, contact.last_name, contact.company, contact.title, *contact.tags]
    parts += [e.email for e in contact.emails] + [p.phone for p in contact.phones]
    parts += [s.username for s in contact.social_profiles]
    return " ".join(p for p in parts if p).lower()


@dataclass
class ContactForm:
    """Everything the editor can change, in wire form."""

    first_name: str = ""
    last_name: str = ""
    emails: list[dict[str, str]] = field(default_factory=list)
    phones: list[dict[str, str]] = field(default_factory=list)
    social_profiles: list[dict[str, str]] = field(default_factory=list)
    metadata_text: str = "{}"

    @classmethod
    def of(cls, contact: Contact) -> ContactForm:
        def entries(kind: str) -> list[dict[str, str]]:
            key, enum = ENTRY_KINDS[kind]
            first = next(iter(enum)).value
            return [
                {"type": str(getattr(e.type, "value", e.type) or first), key: getattr(e, key) or ""}
                for e in getattr(contact, kind)
            ]

        return cls(
            first_name=contact.first_name or "",
            last_name=contact.last_name or "",
            emails=entries("emails"),
            phones=entries("phones"),
            social_profiles=entries("social_profiles"),
            metadata_text=safe_json(contact.metadata or {}),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "first_name": self.first_name,
            "last_name": self.last_name,
            "emails": self.emails,
            "phones": self.phones,
            "social_profiles": self.social_profiles,
            "metadata_text": self.metadata_text,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], base: ContactForm | None = None) -> ContactForm:
        """The form a draft on disk holds, read as hostile: a field of the wrong type is ``base``'s, and an entry
        that is not text by text is left out (a file Pigeon did not write, or an older one, never stops the editor)."""
        form = replace(base) if base is not None else cls()
        for name in ("first_name", "last_name", "metadata_text"):
            if isinstance(data.get(name), str):
                setattr(form, name, data[name])
        for name in ENTRY_KINDS:
            entries = data.get(name)
            if isinstance(entries, list):
                setattr(form, name, [dict(e) for e in entries if isinstance(e, dict) and _text_by_text(e)])
        return form


def _text_by_text(entry: dict[Any, Any]) -> bool:
    return all(isinstance(key, str) and isinstance(value, str) for key, value in entry.items())


class FormInvalid(Exception):
    def __init__(self, errors: list[FieldError]) -> None:
        super().__init__("; ".join(str(e) for e in errors))
        self.errors = errors


def changes(original: ContactForm, edited: ContactForm) -> dict[str, Any]:
    """The PATCH body: only the fields that changed; arrays whole. Raises :class:`FormInvalid` on bad metadata."""
    body: dict[str, Any] = {}
    for name in ("first_name", "last_name"):
        if getattr(edited, name).strip() != getattr(original, name).strip():
            body[name] = getattr(edited, name).strip()
    for kind, (key, _) in ENTRY_KINDS.items():
        # Blank rows stay in: validation then points at them rather than dropping what the user meant to fill.
        cleaned = [{"type": entry["type"], key: entry.get(key, "").strip()} for entry in getattr(edited, kind)]
        before = [{"type": e["type"], key: e.get(key, "").strip()} for e in getattr(original, kind)]
        if cleaned != before:
            body[kind] = cleaned
    try:
        metadata = json.loads(edited.metadata_text or "{}")
    except ValueError as exc:
        raise FormInvalid([FieldError("metadata", f"not valid JSON: {exc}")]) from None
    if not isinstance(metadata, dict):
        raise FormInvalid([FieldError("metadata", 'must be a JSON object, like {"team": "ops"}')])
    if metadata != json.loads(original.metadata_text or "{}"):
        body["metadata"] = metadata
    return body


def _naming(error: Any) -> str:
    """A model's complaint, naming the value it is about: "'not-an-address' is not a valid email address"."""
    message = str(error["msg"]).removeprefix("Value error, ")
    value = error.get("input")
    if isinstance(value, str) and message.startswith("is "):
        return f"{clean_line(value, limit=40)!r} {message}"
    return message


def validate(body: dict[str, Any]) -> UpdateContact:
    """The request the service would get; field errors named as the service names them (``emails.0.email``)."""
    try:
        return UpdateContact(**body)
    except ValidationError as exc:
        raise FormInvalid(
            [FieldError(".".join(str(p) for p in err["loc"]), _naming(err)) for err in exc.errors()]
        ) from None
