"""The README is a contract: every command line it shows runs here, on a real `pigeon serve` with demo data, and
exits 0 without a traceback. A command line added to the README that this test neither runs nor names as left
out (with the reason) fails it."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.terminal import Terminal

ROOT = Path(__file__).parents[1]
README = (ROOT / "README.md").read_text()

NOT_RUN_HERE = {
    "uv run pytest": "the suite itself (CI runs it)",
    "uv run mypy": "CI runs it (.ci/run)",
    "uv run ruff check": "CI runs it (.ci/run)",
    "uv run ruff format": "rewrites the tree; CI checks the same tool's lint",
    "uv run python scripts/screenshots.py": "tests/tui/test_snapshots.py runs the script",
    "uv run pytest tests/tui/test_snapshots.py --snapshot-update": "rewrites the snapshots",
    "uv run python bench/run.py --sizes 1000,10000,100000": "the benchmark, run by hand (minutes)",
    "uv run pigeon serve [--host 127.0.0.1] [--port 8025] [--db PATH] [--demo-data [--threads N]] [--live]": (
        "a synopsis of the options, not a command line"
    ),
}


def readme_commands() -> list[str]:
    """Every `uv run ...` line of the README's code blocks, without its comment."""
    commands = []
    for block in re.findall(r"```[a-z]*\n(.*?)```", README, re.DOTALL):
        for line in block.splitlines():
            line = re.split(r"\s{2,}#", line)[0].strip()
            if line.startswith("uv run "):
                commands.append(line)
    inline = re.findall(r"`(uv run [^`]+)`", README)
    return list(dict.fromkeys(commands + inline))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Shell:
    """Runs README lines as a user would (``uv run pigeon`` is ``python -m pigeon`` of this environment)."""

    env: dict[str, str]
    folder: Path
    ran: list[str]

    def argv(self, line: str) -> list[str]:
        words = shlex.split(line)
        assert words[:2] == ["uv", "run"], line
        words = words[2:]
        if words[0] == "pigeon":
            return [sys.executable, "-m", "pigeon", *words[1:]]
        return [sys.executable if words[0] == "python" else words[0], *words[1:]]

    def run(self, line: str, *, given: str = "", **placeholders: str) -> str:
        self.ran.append(line)
        for name, value in placeholders.items():
            line = line.replace(name, value)
        done = subprocess.run(  # noqa: S603  (the README's own commands)
            self.argv(line), input=given, capture_output=True, text=True, env=self.env, cwd=self.folder, timeout=120
        )
        said = done.stdout + done.stderr
        assert done.returncode == 0, f"{line}\n{said[-2000:]}"
        assert "Traceback" not in said, said
        return done.stdout


@pytest.fixture
def shell(tmp_path: Path) -> Shell:
    home = tmp_path / "home"
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TERM": "xterm-256color",
        "PIGEON_CONFIG_DIR": str(home / "config"),
        "PIGEON_DATA_DIR": str(home / "data"),
        "PIGEON_DOWNLOAD_DIR": str(home / "downloads"),
        "PYTHONPATH": str(ROOT),
        "PYTHON_KEYRING_BACKEND": "tests.keyrings.FileKeyring",
        "PIGEON_TEST_KEYRING": str(tmp_path / "keyring.json"),
    }
    return Shell(env, tmp_path, [])


def serve(shell: Shell, line: str, port: int, token: str) -> subprocess.Popen[str]:
    shell.ran.append(line)
    argv = [*shell.argv(line.replace("service.sqlite3", str(shell.folder / "service.sqlite3"))), "--port", str(port)]
    process = subprocess.Popen(  # noqa: S603
        argv, env=shell.env, cwd=shell.folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stdout.read() if process.stdout else ""
        try:
            answer = httpx.get(
                f"http://127.0.0.1:{port}/v1/inboxes", headers={"Authorization": f"Bearer {token}"}, timeout=2
            )
        except httpx.TransportError:
            time.sleep(0.1)  # the service is starting: its port answers when it is up
            continue
        assert answer.status_code == 200, answer.text
        return process
    raise AssertionError("the service never answered")


def test_every_toml_block_in_the_readme_is_a_configuration_pigeon_reads() -> None:
    import tomllib

    from pigeon.config import Settings

    blocks = re.findall(r"```toml\n(.*?)```", README, re.DOTALL)
    assert len(blocks) >= 3
    for block in blocks:
        Settings.parse(tomllib.loads(block))


def test_every_command_line_in_the_readme_runs(shell: Shell) -> None:
    lines = readme_commands()
    db = str(shell.folder / "service.sqlite3")
    create_token = next(x for x in lines if x.startswith("uv run pigeon serve token"))
    token = shell.run(create_token.replace("service.sqlite3", db)).strip()
    assert token
    port = free_port()
    service = serve(shell, next(x for x in lines if x.startswith("uv run pigeon serve --db")), port, token)
    try:
        shell.env["PIGEON_BASE_URL"] = f"http://127.0.0.1:{port}"
        shell.run("uv run pigeon login", given=token + "\n")
        assert json.loads(Path(shell.env["PIGEON_TEST_KEYRING"]).read_text())
        editor, sent = shell.folder / "editor.py", shell.folder / "sent.eml"  # reply: $VISUAL writes, the command sends
        editor.write_text("import sys\nopen(sys.argv[-1], 'a').write('Thanks!\\n')\n")
        (shell.folder / "send.py").write_text(f"import sys\nopen({str(sent)!r}, 'wb').write(sys.stdin.buffer.read())\n")
        shell.env["VISUAL"] = f"{sys.executable} {editor}"
        config_file = Path(shell.env["PIGEON_CONFIG_DIR"]) / "config.toml"
        command = json.dumps([sys.executable, str(shell.folder / "send.py")])
        config_file.write_text(config_file.read_text() + f"\n[compose]\nsend_command = {command}\n")
        threads = json.loads(shell.run("uv run pigeon threads list --json"))
        thread_id = threads["threads"][0]["id"]
        shell.run("uv run pigeon sync")  # (README order: the contact edited below is then in the local store)
        messages = json.loads(shell.run(f"uv run pigeon messages list --thread {thread_id} --all --json"))
        contact_id = next(
            m["sender"]["contact_id"] for m in messages["messages"] if m.get("sender", {}).get("contact_id")
        )
        for command in lines:
            if command in NOT_RUN_HERE or command in shell.ran or command.startswith("uv run pigeon demo"):
                continue
            if command.startswith("uv run pigeon logout"):
                continue  # last: the commands after it need the token
            shell.run(command, THREAD_ID=thread_id, CONTACT_ID=contact_id)
        assert "Thanks!" in sent.read_text()  # `pigeon reply` reached the send command
        shell.run("uv run pigeon logout")
        assert not json.loads(Path(shell.env["PIGEON_TEST_KEYRING"]).read_text())
    finally:
        service.send_signal(signal.SIGINT)
        output, _ = service.communicate(timeout=30)
    assert service.returncode == 0, output
    assert "Traceback" not in output

    config = Path(shell.env["PIGEON_CONFIG_DIR"]) / "config.toml"
    config_before = config.read_text()
    demo = Terminal({k: v for k, v in shell.env.items() if k != "PIGEON_BASE_URL"}, shell.argv("uv run pigeon demo"))
    try:
        demo.wait_for("threads", within=60)
        demo.quiet()
        demo.keys("\x10", "t", "h", "e", "m", "e", "\r", "\x1b[B", "\r")  # the palette: pick another theme
        demo.keys("\x1b")
        demo.keys("q")
        assert demo.close() == 0
    finally:
        if demo.process.poll() is None:
            demo.close()
    assert "Traceback" not in demo.text()
    assert config.read_text() == config_before  # the demo writes nothing to the user's config, a theme neither
    shell.ran.append("uv run pigeon demo")

    left = [c for c in lines if c not in shell.ran and c not in NOT_RUN_HERE]
    assert not left, f"README command lines neither run nor left out with a reason: {left}"
