"""The client and the reference service are two packages of one uv workspace: the client installs without the
service's dependencies, and a client installed alone says in one line how to get the service."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
SERVICE_ONLY = {"fastapi", "starlette", "uvicorn", "faker", "uvloop"}
"""What only the reference service uses; the client's distribution must not pull any of it in."""


def requirements(pyproject: Path) -> set[str]:
    project = tomllib.loads(pyproject.read_text())["project"]
    return {Requirement(spec).name.lower() for spec in project["dependencies"]}


def test_the_client_depends_on_none_of_the_services_libraries() -> None:
    assert requirements(ROOT / "pyproject.toml") & SERVICE_ONLY == set()


def test_the_service_member_declares_them_and_the_client_for_its_models() -> None:
    assert SERVICE_ONLY - {"uvloop"} <= requirements(ROOT / "service" / "pyproject.toml")
    assert "pigeon" in requirements(ROOT / "service" / "pyproject.toml")


def test_the_workspace_gives_a_clone_the_service_for_development() -> None:
    root = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert root["tool"]["uv"]["workspace"]["members"] == ["service"]
    assert root["tool"]["uv"]["sources"]["pigeon-service"] == {"workspace": True}
    assert "pigeon-service" in {Requirement(spec).name for spec in root["dependency-groups"]["dev"]}


def pigeon_without(blocked: str, *argv: str) -> subprocess.CompletedProcess[str]:
    """``pigeon ARGV`` in a process where ``blocked`` cannot be imported, as in a client installed alone."""
    script = f"import sys\nsys.modules[{blocked!r}] = None\nfrom pigeon.cli import main\nsys.exit(main(sys.argv[1:]))\n"
    return subprocess.run(  # noqa: S603 - this interpreter, a fixed script
        [sys.executable, "-c", script, *argv], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )


@pytest.mark.parametrize(
    "argv",
    [["demo"], ["demo", "--serve-only"], ["serve"], ["serve", "token", "create", "--account", "me"]],
    ids=" ".join,
)
def test_a_client_without_the_service_says_in_one_line_how_to_get_it(argv: list[str], tmp_path: Path) -> None:
    done = pigeon_without("pigeon_service", *argv, *(["--db", str(tmp_path / "s.db")] if argv[0] == "serve" else []))
    command = "pigeon " + " ".join(a for a in argv if not a.startswith("-") and a != "me")
    assert done.returncode == 2
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"pigeon: error: {command} needs the reference service (the pigeon-service package)")
    assert f"`uv run {command}`" in lines[0]
    assert "`uv tool install . --with ./service`" in lines[0]
    assert not (tmp_path / "s.db").exists()


@pytest.mark.parametrize("command", ["serve", "demo"])
def test_a_service_missing_a_library_of_its_own_names_it_in_one_line(command: str) -> None:
    done = pigeon_without("fastapi", command)  # (the demo checks before it starts the service in a process)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"pigeon: error: pigeon {command} needs 'fastapi', which the reference service uses; install both with "
        "`uv tool install . --with ./service` from a clone of Pigeon."
    ]


def test_the_libraries_the_demo_checks_are_the_ones_the_service_declares() -> None:
    from pigeon_service import LIBRARIES

    declared = requirements(ROOT / "service" / "pyproject.toml") - {"pigeon", "uvloop"}  # (uvloop: when present)
    assert set(LIBRARIES) == declared


def test_the_help_of_the_service_commands_needs_no_service() -> None:
    for command in ("demo", "serve"):
        done = pigeon_without("pigeon_service", command, "--help")
        assert done.returncode == 0, done.stderr
        assert f"usage: pigeon {command}" in done.stdout
