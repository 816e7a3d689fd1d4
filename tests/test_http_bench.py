"""The HTTP clients' bench and its latency proxy, on a tiny case (no timings asserted, but for the proxy's floor)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from bench.http_clients import CLIENTS, bench, markdown, summary
from bench.latency_proxy import LatencyProxy
from bench.run import build_service


async def test_the_latency_proxy_passes_bytes_both_ways_a_round_trip_later() -> None:
    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(1024):
            writer.write(data.upper())
            await writer.drain()
        writer.close()

    target = await asyncio.start_server(echo, "127.0.0.1", 0)
    rtt = 0.2
    async with target, LatencyProxy("127.0.0.1", target.sockets[0].getsockname()[1], rtt) as proxy:
        reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
        began = time.monotonic()
        writer.write(b"ping")
        answer = await reader.readexactly(4)
        took = time.monotonic() - began
        writer.write_eof()  # (the end is passed on too: the echo server closes, and so does the proxy)
        assert await reader.read() == b""
        writer.close()
    assert answer == b"PING"
    assert took >= rtt  # half the round trip each way, at the least
    assert proxy.connections == 1


def test_the_bench_runs_each_client_through_the_proxy_on_a_tiny_service(tmp_path: Path) -> None:
    db, token = build_service(30, tmp_path / "service")
    results = bench(db, token, rtts=[0, 10], bounds=[2], runs=1)
    assert sorted((r.client, r.rtt_ms) for r in results) == sorted((c, rtt) for c in CLIENTS for rtt in (0, 10))
    assert {r.requests for r in results} == {31}  # one page of threads, then each thread's messages
    assert all(r.wall_s > 0 and r.cpu_s > 0 for r in results)
    rows = summary(results)
    assert len(rows) == 4
    table = markdown(rows)
    assert "| 10 ms | 2 | aiohttp |" in table
    assert "| 0 ms | 2 | httpx |" in table
