"""The held-out designs from Debian's card packages (bench/debian_decks.py) convert to whole faces.

Only the conversion is checked (files, sizes, opacity, distinct faces), never the detector on them:
they are held-out decks, and a test must not become a way of tuning on them.  The conversion test
needs the pinned pysolfc-cardsets .deb already downloaded (``python bench/debian_decks.py`` puts it in
``$STUDTABLE_CACHE/debs``); without it, it is skipped, so the suite never needs the network.
"""

from __future__ import annotations

import importlib.util
import itertools
import shutil
import sys
from pathlib import Path
from types import ModuleType

import cv2
import numpy as np
import pytest

_BENCH = Path(__file__).resolve().parents[2] / "bench"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("debian_decks", _BENCH / "debian_decks.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("debian_decks", mod)
    spec.loader.exec_module(mod)
    return mod


dd = _load()


def test_a_design_converts_to_52_distinct_whole_faces(tmp_path: Path) -> None:
    deb = dd.cached_deb("pysolfc-cardsets")
    if deb is None:
        pytest.skip("the pinned pysolfc-cardsets .deb is not downloaded (python bench/debian_decks.py fetches it)")
    if shutil.which("dpkg-deb") is None:
        pytest.skip("dpkg-deb is not installed")
    out = dd.convert("x-pysol-kabale", deb, tmp_path / "kabale")
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted([f"{c}.png" for c in dd.CODES] + ["back.png"])
    small = {}
    for p in out.iterdir():
        img = cv2.imread(str(p), cv2.IMREAD_UNCHANGED)
        assert img.shape == (462, 300, 4), p.name  # 74x114 scaled to 300 px wide, trimmed to the card
        alpha = img[:, :, 3]
        assert (alpha > 128).mean() > 0.99, p.name  # a whole card: only the rounded corners are clear
        assert alpha[img.shape[0] // 2, :].min() == 255 and alpha[:, img.shape[1] // 2].min() == 255, p.name
        small[p.stem] = cv2.resize(img[:, :, :3], (30, 45), interpolation=cv2.INTER_AREA).astype(np.int16)
    # 52 different faces and a back (a wrong file map would repeat one, e.g. one rank for every suit)
    closest = min(float(np.abs(small[a] - small[b]).mean()) for a, b in itertools.combinations(small, 2))
    assert closest > 1.0
    red = {c: float(((small[c][:, :, 2] - small[c][:, :, :2].max(axis=2)) > 80).mean()) for c in ("5h", "5d", "5s", "5c")}
    assert min(red["5h"], red["5d"]) > 0.05 and max(red["5s"], red["5c"]) == 0.0  # suits where they belong


def test_scaling_keeps_transparent_colour_out_of_the_card_edge() -> None:
    # A 20x30 white card whose clear surround is magenta (a GIF's transparent palette entry can be any
    # colour): enlarged 5 times, no visible pixel of the edge may turn pink.
    img = np.zeros((40, 30, 4), np.uint8)
    img[:, :] = (255, 0, 255, 0)
    img[5:35, 5:25] = (255, 255, 255, 255)
    big = dd.scale_card(img, 150)
    visible = big[:, :, 3] > 128
    assert big.shape == (200, 150, 4)
    assert big[:, :, 1][visible].min() >= 240  # green stays up: no magenta mixed in


def test_a_bad_download_is_refused_naming_the_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deb = dd.DEBS["texlive-games"]
    fake = tmp_path / "mirror" / deb.pool_path
    fake.parent.mkdir(parents=True)
    fake.write_bytes(b"not the package")
    monkeypatch.setenv("STUDTABLE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(dd, "MIRROR", (tmp_path / "mirror").as_uri())
    with pytest.raises(dd.DebianDeckError, match=r"SHA256 .*texlive-games 2024\.20250309-2"):
        dd.fetch_deb("texlive-games")
    assert list((tmp_path / "cache" / "debs").iterdir()) == []  # nothing half-written left to be trusted
    fake.unlink()
    with pytest.raises(dd.DebianDeckError, match="could not download texlive-games"):
        dd.fetch_deb("texlive-games")
