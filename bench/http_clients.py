"""httpx and aiohttp side by side, doing a first sync's requests against ``pigeon serve`` over a slowed link.

    uv run python bench/http_clients.py [--threads 1000] [--rtts 0,20,80] [--in-flight 8,32,64] [--runs 3]

The reference service runs on demo mail (``bench/run.py``'s builder) in a child process, behind
``bench/latency_proxy.py`` in another child process (so neither's CPU is counted here). Each client then does what a
first sync does: the thread list page by page, then the first page of each thread's messages, with a fixed number of
requests in flight and as many pooled connections. Measured per request: wall time and this process's CPU time
(``time.process_time``). The clients take turns within each run, so a change in the machine's load touches both.
Prints one JSON object; ``--markdown`` prints a table for docs/http-clients.md instead.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script: the bench package beside it

from bench.loopback import free_port, service  # noqa: E402
from bench.run import build_service  # noqa: E402

CLIENTS = ("httpx", "aiohttp")
PAGE_SIZE = 100

# A client here is: given a base URL, a token and a bound, an async context yielding ``get(path, params) -> json``.
Get = Callable[[str, list[tuple[str, str]]], Awaitable[Any]]


@dataclass
class Run:
    client: str
    rtt_ms: float
    in_flight: int
    requests: int
    wall_s: float
    cpu_s: float
    load: float

    @property
    def wall_ms_per_request(self) -> float:
        return 1000 * self.wall_s / self.requests

    @property
    def cpu_ms_per_request(self) -> float:
        return 1000 * self.cpu_s / self.requests


@contextmanager
def proxy(port: int, rtt_ms: float) -> Iterator[int]:
    """``bench/latency_proxy.py`` in a child process in front of ``port``: the port it listens on."""
    listen = free_port()
    command = [sys.executable, str(ROOT / "bench" / "latency_proxy.py"), "--rtt", str(rtt_ms)]
    child = subprocess.Popen(
        [*command, "--listen", str(listen), "--target", f"127.0.0.1:{port}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert child.stdout is not None
        child.stdout.readline()  # it says where it listens once it does
        yield listen
    finally:
        child.terminate()
        child.wait(10)


async def sync_pattern(get: Get, in_flight: int) -> int:
    """The thread list, page by page, then each thread's first page of messages, ``in_flight`` at a time: the
    number of requests made."""
    ids: list[str] = []
    token: str | None = None
    requests = 0
    while True:
        params = [("page_size", str(PAGE_SIZE))] + ([("page_token", token)] if token else [])
        page = await get("/v1/threads", params)
        requests += 1
        ids += [thread["id"] for thread in page["threads"]]
        token = page.get("next_page_token")
        if not token:
            break
    gate = asyncio.Semaphore(in_flight)

    async def one(thread_id: str) -> None:
        async with gate:
            page = await get("/v1/messages", [("thread_id", thread_id), ("page_size", str(PAGE_SIZE))])
            assert isinstance(page["messages"], list)

    await asyncio.gather(*(one(thread_id) for thread_id in ids))
    return requests + len(ids)


async def with_httpx(base: str, token: str, in_flight: int, body: Callable[[Get], Awaitable[int]]) -> int:
    import httpx

    limits = httpx.Limits(max_connections=in_flight, max_keepalive_connections=in_flight)
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    async with httpx.AsyncClient(base_url=base, headers=headers, limits=limits, timeout=60) as http:

        async def get(path: str, params: list[tuple[str, str]]) -> Any:
            answer = await http.get(path, params=tuple(params))
            answer.raise_for_status()
            return answer.json()

        return await body(get)


async def with_aiohttp(base: str, token: str, in_flight: int, body: Callable[[Get], Awaitable[int]]) -> int:
    import aiohttp

    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    connector = aiohttp.TCPConnector(limit=in_flight)
    timeout = aiohttp.ClientTimeout(total=60)
    async with aiohttp.ClientSession(base, headers=headers, connector=connector, timeout=timeout) as http:

        async def get(path: str, params: list[tuple[str, str]]) -> Any:
            async with http.get(path, params=params) as answer:
                answer.raise_for_status()
                return await answer.json()

        return await body(get)


def measure(client: str, base: str, token: str, rtt_ms: float, in_flight: int) -> Run:
    """One sync pattern with ``client``, in a fresh event loop, timed."""
    use = with_httpx if client == "httpx" else with_aiohttp
    load = os.getloadavg()[0]
    started, cpu = time.perf_counter(), time.process_time()
    requests = asyncio.run(use(base, token, in_flight, lambda get: sync_pattern(get, in_flight)))
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    run = Run(client, rtt_ms, in_flight, requests, wall, cpu, load)
    print(
        f"{client} {rtt_ms:g} ms x{in_flight}: {run.wall_ms_per_request:.2f} ms wall, "
        f"{run.cpu_ms_per_request:.3f} ms CPU a request",
        file=sys.stderr,
        flush=True,
    )
    return run


def measure_again(client: str, base: str, token: str, rtt_ms: float, in_flight: int, tries: int = 3) -> Run:
    """:func:`measure`, again when a run failed (said on stderr: a failure is a finding, not noise to hide)."""
    for attempt in range(1, tries + 1):
        try:
            return measure(client, base, token, rtt_ms, in_flight)
        except Exception as exc:
            print(f"{client} {rtt_ms:g} ms x{in_flight}: failed ({exc!r}), try {attempt}", file=sys.stderr, flush=True)
            if attempt == tries:
                raise
    raise AssertionError("unreachable")


def bench(db: Path, token: str, rtts: list[float], bounds: list[int], runs: int) -> list[Run]:
    results: list[Run] = []
    with service(db) as (base, _pid):
        port = int(base.rsplit(":", 1)[1])
        for rtt in rtts:
            with proxy(port, rtt) as listen:
                slowed = f"http://127.0.0.1:{listen}"
                for client in CLIENTS:  # warm: connections, the service's caches, each library's imports
                    measure(client, slowed, token, rtt, max(bounds))
                for _ in range(runs):
                    for bound in bounds:
                        for client in CLIENTS:
                            results.append(measure_again(client, slowed, token, rtt, bound))
    return results


def summary(results: list[Run]) -> list[dict[str, Any]]:
    """Medians (with min and max) per client, round trip and bound."""
    rows = []
    keys = sorted({(r.rtt_ms, r.in_flight, r.client) for r in results})
    for rtt, bound, client in keys:
        runs = [r for r in results if (r.rtt_ms, r.in_flight, r.client) == (rtt, bound, client)]
        wall = [r.wall_ms_per_request for r in runs]
        cpu = [r.cpu_ms_per_request for r in runs]
        rows.append(
            {
                "rtt_ms": rtt,
                "in_flight": bound,
                "client": client,
                "runs": len(runs),
                "requests": runs[0].requests,
                "wall_ms_per_request": [round(statistics.median(wall), 3), round(min(wall), 3), round(max(wall), 3)],
                "cpu_ms_per_request": [round(statistics.median(cpu), 3), round(min(cpu), 3), round(max(cpu), 3)],
                "load": round(statistics.median(r.load for r in runs), 2),
            }
        )
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| RTT | in flight | client | wall ms/request (min-max) | CPU ms/request (min-max) | load |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        wall, cpu = row["wall_ms_per_request"], row["cpu_ms_per_request"]
        lines.append(
            f"| {row['rtt_ms']:g} ms | {row['in_flight']} | {row['client']} "
            f"| {wall[0]:.2f} ({wall[1]:.2f}-{wall[2]:.2f}) | {cpu[0]:.3f} ({cpu[1]:.3f}-{cpu[2]:.3f}) "
            f"| {row['load']:.2f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1000)
    parser.add_argument("--rtts", default="0,20,80", help="milliseconds of round trip added, comma-separated")
    parser.add_argument("--in-flight", default="8,32,64", help="requests in flight, comma-separated")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--data", type=Path, default=ROOT / "bench" / ".data")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    db, token = build_service(args.threads, args.data / str(args.threads))
    rtts = [float(part) for part in args.rtts.split(",")]
    bounds = [int(part) for part in args.in_flight.split(",")]
    results = bench(db, token, rtts, bounds, args.runs)
    rows = summary(results)
    if args.markdown:
        print(markdown(rows))
    else:
        print(json.dumps({"summary": rows, "runs": [asdict(r) for r in results]}, indent=1))


if __name__ == "__main__":
    main()
