"""Deck designs from outside Debian's gnome-cards-data, for the vision bench's held-out set.

After six runs of the Aisleriot held-out decks, three of them were opened up for tuning
(see ``bench_vision.py``); these designs took their place, never looked at while tuning.
They are SVG decks published on the npm registry under free licences, fetched with
``npm pack`` (pinned versions) and rendered with ``rsvg-convert`` into the same face cache
as the Aisleriot decks, one file per card trimmed to the card's opaque pixels.  A deck
published as React components (``REACT``) is first rendered to SVG files by node with
react-dom's server renderer (its pinned dependencies installed beside it by npm).

Since session 11 six more designs come from Debian's card packages (``debian_decks.py``: pinned
.debs from deb.debian.org, checked by SHA256, read with dpkg-deb; the PDF deck needs pdftocairo
from poppler-utils).  ``EXTRA`` names all of them; ``extra_face_dir`` gives any one's faces.

    python bench/extra_decks.py          # fetch and render them all (needs npm, node, rsvg-convert, dpkg-deb, pdftocairo)
    python bench/debian_decks.py         # the Debian ones only
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import cv2
import numpy as np
from debian_decks import DEBIAN, debian_face_dir

from vision.deckart import FACE_WIDTH, cache_root

RANKS = "A23456789TJQK"
SUITS = "shdc"


def _heruka(variant: str) -> tuple[str, str, object, str]:
    return ("@heruka_urgyen/react-playing-cards", "0.5.0",
            lambda r, s: f"package/src/images/{variant}/{r}{s.upper()}.svg", "package/src/images/back.svg")


# name -> (npm package, version, card path in the tarball, back path); licences: MIT (both)
NPM = {
    "x-cardsjs": ("cardsJS", "1.1.1", lambda r, s: f"package/dist/cards/{'10' if r == 'T' else r}{s.upper()}.svg",
                  "package/dist/cards/Red_Back.svg"),
    # two of the package's four variants: the others differ from these only in suit colours
    "x-heruka-2color": _heruka("2color"),
    "x-heruka-4color-bf": _heruka("4color-bf"),
    # session 10, held out since session 9 (decided before any tuning); CC0 (Adrian Kennard's cards as
    # React components: rendered to SVG with react-dom's server renderer, see _react_svgs)
    "x-letele": ("@letele/playing-cards", "0.1.0",
                 lambda r, s: f"svg/{s.upper()}{'10' if r == 'T' else r if r.isdigit() else r.lower()}.svg", "svg/B1.svg"),
}
#: decks whose package holds React components, not SVG files: (module in the package, its dependencies)
REACT = {"x-letele": ("package/dist/index.esm.js", ("react@18.3.1", "react-dom@18.3.1", "@babel/runtime@7.26.0"))}
#: every design from outside gnome-cards-data: the npm ones, then Debian's (debian_decks.py)
EXTRA = (*NPM, *DEBIAN)

_RENDER_MJS = """import * as React from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import * as deck from './cards.mjs';
import { writeFileSync, mkdirSync } from 'fs';
mkdirSync(process.argv[2], { recursive: true });
for (const [name, C] of Object.entries(deck)) writeFileSync(`${process.argv[2]}/${name}.svg`, renderToStaticMarkup(React.createElement(C)));
"""


def _react_svgs(x: Path, module: str, deps: tuple[str, ...]) -> None:
    """Each exported component of the package's ``module`` rendered to ``x/svg/NAME.svg`` (needs node)."""
    if shutil.which("node") is None:
        raise ExtraDeckError("node not found: the React card decks need nodejs")
    (x / "package.json").write_text('{"name": "render", "private": true}')
    proc = subprocess.run(["npm", "install", "--no-audit", "--no-fund", *deps], cwd=x, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise ExtraDeckError(f"npm install {' '.join(deps)} failed: {proc.stderr.strip()[-300:]}")
    shutil.copy(x / module, x / "cards.mjs")  # an ES module in a package that does not say so
    (x / "render.mjs").write_text(_RENDER_MJS)
    proc = subprocess.run(["node", "render.mjs", str(x / "svg")], cwd=x, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise ExtraDeckError(f"rendering the React cards failed: {proc.stderr.strip()[-300:]}")


class ExtraDeckError(RuntimeError):
    pass


def _render(svg: Path, out: Path) -> None:
    proc = subprocess.run(["rsvg-convert", "--width", str(FACE_WIDTH), "-o", str(out), str(svg)],
                          capture_output=True, text=True, check=False)
    img = cv2.imread(str(out), cv2.IMREAD_UNCHANGED) if proc.returncode == 0 else None
    if img is None or img.ndim != 3 or img.shape[2] != 4:
        raise ExtraDeckError(f"rsvg-convert could not render {svg.name}: {proc.stderr.strip()}")
    ys, xs = np.nonzero(img[:, :, 3] > 128)
    cv2.imwrite(str(out), img[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1])


def extra_face_dir(name: str) -> Path:
    """Directory of flat faces for an extra deck, fetched and rendered on first use."""
    if name in DEBIAN:
        return debian_face_dir(name)
    if name not in NPM:
        raise ExtraDeckError(f"unknown extra deck {name!r}; known: {', '.join(EXTRA)}")
    out = cache_root() / "decks" / f"{name}-{FACE_WIDTH}"
    codes = [f"{r}{s}" for r in RANKS for s in SUITS]
    if (out / "back.png").is_file() and all((out / f"{c}.png").is_file() for c in codes):
        return out
    for tool in ("npm", "rsvg-convert"):
        if shutil.which(tool) is None:
            raise ExtraDeckError(f"{tool} not found: the extra decks need npm and librsvg2-bin")
    package, version, card_path, back_path = NPM[name]
    with tempfile.TemporaryDirectory() as tmp_:
        tmp = Path(tmp_)
        proc = subprocess.run(["npm", "pack", f"{package}@{version}", "--pack-destination", str(tmp)],
                              capture_output=True, text=True, check=False)
        tarballs = list(tmp.glob("*.tgz"))
        if proc.returncode != 0 or not tarballs:
            raise ExtraDeckError(f"npm pack {package}@{version} failed: {proc.stderr.strip()[-300:]}")
        with tarfile.open(tarballs[0]) as tar:
            tar.extractall(tmp / "x", filter="data")
        if name in REACT:
            _react_svgs(tmp / "x", *REACT[name])
        faces = tmp / "faces"
        faces.mkdir()
        for c in codes:
            _render(tmp / "x" / card_path(c[0], c[1]), faces / f"{c}.png")  # type: ignore[operator]
        _render(tmp / "x" / back_path, faces / "back.png")
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(out, ignore_errors=True)
        shutil.move(str(faces), out)
    return out


if __name__ == "__main__":
    for deck in EXTRA:
        print(deck, extra_face_dir(deck))
    sys.exit(0)
