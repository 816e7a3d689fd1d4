"""A TCP proxy that adds a round trip: each chunk is delayed by half of it, in each direction, per connection.

    uv run python bench/latency_proxy.py --rtt 80 --listen 8026 --target 127.0.0.1:8025

A stand-in for a real link where the kernel has no netem: chunks keep their order and each leaves half the round trip
after it arrived, so a request and its answer take one round trip more than on loopback, and requests in flight on
different connections overlap as they would over a network. Bandwidth is not limited. Stdlib asyncio only.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from dataclasses import dataclass, field

CHUNK = 65536


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float) -> None:
    """Copy ``reader`` to ``writer``, each chunk ``delay`` seconds after it came; the end is passed on likewise."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

    async def send() -> None:
        while True:
            due, chunk = await queue.get()
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if not chunk:
                with contextlib.suppress(OSError):
                    writer.write_eof()
                return
            writer.write(chunk)
            await writer.drain()

    sender = asyncio.create_task(send())
    try:
        while True:
            chunk = await reader.read(CHUNK)
            queue.put_nowait((loop.time() + delay, chunk))
            if not chunk:
                break
        await sender
    finally:
        sender.cancel()


@dataclass
class LatencyProxy:
    """Listens on ``listen_host``:``listen_port`` (a free port when 0) and forwards each connection to ``target``
    with ``rtt`` seconds of round trip added. ``async with`` starts and stops it; :attr:`port` is where it listens."""

    target_host: str
    target_port: int
    rtt: float
    listen_host: str = "127.0.0.1"
    listen_port: int = 0
    connections: int = 0
    _server: asyncio.Server | None = None
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)

    @property
    def port(self) -> int:
        assert self._server is not None, "start the proxy first"
        return int(self._server.sockets[0].getsockname()[1])

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, self.listen_host, self.listen_port)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            await self._server.wait_closed()
            self._server = None

    async def __aenter__(self) -> LatencyProxy:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    async def _serve(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.connections += 1
        half = self.rtt / 2
        try:
            target_reader, target_writer = await asyncio.open_connection(self.target_host, self.target_port)
        except OSError:
            client_writer.close()
            self._tasks.discard(task)
            return
        try:
            await asyncio.gather(_pipe(client_reader, target_writer, half), _pipe(target_reader, client_writer, half))
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            for writer in (client_writer, target_writer):
                writer.close()
            self._tasks.discard(task)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rtt", type=float, default=20.0, help="round trip to add, in milliseconds")
    parser.add_argument("--listen", type=int, default=0, help="port to listen on (a free one when 0)")
    parser.add_argument("--target", required=True, help="host:port to forward to")
    args = parser.parse_args(argv)
    host, _, port = args.target.rpartition(":")

    async def run() -> None:
        async with LatencyProxy(host or "127.0.0.1", int(port), args.rtt / 1000, listen_port=args.listen) as proxy:
            print(f"127.0.0.1:{proxy.port} -> {args.target}, {args.rtt:g} ms of round trip added", flush=True)
            await asyncio.Event().wait()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run())


if __name__ == "__main__":
    main()
