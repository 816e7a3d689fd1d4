"""Measure Pigeon as a person sees it, at several mailbox sizes, in tmux, and write its block of
docs/performance.md (``bench/report.py``).

    uv run python bench/run.py --sizes 1000,10000,100000

For each size: demo mail from the reference service's generator (threads of 1-10 messages) fills a Pigeon store
(through sync up to 10,000 threads, by a direct fill above). Then ``pigeon`` runs on that store in a detached tmux
session (private socket, 200x50, the service unreachable so nothing else runs), and ``tmux capture-pane`` is
polled: start -> first thread row visible; one ``j`` -> screen changed (median of 20); 100 ``j`` at once -> final
screen; Enter on the newest thread -> its text visible; peak RSS (VmHWM) of the pigeon process. Each figure is
the median of ``--runs`` runs with min-max. Also: a fresh store syncing from a local ``pigeon serve`` (threads/s,
messages/s, requests), and the service alone (p50/p99 of list messages, page_size 100, bounded concurrency).

Keys are sent at a person's pace (random pauses) after the app has settled; docs/performance.md ("How the tmux bench
measures") says why. Nothing here is collected by pytest; tests/test_bench.py checks the pieces on a tiny size.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import operator
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

if TYPE_CHECKING:
    from pigeon.models import Message, Thread

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / ".data"
NOW = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)
SEED = 7
WIDTH, HEIGHT = 200, 50
TARGETS = {"first_row": 0.6, "keypress": 0.010, "open_newest": 0.030, "rss_mib": 100.0}


# --- data --------------------------------------------------------------------------------------------------------


def build_service(size: int, folder: Path) -> tuple[Path, str]:
    """A reference-service database with ``size`` threads of demo mail, and a token; built once per size."""
    from pigeon_service.db import Database
    from pigeon_service.demo_mail import populate

    folder.mkdir(parents=True, exist_ok=True)
    path, token_file = folder / "service.sqlite3", folder / "token"
    if path.exists() and token_file.exists():
        return path, token_file.read_text().strip()
    for stale in folder.glob("service.sqlite3*"):
        stale.unlink()
    db = Database(path)
    account = db.ensure_account("bench")
    contacts = min(300, max(size // 10, 20))
    populate(db, account, threads=size, contacts=contacts, seed=SEED, now=NOW, hostile=False, conversation=0)
    token = db.create_token(account)
    token_file.write_text(token)
    db.close()
    return path, token


@dataclass
class SyncFigures:
    seconds: float
    threads: int
    messages: int
    requests: int

    @property
    def threads_per_s(self) -> float:
        return self.threads / self.seconds if self.seconds else 0.0

    @property
    def messages_per_s(self) -> float:
        return self.messages / self.seconds if self.seconds else 0.0


def sync_store(service_db: Path, token: str, store_path: Path) -> SyncFigures:
    """Fill a fresh store through sync from a real ``pigeon serve`` on 127.0.0.1, counting requests."""
    from pigeon.api import PigeonClient
    from pigeon.store.mailstore import MailStore
    from pigeon.store.sync import sync
    from pigeon_service.app import ServerSettings, create_app
    from pigeon_service.db import Database
    from pigeon_service.run import start_in_thread

    for stale in store_path.parent.glob(store_path.name + "*"):
        stale.unlink()
    db = Database(service_db)
    service = start_in_thread(create_app(db, ServerSettings(deliver_webhooks=False)), db=db)
    requests = 0

    async def count(request: httpx.Request) -> None:
        nonlocal requests
        requests += 1

    async def go() -> SyncFigures:
        store = MailStore(store_path)
        http = httpx.AsyncClient(event_hooks={"request": [count]}, timeout=60)
        async with PigeonClient(service.base_url, token, http_client=http) as client:
            started = time.perf_counter()
            report = await sync(client, store)
            elapsed = time.perf_counter() - started
        await http.aclose()
        store.close()
        return SyncFigures(elapsed, report.threads, report.messages, requests)

    try:
        return asyncio.run(go())
    finally:
        service.stop()
        db.close()


def direct_fill(service_db: Path, store_path: Path) -> int:
    """Fill a store straight from the service's database (no HTTP): documented for the 100k size."""
    from pigeon.store.mailstore import MailStore
    from pigeon.store.sync import recipients_of, who_of
    from pigeon_service.db import Database

    for stale in store_path.parent.glob(store_path.name + "*"):
        stale.unlink()
    db = Database(service_db)
    account = db.account_ids()[0]
    store = MailStore(store_path)
    store.put_inboxes(db.list_inboxes(account))

    def items() -> Iterator[tuple[Thread, list[Message], str, str]]:
        token = None
        while True:
            threads, token = db.list_threads(account, page_size=500, page_token=token)
            for thread in threads:
                messages: list[Message] = []
                page: str | None = None
                while page != "":  # every page: a long conversation has more than one
                    found, page = db.list_messages(
                        account, thread.id or "", message_ids=None, page_size=100, page_token=page
                    )
                    messages += found
                yield thread, messages, who_of(messages), recipients_of(messages)
            if not token:
                return

    count = store.put_many(items())
    store.begin_screening(datetime.now(UTC))  # (as the end of a first sync does)
    store.close()
    db.close()
    return count


# --- the terminal -----------------------------------------------------------------------------------------------


class Tmux:
    """A detached tmux session on a private socket, read with capture-pane."""

    def __init__(self, name: str, width: int = WIDTH, height: int = HEIGHT) -> None:
        if shutil.which("tmux") is None:
            raise RuntimeError("tmux is not installed (apt-get install tmux)")
        self.socket = f"pigeon-bench-{os.getpid()}-{name}"
        self.name, self.width, self.height = name, width, height

    def _tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], check=True, capture_output=True, text=True).stdout

    def start(self, command: list[str], env: dict[str, str]) -> None:
        """Run ``command`` in the session with exactly ``env`` (``env -i``: nothing of this process's own
        environment reaches it, such as a sandbox's PYTHONDONTWRITEBYTECODE)."""
        exports = [f"{k}={v}" for k, v in env.items()]
        self._tmux(
            "new-session",
            "-d",
            "-s",
            self.name,
            "-x",
            str(self.width),
            "-y",
            str(self.height),
            "env",
            "-i",
            *exports,
            *command,
        )

    def screen(self, *, styled: bool = False) -> str:
        """The screen's text; ``styled`` keeps colours and attributes (a moved cursor is only a colour)."""
        return self._tmux("capture-pane", "-p", *(["-e"] if styled else []), "-t", self.name)

    def keys(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", self.name, *keys)

    def pid(self) -> int:
        return int(self._tmux("list-panes", "-t", self.name, "-F", "#{pane_pid}").split()[0])

    def stop(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], check=False, capture_output=True)

    def wait_for(
        self, check: Callable[[str], bool], timeout: float = 30.0, *, styled: bool = False
    ) -> tuple[float, str]:
        """Seconds until the screen satisfies ``check`` (polled as fast as tmux answers), and that screen."""
        started = time.perf_counter()
        while True:
            shown = self.screen(styled=styled)
            if check(shown):
                return time.perf_counter() - started, shown
            if time.perf_counter() - started > timeout:
                raise TimeoutError(f"the screen did not change as expected in {timeout} s:\n{shown}")


def peak_rss_mib(pid: int) -> float:
    """VmHWM of the process (or, when the pane runs a wrapper, of its largest child)."""
    best = 0.0
    for candidate in [pid, *_children(pid)]:
        try:
            for line in Path(f"/proc/{candidate}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    best = max(best, int(line.split()[1]) / 1024)
        except OSError:
            continue
    return best


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            for child in (task / "children").read_text().split():
                found += [int(child), *_children(int(child))]
    except OSError:
        pass
    return found


_ROW = re.compile(r"\S.* (now|\d+[mh]|Mon|Tue|Wed|Thu|Fri|Sat|Sun|[A-Z][a-z]{2} \d{1,2}|\d{4}) +│")


def has_thread_row(screen: str) -> bool:
    """A thread row is on screen: a line of the list ending in its relative time, before the pane's border."""
    return any(_ROW.search(line) for line in screen.splitlines())


def pigeon_command() -> list[str]:
    script = Path(sys.executable).parent / "pigeon"
    return [str(script)] if script.exists() else [sys.executable, "-m", "pigeon.cli"]


@dataclass
class UIRun:
    first_row: float
    keypress: float
    hundred: float
    open_newest: float
    rss_mib: float


def app_environment(data_dir: Path, config_dir: Path) -> dict[str, str]:
    """Everything the app's process gets: its folders, a service nobody listens on, a token, a terminal."""
    return {
        "PIGEON_DATA_DIR": str(data_dir),
        "PIGEON_CONFIG_DIR": str(config_dir),
        "PIGEON_BASE_URL": "http://127.0.0.1:9",  # nothing listens: the app works from its store
        "PIGEON_TOKEN": "bench",
        "TERM": "xterm-256color",
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", str(Path.home())),
        "LANG": "C.UTF-8",
    }


def warm_up(data_dir: Path) -> float:
    """One unmeasured start, as a person's second start of the day: Python writes its bytecode cache for Pigeon's
    modules (and any dependency installed without one). Returns the seconds to the first row."""
    config_dir = Path(tempfile.mkdtemp(prefix="pigeon-bench-config-"))
    tmux = Tmux(f"warm{time.monotonic_ns()}")
    try:
        started = time.perf_counter()
        tmux.start(pigeon_command(), app_environment(data_dir, config_dir))
        tmux.wait_for(has_thread_row, timeout=60)
        return time.perf_counter() - started
    finally:
        tmux.stop()
        shutil.rmtree(config_dir, ignore_errors=True)


def measure_ui(data_dir: Path, *, presses: int = 20, extra_env: dict[str, str] | None = None) -> UIRun:
    """One run of the app on the store in ``data_dir``, as a person sees it (``extra_env`` to try a setting)."""
    config_dir = Path(tempfile.mkdtemp(prefix="pigeon-bench-config-"))
    env = {**app_environment(data_dir, config_dir), **(extra_env or {})}
    tmux = Tmux(f"ui{time.monotonic_ns()}")
    try:
        started = time.perf_counter()
        tmux.start(pigeon_command(), env)
        tmux.wait_for(has_thread_row)
        first_row = time.perf_counter() - started
        pid = tmux.pid()
        # The service is unreachable on purpose: wait for the app to say so (its banner moves the whole screen
        # down a line), so that no key below is timed against that change.
        tmux.wait_for(lambda s: "Offline:" in s, timeout=30)
        time.sleep(0.5)
        delays = []
        pauses = random.Random(SEED)  # noqa: S311 - timing jitter, not a secret
        for _ in range(presses):
            # A person's keys do not arrive in step with the app's frames: a random pause between presses keeps
            # the figure from locking onto (or away from) the frame clock.
            time.sleep(pauses.uniform(0.05, 0.15))
            before = tmux.screen(styled=True)
            tmux.keys("j")
            delay, _ = tmux.wait_for(partial(operator.ne, before), timeout=5, styled=True)
            delays.append(delay)
        before = tmux.screen(styled=True)
        sent = time.perf_counter()
        tmux.keys(*(["j"] * 100))
        tmux.wait_for(partial(operator.ne, before), timeout=10, styled=True)
        last, last_change = tmux.screen(styled=True), time.perf_counter()
        while time.perf_counter() - last_change < 0.3:  # until the screen stops moving
            shown = tmux.screen(styled=True)
            if shown != last:
                last, last_change = shown, time.perf_counter()
        hundred = last_change - sent
        tmux.keys("Home")
        time.sleep(0.3)
        tmux.keys("Enter")
        open_newest, _ = tmux.wait_for(lambda s: " of " in s and "UTC" in s, timeout=10)
        rss = peak_rss_mib(pid)
        return UIRun(first_row, statistics.median(delays), hundred, open_newest, rss)
    finally:
        tmux.stop()
        shutil.rmtree(config_dir, ignore_errors=True)


# --- the service alone ------------------------------------------------------------------------------------------


def measure_service(service_db: Path, token: str, *, requests: int = 400, concurrency: int = 8) -> tuple[float, float]:
    """p50 and p99 latency (s) of list messages (page_size 100) under bounded concurrent load on 127.0.0.1."""
    from pigeon_service.app import ServerSettings, create_app
    from pigeon_service.db import Database
    from pigeon_service.run import start_in_thread

    db = Database(service_db)
    account = db.account_ids()[0]
    threads, _ = db.list_threads(account, page_size=200, page_token=None)
    service = start_in_thread(create_app(db, ServerSettings(deliver_webhooks=False)), db=db)
    latencies: list[float] = []

    async def go() -> None:
        gate = asyncio.Semaphore(concurrency)
        async with httpx.AsyncClient(base_url=service.base_url, headers={"Authorization": f"Bearer {token}"}) as http:

            async def one(n: int) -> None:
                async with gate:
                    started = time.perf_counter()
                    response = await http.get(
                        "/v1/messages", params={"thread_id": threads[n % len(threads)].id, "page_size": 100}
                    )
                    latencies.append(time.perf_counter() - started)
                    response.raise_for_status()

            await asyncio.gather(*(one(n) for n in range(requests)))

    try:
        asyncio.run(go())
    finally:
        service.stop()
        db.close()
    ordered = sorted(latencies)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


# --- the report -----------------------------------------------------------------------------------------------------


@dataclass
class SizeResult:
    size: int
    fill: str
    runs: list[UIRun] = field(default_factory=list)
    triage: dict[str, Any] | None = None  # bench/triage.py's figures


FLOW = 20  # bench/triage.py's read-and-clear run


def measure_triage(data_dir: Path, *, runs: int = 6) -> dict[str, Any]:
    """``bench/triage.py`` on the store in ``data_dir``, in a process of its own: triage keys and word search
    measured inside the app (key -> end of its frame; the longest stall while a word is typed)."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "triage.py"), str(data_dir), "--runs", str(runs)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def _spread(values: list[float], scale: float, unit: str, digits: int) -> str:
    low, mid, high = min(values) * scale, statistics.median(values) * scale, max(values) * scale
    return f"{mid:.{digits}f} {unit} ({low:.{digits}f}-{high:.{digits}f})"


def targets_line(results: list[SizeResult]) -> str:
    """Which targets the medians meet at every size, and which they miss (and where)."""
    names = {"first_row": "first row", "keypress": "one keypress", "open_newest": "open newest", "rss_mib": "peak RSS"}
    met: list[str] = []
    missed: list[str] = []
    for key, name in names.items():
        over = [f"{r.size:,}" for r in results if statistics.median(getattr(run, key) for run in r.runs) > TARGETS[key]]
        (missed if over else met).append(f"{name} (at {', '.join(over)})" if over else name)
    text = f"Targets met at every size: {', '.join(met) or 'none'}."
    return text + (f" Missed: {', '.join(missed)}." if missed else "")


def report(
    results: list[SizeResult], sync_figures: SyncFigures | None, service: tuple[float, float] | None, command: str
) -> str:
    lines = [
        f"Generated by `{command}` on {datetime.now(UTC):%Y-%m-%d}. Machine: {platform.platform()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}. Medians with (min-max) over "
        f"{len(results[0].runs) if results else 0} runs, in a {WIDTH}x{HEIGHT} tmux window, measured through "
        "`tmux capture-pane` as a person sees the screen (tmux's own latency included).",
        "",
        f"Targets: first row <= {TARGETS['first_row']} s, one keypress <= {TARGETS['keypress'] * 1000:.0f} ms, "
        f"open the newest thread <= {TARGETS['open_newest'] * 1000:.0f} ms, peak RSS <= {TARGETS['rss_mib']:.0f} MiB.",
        "",
        "| threads | store filled by | start -> first row | one `j` | 100 `j` | open newest | peak RSS |",
        "|---|---|---|---|---|---|---|",
    ]
    for result in results:
        runs = result.runs
        lines.append(
            f"| {result.size:,} | {result.fill} "
            f"| {_spread([r.first_row for r in runs], 1, 's', 2)} "
            f"| {_spread([r.keypress for r in runs], 1000, 'ms', 1)} "
            f"| {_spread([r.hundred for r in runs], 1000, 'ms', 0)} "
            f"| {_spread([r.open_newest for r in runs], 1000, 'ms', 0)} "
            f"| {_spread([r.rss_mib for r in runs], 1, 'MiB', 0)} |"
        )
    lines += ["", targets_line(results)]
    measured = [r for r in results if r.triage]
    if measured:
        lines += [
            "",
            "### Triage and search",
            "",
            "Measured inside the app (headless Textual: no terminal, so a few ms below what tmux would show) by "
            "`bench/triage.py`: a key on the first thread -> the end of the frame showing its result, median of 6; "
            f"then `{measured[0].triage.get('word', '?') if measured[0].triage else '?'}` typed into the search at "
            "120 ms a key.",
            "",
            "| threads | star `s` | done `e` | undo `u` | longest stall while typing a search "
            "| results after the last key |",
            "|---|---|---|---|---|---|",
        ]
        flows = [(r.size, r.triage or {}) for r in measured if "flow_next_text" in (r.triage or {})]
        flow_rows = [
            f"| {size:,} | {t['flow_keys_per_thread']:g} | {t['flow_next_text'] * 1000:.1f} ms "
            f"| {t['flow_next_text_max'] * 1000:.1f} ms |"
            for size, t in flows
        ]
        for result in measured:
            t = result.triage or {}
            lines.append(
                f"| {result.size:,} | {t['key_s'] * 1000:.1f} ms | {t['key_e'] * 1000:.1f} ms "
                f"| {t['key_u'] * 1000:.1f} ms | {t['search_stall'] * 1000:.0f} ms | {t['search_results']:.2f} s |"
            )
        if flow_rows:
            lines += [
                "",
                f"Read and clear: the first thread opened, then `e` pressed in the reader {FLOW} times in a row, each "
                "time the next thread opening there (target: one key a thread, its text within 30 ms of the key).",
                "",
                "| threads | keys a thread | key -> next thread's text (median) | worst of 20 |",
                "|---|---|---|---|",
                *flow_rows,
            ]
    if sync_figures is not None:
        lines += [
            "",
            "### Sync",
            "",
            f"A fresh store syncing {sync_figures.threads:,} threads from `pigeon serve` on 127.0.0.1: "
            f"{sync_figures.seconds:.1f} s, {sync_figures.threads_per_s:,.0f} threads/s, "
            f"{sync_figures.messages_per_s:,.0f} messages/s, {sync_figures.requests:,} requests.",
        ]
    if service is not None:
        lines += [
            "",
            "### The reference service",
            "",
            f"List messages (page_size 100), 400 requests, 8 at a time on 127.0.0.1: p50 {service[0] * 1000:.1f} ms, "
            f"p99 {service[1] * 1000:.1f} ms.",
        ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--direct-fill-above", type=int, default=10_000)
    parser.add_argument("--no-report", action="store_true", help="print the table instead of writing docs/")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    results: list[SizeResult] = []
    sync_figures = None
    service_figures = None
    for size in sizes:
        folder = DATA / str(size)
        service_db, token = build_service(size, folder)
        store = folder / "app" / "store" / "default.sqlite3"
        store.parent.mkdir(parents=True, exist_ok=True)
        if size <= args.direct_fill_above:
            figures = sync_store(service_db, token, store)
            fill = "sync"
            if size == 10_000 or sync_figures is None:
                sync_figures = figures
        else:
            direct_fill(service_db, store)
            fill = "direct fill"
        result = SizeResult(size, fill)
        warm_up(folder / "app")
        for _ in range(args.runs):
            result.runs.append(measure_ui(folder / "app"))
            print(size, result.runs[-1], flush=True)
        result.triage = measure_triage(folder / "app")
        print(size, result.triage, flush=True)
        results.append(result)
        if service_figures is None or size == 10_000:
            service_figures = measure_service(service_db, token)
    command = "uv run python bench/run.py --sizes " + args.sizes
    text = report(results, sync_figures, service_figures, command)
    print(text)
    if not args.no_report:
        from bench.report import write_block

        write_block("tmux", text)


if __name__ == "__main__":
    main()
