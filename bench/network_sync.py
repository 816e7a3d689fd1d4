"""A first sync over a link with a round trip, side by side with mbsync pulling the same mail from Dovecot.

    uv run python bench/network_sync.py bench/.data/10000 --rtts 0,20,80 --runs 3 [--write]

For each round trip, ``bench/latency_proxy.py`` (stdlib, a child process) stands in front of ``pigeon serve`` on
the bench folder's database, and in front of a Dovecot serving the folder's Maildir (``bench/imap_peer.py``). Each
run, in turn:

- ``pigeon sync -v --json`` on a fresh data folder: its wall time, and the most requests it had in flight;
- the app on a fresh account, on a pseudo-terminal (``bench/ptyharness.py``): start to its first row; then, once
  the thread list is whole and while the sync still fetches, ``G`` and Enter together: the oldest thread (the sync
  fetches it last) to the second line of its first message's text;
- mbsync pulling the Maildir into a fresh one, with fsync and without.

The first row and the open are also asked of NeoMutt over IMAP in the issue's figures, not here.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script: the bench package beside it

from bench.http_clients import proxy  # noqa: E402
from bench.loopback import service  # noqa: E402
from bench.ptyharness import PtyProgram, Silent, showing  # noqa: E402
from bench.report import machine, write_block  # noqa: E402

SYNC_WITHIN = 600.0  # seconds a sync may take before the bench gives up on it


@dataclass
class Rtt:
    rtt_ms: float
    sync_s: list[float] = field(default_factory=list)
    most_in_flight: list[int] = field(default_factory=list)
    first_row_s: list[float] = field(default_factory=list)
    open_s: list[float] = field(default_factory=list)
    opened_during_sync: list[bool] = field(default_factory=list)
    mbsync_fsync_s: list[float] = field(default_factory=list)
    mbsync_s: list[float] = field(default_factory=list)
    messages: int = 0


def fresh_env(home: Path, base_url: str, token: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "PIGEON_DATA_DIR": str(home / "data"),
        "PIGEON_CONFIG_DIR": str(home / "config"),
        "PIGEON_TOKEN": token,
        "PIGEON_BASE_URL": base_url,
        "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",
    }


def run_sync(base_url: str, token: str) -> tuple[float, int, int]:
    """``pigeon sync -v --json`` on a fresh data folder: seconds, messages, and the most requests in flight."""
    with tempfile.TemporaryDirectory(prefix="pigeon-netsync-") as home:
        began = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "pigeon", "sync", "-v", "--json"],
            env=fresh_env(Path(home), base_url, token),
            capture_output=True,
            text=True,
            timeout=SYNC_WITHIN,
            check=False,
        )
        elapsed = time.perf_counter() - began
    if done.returncode != 0:
        raise RuntimeError(f"pigeon sync failed: {done.stderr[-500:]}")
    most = 0
    for line in done.stderr.splitlines():
        if line.startswith("pigeon: at most "):
            most = int(line.split()[3])
    return elapsed, int(json.loads(done.stdout)["messages"]), most


@dataclass(frozen=True)
class Landmarks:
    """What the screen shows when the first row is in, and when the oldest thread is open."""

    newest_subject: str
    oldest_line: str
    threads: int


def landmarks(store: Path) -> Landmarks:
    """From a store synced before (the bench folder's own): the newest thread's subject, and a line of the oldest
    thread's first message that its row does not show."""
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as conn:
        newest = str(conn.execute("SELECT subject FROM threads ORDER BY last_message_at DESC LIMIT 1").fetchone()[0])
        oldest = conn.execute("SELECT id FROM threads ORDER BY last_message_at, id LIMIT 1").fetchone()[0]
        data = conn.execute("SELECT data FROM messages WHERE thread_id = ? ORDER BY position LIMIT 1", (oldest,))
        message = json.loads(data.fetchone()[0])
        threads = int(conn.execute("SELECT count(*) FROM threads").fetchone()[0])
    while newest.lower().startswith(("re: ", "fwd: ")):
        newest = newest.split(": ", 1)[1]
    text = "\n".join(b.get("content") or "" for b in message.get("content_blocks", []) if not b.get("filename"))
    lines = [line.strip() for line in text.splitlines() if len(line.strip()) > 12]
    return Landmarks(newest[:18], (lines[1] if len(lines) > 1 else lines[0])[:24], threads)


def run_app(base_url: str, token: str, marks: Landmarks) -> tuple[float, float, bool]:
    """The app on a fresh account: start -> first row; then the oldest thread opened during the sync -> its text;
    and whether the sync was still fetching when it was opened."""
    with tempfile.TemporaryDirectory(prefix="pigeon-netapp-") as home:
        app = PtyProgram([sys.executable, "-m", "pigeon"], fresh_env(Path(home), base_url, token))
        try:
            first_row = app.first_shown(showing(marks.newest_subject), since=app.started, within=120)
            listed = showing(f"of {marks.threads}")  # "Syncing n of 10000…": the thread list is whole
            app.wait(listed, since=app.started, within=120, still=0.02)
            during = any("Syncing" in line for line in app.lines())
            sent = time.perf_counter()
            os.write(app.master, b"G\r")

            def opened(lines: list[str]) -> bool:
                return any(marks.oldest_line in line for line in lines) and not any("Loading" in x for x in lines)

            shown = app.first_shown(opened, since=sent, within=60)
            return first_row, shown, during
        finally:
            app.close()


@contextmanager
def peer(maildir: Path, rtt_ms: float) -> Iterator[int | None]:
    """Dovecot on the Maildir behind the proxy: the port mbsync asks (None when Dovecot or mbsync is missing)."""
    try:
        from bench.imap_peer import dovecot
    except ImportError:
        yield None
        return
    with (
        tempfile.TemporaryDirectory(prefix="pigeon-dovecot-") as work,
        dovecot(maildir, Path(work)) as port,
        proxy(port, rtt_ms) as slowed,
    ):
        yield slowed


def run_mbsync(port: int, pulls: Path, *, fsync: bool) -> float:
    """mbsync into a new Maildir under ``pulls``, kept until the bench ends (ext4 without a journal creates files
    slowly for minutes after many deletions); the disk's dirty pages flushed after, untimed."""
    from bench.imap_peer import mbsync_pull

    seconds, _count = mbsync_pull(port, pulls / f"pull-{len(list(pulls.iterdir()))}", fsync=fsync)
    os.sync()
    return seconds


def measure(folder: Path, rtts: list[float], runs: int, *, app_only: bool = False) -> list[Rtt]:
    token = (folder / "token").read_text().strip()
    marks = landmarks(folder / "app" / "store" / "default.sqlite3")
    results: list[Rtt] = []
    pulls = Path(tempfile.mkdtemp(prefix="pigeon-mbsync-"))
    try:
        return measure_in(folder, rtts, runs, pulls, token, marks, results, app_only=app_only)
    finally:
        shutil.rmtree(pulls, ignore_errors=True)


def measure_in(
    folder: Path,
    rtts: list[float],
    runs: int,
    pulls: Path,
    token: str,
    marks: Landmarks,
    results: list[Rtt],
    *,
    app_only: bool,
) -> list[Rtt]:
    maildir = (folder / "maildir").resolve()
    with service(folder / "service.sqlite3") as (base, _pid):
        port = int(base.rsplit(":", 1)[1])
        for rtt in rtts:
            figures = Rtt(rtt)
            with ExitStack() as stack:
                slowed = stack.enter_context(proxy(port, rtt))
                imap = stack.enter_context(peer(maildir, rtt)) if maildir.exists() and not app_only else None
                url = f"http://127.0.0.1:{slowed}"
                run_sync(url, token)  # unmeasured: caches warm on both sides
                if imap is not None:
                    run_mbsync(imap, pulls, fsync=False)
                for _ in range(runs):
                    if not app_only:
                        seconds, figures.messages, most = run_sync(url, token)
                        figures.sync_s.append(seconds)
                        figures.most_in_flight.append(most)
                    try:
                        first_row, opened, during = run_app(url, token, marks)
                    except Silent as exc:
                        print(f"rtt {rtt}: the app did not show what was waited for: {exc}", file=sys.stderr)
                    else:
                        figures.first_row_s.append(first_row)
                        figures.open_s.append(opened)
                        figures.opened_during_sync.append(during)
                    if imap is not None:
                        figures.mbsync_fsync_s.append(run_mbsync(imap, pulls, fsync=True))
                        figures.mbsync_s.append(run_mbsync(imap, pulls, fsync=False))
                    print(json.dumps(figures.__dict__), flush=True)
            results.append(figures)
    return results


def _median(values: list[float], scale: float = 1.0, digits: int = 2) -> str:
    if not values:
        return "n/a"
    low, mid, high = (x * scale for x in (min(values), statistics.median(values), max(values)))
    return f"{mid:.{digits}f} ({low:.{digits}f}-{high:.{digits}f})"


def report(results: list[Rtt], command: str, load: tuple[float, float]) -> str:
    lines = [
        f"`{command}` ({machine()}; load {load[0]:.1f} before, {load[1]:.1f} after): a fresh 10,000-thread account, "
        "medians (min-max) over the runs; mbsync pulls the same messages from Dovecot through the same proxy.",
        "",
        "| round trip | `pigeon sync` | most in flight | mbsync, fsync | mbsync, no fsync | sync vs mbsync (fsync) "
        "| app: first row | app: oldest thread opened during the sync |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        ratio = (
            f"{statistics.median(r.sync_s) / statistics.median(r.mbsync_fsync_s):.2f}x" if r.mbsync_fsync_s else "n/a"
        )
        during = f", {sum(r.opened_during_sync)} of {len(r.opened_during_sync)} during it" if r.open_s else ""
        most = f"{statistics.median(r.most_in_flight):.0f}" if r.most_in_flight else "n/a"
        lines.append(
            f"| {r.rtt_ms:g} ms | {_median(r.sync_s)} s | {most} "
            f"| {_median(r.mbsync_fsync_s)} s | {_median(r.mbsync_s)} s | {ratio} "
            f"| {_median(r.first_row_s, 1000, 0)} ms | {_median(r.open_s, 1000, 0)} ms{during} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="a bench size folder (service.sqlite3, token, app/, maildir/)")
    parser.add_argument("--rtts", default="0,20,80")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--write", action="store_true", help="put the table in docs/performance.md")
    parser.add_argument("--app-only", action="store_true", help="time the app alone (no sync timed, no mbsync)")
    args = parser.parse_args(argv)
    if args.write and args.app_only:
        parser.error("--write needs the whole run, not --app-only")
    before = os.getloadavg()[0]
    results = measure(args.folder, [float(r) for r in args.rtts.split(",")], args.runs, app_only=args.app_only)
    command = f"uv run python bench/network_sync.py {args.folder} --rtts {args.rtts} --runs {args.runs}"
    command += " --app-only" if args.app_only else ""
    text = report(results, command, (before, os.getloadavg()[0]))
    print(text)
    if args.write:
        write_block("network", text)


if __name__ == "__main__":
    main()
