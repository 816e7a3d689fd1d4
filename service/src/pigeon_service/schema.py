"""The service's tables. Date-times are stored as fixed-width ISO 8601 UTC strings (``2026-01-31T09:15:00.000000Z``),
so text order is time order and keyset cursors compare correctly."""

from __future__ import annotations

_SCHEMA_V1 = """
CREATE TABLE accounts (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    created_at  TEXT NOT NULL
);
CREATE TABLE tokens (
    hash        TEXT PRIMARY KEY,               -- sha256 of the token; the token itself is never stored
    account_id  TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    created_at  TEXT NOT NULL
);
CREATE TABLE inboxes (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    type         TEXT NOT NULL,
    status       TEXT NOT NULL,
    email        TEXT NOT NULL,
    display_name TEXT,
    metadata     TEXT,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    UNIQUE (account_id, email)
);
CREATE TABLE contacts (
    id                TEXT PRIMARY KEY,
    account_id        TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    first_name        TEXT,
    last_name         TEXT,
    display_name      TEXT,
    company           TEXT,
    title             TEXT,
    emails            TEXT NOT NULL DEFAULT '[]',
    phones            TEXT NOT NULL DEFAULT '[]',
    social_profiles   TEXT NOT NULL DEFAULT '[]',
    tags              TEXT NOT NULL DEFAULT '[]',
    metadata          TEXT,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL,
    last_contacted_at TEXT
);
CREATE INDEX contacts_by_account ON contacts (account_id);
CREATE TABLE threads (
    id              TEXT PRIMARY KEY,
    account_id      TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    inbox_id        TEXT NOT NULL REFERENCES inboxes(id) ON DELETE CASCADE,
    status          TEXT NOT NULL,
    subject         TEXT,
    participants    TEXT NOT NULL DEFAULT '[]',
    last_message_at TEXT NOT NULL,
    message_count   INTEGER NOT NULL DEFAULT 0,
    metadata        TEXT,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);
CREATE INDEX threads_by_activity ON threads (account_id, last_message_at DESC, id DESC);
CREATE TABLE messages (
    seq                INTEGER PRIMARY KEY AUTOINCREMENT,   -- arrival order; the tie-breaker of the cursor
    id                 TEXT NOT NULL UNIQUE,
    account_id         TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    thread_id          TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    inbox_id           TEXT NOT NULL REFERENCES inboxes(id) ON DELETE CASCADE,
    direction          TEXT NOT NULL,
    status             TEXT NOT NULL,
    parent_id          TEXT,
    subject            TEXT,
    sender_contact_id  TEXT REFERENCES contacts(id) ON DELETE SET NULL,
    sender_address     TEXT,
    recipients         TEXT NOT NULL DEFAULT '[]',
    content_blocks     TEXT NOT NULL DEFAULT '[]',
    metadata           TEXT,
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL,
    sent_at            TEXT,
    received_at        TEXT
);
CREATE INDEX messages_in_thread ON messages (thread_id, created_at, seq);
CREATE TABLE webhooks (
    id          TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    url         TEXT NOT NULL,
    events      TEXT NOT NULL,
    status      TEXT NOT NULL,
    description TEXT,
    secret      TEXT NOT NULL,               -- needed in clear to sign; never returned after creation
    metadata    TEXT,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX webhooks_by_account ON webhooks (account_id, status);
CREATE TABLE deliveries (
    id              TEXT PRIMARY KEY,        -- the webhook-id header: the same on every retry
    webhook_id      TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    payload         TEXT NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    state           TEXT NOT NULL,           -- pending, delivered, failed
    last_status     INTEGER,
    last_error      TEXT,
    created_at      TEXT NOT NULL
);
CREATE INDEX deliveries_due ON deliveries (state, next_attempt_at);
"""

MIGRATIONS: list[str] = [_SCHEMA_V1]
"""``MIGRATIONS[n]`` takes a database from version ``n`` to ``n + 1``."""

SCHEMA_VERSION = len(MIGRATIONS)
