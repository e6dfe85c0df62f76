"""Pictures without a calibration: hands tabled on wood or cloth, read as ``studtable vision detect`` reads them.

    python bench/bench_vision_pictures.py --dev --scenes 6          # tuning decks, every miss printed
    python bench/bench_vision_pictures.py --scenes 4 --jobs 2       # held-out decks, counts only

Each picture (``vision.scene_picture.render_picture``: 2-3 hands fanned, heaped or spread edge
to edge, no layout, no markers) is read twice on the same frames: with the card scale from lone
cards and rows only (``vision.scale.calibrate_from_cards``, the command before session 23: such a
picture, with no card on its own, was refused), and as the command reads it now
(``vision.scale.read_picture``: ``calibrate_picture``, failing the lone cards the card height the
detector reads best at, and the camera's turn; a picture bigger than ``PICTURE_READ_SIDE`` read on
a copy scaled down to it).
Counted as ``bench_vision_showdown.py`` counts tabled cards: those whose index shows read right,
wrong readings, false cards, cards left unread; and the pictures refused, and the seconds a picture takes (per deck,
each way, then in all).

``--upscale K``: each picture scaled up K times (2.5: a phone's 12 MP photograph, 4000 x 3000), its
truth with it, and read a third way: at its own size (``calibrate_picture`` on it, then the detector),
where the command (``vision.scale.read_picture``) reads a copy scaled down to ``PICTURE_READ_SIDE``.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import cv2  # noqa: E402
from bench_vision import HELD_OUT, TUNING, deck_faces  # noqa: E402
from bench_vision_showdown import ShowdownScore, score_showdown  # noqa: E402

from vision.calibration import CalibrationError  # noqa: E402
from vision.deck import enroll, read_face_dir  # noqa: E402
from vision.detect import Detector  # noqa: E402
from vision.scale import calibrate_from_cards, calibrate_picture, read_picture  # noqa: E402
from vision.scene import FaceSet  # noqa: E402
from vision.scene_picture import render_picture  # noqa: E402

WAYS = ("lone cards only", "as the command reads")
AS_IS = "at its own size"


def one_deck(deck: str, scenes: int, seed0: int, tilt: float = 0.0,
             upscale: float = 1.0) -> tuple[str, dict[str, tuple[ShowdownScore, int, list[float]]]]:
    d = deck_faces(deck)
    faces, back = read_face_dir(d)
    model = enroll(faces, back, deck)
    fs = FaceSet.load(d)
    ways = WAYS + ((AS_IS,) if upscale != 1.0 else ())
    out: dict[str, tuple[ShowdownScore, int, list[float]]] = {w: (ShowdownScore(), 0, []) for w in ways}
    for k in range(scenes):
        scene = render_picture(fs, seed0 + k, tilt_deg=tilt)
        if upscale != 1.0:
            scene = scene.scaled_up(upscale)
        for way in ways:
            score, refused, secs = out[way]
            t0 = time.perf_counter()
            try:
                if way == WAYS[1]:
                    dets = read_picture(scene.image, model)
                else:
                    calib = calibrate_from_cards(scene.image, model.aspect) if way == WAYS[0] \
                        else calibrate_picture(scene.image, model)
                    dets = Detector(model, calib).detect(scene.image)
            except CalibrationError:
                score.add(score_showdown(scene, [], model.layout.index_corners))
                out[way] = (score, refused + 1, secs)
                continue
            secs.append(time.perf_counter() - t0)
            s = score_showdown(scene, dets, model.layout.index_corners)
            s.misses = [f"{deck}: {m}" for m in s.misses]
            score.add(s)
    return deck, out


def _star(args: tuple[str, int, int, float, float]) -> tuple[str, dict[str, tuple[ShowdownScore, int, list[float]]]]:
    cv2.setNumThreads(1)
    return one_deck(*args)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--decks", default="", help="comma-separated decks (default: held out; with --dev the tuning ones)")
    ap.add_argument("--scenes", type=int, default=4)
    ap.add_argument("--seed", type=int, default=95_000)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--tilt", type=float, default=0.0,
                    help="the camera this many degrees off straight down (vision.scene_picture.camera_tilt; default 0)")
    ap.add_argument("--upscale", type=float, default=1.0,
                    help="each picture scaled up this many times (2.5: a phone's 12 MP), also read at its own size")
    ap.add_argument("--dev", action="store_true", help="tuning decks only; prints every miss")
    args = ap.parse_args()
    cv2.setNumThreads(1)
    decks = [d for d in args.decks.split(",") if d] or list(TUNING if args.dev else HELD_OUT)
    if args.dev and set(decks) & set(HELD_OUT):
        print(f"error: --dev never scores held-out decks: {sorted(set(decks) & set(HELD_OUT))}", file=sys.stderr)
        return 1
    work = [(deck, args.scenes, args.seed, args.tilt, args.upscale) for deck in decks]
    if args.jobs > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
            results = list(pool.imap(_star, work))
    else:
        results = [_star(w) for w in work]
    ways = WAYS + ((AS_IS,) if args.upscale != 1.0 else ())
    for deck, out in results:
        line = "  ".join(f"{r} refused, {s.visible_right}/{s.visible} wrong {s.wrong} false {s.false_cards} unread {s.unread}"
                         for s, r, _t in (out[w] for w in ways))
        print(f"  {deck:24s} {line}")
    for way in ways:
        total, refused, secs = ShowdownScore(), 0, []
        for _deck, out in results:
            s, r, t = out[way]
            total.add(s)
            refused += r
            secs += t
        med = sorted(secs)[len(secs) // 2] if secs else float("nan")
        print(f"{way:22s} refused {refused}/{len(decks) * args.scenes} pictures; index visible "
              f"{total.visible_right}/{total.visible} ({100 * total.visible_right / max(total.visible, 1):.1f} %), "
              f"wrong {total.wrong}, false {total.false_cards}, unread {total.unread}; median {med:.1f} s a picture read")
        if args.dev and way == WAYS[1]:
            for m in total.misses:
                print("  " + m)
    print(f"({len(decks)} {'tuning' if args.dev else 'held-out'} decks x {args.scenes} pictures, seeds "
          f"{args.seed}-{args.seed + args.scenes - 1}, camera tilt {args.tilt:g} deg, scaled up {args.upscale:g} times; load {os.getloadavg()[0]:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
