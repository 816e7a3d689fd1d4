"""The arrows point one way: tui -> store/api -> models; server -> models. Textual stays in tui/."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "pigeon"


def imports_of(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def modules(*, outside: str | None = None, inside: str | None = None) -> list[Path]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        part = path.relative_to(SRC).parts[0]
        if (outside is None or part != outside) and (inside is None or part == inside):
            found.append(path)
    return found


def test_the_source_tree_is_where_the_tests_look() -> None:
    assert (SRC / "models.py").is_file()
    assert len(modules()) >= 8


@pytest.mark.parametrize("path", modules(outside="tui"), ids=lambda p: str(p.relative_to(SRC)))
def test_textual_is_only_imported_in_tui(path: Path) -> None:
    bad = {name for name in imports_of(path) if name.split(".")[0] in {"textual", "rich"}}
    assert not bad, f"{path.relative_to(SRC)} imports {bad}"


@pytest.mark.parametrize("path", modules(inside="models.py") + modules(inside="api"), ids=lambda p: p.name)
def test_models_and_api_do_not_reach_up(path: Path) -> None:
    bad = {n for n in imports_of(path) if n.startswith(("pigeon.tui", "pigeon.store", "pigeon.server", "pigeon.cli"))}
    assert not bad, f"{path.relative_to(SRC)} imports {bad}"


def test_the_server_imports_only_models_from_pigeon() -> None:
    server = modules(inside="server")
    assert len(server) >= 6
    for path in server:
        own = {n for n in imports_of(path) if n == "pigeon" or n.startswith("pigeon.")}
        bad = {n for n in own if not n.startswith(("pigeon.models", "pigeon.server"))}
        assert not bad, f"{path.relative_to(SRC)} imports {bad}"


def test_the_store_imports_neither_the_ui_nor_the_network() -> None:
    store = modules(inside="store")
    assert len(store) >= 5
    for path in store:
        own = {n for n in imports_of(path) if n == "pigeon" or n.startswith("pigeon.")}
        bad = {n for n in own if n.startswith(("pigeon.tui", "pigeon.server", "pigeon.api", "pigeon.cli"))}
        assert not bad, f"{path.relative_to(SRC)} imports {bad}"
