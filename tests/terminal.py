"""A program on a pseudo-terminal: keys in, every byte it writes kept (no terminal emulator in between)."""

from __future__ import annotations

import fcntl
import os
import pty
import selectors
import signal
import struct
import subprocess
import termios
import threading
import time

SIZE = (120, 40)


class Terminal:
    """The app on a pseudo-terminal: keys in, every byte it writes kept."""

    def __init__(self, env: dict[str, str], command: list[str]) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", SIZE[1], SIZE[0], 0, 0))
        self.process = subprocess.Popen(  # noqa: S603  (the tests' own commands)
            command, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True
        )
        os.close(slave)
        self.output = bytearray()
        self.last_output = time.monotonic()
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        with selectors.DefaultSelector() as waiting:  # (not select.select: a test process may hold 1,024 files)
            waiting.register(self.master, selectors.EVENT_READ)
            self._read_from(waiting)

    def _read_from(self, waiting: selectors.BaseSelector) -> None:
        while True:
            try:
                if waiting.select(0.1):
                    chunk = os.read(self.master, 65536)
                    if not chunk:
                        return
                    with self._lock:
                        self.output += chunk
                        self.last_output = time.monotonic()
            except OSError:
                return

    def quiet(self, *, since: float = 0.0, within: float = 20.0, still: float = 0.3, answer: float = 1.0) -> None:
        """Wait until the app has drawn what a key sent at ``since`` caused: output that began after it, then
        ``still`` seconds without any (a key that changes nothing draws nothing: ``answer`` seconds of silence)."""
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            now = time.monotonic()
            with self._lock:
                last = self.last_output
            if (last > since and now - last >= still) or (last <= since and now - since >= answer):
                return
            time.sleep(0.02)
        raise AssertionError("the app never stopped drawing")

    def text(self) -> str:
        with self._lock:
            return bytes(self.output).decode("utf-8", errors="replace")

    def wait_for(self, words: str, within: float = 30.0) -> None:
        deadline = time.monotonic() + within
        while words not in self.text():
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise AssertionError(f"{words!r} never appeared; exit code {self.process.poll()}")
            time.sleep(0.05)

    def keys(self, *keys: str) -> None:
        for key in keys:
            sent = time.monotonic()
            os.write(self.master, key.encode())
            self.quiet(since=sent)

    def close(self) -> int:
        try:
            return self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            return self.process.wait()
        finally:
            os.close(self.master)
