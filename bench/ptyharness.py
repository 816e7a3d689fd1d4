"""A program on a pseudo-terminal, its screen emulated by pyte: key written -> last byte of the frame it causes.

No terminal emulator or multiplexer sits between the program and the harness: a thread reads the pty's master
side in chunks of up to 64 KiB (one system call for a whole frame, never a byte at a time) and stamps each chunk
with ``time.perf_counter()`` as it arrives; the chunks are fed to a pyte screen only once the program is silent, so
emulating a large frame (pyte takes milliseconds for one) never delays the reading of the next chunk. A key's time
is from the write of its bytes to the stamp of the last chunk before the program falls silent (``still`` seconds
without output), once the screen shows what the caller waits for. pyte answers the program's device-attribute
and cursor-position queries, as a terminal would (a program that waits for them would otherwise stall).
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import termios
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pyte

Screen = Callable[[list[str]], bool]
_QUERY = re.compile(rb"\x1b\[[>=?]?[0-9;]*[cn]")  # device attributes, status and cursor position reports
STILL = 0.15  # seconds without output that end a frame (every program measured draws a frame in one burst)


class Silent(AssertionError):
    """The program never showed what was waited for."""


class PtyProgram:
    """``command`` on a ``columns`` x ``rows`` pseudo-terminal with only ``env`` for its environment."""

    def __init__(self, command: list[str], env: dict[str, str], *, columns: int = 160, rows: int = 45) -> None:
        self.screen = pyte.Screen(columns, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        self.screen.write_process_input = self._answer  # type: ignore[method-assign]
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            command,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            start_new_session=True,
            preexec_fn=_controlling_terminal,
        )
        os.close(slave)
        self.raw = bytearray()  # every byte, for checks of what was sent (kept small: programs are quit early)
        self.arrivals: list[tuple[float, int]] = []  # each chunk's arrival and size, for keys sent at a pace
        self.last_at = self.started  # when the newest chunk arrived
        self._pending: list[tuple[float, bytes]] = []
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _answer(self, data: str) -> None:
        os.write(self.master, data.encode())

    def _read(self) -> None:
        while True:
            try:
                ready, _, _ = select.select([self.master], [], [], 0.5)
                if not ready:
                    if self.process.poll() is not None:
                        return
                    continue
                chunk = os.read(self.master, 65536)
            except OSError:
                return
            if not chunk:
                return
            arrived = time.perf_counter()
            with self._changed:
                self._pending.append(
                    (arrived, chunk)
                )  # fed to the emulator once the program is silent, never meanwhile
                if _QUERY.search(chunk):  # ... unless it asks the terminal something and waits for the answer
                    self._feed()
                if len(self.raw) < 1 << 20:
                    self.raw += chunk
                self.arrivals.append((arrived, len(chunk)))
                self.last_at = arrived
                self._changed.notify_all()

    def _feed(self) -> list[str]:
        """The screen with every byte so far (the caller holds the lock)."""
        for _arrived, chunk in self._pending:
            self.stream.feed(chunk)
        self._pending.clear()
        return list(self.screen.display)

    def first_shown(self, shows: Screen, *, since: float, within: float = 60.0) -> float:
        """Seconds from ``since`` to the chunk after which the screen first showed ``shows`` (start -> first row:
        what is drawn after it, a banner or the counts, is not waited for)."""
        deadline = time.perf_counter() + within
        with self._changed:
            while True:
                if time.perf_counter() - self.last_at >= STILL:
                    for arrived, chunk in self._pending:
                        self.stream.feed(chunk)
                        if arrived > since and shows(list(self.screen.display)):
                            self._feed_after(arrived)
                            return arrived - since
                    self._pending.clear()
                if time.perf_counter() > deadline or self.process.poll() is not None:
                    raise Silent(f"never shown (exit code {self.process.poll()}):\n" + "\n".join(self._feed()))
                self._changed.wait(STILL / 3)

    def _feed_after(self, moment: float) -> None:
        for arrived, chunk in self._pending:
            if arrived > moment:
                self.stream.feed(chunk)
        self._pending.clear()

    def lines(self) -> list[str]:
        with self._lock:
            return self._feed()

    def text(self) -> str:
        return "\n".join(self.lines())

    def wait(self, shows: Screen, *, since: float, within: float = 60.0, still: float = STILL) -> float:
        """Seconds from ``since`` to the last byte of the output that made the screen show ``shows``, once
        ``still`` seconds have passed without more."""
        deadline = time.perf_counter() + within
        with self._changed:
            while True:
                now = time.perf_counter()
                if self.last_at > since and now - self.last_at >= still and shows(self._feed()):
                    return self.last_at - since
                if now > deadline or self.process.poll() is not None:
                    raise Silent(f"never shown (exit code {self.process.poll()}):\n" + "\n".join(self._feed()))
                self._changed.wait(still / 3)

    def settle(self, still: float = STILL, within: float = 30.0) -> None:
        """Wait until the program has been silent ``still`` seconds."""
        deadline = time.perf_counter() + within
        with self._changed:
            while time.perf_counter() - self.last_at < still:
                if time.perf_counter() > deadline:
                    raise Silent("the program never fell silent")
                self._changed.wait(still / 3)

    def press(self, keys: bytes, shows: Screen | None = None, *, within: float = 30.0, still: float = STILL) -> float:
        """Write ``keys``; the seconds to the last byte of what they caused (``shows``: what the screen must show
        first; without it, the first silence of ``still`` seconds after any output ends the wait)."""
        self.settle()
        sent = time.perf_counter()
        os.write(self.master, keys)
        return self.wait(shows or (lambda _lines: True), since=sent, within=within, still=still)

    def peak_rss_mib(self) -> float:
        """VmHWM of the program (or of its largest descendant: a wrapper may run it)."""
        best = 0.0
        for pid in [self.process.pid, *_descendants(self.process.pid)]:
            try:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        best = max(best, int(line.split()[1]) / 1024)
            except OSError:
                continue
        return best

    def close(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(5)
        self._reader.join(2)
        os.close(self.master)


def _controlling_terminal() -> None:
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def _descendants(pid: int) -> list[int]:
    found: list[int] = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            for child in (task / "children").read_text().split():
                found += [int(child), *_descendants(int(child))]
    except OSError:
        pass
    return found


def showing(text: str) -> Screen:
    """The screen shows ``text`` on some line."""
    return lambda lines: any(text in line for line in lines)
