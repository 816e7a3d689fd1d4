"""The first sync and the reference service over 127.0.0.1, each program in a process of its own.

    uv run python bench/loopback.py bench/.data/10000 [--runs 3] [--requests 2000]

``pigeon serve --db <size>/service.sqlite3`` runs as a child process on a free port. Then:

- the service alone: ``--requests`` list-messages requests (page_size 100, threads taken round the list), 8 in
  flight, from this process: requests a second, p50 and p99;
- the first sync: ``pigeon sync`` on a fresh data folder, as a person runs it: wall time from the start of the
  process to its end, its CPU time (user + system, from ``wait4``), the service's CPU time meanwhile, and what the
  sync reported (threads, messages);
- first rows: the same fresh sync inside this process, timed from the first thread page's answer to the moment the
  store can list the first rows (what the TUI shows), with the service still answering the rest.

Prints one JSON object (medians over ``--runs``). ``bench/run.py`` puts the figures in docs/performance.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script: the bench package beside it

from bench.report import machine, write_block  # noqa: E402

IN_FLIGHT = 8
MBSYNC_MESSAGES_PER_S = 1140  # issue 16's measurement of mbsync 1.4 from Dovecot on this machine


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def process_cpu(pid: int) -> float:
    """User + system seconds of a running process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def service(db: Path) -> Iterator[tuple[str, int]]:
    """``pigeon serve`` on ``db`` in a child process: its base URL and pid, stopped after."""
    port = free_port()
    child = subprocess.Popen(
        [sys.executable, "-m", "pigeon", "serve", "--db", str(db), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(base + "/v1/inboxes", timeout=1)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or child.poll() is not None:
                    raise RuntimeError("pigeon serve did not start") from None
                time.sleep(0.05)
        yield base, child.pid
    finally:
        child.terminate()
        child.wait(10)


def thread_ids(base: str, token: str, count: int) -> list[str]:
    answer = httpx.get(
        base + "/v1/threads", params={"page_size": count}, headers={"Authorization": f"Bearer {token}"}
    ).json()
    return [thread["id"] for thread in answer["threads"]]


def measure_service(base: str, pid: int, token: str, requests: int) -> dict[str, float]:
    ids = thread_ids(base, token, 500)
    latencies: list[float] = []

    async def go() -> float:
        # The load goes through the client's own sender (aiohttp): the cheapest a request of the clients measured
        # in docs/http-clients.md, and this process shares the machine's cores with the service.
        from pigeon.api.senders import AiohttpSender, Timeouts

        gate = asyncio.Semaphore(IN_FLIGHT)
        transport = AiohttpSender(connections=IN_FLIGHT, timeouts=Timeouts())
        headers = [("Authorization", f"Bearer {token}")]

        async def one(n: int) -> None:
            async with gate:
                began = time.perf_counter()
                target = f"{base}/v1/messages?thread_id={ids[n % len(ids)]}&page_size=100"
                answer = await transport.send("GET", target, headers, b"")
                latencies.append(time.perf_counter() - began)
                assert answer.is_success, answer.status_code

        await asyncio.gather(*(one(n) for n in range(50)))  # connections open, caches warm
        latencies.clear()
        began = time.perf_counter()
        await asyncio.gather(*(one(n) for n in range(requests)))
        elapsed = time.perf_counter() - began
        await transport.aclose()
        return elapsed

    cpu_before, own_before = process_cpu(pid), process_cpu(os.getpid())
    elapsed = asyncio.run(go())
    own = process_cpu(os.getpid()) - own_before
    ordered = sorted(latencies)
    return {
        "requests_per_s": requests / elapsed,
        "p50_ms": statistics.median(ordered) * 1000,
        "p99_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000,
        "service_cpu_s": process_cpu(pid) - cpu_before,
        "load_cpu_s": own,  # the load's own CPU (it shares the machine's cores with the service)
    }


def measure_cli_sync(base: str, pid: int, token: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="pigeon-sync-") as home:
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": home,
            "PIGEON_DATA_DIR": str(Path(home) / "data"),
            "PIGEON_CONFIG_DIR": str(Path(home) / "config"),
            "PIGEON_TOKEN": token,
            "PIGEON_BASE_URL": base,
            "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",
        }
        cpu_before = process_cpu(pid)
        began = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, "-m", "pigeon", "sync", "--json"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        assert child.stdout is not None  # (both are pipes)
        assert child.stderr is not None
        out, err = child.stdout.read(), child.stderr.read()
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - began
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            raise RuntimeError(f"pigeon sync failed: {err.decode(errors='replace')[-500:]}")
        report = json.loads(out)
        return {
            "seconds": elapsed,
            "client_cpu_s": usage.ru_utime + usage.ru_stime,
            "service_cpu_s": process_cpu(pid) - cpu_before,
            "threads": report["threads"],
            "messages": report["messages"],
        }


def measure_first_rows(base: str, token: str) -> float:
    """Seconds from the first thread page's answer to the first rows listed by the store, mid-sync."""
    from pigeon.api import PigeonClient
    from pigeon.store.mailstore import MailStore
    from pigeon.store.sync import sync

    first_page_at: list[float] = []

    async def mark(response: httpx.Response) -> None:
        if response.request.url.path == "/v1/threads" and not first_page_at:
            first_page_at.append(time.perf_counter())

    async def go(store: MailStore) -> float:
        http = httpx.AsyncClient(event_hooks={"response": [mark]}, timeout=60)
        stored = asyncio.Event()  # sync reports progress once a page of rows is in the store (the TUI then lists it)
        async with PigeonClient(base, token, http_client=http) as client:
            task = asyncio.create_task(sync(client, store, on_progress=lambda _done, _total: stored.set()))
            await stored.wait()
            assert store.list_threads(limit=1), "progress reported before any row was stored"
            shown = time.perf_counter() - first_page_at[0]
            await task
        await http.aclose()
        return shown

    with tempfile.TemporaryDirectory(prefix="pigeon-rows-") as folder:
        store = MailStore(Path(folder) / "store.sqlite3")
        try:
            return asyncio.run(go(store))
        finally:
            store.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="a bench size folder (service.sqlite3 and token)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--skip", default="", help="comma-separated: service, sync, rows")
    parser.add_argument("--write", action="store_true", help="put the figures in docs/performance.md")
    args = parser.parse_args(argv)
    token = (args.folder / "token").read_text().strip()
    skip = set(filter(None, args.skip.split(",")))
    runs: dict[str, list[dict[str, float]]] = {"service": [], "sync": [], "rows": []}
    with service(args.folder / "service.sqlite3") as (base, pid):
        for _ in range(args.runs):
            if "service" not in skip:
                runs["service"].append(measure_service(base, pid, token, args.requests))
            if "sync" not in skip:
                runs["sync"].append(measure_cli_sync(base, pid, token))
            if "rows" not in skip:
                runs["rows"].append({"seconds": measure_first_rows(base, token)})
    result: dict[str, Any] = {"python": sys.version.split()[0], "cores": os.cpu_count(), "runs": args.runs}
    for name, found in runs.items():
        if found:
            result[name] = {key: statistics.median(run[key] for run in found) for key in found[0]}
            result[name]["all"] = found
    print(json.dumps(result, indent=1))
    command = f"uv run python bench/loopback.py {args.folder} --runs {args.runs} --requests {args.requests}"
    text = block(result, command + (f" --skip {args.skip}" if skip else ""))
    print(text)
    if args.write:
        write_block("loopback", text)


def block(result: dict[str, Any], command: str) -> str:
    """The figures as Markdown, against issue 16's targets: medians (min-max of the runs)."""

    def spread(part: str, key: str, scale: float = 1, digits: int = 1) -> str:
        values = [run[key] * scale for run in result[part]["all"]]
        median = result[part][key] * scale
        return f"{median:,.{digits}f} ({min(values):,.{digits}f}-{max(values):,.{digits}f})"

    def verdict(ok: bool) -> str:
        return "met" if ok else "missed"

    rows = ["| figure | median (min-max) | issue 16's target |", "|---|---|---|"]
    if "sync" in result:
        sync = result["sync"]
        rate = sync["messages"] / sync["seconds"]
        rows += [
            f"| `pigeon sync`, fresh store: {sync['threads']:,} threads, {sync['messages']:,} messages "
            f"| {spread('sync', 'seconds')} s | under 10 s: {verdict(sync['seconds'] < 10)} |",
            f"| its CPU: the client / the service | {spread('sync', 'client_cpu_s')} s / "
            f"{spread('sync', 'service_cpu_s')} s | |",
            f"| messages a second (mbsync from Dovecot, in the issue: 1,140) | {rate:,.0f} "
            f"| ahead of mbsync: {verdict(rate > MBSYNC_MESSAGES_PER_S)} |",
        ]
    if "rows" in result:
        rows.append(
            f"| first rows in the store after the first thread page's answer | {spread('rows', 'seconds', 1000)} ms "
            f"| under 1 s: {verdict(result['rows']['seconds'] < 1)} |"
        )
    if "service" in result:
        service = result["service"]
        rows += [
            f"| the service: list messages, page_size 100, {IN_FLIGHT} in flight | "
            f"{spread('service', 'requests_per_s', 1, 0)} requests a second "
            f"| 1,000 or more: {verdict(service['requests_per_s'] >= 1000)} |",
            f"| its latency, p50 / p99 | {spread('service', 'p50_ms')} / {spread('service', 'p99_ms')} ms | |",
        ]
    return f"`{command}` ({machine()}):\n\n" + "\n".join(rows)


if __name__ == "__main__":
    main()
