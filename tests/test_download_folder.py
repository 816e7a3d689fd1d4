"""The download folder: links on the way are followed once and the real place is named; a folder that leads
somewhere another user chose is refused, and nothing is written there."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pigeon.core import attachments
from pigeon.core.attachments import real_folder, save_into

OTHER = 4242


def made_by_another_user(link: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The link ``link`` counts as another user's (whoever runs the tests, root or not)."""
    inode = link.lstat().st_ino
    monkeypatch.setattr(attachments, "_made_by_another", lambda info: info.st_ino == inode)


def owned_by_another_user(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``folder`` belongs to another user: given to one as root, else Pigeon told it runs as another user."""
    if os.getuid() == 0:
        os.chown(folder, OTHER, OTHER)
    else:
        monkeypatch.setattr(attachments, "_uid", lambda: os.getuid() + 1)


def test_a_download_folder_that_is_the_users_own_link_is_followed_and_named_by_its_real_place(tmp_path: Path) -> None:
    real = tmp_path / "disk" / "downloads"
    real.mkdir(parents=True)
    link = tmp_path / "downloads"
    link.symlink_to(real)
    path = save_into(link, "passwd", b"first", overwrite=False)
    assert path == real.resolve() / "passwd"
    assert path.read_bytes() == b"first"
    with pytest.raises(FileExistsError) as asked:
        save_into(link, "passwd", b"second", overwrite=False)
    assert asked.value.filename == str(real.resolve() / "passwd")  # (what "Replace passwd in ...?" names)
    assert save_into(link, "passwd", b"second", overwrite=True).read_bytes() == b"second"


def test_a_link_another_user_made_on_the_way_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    victim = tmp_path / "home" / ".ssh"
    victim.mkdir(parents=True)
    planted = tmp_path / "shared-downloads"
    planted.symlink_to(victim)
    made_by_another_user(planted, monkeypatch)
    with pytest.raises(PermissionError, match="shared-downloads, a link another user made"):
        save_into(planted / "pigeon", "authorized_keys", b"ssh-ed25519 evil", overwrite=False)
    with pytest.raises(PermissionError, match="a link another user made"):
        save_into(planted, "authorized_keys", b"ssh-ed25519 evil", overwrite=False)
    assert list(victim.iterdir()) == []


def test_a_link_another_user_made_behind_the_users_own_link_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    victim = tmp_path / "home" / "bin"
    victim.mkdir(parents=True)
    planted = tmp_path / "tmp-a"
    planted.symlink_to(victim)
    own = tmp_path / "downloads"
    own.symlink_to(planted)  # the user's own link, to a place where another user planted one
    made_by_another_user(planted, monkeypatch)
    with pytest.raises(PermissionError, match="a link another user made"):
        save_into(own, "ls", b"evil", overwrite=False)
    assert list(victim.iterdir()) == []


def test_a_real_folder_another_user_owns_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    owned_by_another_user(theirs, monkeypatch)
    with pytest.raises(PermissionError, match="belongs to another user"):
        save_into(theirs, "report.pdf", b"%PDF", overwrite=False)
    assert list(theirs.iterdir()) == []


def test_a_loop_of_links_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(PermissionError, match="too many links"):
        real_folder(tmp_path / "a" / "pigeon")


def test_links_are_judged_by_who_made_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    link = tmp_path / "link"
    link.symlink_to(tmp_path)
    assert not attachments._made_by_another(link.lstat())  # the user's own
    if os.getuid() == 0:  # (root can give a link away; anyone else is told Pigeon runs as another user)
        os.lchown(link, OTHER, OTHER)
    else:
        monkeypatch.setattr(attachments, "_uid", lambda: os.getuid() + 1)
    assert attachments._made_by_another(link.lstat())


def test_a_file_where_the_folder_should_be_is_an_error_not_a_question(tmp_path: Path) -> None:
    (tmp_path / "downloads").write_text("a file")
    with pytest.raises(NotADirectoryError, match="is a file, not a folder"):
        save_into(tmp_path / "downloads", "x.pdf", b"%PDF", overwrite=True)
