"""Handing work to the user's own programs: a browser for links (Python's ``webbrowser``, so ``$BROWSER`` is
honoured), the system's handler (or ``open_command``) for attachments and ``mailto:`` links, ``$VISUAL``/``$EDITOR``
for drafts and ``send_command`` for the messages written there.

Every program runs from an argument list, never through a shell. What Pigeon adds to a command is an absolute path
or a URL that starts with its scheme, so nothing taken from mail can become an option. These calls block: callers
run them in a thread (the editor runs while the app is suspended). No Textual here.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from pigeon.sanitize import clean_line

HANDLER_WAIT = 2.0  # seconds: a handler that fails at once (no application for the type) is reported
SEND_TIMEOUT = 120.0
EDITORS = ("sensible-editor", "nano", "vi")  # when neither $VISUAL nor $EDITOR is set (as git and mutt fall back)


class HandOffFailed(Exception):
    """A program could not take the work; the message says which and why, in one line."""


def system_handler() -> list[str]:
    """The command that opens a file or link as the desktop would: ``open`` on macOS, ``xdg-open`` elsewhere
    (``[]`` on Windows, where ``os.startfile`` does it)."""
    if sys.platform == "darwin":
        return ["open"]
    if sys.platform.startswith("win"):
        return []
    return ["xdg-open"]


def _last_line(output: bytes) -> str:
    lines = [line for line in output.decode(errors="replace").splitlines() if line.strip()]
    return clean_line(lines[-1], limit=200) if lines else ""


def _checked(argument: str) -> str:
    if argument.startswith("-"):  # (never: callers pass absolute paths and URLs; this keeps it so)
        raise HandOffFailed(f"refused to pass {clean_line(argument, limit=40)!r}: it reads as an option")
    return argument


def open_with(command: Sequence[str], target: str, *, wait: float = HANDLER_WAIT) -> None:
    """Run ``command`` with ``target`` as its last argument (the system's handler when ``command`` is empty).
    :class:`HandOffFailed` if the program is missing or fails within ``wait`` seconds; one still running then
    (a viewer that stays open) has the work."""
    command = list(command) or system_handler()
    if not command:
        os.startfile(_checked(target))  # type: ignore[attr-defined]  # noqa: S606  (Windows only; no shell)
        return
    if shutil.which(command[0]) is None:
        raise HandOffFailed(f"{command[0]} was not found; set open_command in the [ui] table of the config")
    with tempfile.TemporaryFile() as errors:  # (a file, not a pipe: a handler left running never blocks on it)
        try:
            process = subprocess.Popen(  # noqa: S603  (an argument list, no shell; the target is checked)
                [*command, _checked(target)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=errors,
                start_new_session=True,  # the handler outlives Pigeon and gets none of the terminal's signals
            )
        except OSError as exc:
            raise HandOffFailed(f"{command[0]} could not start: {exc.strerror or exc}") from None
        try:
            code = process.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            return
        if code != 0:
            errors.seek(0)
            said = _last_line(errors.read())
            raise HandOffFailed(f"{command[0]} failed (exit {code}){': ' + said if said else ''}")


def open_link(target: str, open_command: Sequence[str] = ()) -> None:
    """Open a web link in the browser ``webbrowser`` picks (``$BROWSER`` first), a ``mailto:`` link with the mail
    handler. Only http, https and mailto are opened."""
    from pigeon.core.links import OPENABLE, scheme_of

    scheme = scheme_of(target)
    if scheme not in OPENABLE:
        raise HandOffFailed(f"Pigeon opens only http, https and mailto links, not {clean_line(scheme, limit=20)!r}")
    if scheme == "mailto":
        open_with(open_command, target)
        return
    import webbrowser

    try:
        opened = webbrowser.open(_checked(target))
    except webbrowser.Error as exc:
        raise HandOffFailed(f"the browser could not open it: {clean_line(str(exc), limit=200)}") from None
    if not opened:
        raise HandOffFailed("no browser was found; set $BROWSER")


def editor_command() -> list[str]:
    """``$VISUAL``, else ``$EDITOR`` (split as a shell would split words, never run by one), else a common one."""
    for variable in ("VISUAL", "EDITOR"):
        value = os.environ.get(variable, "").strip()
        if value:
            try:
                words = shlex.split(value)
            except ValueError:
                raise HandOffFailed(f"${variable} cannot be read: {clean_line(value, limit=60)!r}") from None
            if words:
                return words
    for editor in EDITORS:
        if shutil.which(editor):
            return [editor]
    raise HandOffFailed("no editor: set $EDITOR (for example: export EDITOR=nano)")


def edit(path: str) -> int:
    """Run the editor on ``path`` in this terminal and wait for it; its exit code."""
    command = editor_command()
    try:
        return subprocess.run([*command, _checked(path)], check=False).returncode  # noqa: S603  (no shell)
    except OSError as exc:
        raise HandOffFailed(f"the editor {command[0]} could not start: {exc.strerror or exc}") from None


def send(command: Sequence[str], message: bytes, *, timeout: float = SEND_TIMEOUT) -> None:
    """Give ``message`` to ``command`` on its standard input; :class:`HandOffFailed` with what it said if it
    fails."""
    name = Path(command[0]).name
    try:
        done = subprocess.run(  # noqa: S603  (the user's own command, as a list: no shell)
            list(command), input=message, capture_output=True, timeout=timeout, check=False
        )
    except FileNotFoundError:
        raise HandOffFailed(f"{name} was not found (send_command in the [compose] table of the config)") from None
    except OSError as exc:
        raise HandOffFailed(f"{name} could not start: {exc.strerror or exc}") from None
    except subprocess.TimeoutExpired:
        raise HandOffFailed(f"{name} did not finish within {timeout:.0f} s") from None
    if done.returncode != 0:
        said = _last_line(done.stderr) or _last_line(done.stdout)
        raise HandOffFailed(f"{name} failed (exit {done.returncode}){': ' + said if said else ''}")
