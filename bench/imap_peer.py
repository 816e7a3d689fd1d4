"""The IMAP peer for the slow-network first sync: mbsync (isync) pulling a Maildir from Dovecot over a slowed link.

    uv run python bench/imap_peer.py bench/.data/10000/maildir --rtts 0,20,80 --runs 3

``MAILDIR_ROOT`` is the folder holding ``INBOX/`` (a Maildir, as ``bench/maildir.py`` writes it). A Dovecot of our
own (``dovecot -F`` with a config file in a temporary folder, a free port on 127.0.0.1, one user ``bench`` with
password ``bench``, plain-text login without TLS, its log in that folder) serves it for the whole run; one
unmeasured pull first builds Dovecot's index. Then, for each round trip, ``bench/latency_proxy.py`` runs in front of
Dovecot's port and ``mbsync`` pulls INBOX into a fresh Maildir, with ``FSync yes`` and ``FSync no`` in turn,
``--runs`` times each. Dovecot, the proxy and mbsync each run in a process of their own. After each pull
(untimed) the system's dirty pages are flushed; the pulled Maildirs are deleted only at the end, and the pulls need
about 1.2x the Maildir's size each in the temporary folder meanwhile.

mbsync sends one ``UID FETCH n (BODY.PEEK[])`` per message, all pipelined (its default PipelineDepth is unlimited),
so the round trip costs a handful of round trips per pull, not one per message; the rest is creating files. On a
file system where that is slow just after many deletions (ext4 without a journal skips inodes deleted in the last
minutes), let a minute or five pass after deleting a big Maildir before measuring.

Prints one JSON object: {"mbsync_version", "dovecot_version", "results": [{"rtt_ms", "fsync", "seconds",
"messages"}, ...]}, where seconds are the wall times of the pulls (the start of mbsync to its end) and messages the
count in the last pull's Maildir.

Needs the Debian packages ``dovecot-imapd`` and ``isync`` (``apt-get install dovecot-imapd isync``; stop the system
Dovecot the package may start, nothing here uses it).
"""

from __future__ import annotations

import argparse
import grp
import json
import os
import pwd
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script: the bench package beside it

from bench.http_clients import proxy  # noqa: E402
from bench.loopback import free_port  # noqa: E402

USER = "bench"
PASSWORD = "bench"  # noqa: S105 (a throwaway server on 127.0.0.1, for the bench only)
START_TIMEOUT_S = 15.0
PULL_TIMEOUT_S = 1800.0


def _binary(name: str) -> str:
    """``name`` on PATH, or in /usr/sbin (Dovecot's place on Debian, not on a user's PATH): its path."""
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/bin")
    if found is None:
        raise RuntimeError(f"{name} not found: apt-get install dovecot-imapd isync")
    return found


def _tail(path: Path, lines: int = 20) -> str:
    """The last ``lines`` lines of a log file, for an error message ('' when there is none)."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def _version(command: list[str]) -> str:
    """The first line a ``--version`` prints."""
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    return (done.stdout or done.stderr).strip().splitlines()[0]


@cache
def mbsync_version() -> str:
    """``isync 1.4.4`` and the like."""
    return _version([_binary("mbsync"), "--version"])


def dovecot_version() -> str:
    """``2.3.19.1 (9b53102964)`` and the like."""
    return _version([_binary("dovecot"), "--version"])


def _mirror(maildir_root: Path, dest: Path, uid: int, gid: int) -> int:
    """Hard-link every message of ``maildir_root/INBOX`` into a new Maildir at ``dest/INBOX``, its folders owned by
    ``uid``:``gid`` (the messages keep their owner: a link shares the file): the number of messages.

    Why a mirror: Dovecot never opens mail as root, and ``mailbox.Maildir`` makes its folders 0700, so the mail user
    could not list the original; the links cost no copy, and whatever Dovecot renames stays in the mirror. A copy
    stands in for a link across file systems."""
    count = 0
    for folder in (dest, dest / "INBOX"):
        folder.mkdir()
        os.chown(folder, uid, gid)
    for sub in ("cur", "new", "tmp"):
        target = dest / "INBOX" / sub
        target.mkdir()
        os.chown(target, uid, gid)
        if sub == "tmp":
            continue  # half-written messages are no mail
        with os.scandir(maildir_root / "INBOX" / sub) as entries:
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                try:
                    os.link(entry.path, target / entry.name)
                except OSError:
                    shutil.copyfile(entry.path, target / entry.name)
                    os.chown(target / entry.name, uid, gid)
                count += 1
    return count


def _dovecot_conf(workdir: Path, mail: Path, port: int, mail_uid: int, mail_gid: int) -> str:
    """The whole config: nothing from /etc/dovecot, so the system's settings play no part."""
    if os.geteuid() == 0:
        # Dovecot's own users (made by the package) for its helpers; mail as a plain user (root is refused).
        users = "default_internal_user = dovecot\ndefault_login_user = dovenull\n"
        chroots = ""
    else:
        # As a plain user, everything runs as that user, and nothing can chroot.
        name, group = pwd.getpwuid(os.geteuid()).pw_name, grp.getgrgid(os.getegid()).gr_name
        users = f"default_internal_user = {name}\ndefault_internal_group = {group}\ndefault_login_user = {name}\n"
        chroots = "service anvil {\n  chroot =\n}\n"
    return f"""\
base_dir = {workdir}/run
state_dir = {workdir}/state
log_path = {workdir}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
{users}first_valid_uid = 1
first_valid_gid = 1
passdb {{
  driver = passwd-file
  args = scheme=PLAIN {workdir}/passwd
}}
userdb {{
  driver = static
  args = uid={mail_uid} gid={mail_gid} home={mail}
}}
mail_location = maildir:{mail}/Maildir:LAYOUT=fs:INBOX={mail}/Maildir/INBOX:INDEX={mail}/index:CONTROL={mail}/control
{chroots}service imap-login {{
  {"chroot =" if chroots else ""}
  inet_listener imap {{
    address = 127.0.0.1
    port = {port}
  }}
  inet_listener imaps {{
    port = 0
  }}
}}
"""


def _greets(port: int) -> bool:
    """Whether an IMAP server on ``port`` answers a connection with its ``* OK`` greeting."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as conn:
            return conn.recv(256).startswith(b"* OK")
    except OSError:
        return False


@contextmanager
def dovecot(maildir_root: Path, workdir: Path) -> Iterator[int]:
    """A Dovecot of our own serving ``maildir_root/INBOX`` on a free port of 127.0.0.1 (user ``bench``, password
    ``bench``, plain-text login, no TLS): the port, once it greets; it is stopped after.

    It serves a hard-linked mirror of the Maildir in ``workdir`` (``_mirror`` says why), and keeps its index and
    control files (dovecot-uidlist) in ``workdir`` too, never in the Maildir: each ``dovecot()`` starts with no
    index, so runs never share a warm one, and within one the first pull builds it as a server would have long
    before. Its log is ``workdir/dovecot.log`` (and ``dovecot.stderr`` for what comes before the log is open).
    When root, mail is read as ``nobody`` (Dovecot refuses root for mail) and ``workdir`` is made 0755 so that
    user and Dovecot's own users reach their files."""
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody")
        mail_uid, mail_gid = nobody.pw_uid, nobody.pw_gid
        workdir.chmod(0o755)
    else:
        mail_uid, mail_gid = os.geteuid(), os.getegid()
    mail = workdir / "mail"
    mail.mkdir()
    os.chown(mail, mail_uid, mail_gid)
    _mirror(maildir_root, mail / "Maildir", mail_uid, mail_gid)
    for name in ("index", "control"):
        (mail / name).mkdir()
        os.chown(mail / name, mail_uid, mail_gid)
    passwd = workdir / "passwd"
    passwd.write_text(f"{USER}:{{PLAIN}}{PASSWORD}::::::\n")
    passwd.chmod(0o644)  # a bench password, read by Dovecot's auth process (as its own user)
    port = free_port()
    config = workdir / "dovecot.conf"
    config.write_text(_dovecot_conf(workdir, mail, port, mail_uid, mail_gid))
    log, stderr = workdir / "dovecot.log", workdir / "dovecot.stderr"
    with stderr.open("wb") as err:
        child = subprocess.Popen(
            [_binary("dovecot"), "-F", "-c", str(config)], stdin=subprocess.DEVNULL, stdout=err, stderr=err
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _greets(port):
            if child.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"dovecot did not start:\n{_tail(stderr)}\n{_tail(log)}")
            time.sleep(0.05)
        yield port
    finally:
        child.terminate()  # the master stops its processes, then itself
        try:
            child.wait(15)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def _mbsync_keywords(version: str) -> tuple[str, str, str]:
    """The names this mbsync knows for the TLS setting and the two sides: 1.5 says TLSType (SSLType before),
    1.4 says Far/Near (Master/Slave before)."""
    found = re.search(r"(\d+)\.(\d+)", version)
    major_minor = (int(found.group(1)), int(found.group(2))) if found else (1, 4)
    tls = "TLSType" if major_minor >= (1, 5) else "SSLType"
    far, near = ("Far", "Near") if major_minor >= (1, 4) else ("Master", "Slave")
    return tls, far, near


def _count(maildir: Path) -> int:
    """Messages in a Maildir: the files in cur/ and new/."""
    return sum(1 for sub in ("cur", "new") if (maildir / sub).is_dir() for _ in (maildir / sub).iterdir())


def mbsync_pull(port: int, dest: Path, *, fsync: bool) -> tuple[float, int]:
    """Pull INBOX from the IMAP server on 127.0.0.1:``port`` into a new Maildir at ``dest`` with mbsync, as a first
    sync: (wall seconds from mbsync's start to its end, messages now in ``dest/INBOX``).

    PipelineDepth is left at mbsync's default (unlimited: commands in flight as it likes). ``SyncState *`` keeps
    mbsync's state in ``dest``, so a pull never sees another's. ``fsync`` is mbsync's ``FSync``: whether each
    message and state write is flushed to disk. Raises RuntimeError, with the end of mbsync's stderr, on failure."""
    tls, far, near = _mbsync_keywords(mbsync_version())
    dest.mkdir(parents=True)
    rc = dest / "mbsyncrc"
    rc.write_text(f"""\
FSync {"yes" if fsync else "no"}

IMAPAccount bench
Host 127.0.0.1
Port {port}
User {USER}
Pass {PASSWORD}
{tls} None

IMAPStore server
Account bench

MaildirStore local
Path {dest}/
Inbox {dest}/INBOX
SubFolders Verbatim

Channel pull
{far} :server:
{near} :local:
Patterns INBOX
Sync Pull
Create {near}
SyncState *
""")
    started = time.perf_counter()
    done = subprocess.run(
        [_binary("mbsync"), "-q", "-c", str(rc), "pull"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=PULL_TIMEOUT_S,
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        tail = "\n".join(done.stderr.splitlines()[-20:])
        raise RuntimeError(f"mbsync failed (exit {done.returncode}):\n{tail}")
    return seconds, _count(dest / "INBOX")


def bench(maildir_root: Path, rtts: list[float], runs: int) -> dict[str, Any]:
    """Every pull of the run (see the module's docstring): the JSON object to print."""
    results: dict[tuple[float, bool], dict[str, Any]] = {}
    with (
        tempfile.TemporaryDirectory(prefix="imap-peer-dovecot-") as served,
        tempfile.TemporaryDirectory(prefix="imap-peer-pulls-") as pulled,
        dovecot(maildir_root, Path(served)) as port,
    ):
        pulls = 0

        def pull(at: int, fsync: bool) -> tuple[float, int]:
            """One timed pull into a fresh Maildir, then (untimed) everything flushed to disk, so that no pull
            pays for the last one's writeback. The Maildirs stay until the end: on an ext4 without a journal (as
            here) creating files just after deleting many is slow (new inodes skip the recently deleted)."""
            nonlocal pulls
            pulls += 1
            result = mbsync_pull(at, Path(pulled) / f"pull-{pulls}", fsync=fsync)
            os.sync()
            return result

        pull(port, False)  # warm-up, unmeasured: Dovecot builds its index (and the page cache fills)
        for rtt in rtts:
            with proxy(port, rtt) as slowed:
                for _ in range(runs):
                    for fsync in (True, False):  # in turn, so a change in the machine's load touches both
                        seconds, messages = pull(slowed, fsync)
                        row = results.setdefault(
                            (rtt, fsync),
                            {"rtt_ms": int(rtt) if rtt.is_integer() else rtt, "fsync": fsync, "seconds": []},
                        )
                        row["seconds"].append(round(seconds, 3))
                        row["messages"] = messages
    return {
        "mbsync_version": mbsync_version(),
        "dovecot_version": dovecot_version(),
        "results": list(results.values()),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("maildir_root", type=Path, help="the folder holding INBOX/ (a Maildir)")
    parser.add_argument("--rtts", default="0,20,80", help="round trips to add, in milliseconds, comma-separated")
    parser.add_argument("--runs", type=int, default=3, help="pulls per round trip and fsync setting")
    args = parser.parse_args(argv)
    root: Path = args.maildir_root.resolve()
    if not (root / "INBOX" / "cur").is_dir():
        parser.error(f"{root}/INBOX is not a Maildir")
    rtts = [float(rtt) for rtt in args.rtts.split(",")]
    print(json.dumps(bench(root, rtts, args.runs)))


if __name__ == "__main__":
    main()
