"""Deck designs from outside Debian's gnome-cards-data, for the vision bench's held-out set.

After six runs of the Aisleriot held-out decks, three of them were opened up for tuning
(see ``bench_vision.py``); these designs took their place, never looked at while tuning.
They are SVG decks published on the npm registry under free licences, fetched with
``npm pack`` (pinned versions) and rendered with ``rsvg-convert`` into the same face cache
as the Aisleriot decks, one file per card trimmed to the card's opaque pixels.

    python bench/extra_decks.py          # fetch and render them all (needs npm and rsvg-convert)
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

from vision.deckart import FACE_WIDTH, cache_root

RANKS = "A23456789TJQK"
SUITS = "shdc"


def _heruka(variant: str) -> tuple[str, str, object, str]:
    return ("@heruka_urgyen/react-playing-cards", "0.5.0",
            lambda r, s: f"package/src/images/{variant}/{r}{s.upper()}.svg", "package/src/images/back.svg")


# name -> (npm package, version, card path in the tarball, back path); licences: MIT (both)
EXTRA = {
    "x-cardsjs": ("cardsJS", "1.1.1", lambda r, s: f"package/dist/cards/{'10' if r == 'T' else r}{s.upper()}.svg",
                  "package/dist/cards/Red_Back.svg"),
    # two of the package's four variants: the others differ from these only in suit colours
    "x-heruka-2color": _heruka("2color"),
    "x-heruka-4color-bf": _heruka("4color-bf"),
}


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
    if name not in EXTRA:
        raise ExtraDeckError(f"unknown extra deck {name!r}; known: {', '.join(EXTRA)}")
    out = cache_root() / "decks" / f"{name}-{FACE_WIDTH}"
    codes = [f"{r}{s}" for r in RANKS for s in SUITS]
    if (out / "back.png").is_file() and all((out / f"{c}.png").is_file() for c in codes):
        return out
    for tool in ("npm", "rsvg-convert"):
        if shutil.which(tool) is None:
            raise ExtraDeckError(f"{tool} not found: the extra decks need npm and librsvg2-bin")
    package, version, card_path, back_path = EXTRA[name]
    with tempfile.TemporaryDirectory() as tmp_:
        tmp = Path(tmp_)
        proc = subprocess.run(["npm", "pack", f"{package}@{version}", "--pack-destination", str(tmp)],
                              capture_output=True, text=True, check=False)
        tarballs = list(tmp.glob("*.tgz"))
        if proc.returncode != 0 or not tarballs:
            raise ExtraDeckError(f"npm pack {package}@{version} failed: {proc.stderr.strip()[-300:]}")
        with tarfile.open(tarballs[0]) as tar:
            tar.extractall(tmp / "x", filter="data")
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
