"""The import rules of DESIGN.md, checked on the source (what import-linter would check).

1. ``engine`` imports none of the other packages (it is the innermost one).
2. Nothing outside ``dealer_console`` imports it (it is the composition root).
3. A pure core imports no edge module and no I/O library: cores are state machines fed by their
   edges (no socket, serial port, database, process or Qt window in them).

Every ``import`` counts, also one inside a function: a lazy import is still a dependency.
A module is a core if it is listed in ``CORES`` (or lies in a listed package, e.g. ``engine.hand.betting``);
every other module of the four packages is an edge.  So a new edge module needs nothing here, and a
core that starts importing a new module fails until that module is listed as a core too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("engine", "firmware_bridge", "vision", "dealer_console")

CORES = frozenset({
    # engine: the rules, pure
    "engine", "engine.cards", "engine.events", "engine.floor", "engine.hand", "engine.inputs",
    "engine.irregularities", "engine.citations", "engine.phh", "engine.public", "engine.ranking", "engine.rules",
    "engine.scenario", "engine.showdown", "engine.simulate", "engine.streets", "engine.table",
    "engine.wire", "engine.handlog", "engine.broker.acl", "engine.broker.passwd", "engine.tomlwrite", "engine.publicstate",
    # firmware_bridge: the shoe protocol and the tag registry
    "firmware_bridge", "firmware_bridge.framing", "firmware_bridge.messages", "firmware_bridge.session",
    "firmware_bridge.deck", "firmware_bridge.lossy", "firmware_bridge.vectors",
    # vision: detection, recognition, seats, debounce
    "vision", "vision.calibration", "vision.deck", "vision.detect", "vision.discriminant", "vision.layout",
    "vision.strip_match", "vision.window_match", "vision.tracking", "vision.corner", "vision.index_layout",
    "vision.classifier", "vision.camera_tilt", "vision.right_angles",
    # dealer_console: what the screens show, as data
    "dealer_console", "dealer_console.snapshot", "dealer_console.health", "dealer_console.model",
    "dealer_console.qtguard",  # a guard against a PySide6 reference bug: ctypes, no I/O
})

# Libraries that do I/O (or run processes, threads of their own, windows): never in a core.
IO_LIBRARIES = frozenset({"paho", "serial", "sqlite3", "psycopg", "socket", "subprocess", "amqtt", "asyncio",
                          "multiprocessing", "select", "tty", "pty", "http", "urllib", "shutil", "tempfile"})
QT = "PySide6"
QT_CORES = frozenset({"dealer_console.model", "dealer_console.qtguard"})  # a Qt item model: Qt, but no window and no socket


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, module: str) -> set[str]:
    """Every module ``path`` imports (absolute names; relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                stem = ".".join([*base, node.module] if node.module else base)
            else:
                stem = node.module or ""
            found.add(stem)
            # ``from engine import wire`` imports the module engine.wire
            found |= {f"{stem}.{alias.name}" for alias in node.names}
    return found


def _all_modules() -> dict[str, Path]:
    mods: dict[str, Path] = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            mods[_module_name(path)] = path
    return mods


MODULES = _all_modules()


def _is_core(module: str) -> bool:
    # a listed package's submodules are cores too, except for the four top-level packages themselves
    return any(module == c or (c not in PACKAGES and module.startswith(c + ".")) for c in CORES)


def _internal(imported: set[str]) -> set[str]:
    """The imported names that are modules of the four packages (``from x import name`` of a function
    is dropped: only real modules count)."""
    return {m for m in imported if m in MODULES}


def _top(name: str) -> str:
    return name.split(".")[0]


def test_the_contract_sees_every_package() -> None:
    for pkg in PACKAGES:
        assert pkg in MODULES, f"{pkg} has no __init__.py"
    assert len(MODULES) > 60


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _top(m) == "engine"))
def test_engine_imports_no_other_package(module: str) -> None:
    bad = sorted(m for m in _imports(MODULES[module], module) if _top(m) in PACKAGES and _top(m) != "engine")
    assert not bad, f"{module} imports {bad}: engine is the innermost package and imports none of the others"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _top(m) != "dealer_console"))
def test_nothing_outside_dealer_console_imports_it(module: str) -> None:
    bad = sorted(m for m in _imports(MODULES[module], module) if _top(m) == "dealer_console")
    assert not bad, f"{module} imports {bad}: nothing outside dealer_console may import it"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _is_core(m)))
def test_cores_import_no_edge(module: str) -> None:
    imported = _imports(MODULES[module], module)
    edges = sorted(m for m in _internal(imported) if not _is_core(m))
    assert not edges, f"core module {module} imports edge module(s) {edges}"
    libs = sorted({_top(m) for m in imported} & IO_LIBRARIES)
    assert not libs, f"core module {module} imports I/O librar(ies) {libs}; move that to an edge"
    if module not in QT_CORES:
        assert QT not in {_top(m) for m in imported}, f"core module {module} imports {QT}"


def test_the_checker_catches_a_violation(tmp_path: Path) -> None:
    """The checker itself: a core importing an edge module and an I/O library is seen."""
    fake = tmp_path / "engine" / "hand.py"
    fake.parent.mkdir()
    fake.write_text("import socket\nfrom engine import service\nfrom . import store\n")
    imported = _imports(fake, "engine.hand")
    assert {"socket", "engine.service", "engine.store"} <= imported
    assert not _is_core("engine.service") and _is_core("engine.hand.betting")
