"""Cardroom conditions on held-out decks: a chip on a card, a hand over the felt, glare, blur, 720p, JPEG.

    python bench/bench_vision_conditions.py [--decks a,b] [--scenes 5] [--seed 80000] [--only chip,glare]

Each condition is painted onto a rendered table (the same scene with and without it) and
measured on its own, over decks never tuned on (``bench_vision.HELD_OUT``); nothing here
is for tuning (only counts are printed, never a picture or a card's name).

* **Chip on a card**: a chip (a disc 38 mm across with white edge spots and a shadow) on the
  outer corner of the top up card of one seat's row, half on the card: it joins the row's blob.  Counted: the
  seat's *other* cards (untouched: they must read as without the chip) and whether the
  chipped card is still read.
* **A chip protecting the down cards** (on the middle of one of the seat's) and **a stack
  touching the row** (a chip 1 mm over the middle of its long side, where the index corners
  are): the seat's cards, read as without it.
* **A hand over the felt**: a skin-toned forearm and hand with a soft shadow (``--skin``: the tone of
  earlier sessions, or any of the Monk Skin Tone scale's ten), reaching from
  the rail over part of one seat's zone.  Counted: every card the hand does not touch, in
  every seat, read as without the hand (a card it covers may drop); and, through the
  tracker (3 stable frames), whether the published view of the table changes at all while
  the hand comes, stays and goes (it must not).
* **Glare**: a lamp's specular band (``vision.conditions.paint_glare``: 30 mm across at half
  height, washing the glossy cards 0.9 of the way to white at its middle, the matte felt a fifth
  as much) across one up card of the seat, before the camera's noise and JPEG.
* **Blur**: out of focus (Gaussian, sigma 2 px) and motion blur (a 9 px line at any angle),
  before the camera's noise and JPEG.
  Through the tracker (3 stable frames, the first method): the still table for 8 frames, the camera
  shaken (the motion-blurred frame) for 8, still again; whether the published view changes at all
  (it must not: ``Tracker.shake_frames``), and the same with no hold for comparison.
* **720p**: the same table seen by a 1280x720 camera (rendered at that size, calibrated from its
  markers).
* **JPEG**: the camera's stream at quality 70 and at 40 (instead of the 60-92 drawn).

The whole-table conditions are scored like ``bench_vision.py`` (up cards read right, down cards
found, false cards), against the same scenes without them.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402
from dataclasses import replace  # noqa: E402
from pathlib import Path  # noqa: E402

import cv2  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_vision import HELD_OUT, deck_faces  # noqa: E402

from vision.calibration import CalibrationError, calibrate  # noqa: E402
from vision.conditions import (  # noqa: E402
    MONK_SKIN_TONES,
    SKIN,
    gaussian_blur,
    hand_polygon,
    motion_blur,
    paint_chip,
    paint_glare,
    paint_hand,
)
from vision.deck import CODES, enroll, read_face_dir  # noqa: E402
from vision.detect import PARAMS, Detection, Detector, DetectParams  # noqa: E402
from vision.evaluate import Score, score_scene  # noqa: E402
from vision.scene import FaceSet, Scene, TruthCard, render_scene  # noqa: E402
from vision.service import tabled_allowed  # noqa: E402
from vision.tracking import Tracker  # noqa: E402

SKINS = {"light": SKIN, **{f"mst{k + 1}": tone for k, tone in enumerate(MONK_SKIN_TONES)}}


def _street(det: Detector) -> Detector:
    """The detector as the vision service sets it on these scenes (a dealt street: the engine's public
    state says a hand is being bet, vision.service.PhaseGate): no cards tabled."""
    det.at_showdown = tabled_allowed("betting")
    return det

def _img(scene: Scene, pts_mm: np.ndarray) -> np.ndarray:
    return cv2.perspectiveTransform(np.asarray(pts_mm, np.float64).reshape(-1, 1, 2), scene.table_to_image).reshape(-1, 2)


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


WHOLE = ("glare", "gauss2", "motion9", "720p", "jpeg70", "jpeg40")
LABELS = {"glare": "glare (specular band over one seat's up card)", "gauss2": "out of focus (Gaussian sigma 2 px)",
          "motion9": "motion blur 9 px (any angle)", "720p": "1280x720 camera", "jpeg70": "JPEG quality 70",
          "jpeg40": "JPEG quality 40"}
CAUSES = ("lost, covered", "lost, top", "taken for a back", "unread", "suit, in shortlist", "suit, not in shortlist",
          "rank, in shortlist", "rank, not in shortlist", "rank+suit, in shortlist", "rank+suit, not in shortlist")


def _whole_scene(name: str, fs: FaceSet, seed: int, glare_mm: np.ndarray, rng: np.random.Generator) -> Scene:
    """The scene of ``seed`` under one whole-table condition."""
    if name == "glare":
        return render_scene(fs, seed, optics=lambda s: paint_glare(s, glare_mm, rng))
    if name == "gauss2":
        return render_scene(fs, seed, optics=lambda s: gaussian_blur(s.image, 2.0))
    if name == "motion9":
        angle = float(rng.uniform(0, 180))
        return render_scene(fs, seed, optics=lambda s: motion_blur(s.image, 9.0, angle))
    if name == "720p":
        return render_scene(fs, seed, size=(1280, 720))
    return render_scene(fs, seed, jpeg_quality=int(name[4:]))


def _causes(scene: Scene, dets: list[Detection], cands: dict[int, np.ndarray]) -> Counter[str]:
    """Why each up card was not read right (matched to detections as ``score_scene`` matches them):
    lost (no detection; covered or the row's top card), taken for a back, found but unread, or misread
    (suit, rank or both wrong), and then whether the right card was among the candidates the last
    stages chose from (a better judge of close readings could have fixed it) or not."""
    out: Counter[str] = Counter()
    used: set[int] = set()
    tops = {}
    for c in scene.cards:
        if c.role == "up" and c.seat is not None:
            tops[c.seat] = max(tops.get(c.seat, -1), c.order)
    for t in (c for c in scene.cards if c.in_view):
        width = float(np.linalg.norm(t.corners[1] - t.corners[0]))
        if t.role == "half_turned":
            width = float(np.linalg.norm(t.corners[3] - t.corners[0])) / 1.4
        best, best_d = None, width / 3
        for i, d in enumerate(dets):
            if i not in used and (dist := float(np.linalg.norm(d.center - t.center))) < best_d:
                best, best_d = i, dist
        if best is not None:
            used.add(best)
        if not (t.role == "up" or (t.role == "off_felt" and t.face_up)):
            continue
        det = dets[best] if best is not None else None
        if det is not None and det.face_up and det.card == t.code:
            continue
        if det is None:
            out["lost, top" if t.role != "up" or t.order == tops.get(t.seat or -1) else "lost, covered"] += 1
        elif not det.face_up:
            out["taken for a back"] += 1
        elif det.card is None:
            out["unread"] += 1
        else:
            what = "suit" if det.card[0] == t.code[0] else "rank" if det.card[1] == t.code[1] else "rank+suit"
            listed = id(det) in cands and CODES.index(t.code) in {int(v) for v in cands[id(det)]}
            out[f"{what}, {'in' if listed else 'not in'} shortlist"] += 1
    return out


def _params(method: str) -> DetectParams:
    """``both`` or ``both:clf_propose=2:clf_weight=0.04``: DetectParams.recog and any other fields."""
    name, *fields = method.split(":")
    changes: dict[str, object] = {"recog": name}
    for f in fields:
        k, v = f.split("=")
        kind = type(getattr(PARAMS, k))
        if kind is bool and v not in ("True", "False"):
            raise SystemExit(f"error: {k}={v}: True or False")
        changes[k] = v == "True" if kind is bool else kind(v)
    return replace(PARAMS, **changes)  # type: ignore[arg-type]


def _line(sc: Score) -> str:
    return (f"up {sc.up_correct}/{sc.up_total} ({100 * sc.up_accuracy:.2f} %), down {sc.down_found}/{sc.down_total}, "
            f"false {sc.false_cards}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--decks", default=",".join(HELD_OUT))
    ap.add_argument("--scenes", type=int, default=5)
    ap.add_argument("--seed", type=int, default=80000)
    ap.add_argument("--only", default="", help=f"comma-separated conditions among chip, chip_down, chip_side, hand, {', '.join(WHOLE)} (default: all)")
    ap.add_argument("--recog", default=PARAMS.recog, help="comma-separated ways of judging close readings (DetectParams.recog: "
                    "lda, clf, both; default the detector's own; 'both:clf_propose=0' sets other fields too), each run "
                    "on the same frames of the whole-table conditions and the plain ones")
    ap.add_argument("--causes", action="store_true", help="the up cards' errors by cause (tuning decks only)")
    ap.add_argument("--skin", default="light", help="the hand's skin tones, comma-separated: light (the tone of "
                    "earlier sessions), mst1 .. mst10 (the Monk Skin Tone scale, palest to darkest) or all (the ten)")
    ap.add_argument("--vanish-s", type=float, default=Tracker.vanish_s, help="the tracker's hold on a seat whose cards "
                    "vanish (Tracker.vanish_s; 0: none, as before session 31)")
    args = ap.parse_args()
    tones = list(SKINS)[1:] if args.skin == "all" else [t for t in args.skin.split(",") if t]
    if unknown := [t for t in tones if t not in SKINS]:
        print(f"error: unknown skin tone(s) {unknown}; choose among {', '.join(SKINS)} or all", file=sys.stderr)
        return 2
    hand_totals = {tone: Counter[str]() for tone in tones}
    only = {c for c in args.only.split(",") if c} or {"chip", "chip_down", "chip_side", "hand", *WHOLE}
    methods = [m for m in args.recog.split(",") if m]
    decks = [d for d in args.decks.split(",") if d]
    if args.causes and set(decks) & set(HELD_OUT):
        print(f"error: --causes looks into the errors; never on held-out decks: {sorted(set(decks) & set(HELD_OUT))}",
              file=sys.stderr)
        return 2
    cv2.setNumThreads(1)
    totals = {k: 0 for k in ("chip_untouched", "chip_untouched_right", "chip_untouched_base", "chipped", "chipped_read",
                             "chip_down", "chip_down_base", "chip_down_right",
                             "chip_side", "chip_side_base", "chip_side_right", "shake_passes", "shake_passes_unchanged",
                             "shake_unheld_unchanged")}
    base_score = {m: Score() for m in methods}
    whole = {(name, m): Score() for name in ("plain", *WHOLE) for m in methods}
    causes = {(name, m): Counter[str]() for name in ("plain", *WHOLE) for m in methods}
    enroll_s: list[float] = []
    for deck in decks:
        directory = deck_faces(deck)
        faces, back = read_face_dir(directory)
        t0 = time.process_time()
        model = enroll(faces, back, deck)
        enroll_s.append(time.process_time() - t0)
        fs = FaceSet.load(directory)
        for k in range(args.scenes):
            seed = args.seed + k
            rng = np.random.default_rng(seed)
            scene = render_scene(fs, seed)
            calib0 = calibrate(scene.image, scene.layout)
            for m in reversed(methods):  # the first method's detector and detections are the chip and hand runs' base
                det = _street(Detector(model, calib0, params=_params(m)))
                base_dets = det.detect(scene.image)
                base_score[m].add(score_scene(scene, base_dets))
                causes["plain", m].update(_causes(scene, base_dets, det.last_candidates))
            base = _reading(scene, base_dets)
            rows = {c.seat for c in scene.cards if c.in_view and c.role == "up" and c.seat is not None}
            if not rows:
                continue
            seat = sorted(rows)[int(rng.integers(len(rows)))]
            # -- a chip on the seat's top up card
            ups = [(i, c) for i, c in enumerate(scene.cards) if c.in_view and c.role == "up" and c.seat == seat]
            top_i, top = max(ups, key=lambda ic: ic[1].order)
            # on its outer corner, half on the card and half on the felt: the chip joins the row's blob
            centre_mm = calibrate(scene.image, scene.layout).to_table(top.corners[2][None])[0]
            chip_img = paint_chip(scene, centre_mm, rng)
            if "chip" in only:
                chipped = _reading(scene, det.detect(chip_img))
                for i, c in enumerate(scene.cards):
                    if i in base and c.seat == seat and i != top_i:
                        totals["chip_untouched"] += 1
                        totals["chip_untouched_base"] += _right(c, base[i])
                        totals["chip_untouched_right"] += _right(c, chipped[i])
                totals["chipped"] += 1
                totals["chipped_read"] += _right(top, chipped[top_i])
            # -- a chip protecting the seat's down cards (on the middle of one), a stack touching the row's
            # long side (its middle, 1 mm over the edge); their own generators (the rest is drawn as before)
            downs = [c for c in scene.cards if c.in_view and c.role == "down" and c.seat == seat]
            row = sorted((c for _i, c in ups), key=lambda c: c.order)
            across = row[-1].table_corners[3] - row[-1].table_corners[0]
            places = {"chip_down": downs[0].table_corners.mean(axis=0) if downs else None,
                      "chip_side": (row[0].table_corners[0] + row[-1].table_corners[1]) / 2
                      - across / np.linalg.norm(across) * 18.0}
            for n, (name, at) in enumerate(places.items()):
                if name in only and at is not None:
                    seen = _reading(scene, det.detect(paint_chip(scene, at, np.random.default_rng([seed, 100 + n]))))
                    for i, c in enumerate(scene.cards):
                        if i in base and c.seat == seat:
                            totals[name] += 1
                            totals[name + "_base"] += _right(c, base[i])
                            totals[name + "_right"] += _right(c, seen[i])
            # -- a hand over part of the seat's zone, of each skin tone asked for (the first of the scene's own
            # generator, as before there were tones: the figures of earlier sessions stand)
            poly = hand_polygon(scene, seat, float(rng.uniform(40, 160)))
            hand_rng = rng
            for tone in tones:
                hand_img = paint_hand(scene, poly, hand_rng, SKINS[tone])
                hand_rng = np.random.default_rng([seed, 300])
                if "hand" not in only:
                    break
                poly_px = _img(scene, poly)
                handed = _reading(scene, _street(Detector(model, calibrate(scene.image, scene.layout),
                                                          params=_params(methods[0]))).detect(hand_img))
                ht = hand_totals[tone]
                for i, c in enumerate(scene.cards):
                    if i not in base:
                        continue
                    same = handed[i] == base[i]
                    if _touches(c, poly_px):
                        ht["covered"] += 1
                        ht["covered_same"] += same
                    else:
                        ht["untouched"] += 1
                        ht["untouched_same"] += same
                # through the tracker: still table, the hand for 8 frames, still again
                tr_det = _street(Detector(model, calibrate(scene.image, scene.layout), reuse=True, params=_params(methods[0])))
                tracker = Tracker(scene.layout, 3, vanish_s=args.vanish_s)
                frames = [scene.image] * 8 + [hand_img] * 8 + [scene.image] * 8
                views = []
                for f, img in enumerate(frames):
                    obs = tracker.update(f, tr_det.detect(img), f / 12, tr_det.occluders)
                    views.append(obs.seats)
                ht["passes"] += 1
                ht["passes_unchanged"] += all(v == views[7] for v in views[7:])
            # -- the whole-table conditions (each its own generator: adding one changes no other)
            _glare_i, glare = ups[int(rng.integers(len(ups)))]
            for n, name in enumerate(WHOLE):
                if name not in only:
                    continue
                cond = _whole_scene(name, fs, seed, glare.table_corners.mean(axis=0), np.random.default_rng([seed, n]))
                try:
                    calib = calibrate(cond.image, cond.layout)
                except CalibrationError:
                    calib = None  # the markers are not found: nothing is read
                for m in methods:
                    if calib is None:
                        whole[name, m].add(score_scene(cond, []))
                        continue
                    dm = _street(Detector(model, calib, params=_params(m)))
                    dets = dm.detect(cond.image)
                    whole[name, m].add(score_scene(cond, dets))
                    causes[name, m].update(_causes(cond, dets, dm.last_candidates))
                if name == "motion9" and calib is not None:
                    # through the tracker (3 stable frames): the still table, the camera shaken for 8
                    # frames, still again; held (the default) and with no hold (shake_frames=0)
                    cal_still = calibrate(scene.image, scene.layout)
                    for hold, key in ((Tracker.shake_frames, "shake_passes_unchanged"), (0, "shake_unheld_unchanged")):
                        d = _street(Detector(model, cal_still, reuse=True, params=_params(methods[0])))
                        tracker = Tracker(scene.layout, 3, shake_frames=hold)
                        views = []
                        for f in range(24):
                            obs = tracker.update(f, d.detect(cond.image if 8 <= f < 16 else scene.image), f / 12,
                                                 d.occluders, d.shaken)
                            views.append(obs.seats)
                        totals[key] += all(v == views[7] for v in views[7:])
                    totals["shake_passes"] += 1
        print(f"  {deck:20s} done", flush=True)
    t = totals
    print(f"load average: {os.getloadavg()[0]:.2f}; enrollment {np.mean(enroll_s):.1f} s CPU a deck (mean of {len(enroll_s)})")
    for m in methods:
        print(f"[{m}] without any condition: {_line(base_score[m])} in {base_score[m].scenes} scenes")
    if "chip" in only:
        print(f"chip on a card: untouched cards of that seat right {t['chip_untouched_right']}/{t['chip_untouched']} "
              f"(without the chip {t['chip_untouched_base']}/{t['chip_untouched']}); the chipped card read "
              f"{t['chipped_read']}/{t['chipped']}")
    for name, what in (("chip_down", "a chip on a down card: the seat's cards"),
                       ("chip_side", "a chip stack touching the row's long side: the seat's cards")):
        if name in only:
            print(f"{what} right {t[name + '_right']}/{t[name]} (without it {t[name + '_base']}/{t[name]})")
    if "hand" in only:
        for tone in tones:
            ht = hand_totals[tone]
            print(f"hand over the felt ({tone}): cards it does not touch read as without it "
                  f"{ht['untouched_same']}/{ht['untouched']}; cards it touches unchanged {ht['covered_same']}/{ht['covered']}; "
                  f"published view unchanged while it passes {ht['passes_unchanged']}/{ht['passes']}")
    for name in WHOLE:
        if name in only:
            for m in methods:
                print(f"[{m}] {LABELS[name]}: {_line(whole[name, m])}")
    if "motion9" in only:
        print(f"the camera shaken for 8 frames (9 px of motion blur) on a still table: published view unchanged "
              f"{t['shake_passes_unchanged']}/{t['shake_passes']} (with no hold, shake_frames=0: "
              f"{t['shake_unheld_unchanged']}/{t['shake_passes']})")
    if args.causes:
        print("up cards wrong, by cause:")
        for name in ("plain", *WHOLE):
            for m in methods:
                if name == "plain" or name in only:
                    c = causes[name, m]
                    print(f"  [{m}] {name:8s} {sum(c.values()):3d}: " + ", ".join(f"{k} {c[k]}" for k in CAUSES if c[k]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
