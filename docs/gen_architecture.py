"""Draw docs/architecture.svg from the import graph of the four packages.

Run ``python docs/gen_architecture.py`` after moving modules; ``tests/test_architecture_picture.py``
fails while the picture disagrees with the code.  One box per module, grouped by package; green
boxes are pure cores, grey ones edges (the split is ``CORES`` in tests/test_import_contracts.py, the
contract CI enforces).  An arrow is an import across packages, drawn from the importing module to
the module it imports; imports inside a package are left out to keep the picture readable.
"""

from __future__ import annotations

import sys
from html import escape
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.test_import_contracts import _all_modules, _imports, _is_core  # noqa: E402

OUT = ROOT / "docs" / "architecture.svg"
# Columns left to right, so that every cross-package arrow points right (inward, towards engine).
COLUMNS: tuple[tuple[str, ...], ...] = (("dealer_console",), ("firmware_bridge", "vision"), ("engine",))
BOX_W, BOX_H, GAP_Y, COL_GAP, HEAD_H, PAD = 210, 20, 4, 230, 30, 14


def _package(module: str) -> str:
    return module.split(".")[0]


def import_graph() -> tuple[list[str], set[tuple[str, str]]]:
    """Every module of the four packages, and each cross-package (importer, imported) pair."""
    modules = _all_modules()
    names = sorted(modules)
    edges: set[tuple[str, str]] = set()
    for name, path in modules.items():
        imported = _imports(path, name)
        for target in imported:
            # ``from engine import wire`` names both engine and engine.wire: keep the deepest real module.
            cross = target in modules and _package(target) != _package(name)
            if cross and not any(m.startswith(target + ".") for m in imported if m in modules):
                edges.add((name, target))
    return names, edges


def render(names: list[str], edges: set[tuple[str, str]]) -> str:
    by_package: dict[str, list[str]] = {}
    for name in names:
        by_package.setdefault(_package(name), []).append(name)
    place: dict[str, tuple[float, float]] = {}
    parts: list[str] = []
    height = 0.0
    for col, packages in enumerate(COLUMNS):
        x = PAD + col * (BOX_W + COL_GAP)
        y = PAD
        for package in packages:
            mods = by_package.get(package, [])
            top = y
            y += HEAD_H
            for mod in mods:
                place[mod] = (x, y)
                fill = "#d8f0d8" if _is_core(mod) else "#e4e4ec"
                parts.append(
                    f'<rect x="{x + 6}" y="{y}" width="{BOX_W - 12}" height="{BOX_H}" rx="3" fill="{fill}" '
                    f'stroke="#777"/><text x="{x + 12}" y="{y + 14}">{escape(mod)}</text>'
                )
                y += BOX_H + GAP_Y
            parts.insert(
                0,
                f'<rect x="{x}" y="{top}" width="{BOX_W}" height="{y - top + 4}" rx="6" fill="#fafafa" '
                f'stroke="#333"/><text x="{x + 8}" y="{top + 20}" font-weight="bold" font-size="14">'
                f"{escape(package)}/</text>",
            )
            y += 24
        height = max(height, y)
    arrows: list[str] = []
    for src, dst in sorted(edges):
        (x1, y1), (x2, y2) = place[src], place[dst]
        x1, y1, x2, y2 = x1 + BOX_W - 6, y1 + BOX_H / 2, x2 + 6, y2 + BOX_H / 2
        # an arrow pointing outward would break the contract; draw it red so it shows
        colour = "#c00" if x2 < x1 else "#3a6ea5"
        mid = (x1 + x2) / 2
        arrows.append(
            f'<path d="M{x1},{y1} C{mid},{y1} {mid},{y2} {x2},{y2}" fill="none" stroke="{colour}" '
            f'stroke-opacity="0.35" marker-end="url(#a)"/>'
        )
    width = PAD * 2 + len(COLUMNS) * BOX_W + (len(COLUMNS) - 1) * COL_GAP
    legend_y = height + 10
    legend = (
        f'<rect x="{PAD}" y="{legend_y}" width="14" height="14" fill="#d8f0d8" stroke="#777"/>'
        f'<text x="{PAD + 20}" y="{legend_y + 12}">pure core (no clock, socket, port or file)</text>'
        f'<rect x="{PAD + 330}" y="{legend_y}" width="14" height="14" fill="#e4e4ec" stroke="#777"/>'
        f'<text x="{PAD + 350}" y="{legend_y + 12}">edge (MQTT, serial, camera, SQL, Qt, processes)</text>'
        f'<text x="{PAD + 700}" y="{legend_y + 12}">arrow: an import across packages '
        f"({len(edges)} in all)</text>"
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{legend_y + 30}" '
        f'font-family="sans-serif" font-size="11">\n'
        '<defs><marker id="a" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="6" markerHeight="6" '
        'orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#3a6ea5"/></marker></defs>\n'
        f'<rect width="100%" height="100%" fill="white"/>\n'
        + "\n".join(parts)
        + "\n"
        + "\n".join(arrows)
        + "\n"
        + legend
        + "\n</svg>\n"
    )


def main() -> None:
    names, edges = import_graph()
    OUT.write_text(render(names, edges), encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}: {len(names)} modules, {len(edges)} cross-package imports")


if __name__ == "__main__":
    main()
