"""A store holding rows that cannot be read (a damaged file, an older Pigeon) still starts, offline too: the rows
are left out, everything else works, and the next sync writes them again."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from pigeon.api import PigeonClient
from pigeon.config import load_config
from pigeon.store.mailstore import MailStore
from pigeon.tui.app import make_app
from pigeon.tui.screens.contacts.book import ContactBook
from pigeon.tui.screens.mail import MainScreen
from pigeon.tui.widgets.reader import Reader
from pigeon.tui.widgets.thread_list import ThreadList
from tests.server.conftest import Service
from tests.test_disk_faults import no_room
from tests.tui.conftest import BASE, SIZE, Notes, frozen_clock, loaded, pigeon_for, settle


def damage(path: Path) -> list[str]:
    """Write rows no model can read into a synced store; returns the thread ids, newest first."""
    with sqlite3.connect(path) as conn:
        ids = [r[0] for r in conn.execute("SELECT id FROM threads ORDER BY last_message_at DESC")]
        conn.execute("UPDATE threads SET data = '{not json' WHERE id = ?", (ids[0],))
        conn.execute(
            'UPDATE threads SET data = \'{"id": 5, "message_count": "many"}\', last_message_at = \'garbage\' '
            "WHERE id = ?",
            (ids[1],),
        )
        conn.execute("UPDATE messages SET data = '[]' WHERE thread_id = ?", (ids[2],))
        conn.execute("UPDATE inboxes SET data = 'null' WHERE rowid = 1")
        conn.execute('UPDATE contacts SET data = \'{"emails": "x"}\' WHERE rowid = 1')
        conn.execute(
            "INSERT OR REPLACE INTO triage (thread_id, read_upto, snoozed_until) VALUES (?, 'never', 'garbage')",
            (ids[3],),
        )
        conn.execute("INSERT INTO undo (description, changes, created_at) VALUES ('x', '{bad', 'never')")
    return ids


async def test_a_store_with_rows_that_cannot_be_read_still_starts_offline(service: Service, tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    app = pigeon_for(service, store=MailStore(path))
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await settle(pilot, app, lambda: getattr(app.screen, "synced", False))
    ids = damage(path)

    dead = PigeonClient("http://127.0.0.1:9", service.alice.token, max_retries=0, timeout=2)
    app = make_app(load_config(base_url=BASE), client=dead, clock=frozen_clock, store=MailStore(path))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, MainScreen)
        await settle(pilot, app, lambda: screen.offline)
        threads = screen.query_one(ThreadList)
        listed = [threads.source.row(i).id for i in range(len(threads.source))]
        assert set(ids[:3]) <= set(listed)  # the damaged rows are still listed (from their columns)
        for thread_id in ids[:3]:  # and open without a crash
            threads.cursor = listed.index(thread_id)
            await pilot.press("enter")
            await settle(pilot, app)
            assert app.screen is screen
            assert screen.query_one(Reader).text  # something is shown: the thread, or why it cannot be
            await pilot.press("escape")
        await pilot.press("u")  # the damaged undo step changes nothing and is kept
        await settle(pilot, app)
        await pilot.press("b")
        await settle(pilot, app, lambda: isinstance(app.screen, ContactBook))
        assert app.is_running
    await dead.aclose()

    app = pigeon_for(service, store=MailStore(path))  # the service back: a sync writes the rows again
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await settle(pilot, app, lambda: getattr(app.screen, "synced", False))
        assert app.core.store.thread(ids[0]) is not None
        assert len(app.core.store.inboxes()) == len(service.db.list_inboxes(service.alice.id))


async def test_u_on_a_damaged_undo_step_says_so_cleaned_and_keeps_it(service: Service, tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    notes = Notes()
    app = pigeon_for(service, store=MailStore(path))
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        await loaded(pilot, app)
        await settle(pilot, app, lambda: getattr(app.screen, "synced", False))
        thread_id = app.core.store.list_threads("inbox", limit=1)[0].id
        app.core.store.done([thread_id])
        with sqlite3.connect(path) as conn:
            conn.execute(
                "UPDATE undo SET description = ?, changes = '{bad' WHERE seq = (SELECT max(seq) FROM undo)",
                ("\x1b]2;owned\x07Done: 1 thread",),
            )
        steps = len(app.core.store.undo_steps())
        await pilot.press("u")
        await settle(pilot, app, lambda: "Cannot undo" in notes.text)
        assert "Done: 1 thread" in notes.text
        assert "\x1b" not in notes.text
        assert "Undone" not in notes.text
        assert len(app.core.store.undo_steps()) == steps
        assert thread_id in [t.id for t in app.core.store.list_threads("done")]


async def test_a_full_disk_during_a_sync_is_one_note_naming_the_folder(service: Service, tmp_path: Path) -> None:
    import random

    from pigeon_service.demo_traffic import new_message

    path = tmp_path / "store" / "store.sqlite3"
    store = MailStore(path)
    notes = Notes()
    app = pigeon_for(service, store=store)
    async with app.run_test(size=SIZE, notifications=True, message_hook=notes) as pilot:
        await loaded(pilot, app)
        await settle(pilot, app, lambda: getattr(app.screen, "synced", False))
        threads = len(store.rows("SELECT id FROM threads"))
        no_room(store)
        rng = random.Random(7)
        for _ in range(40):
            new_message(service.db, None, service.alice.id, rng)
        await pilot.press("ctrl+r")
        await settle(pilot, app, lambda: "disk is full" in notes.text)
        assert f"Cannot write to {path.parent}: the disk is full" in notes.text
        assert "unexpected" not in notes.text
        assert app.is_running
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM threads").fetchone()[0] == threads
