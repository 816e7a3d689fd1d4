"""The docs are a map that stays current: ARCHITECTURE.md names every module of the source tree and nothing that is
gone, and no document links outside the repository or to a file it does not hold."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "pigeon"
SERVICE_SRC = ROOT / "service" / "src"
ARCHITECTURE = ROOT / "ARCHITECTURE.md"
DOCUMENTS = [ROOT / "README.md", ARCHITECTURE, ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
NAMED_FILE = re.compile(r"`([\w./-]+\.(?:py|tcss|md|yaml))`")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CLIMBING = re.compile(r"(?<![\w./])((?:\.\./)+[\w./-]*)")


def modules() -> list[str]:
    """Every module of the client and the service as ARCHITECTURE.md names it (``core/mail.py``,
    ``pigeon_service/app.py``); a package's ``__init__`` is its package's (named by its folder)."""
    client = [str(p.relative_to(SRC)) for p in SRC.rglob("*.py") if p.name != "__init__.py"]
    service = [str(p.relative_to(SERVICE_SRC)) for p in SERVICE_SRC.rglob("*.py") if p.name != "__init__.py"]
    return sorted([*client, *service])


def named_files(text: str) -> set[str]:
    return set(NAMED_FILE.findall(text))


def exists(name: str) -> bool:
    """A file ARCHITECTURE.md names: a path under ``src/pigeon/``, under ``service/src/`` or from the repository's
    root."""
    return any((base / name).is_file() for base in (SRC, SERVICE_SRC, ROOT))


def test_the_finders_find_what_they_look_for() -> None:
    assert named_files("| `core/mail.py` | x | `store/sync.sync` and `tui/app.tcss`") == {
        "core/mail.py",
        "tui/app.tcss",
    }
    assert LINK.findall("see [the map](ARCHITECTURE.md) and [x](../shared/spec.md)") == [
        "ARCHITECTURE.md",
        "../shared/spec.md",
    ]
    assert CLIMBING.findall("specified in `../shared/spec.md`; see docs/../README.md") == ["../shared/spec.md"]
    assert "core/mail.py" in modules()
    assert "pigeon_service/routes.py" in modules()


def test_architecture_names_every_module() -> None:
    named = named_files(ARCHITECTURE.read_text())
    missing = [module for module in modules() if module not in named]
    assert missing == [], f"ARCHITECTURE.md has no line for {missing}"


def test_architecture_names_no_file_that_is_gone() -> None:
    gone = sorted(name for name in named_files(ARCHITECTURE.read_text()) if not exists(name))
    assert gone == [], f"ARCHITECTURE.md names files that do not exist: {gone}"


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_links_stay_inside_the_repository_and_reach_a_file(document: Path) -> None:
    bad = []
    text = document.read_text()
    for target in CLIMBING.findall(text):  # a path named without a link that climbs out of the repository
        if not (document.parent / target).resolve().is_relative_to(ROOT):
            bad.append(target)
    for target in LINK.findall(text):
        if re.match(r"[a-z]+://", target) or target.startswith(("#", "mailto:")):
            continue  # (a web page or an anchor of the same document)
        place = (document.parent / target.split("#")[0]).resolve()
        if not place.is_relative_to(ROOT) or not place.exists():
            bad.append(target)
    assert bad == [], f"{document.name} links outside the repository or to nothing: {bad}"
