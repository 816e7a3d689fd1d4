"""Running the user's own programs: a browser for links (:mod:`pigeon.core.browser` picks it), the
system's handler (or ``open_command``) for attachments and ``mailto:`` links, ``$VISUAL``/``$EDITOR`` for drafts and
``send_command`` for the messages written there.

Every program runs from an argument list, never through a shell, with Pigeon's environment less its secrets
(:func:`pigeon.children.child_environment`). What Pigeon adds to a command is an absolute path or a URL that starts
with its scheme, so nothing taken from mail can become an option. These calls block: callers run them in a thread
(the editor and a console browser run while the app is suspended). No Textual here.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from pigeon.children import child_environment
from pigeon.core.browser import BadBrowserVariable, browser_for, system_handler
from pigeon.sanitize import clean_line

HANDLER_WAIT = 2.0  # seconds: a handler that fails at once (no application for the type) is reported
SEND_TIMEOUT = 120.0
EDITORS = ("sensible-editor", "nano", "vi")  # when neither $VISUAL nor $EDITOR is set (as git and mutt fall back)


class ProgramFailed(Exception):
    """A program could not take the work; the message says which and why, in one line."""


class NoBrowser(ProgramFailed):
    """No browser can be started here (no ``$BROWSER``, no desktop, no console browser installed)."""


def _last_line(output: bytes) -> str:
    lines = [line for line in output.decode(errors="replace").splitlines() if line.strip()]
    return clean_line(lines[-1], limit=200) if lines else ""


def _checked(argument: str) -> str:
    if argument.startswith("-"):  # (never: callers pass absolute paths and URLs; this keeps it so)
        raise ProgramFailed(f"refused to pass {clean_line(argument, limit=40)!r}: it reads as an option")
    return argument


def open_with(command: Sequence[str], target: str, *, wait: float = HANDLER_WAIT) -> None:
    """Run ``command`` with ``target`` as its last argument (the system's handler when ``command`` is empty).
    :class:`ProgramFailed` if the program is missing or fails within ``wait`` seconds; one still running then
    (a viewer that stays open) has the work."""
    command = list(command) or system_handler()
    if not command:
        os.startfile(_checked(target))  # type: ignore[attr-defined]  # noqa: S606  (Windows only; no shell)
        return
    start_detached([*command, _checked(target)], wait=wait)


def start_detached(command: Sequence[str], *, wait: float = HANDLER_WAIT) -> None:
    """Start ``command`` away from the terminal (no terminal input or output, a session of its own, so it has no
    controlling terminal to take); :class:`ProgramFailed` if it is missing or fails within ``wait`` seconds."""
    if shutil.which(command[0]) is None:
        raise ProgramFailed(f"{command[0]} was not found; set open_command in the [ui] table of the config")
    with tempfile.TemporaryFile() as errors:  # (a file, not a pipe: a handler left running never blocks on it)
        try:
            process = subprocess.Popen(  # noqa: S603  (an argument list, no shell; the target is checked)
                list(command),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=errors,
                env=child_environment(),
                start_new_session=True,  # outlives Pigeon; no controlling terminal, so it can never take the app's
            )
        except OSError as exc:
            raise ProgramFailed(f"{command[0]} could not start: {exc.strerror or exc}") from None
        try:
            code = process.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            return
        if code != 0:
            errors.seek(0)
            said = _last_line(errors.read())
            raise ProgramFailed(f"{command[0]} failed (exit {code}){': ' + said if said else ''}")


def open_link(target: str, open_command: Sequence[str] = ()) -> list[str]:
    """Open a link: a ``mailto:`` one with the mail handler, a web one with the browser
    :func:`pigeon.core.browser.browser_for` picks, away from the terminal. Only http, https and mailto are opened.
    A browser that needs the terminal is not started: its command is returned (``[]`` when done), for the caller to
    run with :func:`run_in_terminal` while the app is suspended; :class:`NoBrowser` if there is none."""
    from pigeon.core.links import OPENABLE, scheme_of

    scheme = scheme_of(target)
    if scheme not in OPENABLE:
        raise ProgramFailed(f"Pigeon opens only http, https and mailto links, not {clean_line(scheme, limit=20)!r}")
    if scheme == "mailto":
        open_with(open_command, target)
        return []
    try:
        browser = browser_for(_checked(target))
    except BadBrowserVariable as exc:
        raise NoBrowser(str(exc)) from None
    if browser is None:
        raise NoBrowser("no browser was found here; set $BROWSER")
    if browser.in_terminal:
        return browser.command
    if not browser.command:
        os.startfile(target)  # type: ignore[attr-defined]  # noqa: S606  (Windows only; no shell)
        return []
    start_detached(browser.command)
    return []


def run_in_terminal(command: Sequence[str]) -> int:
    """Run ``command`` in this terminal and wait for it (a console browser; the app is suspended): its exit code."""
    try:
        return subprocess.run(list(command), check=False, env=child_environment()).returncode  # noqa: S603
    except OSError as exc:
        raise ProgramFailed(f"{Path(command[0]).name} could not start: {exc.strerror or exc}") from None


def editor_command() -> list[str]:
    """``$VISUAL``, else ``$EDITOR`` (split as a shell would split words, never run by one), else a common one."""
    for variable in ("VISUAL", "EDITOR"):
        value = os.environ.get(variable, "").strip()
        if value:
            try:
                words = shlex.split(value)
            except ValueError:
                raise ProgramFailed(f"${variable} cannot be read: {clean_line(value, limit=60)!r}") from None
            if words:
                return words
    for editor in EDITORS:
        if shutil.which(editor):
            return [editor]
    raise ProgramFailed("no editor: set $EDITOR (for example: export EDITOR=nano)")


def edit(path: str) -> int:
    """Run the editor on ``path`` in this terminal and wait for it; its exit code."""
    command = editor_command()
    try:
        return subprocess.run(  # noqa: S603  (no shell)
            [*command, _checked(path)], check=False, env=child_environment()
        ).returncode
    except OSError as exc:
        raise ProgramFailed(f"the editor {command[0]} could not start: {exc.strerror or exc}") from None


def send(command: Sequence[str], message: bytes, *, timeout: float = SEND_TIMEOUT) -> None:
    """Give ``message`` to ``command`` on its standard input; :class:`ProgramFailed` with what it said if it
    fails."""
    name = Path(command[0]).name
    try:
        done = subprocess.run(  # noqa: S603  (the user's own command, as a list: no shell)
            list(command), input=message, capture_output=True, timeout=timeout, check=False, env=child_environment()
        )
    except FileNotFoundError:
        raise ProgramFailed(f"{name} was not found (send_command in the [compose] table of the config)") from None
    except OSError as exc:
        raise ProgramFailed(f"{name} could not start: {exc.strerror or exc}") from None
    except subprocess.TimeoutExpired:
        raise ProgramFailed(f"{name} did not finish within {timeout:.0f} s") from None
    if done.returncode != 0:
        said = _last_line(done.stderr) or _last_line(done.stdout)
        raise ProgramFailed(f"{name} failed (exit {done.returncode}){': ' + said if said else ''}")


# --- a message piped to a command -------------------------------------------------------------------------------

PIPE_TIMEOUT = 60.0
PIPE_OUTPUT_LIMIT = 100_000  # bytes of a piped command's output kept and shown (the rest is read and dropped)
PIPE_LINGER = 1.0  # seconds a piped command's leftovers may hold its output open once it has exited


@dataclass(frozen=True)
class Piped:
    """What a command given a message said: its exit code, its output (standard output and error, as written;
    not cleaned) and how many bytes of it were dropped past the limit."""

    code: int
    output: str
    dropped: int = 0


def pipe(
    command: Sequence[str], data: bytes, *, timeout: float = PIPE_TIMEOUT, limit: int = PIPE_OUTPUT_LIMIT
) -> Piped:
    """Run ``command`` with ``data`` on its standard input, away from the terminal (pipes for its input and output,
    a session of its own) and with no secret; its output kept up to ``limit`` bytes. :class:`ProgramFailed` if it
    cannot start or does not finish within ``timeout`` seconds (it and what it started are stopped)."""
    name = Path(command[0]).name
    try:
        process = subprocess.Popen(  # noqa: S603  (the user's own command, as a list: no shell)
            list(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=child_environment(),
            start_new_session=True,  # no controlling terminal: it can never take the app's
        )
    except FileNotFoundError:
        raise ProgramFailed(f"{clean_line(name, limit=60)} was not found") from None
    except OSError as exc:
        raise ProgramFailed(f"{clean_line(name, limit=60)} could not start: {exc.strerror or exc}") from None
    assert process.stdin is not None
    assert process.stdout is not None
    kept = bytearray()
    dropped = 0

    def feed(stream: IO[bytes]) -> None:
        with contextlib.suppress(OSError):  # (a command that reads nothing closes its end: that is its choice)
            stream.write(data)
        with contextlib.suppress(OSError):
            stream.close()

    def drain(stream: IO[bytes]) -> None:
        nonlocal dropped
        while chunk := os.read(stream.fileno(), 65536):
            room = max(limit - len(kept), 0)
            kept.extend(chunk[:room])
            dropped += max(len(chunk) - room, 0)

    feeder = threading.Thread(target=feed, args=(process.stdin,), daemon=True)
    reader = threading.Thread(target=drain, args=(process.stdout,), daemon=True)
    feeder.start()
    reader.start()
    try:
        code = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _stop_group(process)
        raise ProgramFailed(f"{clean_line(name, limit=60)} did not finish within {timeout:.0f} s; stopped") from None
    finally:
        reader.join(PIPE_LINGER)
        if reader.is_alive():  # something it started still holds the output open
            _stop_group(process)
            reader.join()
        process.stdout.close()
    return Piped(code, kept.decode(errors="replace"), dropped)


def _stop_group(process: subprocess.Popen[bytes]) -> None:
    """Stop ``process`` and everything in its session."""
    killpg = getattr(os, "killpg", None)
    try:
        if killpg is not None:
            killpg(process.pid, signal.SIGKILL)
        else:  # (Windows: no process groups)
            process.kill()
    except (ProcessLookupError, PermissionError):
        pass
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=PIPE_LINGER)


# --- the desktop's clipboard (where the terminal's, OSC 52, may not reach) ---------------------------------------

CLIPBOARD_TIMEOUT = 5.0
CLIPBOARD_PROGRAMS = (
    ("WAYLAND_DISPLAY", ("wl-copy",)),
    ("DISPLAY", ("xclip", "-selection", "clipboard")),
    ("DISPLAY", ("xsel", "--clipboard", "--input")),
)
"""The clipboard programs tried, each where its display is set, in this order (``pbcopy`` on macOS)."""


def clipboard_command() -> list[str]:
    """The desktop's clipboard program here, or ``[]`` when there is none (over ssh, on a console)."""
    if sys.platform == "darwin":
        return ["pbcopy"] if shutil.which("pbcopy") else []
    for variable, command in CLIPBOARD_PROGRAMS:
        if os.environ.get(variable) and shutil.which(command[0]):
            return list(command)
    return []


def copy_to_desktop(text: str, *, timeout: float = CLIPBOARD_TIMEOUT) -> str:
    """Give ``text`` to the desktop's clipboard program (on its standard input, away from the terminal): the
    program's name, or "" when there is none here; :class:`ProgramFailed` if it fails."""
    command = clipboard_command()
    if not command:
        return ""
    name = command[0]
    try:
        done = subprocess.run(  # noqa: S603  (a fixed command, no shell)
            command,
            input=text.encode(),
            stdout=subprocess.DEVNULL,  # (not captured: xclip and wl-copy stay on to serve the clipboard)
            stderr=subprocess.DEVNULL,
            timeout=timeout,
            check=False,
            env=child_environment(),
            start_new_session=True,
        )
    except OSError as exc:
        raise ProgramFailed(f"{name} could not start: {exc.strerror or exc}") from None
    except subprocess.TimeoutExpired:
        raise ProgramFailed(f"{name} did not finish within {timeout:.0f} s") from None
    if done.returncode != 0:
        raise ProgramFailed(f"{name} failed (exit {done.returncode})")
    return name
