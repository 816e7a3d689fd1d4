"""The user's own disk failing under the store: a full disk during a sync and a read-only data folder end in one
line naming the folder (never a traceback, never "cannot rollback" in place of the cause), and the store is
unharmed: it opens afterwards and holds what it held."""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import pigeon.sqlite
from pigeon.api import PigeonClient
from pigeon.sqlite import StoreUnwritable
from pigeon.store.mailstore import MailStore, store_path
from pigeon.store.sync import sync
from pigeon_service.demo_traffic import new_message
from tests.command_line import run
from tests.server.conftest import Service, make_service


def contents(path: Path) -> dict[str, Any]:
    """What the store file holds, read by SQLite directly."""
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return {
            "threads": sorted(r[0] for r in conn.execute("SELECT id FROM threads")),
            "messages": conn.execute("SELECT count(*) FROM messages").fetchone()[0],
            "triage": sorted(tuple(r) for r in conn.execute("SELECT * FROM triage")),
            "undo": sorted(tuple(r) for r in conn.execute("SELECT seq, description FROM undo")),
        }


def more_mail(service: Service) -> None:
    """New messages in alice's threads: a sync writes them (and fetches their threads again)."""
    rng = random.Random(7)
    for _ in range(40):
        new_message(service.db, None, service.alice.id, rng)


def no_room(store: MailStore) -> None:
    """The store's writing connection's disk is full: the file cannot grow, and has no free page inside."""
    with contextlib.closing(sqlite3.connect(store.path)) as other:
        other.execute("VACUUM")
    with store.transaction() as conn:
        conn.execute(f"PRAGMA max_page_count = {conn.execute('PRAGMA page_count').fetchone()[0]}")


# --- a full disk ------------------------------------------------------------------------------------------------


async def test_a_full_disk_during_a_sync_says_so_naming_the_folder_and_keeps_the_store(tmp_path: Path) -> None:
    service = make_service()
    path = tmp_path / "store" / "store.sqlite3"
    async with PigeonClient(
        "http://s.test", service.alice.token, http_client=httpx.AsyncClient(transport=httpx.ASGITransport(service.app))
    ) as client:
        store = MailStore(path)
        await sync(client, store)
        store.done([store.list_threads("inbox", limit=1)[0].id])
        store.close()
        before = contents(path)

        store = MailStore(path)
        no_room(store)
        more_mail(service)
        with pytest.raises(StoreUnwritable) as raised:
            await sync(client, store)
        said = str(raised.value)
        assert "disk is full" in said
        assert str(path.parent) in said
        assert "rollback" not in said
        assert "\n" not in said
        store.close()

        assert contents(path)["triage"] == before["triage"]  # unharmed: what was kept is there
        assert set(before["threads"]) <= set(contents(path)["threads"])
        again = MailStore(path)  # and with room again, the next sync completes
        await sync(client, again)
        again.close()
        assert contents(path)["messages"] == before["messages"] + 40
    service.db.close()


def test_a_full_disk_under_pigeon_sync_is_one_line_naming_the_folder(
    running: Service, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("sync")[0] == 0
    path = store_path("default")
    before = contents(path)
    connect = pigeon.sqlite.connect

    def full(where: str, *, create: bool = True) -> sqlite3.Connection:  # the disk as a sync finds it: no page more
        conn = connect(where, create=create)
        if create:  # (the writing connection: those that only read never grow the file)
            conn.execute("VACUUM")
            conn.execute(f"PRAGMA max_page_count = {conn.execute('PRAGMA page_count').fetchone()[0]}")
        return conn

    monkeypatch.setattr(pigeon.sqlite, "connect", full)
    more_mail(running)
    capsys.readouterr()
    assert run("sync") == (2, "")
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"Cannot write to {path.parent}: the disk is full" in err
    assert "rollback" not in err
    assert "Traceback" not in err
    monkeypatch.setattr(pigeon.sqlite, "connect", connect)
    assert contents(path)["triage"] == before["triage"]
    assert run("sync")[0] == 0


# --- a read-only data folder ------------------------------------------------------------------------------------


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """``folder`` and its files read-only for this process: by their modes, or, for root (whom modes do not stop),
    by the immutable attribute, which stops every writer."""
    paths = [folder, *folder.iterdir()]
    if os.geteuid() != 0:
        modes = {p: p.stat().st_mode for p in paths}
        for p in paths:
            p.chmod(modes[p] & ~0o222)
        try:
            yield
        finally:
            for p in paths:
                p.chmod(modes[p])
        return
    # (not the -shm: SQLite maps it into memory, and an immutable mapped file kills the process with SIGBUS when a
    # connection this process holds writes to it; a chmod leaves the holder's own mapping writable)
    paths = [p for p in paths if not p.name.endswith("-shm")]
    chattr = shutil.which("chattr") or "chattr"
    made = subprocess.run([chattr, "+i", *map(str, paths)], capture_output=True, text=True, check=False)  # noqa: S603
    if made.returncode != 0:  # (without CAP_LINUX_IMMUTABLE, or on a file system without the attribute)
        subprocess.run([chattr, "-i", *map(str, paths)], capture_output=True, check=False)  # noqa: S603
        pytest.skip(f"running as root, and chattr +i is refused here: {made.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run([chattr, "-i", *map(str, paths)], check=True)  # noqa: S603


@pytest.mark.parametrize("app_open", [False, True], ids=["alone", "while-the-app-has-it-open"])
def test_a_read_only_data_folder_makes_sync_done_and_undo_one_line_each_and_keeps_the_store(
    running: Service, app_open: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("sync")[0] == 0
    threads = json.loads(run("search", "--json", "--view", "inbox")[1])["threads"]
    first, second = threads[0]["id"], threads[1]["id"]
    assert run("done", first)[0] == 0
    path = store_path("default")
    before = contents(path)
    more_mail(running)
    app = MailStore(path) if app_open else None  # (the app holds the file open: its -wal and -shm are there)
    if app is not None:
        app.rows("SELECT count(*) FROM threads")
    capsys.readouterr()
    try:
        with read_only(path.parent):
            for argv in (["sync"], ["done", second], ["undo"]):
                code, text = run(*argv)
                err = capsys.readouterr().err
                assert (code, text) == (2, ""), argv
                assert err.count("\n") == 1, err
                assert f"Cannot write to {path.parent}: the folder or the file in it is read-only" in err
                assert "Traceback" not in err
    finally:
        if app is not None:
            app.close()
    assert contents(path) == before  # the store is as it was
    assert run("undo") == (0, "Undone: Done: 1 thread\n")  # it opens, and its undo step was kept
    assert run("sync")[0] == 0


def test_a_store_closed_cleanly_in_a_read_only_folder_says_the_folder_is_read_only(tmp_path: Path) -> None:
    path = tmp_path / "store" / "store.sqlite3"
    MailStore(path).close()
    assert [p.name for p in path.parent.iterdir()] == ["store.sqlite3"]  # (no -wal: SQLite cannot even open it)
    with read_only(path.parent), pytest.raises(StoreUnwritable) as raised:
        MailStore(path)
    assert str(raised.value) == (
        f"Cannot write to {path.parent}: the folder or the file in it is read-only. Nothing was written; what the "
        "folder holds is unharmed."
    )


def test_an_error_after_sqlite_rolled_back_by_itself_is_the_one_raised(tmp_path: Path) -> None:
    """On a full disk SQLite may roll the transaction back itself: the error is still the cause, not "cannot
    rollback - no transaction is active"."""
    db = pigeon.sqlite.Database(tmp_path / "db.sqlite3", ["CREATE TABLE t (x INTEGER);"])

    def fails_after_sqlite_rolled_back() -> None:
        with db.transaction() as conn:
            conn.execute("INSERT INTO t VALUES (1)")
            conn.execute("ROLLBACK")  # (as SQLite does on some disk faults)
            raise ZeroDivisionError

    with pytest.raises(ZeroDivisionError):
        fails_after_sqlite_rolled_back()
    with db.transaction() as conn:  # the connection is usable after
        conn.execute("INSERT INTO t VALUES (2)")
    assert [r[0] for r in db.rows("SELECT x FROM t")] == [2]
    db.close()
