"""Files other local users must not read: the service's database (every account's mail, webhook signing secrets),
the client's store, drafts and the folder attachments are opened from. Under the usual umask (022) each is 0600
in a 0700 folder whatever the umask would give."""

from __future__ import annotations

import io
import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from pigeon import locations
from pigeon.cli import main
from pigeon.core.attachments import place_for_opening
from pigeon.files import private_file
from pigeon.models import ContentBlock
from pigeon.store.contact_drafts import ContactDrafts
from pigeon.store.mail_drafts import MailDrafts
from pigeon.store.mailstore import MailStore, store_path
from pigeon_service.run import open_database


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_the_service_database_its_wal_and_shm_are_0600_in_a_0700_folder(tmp_path: Path) -> None:
    path = tmp_path / "made" / "data" / "service.sqlite3"
    db = open_database(path, demo_data=True, threads=3)
    try:
        files = [path, Path(f"{path}-wal"), Path(f"{path}-shm")]
        assert all(f.exists() for f in files)  # (written, still open: SQLite keeps the WAL and its index)
        assert {f.name: mode(f) for f in files} == {f.name: 0o600 for f in files}
        assert (mode(tmp_path / "made"), mode(path.parent)) == (0o700, 0o700)
    finally:
        db.close()
    assert mode(path) == 0o600


def test_pigeon_serve_token_create_leaves_the_database_private(isolated_environment: Path) -> None:
    assert main(["serve", "token", "create", "--account", "alice"], out=io.StringIO()) == 0
    data = locations.data_dir()
    assert mode(data) == 0o700
    written = sorted(data.iterdir())
    assert written
    assert {p.name: mode(p) for p in written} == {p.name: 0o600 for p in written}


def test_a_database_an_older_version_left_open_to_others_is_tightened(tmp_path: Path) -> None:
    path = tmp_path / "service.sqlite3"
    older = sqlite3.connect(path)
    older.execute("PRAGMA journal_mode = WAL")
    older.execute("CREATE TABLE t (x)")
    older.execute("INSERT INTO t VALUES (1)")
    older.commit()
    side = [Path(f"{path}-wal"), Path(f"{path}-shm")]
    assert mode(path) == 0o644
    assert all(mode(f) == 0o644 for f in side)
    db = open_database(path)
    try:
        assert mode(path) == 0o600
        assert all(mode(f) == 0o600 for f in side)
    finally:
        db.close()
        older.close()


def test_a_link_beside_the_database_is_not_followed_to_change_its_target(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("not Pigeon's")
    elsewhere.chmod(0o644)
    path = tmp_path / "data" / "service.sqlite3"
    path.parent.mkdir()
    Path(f"{path}-journal").symlink_to(elsewhere)
    open_database(path).close()
    assert mode(elsewhere) == 0o644


def test_the_client_store_is_0600_in_0700_folders(isolated_environment: Path) -> None:
    store = MailStore.for_profile("work")
    try:
        path = store_path("work")
        files = list(path.parent.iterdir())
        assert {path, Path(f"{path}-wal"), Path(f"{path}-shm")} <= set(files)  # (its schema was written)
        assert {f.name: mode(f) for f in files} == {f.name: 0o600 for f in files}
        assert (mode(locations.data_dir()), mode(path.parent)) == (0o700, 0o700)
    finally:
        store.close()


def test_drafts_are_0600_in_0700_folders_the_drafts_folder_too(isolated_environment: Path) -> None:
    draft = MailDrafts().write("To: a@example.com\n\nhello\n", kind="reply", thread_id="t1")
    ContactDrafts().save("c1", {"first_name": "Ada"})
    drafts = locations.data_dir() / "drafts"
    assert [mode(p) for p in (locations.data_dir(), drafts, drafts / "mail", drafts / "contacts")] == [0o700] * 4
    made = [*(drafts / "mail").iterdir(), *(drafts / "contacts").iterdir()]
    assert draft.path in made
    assert {p.name: mode(p) for p in made} == {p.name: 0o600 for p in made}


def test_the_folder_attachments_are_opened_from_is_0700_with_the_data_folder(isolated_environment: Path) -> None:
    block = ContentBlock(filename="report.pdf", mime_type="application/pdf", content="%PDF-1.4")
    placed = place_for_opening(locations.opened_dir(), block)
    assert (mode(locations.data_dir()), mode(locations.opened_dir()), mode(placed)) == (0o700, 0o700, 0o600)


def test_a_file_the_user_made_read_only_stays_read_only_for_the_user(tmp_path: Path) -> None:
    path = tmp_path / "service.sqlite3"
    path.write_bytes(b"")
    path.chmod(0o444)
    private_file(path)
    assert mode(path) == 0o400
