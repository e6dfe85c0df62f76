"""Cardroom conditions on held-out decks: a chip on a card, a hand over part of the felt.

    python bench/bench_vision_conditions.py [--decks a,b] [--scenes 5] [--seed 80000]

Each condition is painted onto a rendered table (the same scene with and without it) and
measured on its own, over decks never tuned on (``bench_vision.HELD_OUT``); nothing here
is for tuning (only counts are printed, never a picture or a card's name).

* **Chip on a card**: a chip (a disc 38 mm across with white edge spots and a shadow) on the
  outer corner of the top up card of one seat's row, half on the card: it joins the row's blob.  Counted: the
  seat's *other* cards (untouched: they must read as without the chip) and whether the
  chipped card is still read.
* **A hand over the felt**: a skin-toned forearm and hand with a soft shadow, reaching from
  the rail over part of one seat's zone.  Counted: every card the hand does not touch, in
  every seat, read as without the hand (a card it covers may drop); and, through the
  tracker (3 stable frames), whether the published view of the table changes at all while
  the hand comes, stays and goes (it must not).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import cv2  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_vision import HELD_OUT, deck_faces  # noqa: E402

from vision.calibration import calibrate  # noqa: E402
from vision.deck import enroll, read_face_dir  # noqa: E402
from vision.detect import Detection, Detector  # noqa: E402
from vision.scene import FaceSet, Scene, TruthCard, render_scene  # noqa: E402
from vision.tracking import Tracker  # noqa: E402

SKIN = (120, 160, 215)  # BGR, a light skin tone


def _img(scene: Scene, pts_mm: np.ndarray) -> np.ndarray:
    return cv2.perspectiveTransform(np.asarray(pts_mm, np.float64).reshape(-1, 1, 2), scene.table_to_image).reshape(-1, 2)


def _shadowed(img: np.ndarray, poly_px: np.ndarray, offset_px: float, strength: float) -> None:
    mask = np.zeros(img.shape[:2], np.float32)
    cv2.fillPoly(mask, [np.round(poly_px + offset_px).astype(np.int32)], 1.0)
    mask = cv2.GaussianBlur(mask, (0, 0), max(1.0, offset_px))
    img[:] = (img * (1 - strength * mask[:, :, None])).astype(np.uint8)


def paint_chip(scene: Scene, centre_mm: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A chip on the felt at ``centre_mm``; returns the picture and leaves the scene alone."""
    img = scene.image.copy()
    t = np.linspace(0, 2 * math.pi, 48, endpoint=False)
    ring = np.stack([np.cos(t), np.sin(t)], axis=1)
    disc = _img(scene, centre_mm + 19.0 * ring)
    scale = float(np.linalg.norm(disc[0] - disc[24]) / 38.0)
    _shadowed(img, disc, 2.0 * scale, 0.45)
    colour = tuple(int(v) for v in rng.choice([(30, 30, 190), (170, 60, 30), (25, 25, 25), (40, 140, 40)]))
    cv2.fillPoly(img, [np.round(disc).astype(np.int32)], colour, cv2.LINE_AA)
    for k in range(8):  # the edge spots
        a0, a1 = k * math.pi / 4, k * math.pi / 4 + math.pi / 10
        arc = np.stack([np.cos(np.linspace(a0, a1, 6)), np.sin(np.linspace(a0, a1, 6))], axis=1)
        spot = np.concatenate([centre_mm + 19.0 * arc, centre_mm + 14.0 * arc[::-1]])
        cv2.fillPoly(img, [np.round(_img(scene, spot)).astype(np.int32)], (235, 235, 235), cv2.LINE_AA)
    inner = _img(scene, centre_mm + 11.0 * ring)
    cv2.polylines(img, [np.round(inner).astype(np.int32)], True, (230, 230, 230), max(1, round(scale)), cv2.LINE_AA)
    return img


def hand_polygon(scene: Scene, seat: int, reach: float) -> np.ndarray:
    """A forearm and hand (table mm) from the rail towards the table centre over ``seat``'s zone."""
    s = scene.layout.seats[seat]
    fwd, right = np.array(s.forward), np.array(s.right)
    base = np.array(s.center) - fwd * 170.0 + right * 60.0  # at the rail, a little to the player's right
    tip = base + fwd * (170.0 + reach)
    half = 45.0
    arm = [base - right * half, tip - right * half * 1.1, tip + fwd * 40 - right * 20, tip + fwd * 55,
           tip + fwd * 40 + right * 25, tip + right * half * 1.1, base + right * half]
    return np.array(arm)


def paint_hand(scene: Scene, poly_mm: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    img = scene.image.copy()
    px = _img(scene, poly_mm)
    scale = float(np.linalg.norm(_img(scene, np.array([[0.0, 0.0], [10.0, 0.0]]))[1] - _img(scene, np.array([[0.0, 0.0]]))[0]) / 10)
    _shadowed(img, px, 12.0 * scale, 0.5)
    mask = np.zeros(img.shape[:2], np.uint8)
    cv2.fillPoly(mask, [np.round(px).astype(np.int32)], 255, cv2.LINE_AA)
    shade = np.clip(np.array(SKIN, np.float32) * rng.uniform(0.85, 1.1), 0, 255)
    tex = 1 + 0.04 * rng.standard_normal(img.shape[:2]).astype(np.float32)
    skin = np.clip(shade[None, None, :] * tex[:, :, None], 0, 255).astype(np.uint8)
    alpha = (cv2.GaussianBlur(mask, (0, 0), 1.0).astype(np.float32) / 255)[:, :, None]
    img[:] = (img * (1 - alpha) + skin * alpha).astype(np.uint8)
    return img


def _reading(scene: Scene, dets: list[Detection]) -> dict[int, tuple[bool, str | None]]:
    """Per in-view card (index into scene.cards): (found, read) by the nearest detection."""
    out: dict[int, tuple[bool, str | None]] = {}
    centres = np.array([d.center for d in dets]) if dets else np.zeros((0, 2))
    for k, c in enumerate(scene.cards):
        if not c.in_view or c.role not in ("up", "down"):
            continue
        if not len(centres):
            out[k] = (False, None)
            continue
        dist = np.linalg.norm(centres - c.center, axis=1)
        j = int(dist.argmin())
        ok = dist[j] < 0.35 * float(np.linalg.norm(c.corners[1] - c.corners[0]))
        out[k] = (bool(ok), dets[j].card if ok else None)
    return out


def _right(card: TruthCard, reading: tuple[bool, str | None]) -> bool:
    found, read = reading
    return found and (read == card.code if card.face_up else True)


def _touches(card: TruthCard, poly_px: np.ndarray) -> bool:
    a = np.round(card.corners).astype(np.int32)
    b = np.round(poly_px).astype(np.int32)
    inter, _ = cv2.intersectConvexConvex(a.astype(np.float32), cv2.convexHull(b).astype(np.float32))
    return bool(inter > 1.0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--decks", default=",".join(HELD_OUT))
    ap.add_argument("--scenes", type=int, default=5)
    ap.add_argument("--seed", type=int, default=80000)
    args = ap.parse_args()
    cv2.setNumThreads(1)
    totals = {k: 0 for k in ("chip_untouched", "chip_untouched_right", "chip_untouched_base", "chipped", "chipped_read",
                             "hand_untouched", "hand_untouched_same", "hand_covered", "hand_covered_same",
                             "hand_passes", "hand_passes_unchanged")}
    for deck in [d for d in args.decks.split(",") if d]:
        directory = deck_faces(deck)
        faces, back = read_face_dir(directory)
        model = enroll(faces, back, deck)
        fs = FaceSet.load(directory)
        for k in range(args.scenes):
            seed = args.seed + k
            rng = np.random.default_rng(seed)
            scene = render_scene(fs, seed)
            det = Detector(model, calibrate(scene.image, scene.layout))
            base = _reading(scene, det.detect(scene.image))
            rows = {c.seat for c in scene.cards if c.in_view and c.role == "up" and c.seat is not None}
            if not rows:
                continue
            seat = sorted(rows)[int(rng.integers(len(rows)))]
            # -- a chip on the seat's top up card
            ups = [(i, c) for i, c in enumerate(scene.cards) if c.in_view and c.role == "up" and c.seat == seat]
            top_i, top = max(ups, key=lambda ic: ic[1].order)
            # on its outer corner, half on the card and half on the felt: the chip joins the row's blob
            centre_mm = calibrate(scene.image, scene.layout).to_table(top.corners[2][None])[0]
            chipped = _reading(scene, det.detect(paint_chip(scene, centre_mm, rng)))
            for i, c in enumerate(scene.cards):
                if i in base and c.seat == seat and i != top_i:
                    totals["chip_untouched"] += 1
                    totals["chip_untouched_base"] += _right(c, base[i])
                    totals["chip_untouched_right"] += _right(c, chipped[i])
            totals["chipped"] += 1
            totals["chipped_read"] += _right(top, chipped[top_i])
            # -- a hand over part of the seat's zone
            poly = hand_polygon(scene, seat, float(rng.uniform(40, 160)))
            hand_img = paint_hand(scene, poly, rng)
            poly_px = _img(scene, poly)
            handed = _reading(scene, Detector(model, calibrate(scene.image, scene.layout)).detect(hand_img))
            for i, c in enumerate(scene.cards):
                if i not in base:
                    continue
                same = handed[i] == base[i]
                if _touches(c, poly_px):
                    totals["hand_covered"] += 1
                    totals["hand_covered_same"] += same
                else:
                    totals["hand_untouched"] += 1
                    totals["hand_untouched_same"] += same
            # through the tracker: still table, the hand for 8 frames, still again
            tr_det = Detector(model, calibrate(scene.image, scene.layout), reuse=True)
            tracker = Tracker(scene.layout, 3)
            frames = [scene.image] * 8 + [hand_img] * 8 + [scene.image] * 8
            views = []
            for f, img in enumerate(frames):
                obs = tracker.update(f, tr_det.detect(img), f / 12, tr_det.occluders)
                views.append(obs.seats)
            totals["hand_passes"] += 1
            totals["hand_passes_unchanged"] += all(v == views[7] for v in views[7:])
        print(f"  {deck:20s} done", flush=True)
    t = totals
    print(f"load average: {os.getloadavg()[0]:.2f}")
    print(f"chip on a card: untouched cards of that seat right {t['chip_untouched_right']}/{t['chip_untouched']} "
          f"(without the chip {t['chip_untouched_base']}/{t['chip_untouched']}); the chipped card read "
          f"{t['chipped_read']}/{t['chipped']}")
    print(f"hand over the felt: cards it does not touch read as without it {t['hand_untouched_same']}/{t['hand_untouched']}; "
          f"cards it touches unchanged {t['hand_covered_same']}/{t['hand_covered']}; "
          f"published view unchanged while it passes {t['hand_passes_unchanged']}/{t['hand_passes']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
