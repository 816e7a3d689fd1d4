"""The local store's tables: a cache of the service's resources as JSON, with the columns lists and search need;
triage state, labels and the undo stack beside it; a full-text index. Versioned with ``PRAGMA user_version``."""

from __future__ import annotations

_SCHEMA_V1 = """
CREATE TABLE inboxes (
    id        TEXT PRIMARY KEY,
    position  INTEGER NOT NULL,
    data      TEXT NOT NULL
);
CREATE TABLE threads (
    id              TEXT PRIMARY KEY,
    inbox_id        TEXT,
    subject         TEXT NOT NULL DEFAULT '',
    who             TEXT NOT NULL DEFAULT '',
    last_message_at TEXT NOT NULL DEFAULT '',
    message_count   INTEGER NOT NULL DEFAULT 0,
    has_attachment  INTEGER NOT NULL DEFAULT 0,
    synced_upto     TEXT,
    synced_count    INTEGER,
    data            TEXT NOT NULL
);
CREATE INDEX threads_by_date ON threads (last_message_at DESC, id);
CREATE INDEX threads_by_inbox ON threads (inbox_id, last_message_at DESC);
CREATE TABLE messages (
    id         TEXT PRIMARY KEY,
    thread_id  TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    position   INTEGER NOT NULL,
    data       TEXT NOT NULL
);
CREATE INDEX messages_by_thread ON messages (thread_id, position);
CREATE TABLE contacts (
    id    TEXT PRIMARY KEY,
    name  TEXT NOT NULL DEFAULT '',
    data  TEXT NOT NULL
);
CREATE TABLE triage (
    thread_id      TEXT PRIMARY KEY,
    read_upto      TEXT,
    starred        INTEGER NOT NULL DEFAULT 0,
    done_upto      TEXT,
    snoozed_until  TEXT,
    snooze_upto    TEXT,
    muted          INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE labels (
    thread_id  TEXT NOT NULL,
    label      TEXT NOT NULL,
    PRIMARY KEY (thread_id, label)
);
CREATE INDEX labels_by_label ON labels (label);
CREATE TABLE undo (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    description TEXT NOT NULL,
    changes     TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
CREATE VIRTUAL TABLE search USING fts5(
    thread_id UNINDEXED, subject, sender, recipients, body, tokenize = 'unicode61 remove_diacritics 2'
);
"""

# A thread whose messages are still on their way (pending, or sent and not yet delivered or failed, for two days
# at most) is stored with
# synced_count -1, so every sync fetches it again until its statuses are final (see CacheStore.put_messages);
# version 2 marks those a version 1 store kept as settled for good.
_UNSETTLED_V2 = """
UPDATE threads SET synced_count = -1 WHERE id IN (
    SELECT thread_id FROM messages
    WHERE json_extract(data, '$.status') IN ('MESSAGE_STATUS_PENDING', 'MESSAGE_STATUS_SENT')
    AND coalesce(json_extract(data, '$.created_at'), '9') >= strftime('%Y-%m-%dT%H:%M:%S', 'now', '-2 days')
);
"""

# Version 3: a sync writes messages in batches and indexes their text after (``indexed`` 0 until then), and a
# thread's row in the full-text index has the thread's rowid, so replacing it is a look-up, not a scan of the whole
# index (a delete by ``thread_id`` scanned it, and a first sync spent most of its time there).
_INDEX_BY_ROWID_V3 = """
ALTER TABLE threads ADD COLUMN indexed INTEGER NOT NULL DEFAULT 1;
CREATE TEMP TABLE search_v2 AS SELECT rowid AS old, thread_id, subject, sender, recipients, body FROM search;
DELETE FROM search;
INSERT INTO search (rowid, thread_id, subject, sender, recipients, body)
    SELECT t.rowid, s.thread_id, s.subject, s.sender, s.recipients, s.body
    FROM search_v2 s JOIN threads t ON t.id = s.thread_id
    WHERE s.old IN (SELECT max(old) FROM search_v2 GROUP BY thread_id);
DROP TABLE search_v2;
"""

# Version 4: the records a sync could not read, by fingerprint, so that each is reported once (until it changes),
# and a thread's unreadable messages with their places.
_UNREADABLE_V4 = """
CREATE TABLE unreadable (
    fingerprint  TEXT NOT NULL,
    kind         TEXT NOT NULL,
    thread_id    TEXT NOT NULL DEFAULT '',
    record_id    TEXT NOT NULL,
    why          TEXT NOT NULL,
    before       INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (fingerprint, before)
);
CREATE INDEX unreadable_by_thread ON unreadable (thread_id, before);
"""

# Version 5: the account (and service) whose mail the store holds, so that another account's never goes in.
_ACCOUNT_V5 = """
CREATE TABLE account (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    account_id  TEXT NOT NULL,
    base_url    TEXT NOT NULL,
    email       TEXT NOT NULL DEFAULT ''
);
"""

# Version 6: the threads whose text is not in the search index yet, found without reading every thread (the app
# asks at each start, offline too).
_UNINDEXED_V6 = """
CREATE INDEX threads_unindexed ON threads (indexed) WHERE indexed = 0;
"""

# Version 7: a long thread's outline (each message's key, parent, sender, direction, time, how many attachments
# and HTML blocks), one JSON record a thread, so its shape is read without its messages and its messages a page at
# a time. A long thread stored before has none until it is stored again or read whole once (``store/pages.py``).
_OUTLINE_V7 = """
CREATE TABLE outlines (
    thread_id  TEXT PRIMARY KEY REFERENCES threads(id) ON DELETE CASCADE,
    data       TEXT NOT NULL
);
"""

# Version 8: what needs the user. Each thread's first writer other than the user (``sender``), its lane (taught
# or found), whether it waits in the Screener or was kept out (``screen``), and who wrote its last message, as
# columns the views test; the lane found and its signals beside (``lanes``); the Screener's and the lanes'
# decisions by address or ``@domain`` (``senders``); addresses the user wrote to; the senders there were when
# screening started, and when that was. A lane's, Owed's or the Screener's list and count read an index of their own
# (a sparse lane walked the whole date index for its first page). A store
# from before has its threads sorted in the background, then screening begins (``store/screening.py``). A snooze
# may be a reminder (``triage.remind``): back when due only if no answer came.
_ATTENTION_V8 = """
ALTER TABLE threads ADD COLUMN sender TEXT NOT NULL DEFAULT '';
ALTER TABLE threads ADD COLUMN sender_domain TEXT NOT NULL DEFAULT '';
ALTER TABLE threads ADD COLUMN lane TEXT NOT NULL DEFAULT '';
ALTER TABLE threads ADD COLUMN screen INTEGER NOT NULL DEFAULT 0;
ALTER TABLE threads ADD COLUMN last_by TEXT NOT NULL DEFAULT '';
ALTER TABLE threads ADD COLUMN sorted INTEGER NOT NULL DEFAULT 1;
UPDATE threads SET sorted = 0 WHERE synced_upto IS NOT NULL;
CREATE INDEX threads_unsorted ON threads (sorted) WHERE sorted = 0;
CREATE INDEX threads_by_sender ON threads (sender);
CREATE INDEX threads_by_sender_domain ON threads (sender_domain);
CREATE INDEX threads_by_lane ON threads (lane, screen, last_message_at DESC, id);
CREATE INDEX threads_by_screen ON threads (screen, last_message_at DESC, id);
CREATE INDEX threads_by_last_writer ON threads (lane, screen, last_by, last_message_at, id);
CREATE TABLE lanes (
    thread_id  TEXT PRIMARY KEY REFERENCES threads(id) ON DELETE CASCADE,
    lane       TEXT NOT NULL,
    signals    TEXT NOT NULL
);
CREATE TABLE senders (
    key          TEXT PRIMARY KEY,
    screen       TEXT NOT NULL DEFAULT '',
    screen_from  TEXT NOT NULL DEFAULT '',
    lane         TEXT NOT NULL DEFAULT '',
    lane_from    TEXT NOT NULL DEFAULT '',
    contact_id   TEXT NOT NULL DEFAULT '',
    decided_at   TEXT NOT NULL DEFAULT ''
);
CREATE INDEX senders_by_contact ON senders (contact_id);
CREATE TABLE let_in_at_start (address TEXT PRIMARY KEY);
CREATE TABLE written_to (address TEXT PRIMARY KEY);
CREATE TABLE screening (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    since  TEXT,
    off    INTEGER NOT NULL DEFAULT 0
);
INSERT INTO screening (id) VALUES (1);
ALTER TABLE triage ADD COLUMN remind INTEGER NOT NULL DEFAULT 0;
"""

# Version 9: what a rule did to a thread, beside its triage state (so one undo takes it back): the lane it put the
# thread in (before the sender's decisions and the lane found) and which rule did, and the name of the rule that
# last changed it, for "why is this here?". The
# index's sender column holds each sender's full name and address now (``from:ada@example.com``, in a rule or a
# search): every thread is indexed again, in the background.
_RULES_V9 = """
ALTER TABLE triage ADD COLUMN lane TEXT NOT NULL DEFAULT '';
ALTER TABLE triage ADD COLUMN rule TEXT NOT NULL DEFAULT '';
ALTER TABLE triage ADD COLUMN lane_rule TEXT NOT NULL DEFAULT '';
UPDATE threads SET indexed = 0 WHERE synced_upto IS NOT NULL;
"""

# Version 10: the lanes' and the Screener's indexes carry who wrote last, so Owed and Waiting count from an index
# alone (Waiting looked up every thread of the Inbox for it), and the index Owed had of its own goes: one index less
# to keep as mail is stored.
_LAST_WRITER_V10 = """
DROP INDEX IF EXISTS threads_by_last_writer;
DROP INDEX IF EXISTS threads_by_lane;
DROP INDEX IF EXISTS threads_by_screen;
CREATE INDEX threads_by_lane ON threads (lane, screen, last_message_at DESC, id, last_by);
CREATE INDEX threads_by_screen ON threads (screen, last_message_at DESC, id, last_by);
"""

MIGRATIONS: list[str] = [
    _SCHEMA_V1,
    _UNSETTLED_V2,
    _INDEX_BY_ROWID_V3,
    _UNREADABLE_V4,
    _ACCOUNT_V5,
    _UNINDEXED_V6,
    _OUTLINE_V7,
    _ATTENTION_V8,
    _RULES_V9,
    _LAST_WRITER_V10,
]
"""``MIGRATIONS[n]`` takes a store from version ``n`` to ``n + 1``."""

SCHEMA_VERSION = len(MIGRATIONS)
