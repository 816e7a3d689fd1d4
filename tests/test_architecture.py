"""The arrows point one way: tui/cli -> core -> store/api -> models; the service (its own package, pigeon_service)
-> models (and neutral helpers), reached by the client only through the lazy entry of ``pigeon serve``/``demo``.
Textual stays in tui/; no module imports the App but the entry points; no import cycle; rooms under 400 lines."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "pigeon"
SERVICE = ROOT / "service" / "src" / "pigeon_service"
ROOM_LIMIT = 400
NEUTRAL = ("pigeon.sanitize", "pigeon.htmltext", "pigeon.sqlite", "pigeon.files", "pigeon.children")
"""Helpers of no layer: any layer may use them, and they use no other part of Pigeon."""


def module_name(path: Path) -> str:
    package = SERVICE if path.is_relative_to(SERVICE) else SRC
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_in(source: str, package: str) -> set[str]:
    """Every module ``source`` (of ``package``) imports, type-only imports and imports inside functions included;
    ``from a import b`` names both ``a`` and ``a.b`` (b may be a module)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def imports_of(path: Path) -> set[str]:
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    return imports_in(path.read_text(), package)


def own_imports(path: Path) -> set[str]:
    known = {module_name(p) for p in [*SRC.rglob("*.py"), *service_modules()]}
    return {n for n in imports_of(path) if n in known and n != module_name(path)}


def modules(*, outside: str | None = None, inside: str | None = None) -> list[Path]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        part = path.relative_to(SRC).parts[0]
        if (outside is None or part != outside) and (inside is None or part == inside):
            found.append(path)
    return found


def service_modules() -> list[Path]:
    return sorted(SERVICE.rglob("*.py"))


def named(path: Path) -> str:
    return str(path.relative_to(SERVICE.parent if path.is_relative_to(SERVICE) else SRC))


def test_the_source_tree_is_where_the_tests_look() -> None:
    assert (SRC / "models" / "__init__.py").is_file()
    assert (SRC / "core" / "mail.py").is_file()
    assert len(modules()) >= 40


@pytest.mark.parametrize("path", modules(outside="tui"), ids=named)
def test_textual_is_only_imported_in_tui(path: Path) -> None:
    bad = {name for name in imports_of(path) if name.split(".")[0] in {"textual", "rich"}}
    assert not bad, f"{named(path)} imports {bad}"


def _layer_breaches(layer: str, allowed: tuple[str, ...]) -> dict[str, set[str]]:
    breaches = {}
    for path in modules(inside=layer):
        bad = {n for n in own_imports(path) if not n.startswith((*allowed, *NEUTRAL, f"pigeon.{layer}"))}
        bad.discard("pigeon")
        if bad:
            breaches[named(path)] = bad
    return breaches


def test_models_import_nothing_of_pigeon_but_themselves() -> None:
    assert _layer_breaches("models", ()) == {}


def test_the_api_stands_on_the_models_alone() -> None:
    assert _layer_breaches("api", ("pigeon.models",)) == {}


def test_the_store_imports_neither_the_ui_nor_the_network_nor_the_core() -> None:
    assert _layer_breaches("store", ("pigeon.models", "pigeon.locations")) == {}


def test_the_service_imports_only_models_and_neutral_helpers_of_the_client() -> None:
    assert len(service_modules()) >= 10
    breaches = {}
    for path in service_modules():
        bad = {
            n for n in own_imports(path) if n.startswith("pigeon.") and not n.startswith(("pigeon.models", *NEUTRAL))
        }
        if bad:
            breaches[named(path)] = bad
    assert breaches == {}


def _service_imports(tree: ast.AST) -> list[ast.stmt]:
    def names(node: ast.AST) -> list[str]:
        if isinstance(node, ast.ImportFrom):
            return [node.module or ""]
        return [alias.name for alias in node.names] if isinstance(node, ast.Import) else []

    return [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.stmt) and any(m.split(".")[0] == "pigeon_service" for m in names(n))
    ]


def _lazy_service_imports_outside(source: str) -> list[int]:
    """Lines importing the service anywhere but inside a ``with reference_service(...)`` block of a function."""
    tree = ast.parse(source)
    lazy: set[int] = set()
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef):
            continue
        for block in ast.walk(function):
            if isinstance(block, ast.With) and any(
                isinstance(item.context_expr, ast.Call)
                and isinstance(item.context_expr.func, ast.Name)
                and item.context_expr.func.id == "reference_service"
                for item in block.items
            ):
                lazy.update(id(node) for node in block.body)
    return [node.lineno for node in _service_imports(tree) if id(node) not in lazy]


def test_the_client_reaches_the_service_only_through_its_lazy_entry() -> None:
    importers = {named(p) for p in modules() if _service_imports(ast.parse(p.read_text()))}
    assert importers == {"cli/serve.py", "cli/demo.py"}
    for importer in importers:
        assert _lazy_service_imports_outside((SRC / importer).read_text()) == [], importer


def test_the_lazy_entry_rule_sees_an_eager_import() -> None:
    eager = "from pigeon_service.run import serve\n"
    guarded = "def f():\n    with reference_service('x'):\n        from pigeon_service.run import serve\n"
    unguarded = "def f():\n    import pigeon_service.run\n"
    assert _lazy_service_imports_outside(eager) == [1]
    assert _lazy_service_imports_outside(guarded) == []
    assert _lazy_service_imports_outside(unguarded) == [2]


def test_the_core_stands_on_store_api_and_settings() -> None:
    allowed = ("pigeon.store", "pigeon.api", "pigeon.models", "pigeon.config", "pigeon.credentials", "pigeon.locations")
    assert _layer_breaches("core", allowed) == {}


@pytest.mark.parametrize("layer", ["tui", "cli"])
def test_screens_and_commands_reach_the_store_and_the_service_only_through_the_core(layer: str) -> None:
    below = ("pigeon.store", "pigeon.api")
    found = {named(p): {n for n in own_imports(p) if n.startswith(below)} for p in modules(inside=layer)}
    assert {k: v for k, v in found.items() if v} == {}


def test_only_the_entry_points_import_the_app() -> None:
    entry_points = {"cli/serve.py", "cli/demo.py", "tui/app.py"}
    importers = {named(p) for p in modules() if "pigeon.tui.app" in own_imports(p)}
    assert importers <= entry_points - {"tui/app.py"}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of ``graph`` (module -> modules it imports), or None."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for module in sorted(graph):
        if module not in state and (cycle := visit(module)):
            return cycle
    return None


def test_the_cycle_finder_finds_one() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_there_is_no_import_cycle() -> None:
    graph = {module_name(p): own_imports(p) for p in [*modules(), *service_modules()]}
    # A package's __init__ importing its own modules is how a package re-exports; it is not a cycle of design.
    graph = {m: {n for n in deps if not n.startswith(m + ".")} for m, deps in graph.items()}
    cycle = find_cycle(graph)
    assert cycle is None, " -> ".join(cycle or [])


@pytest.mark.parametrize("path", [*modules(), *service_modules()], ids=named)
def test_each_room_holds_one_purpose_under_400_lines(path: Path) -> None:
    lines = len(path.read_text().splitlines())
    assert lines <= ROOM_LIMIT, f"{named(path)} has {lines} lines"


def test_type_only_and_relative_imports_are_seen() -> None:
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pigeon.tui.app import PigeonApp\n"
    assert "pigeon.tui.app" in imports_in(source, "pigeon.core")
    assert "pigeon.store.cache" in imports_in("from ..store import cache\n", "pigeon.core")


@pytest.mark.parametrize(
    ("package", "own"),
    # The client's one import of the service is the lazy entry, which says how to get it when it is missing.
    [(SRC, {"pigeon", "pigeon_service"}), (SERVICE, {"pigeon_service"})],
    ids=["client", "service"],
)
def test_every_third_party_package_imported_is_a_declared_dependency(package: Path, own: set[str]) -> None:
    import sys
    import tomllib
    from importlib.metadata import packages_distributions

    from packaging.requirements import Requirement

    project = tomllib.loads((package.parents[1] / "pyproject.toml").read_text())["project"]
    declared = {Requirement(spec).name.lower().replace("_", "-") for spec in project["dependencies"]}
    providers = packages_distributions()
    used: dict[str, set[str]] = {}
    for path in sorted(package.rglob("*.py")):
        for name in imports_of(path):
            top = name.split(".")[0]
            if top and top not in own and top not in sys.stdlib_module_names:
                used.setdefault(top, set()).add(named(path))
    undeclared = {
        top: where
        for top, where in used.items()
        if not {d.lower().replace("_", "-") for d in providers.get(top, [top])} & declared
    }
    assert undeclared == {}


def own_depth(cls: type) -> int:
    """How many of Pigeon's classes stand in a row from ``cls`` up to a class not Pigeon's (``cls`` counted)."""
    own = [base for base in cls.__bases__ if base.__module__.startswith("pigeon.")]
    return 1 + max((own_depth(base) for base in own), default=0)


def test_the_depth_measure_follows_every_base() -> None:
    class Mixin:
        pass

    Mixin.__module__ = "pigeon.example"
    Chained = type("Chained", (Mixin,), {"__module__": "pigeon.example"})
    assert own_depth(Mixin) == 1
    assert own_depth(type("Leaf", (int, Chained), {"__module__": "pigeon.example"})) == 3


def test_screens_and_widgets_are_textuals_classes_plus_one_of_pigeons() -> None:
    """A screen or widget stands on Textual's classes and at most one layer of Pigeon's own (mixins included):
    what it does is read in its own module and the one beneath, never down a chain."""
    import importlib
    import inspect

    from textual.message_pump import MessagePump

    deep = {}
    for path in modules(inside="tui"):
        module = importlib.import_module(module_name(path))
        for name, cls in vars(module).items():
            ours = inspect.isclass(cls) and cls.__module__ == module.__name__
            if ours and issubclass(cls, MessagePump) and own_depth(cls) > 2:
                deep[f"{module.__name__}.{name}"] = own_depth(cls)
    assert deep == {}


# --- Textual's private names stay behind one door: pigeon.tui.fast_path ------------------------------------------

FAST_PATH = SRC / "tui" / "fast_path"


def _privates(thing: object) -> set[str]:
    return {name for name in dir(thing) if name.startswith("_") and not name.startswith("__")}


def _textual_privates(cls: type) -> set[str]:
    """The private names ``cls`` has from Textual: its Textual ancestors' (their instances' attributes too)."""
    from textual.app import App
    from textual.screen import Screen
    from textual.scrollbar import ScrollBar
    from textual.widget import Widget

    names: set[str] = set()
    for base in cls.__mro__:
        if base.__module__.split(".")[0] == "textual":
            names |= _privates(base)
    for base, made in ((Widget, Widget), (Screen, Screen), (ScrollBar, ScrollBar), (App, App)):
        if issubclass(cls, base):
            names |= _privates(made())  # (attributes Textual sets in __init__)
    return names


def textual_private_uses(source: str, namespace: dict[str, object]) -> list[str]:
    """Where ``source`` (whose top-level names are ``namespace``) uses a private name of Textual: an import of a
    ``textual._*`` module, a method of a Textual subclass that replaces one of Textual's private ones, or an
    attribute ``x._name`` that is Textual's (on ``self`` in a Textual subclass: one of its Textual ancestors'; on
    anything else: any Textual class's that Pigeon does not define itself)."""
    from textual.app import App
    from textual.screen import Screen
    from textual.scrollbar import ScrollBar
    from textual.widget import Widget

    from pigeon.tui.fast_path.compositor import TextualCompositor

    tree = ast.parse(source)
    classes = [c for c in namespace.values() if isinstance(c, type)]
    textual = {
        b for c in [*classes, Widget, Screen, App, ScrollBar] for b in c.__mro__ if b.__module__[:8] == "textual."
    }
    every = set().union(*(_privates(b) for b in textual), _privates(TextualCompositor()), _textual_privates(App))
    every |= _textual_privates(Screen) | _textual_privates(ScrollBar)
    found: list[str] = []
    own: set[str] = set()  # private names Pigeon's classes define that are not Textual's
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom | ast.Import):
            modules_named = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            found += [f"{node.lineno}: imports {m}" for m in modules_named if m.startswith("textual._")]
        if isinstance(node, ast.ClassDef):
            cls = namespace.get(node.name)
            theirs = _textual_privates(cls) if isinstance(cls, type) else set()
            for inner in ast.walk(node):
                name = None
                if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef):
                    name = inner.name
                    if name in theirs:
                        found.append(f"{inner.lineno}: {node.name} replaces Textual's {name}")
                elif (
                    isinstance(inner, ast.Attribute) and isinstance(inner.value, ast.Name) and inner.value.id == "self"
                ):
                    name = inner.attr
                    if name in theirs:
                        found.append(f"{inner.lineno}: {ast.unparse(inner)} is Textual's")
                if name and name.startswith("_") and name not in theirs:
                    own.add(name)
    for node in ast.walk(tree):
        on_self = isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
        if isinstance(node, ast.Attribute) and not on_self and node.attr in every and node.attr not in own:
            found.append(f"{node.lineno}: {ast.unparse(node)} is Textual's")
    return sorted(set(found))


@pytest.mark.parametrize("path", [p for p in modules(inside="tui") if FAST_PATH not in p.parents], ids=named)
def test_textuals_private_names_are_used_only_in_the_fast_path(path: Path) -> None:
    import importlib

    module = importlib.import_module(module_name(path))
    assert textual_private_uses(path.read_text(), vars(module)) == []


def test_the_private_name_rule_catches_each_kind_of_use() -> None:
    planted = (
        "from textual._compositor import Compositor\n"
        "from textual.widget import Widget\n"
        "class Mine(Widget):\n"
        "    _mine = 0\n"
        "    def _on_focus(self, event): ...\n"
        "    def go(self):\n"
        "        self._mine += 1\n"
        "        self._repaint_required = True\n"
        "        self.app._begin_batch()\n"
        "        self.screen._compositor_refresh()\n"
    )
    namespace: dict[str, object] = {}
    exec(compile(planted, "<planted>", "exec"), namespace)  # noqa: S102 - the fixed source above
    found = textual_private_uses(planted, namespace)
    assert found == [
        "10: self.screen._compositor_refresh is Textual's",
        "1: imports textual._compositor",
        "5: Mine replaces Textual's _on_focus",
        "8: self._repaint_required is Textual's",
        "9: self.app._begin_batch is Textual's",
    ]
    clean = "class Mine:\n    def _begin_batch(self): ...\n    def go(self):\n        self._begin_batch()\n"
    assert textual_private_uses(clean, {}) == []


def test_the_fast_path_is_where_textuals_private_names_are_used() -> None:
    import importlib

    path = FAST_PATH / "frames.py"
    module = importlib.import_module(module_name(path))
    assert len(textual_private_uses(path.read_text(), vars(module))) > 20  # (the rule sees what it must allow)
