"""The demo's people: contacts with a name, a company, one to three addresses, phones and profiles, made by Faker
from the demo's seeded generator."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from pigeon.models import EmailType, PhoneType, SocialProfileType
from pigeon_service.db import iso
from pigeon_service.demo_text import TAGS

if TYPE_CHECKING:
    from faker import Faker


def new_person(fake: Faker, rng: random.Random, new_id: Callable[[], str], now: datetime) -> dict[str, Any]:
    """One made-up contact, as the service stores it."""
    first, last = fake.first_name(), fake.last_name()
    company = fake.company()
    domain = company.lower().replace(" ", "").replace(",", "").replace("-", "")[:18] + ".example"
    slug = f"{first}.{last}".lower().replace(" ", "").replace("'", "")
    emails = [{"id": new_id(), "type": EmailType.WORK.value, "email": f"{slug}@{domain}"}]
    if rng.random() < 0.5:
        emails.append(
            {"id": new_id(), "type": EmailType.PERSONAL.value, "email": f"{slug}{rng.randint(1, 99)}@mail.example"}
        )
    if rng.random() < 0.1:
        emails.append({"id": new_id(), "type": EmailType.UNKNOWN.value, "email": f"{first.lower()}@old.example"})
    phones = []
    for kind in (PhoneType.WORK, PhoneType.PERSONAL):
        if rng.random() < 0.55:
            phones.append(
                {
                    "id": new_id(),
                    "type": kind.value,
                    "phone": f"+1 555 {rng.randint(100, 999)} {rng.randint(1000, 9999)}",
                }
            )
    social = []
    if rng.random() < 0.6:
        social.append({"id": new_id(), "type": SocialProfileType.LINKEDIN.value, "username": slug.replace(".", "-")})
    return {
        "id": new_id(),
        "first_name": first,
        "last_name": last,
        "display_name": f"{first} {last}",
        "company": company,
        "title": fake.job(),
        "emails": emails,
        "phones": phones,
        "social_profiles": social,
        "tags": rng.sample(TAGS, rng.randint(0, 3)),
        "created_at": iso(now - timedelta(days=rng.randint(100, 900))),
        "last_contacted_at": iso(now - timedelta(days=rng.randint(0, 90), minutes=rng.randint(0, 1440))),
    }
