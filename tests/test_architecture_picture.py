"""docs/architecture.svg is drawn from the code's import graph; it must not go stale."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _generator():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("gen_architecture", ROOT / "docs" / "gen_architecture.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_architecture_picture_matches_the_import_graph() -> None:
    gen = _generator()
    names, edges = gen.import_graph()
    drawn = (ROOT / "docs" / "architecture.svg").read_text(encoding="utf-8")
    assert drawn == gen.render(names, edges), "run: python docs/gen_architecture.py"


def test_every_module_is_drawn_and_every_arrow_points_inward() -> None:
    gen = _generator()
    names, edges = gen.import_graph()
    svg = gen.render(names, edges)
    for name in names:
        assert f">{name}<" in svg, name
    # The picture draws an import that points away from engine in red: there must be none.
    assert 'stroke="#c00"' not in svg
    assert edges, "the four packages import engine: the graph cannot be empty"
