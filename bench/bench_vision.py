"""Vision bench: accuracy on held-out decks, speed on one core, tracker frame rate, and a naive baseline.

    python bench/bench_vision.py                 # the full run (a few minutes)
    python bench/bench_vision.py --scenes 4 --frames 40   # a quick look
    python bench/bench_vision.py --dev --jobs 2   # development: tuning decks only, ours only, no speed run
    python bench/bench_vision.py --speed-only     # the speed run and the tracker's frame rate alone

What it measures, all in one run:

* accuracy on scenes rendered from decks that were never looked at or tuned
  on (HELD_OUT: nine Aisleriot decks, four designs from npm, see ``extra_decks.py``, which needs
  npm, node and rsvg-convert, and seven from Debian's card packages, see ``debian_decks.py``, which
  needs dpkg-deb and, for x-jeux-v4, pdftocairo from poppler-utils): up cards identified correctly, down cards found,
  false cards per scene; each deck is enrolled from its flat faces exactly as
  a cardroom would (``vision.deck.enroll`` on the 52 face files and the back);
* the same scenes read by a naive baseline: each blob is one card, recognised
  by matching the whole card against the 52 whole faces (what the published
  open-source card detectors do);
* speed: median milliseconds per 1920x1080 frame of a full 8-seat table at
  sixth street (48 cards), detection + recognition + seat assignment, on one
  core (``cv2.setNumThreads(1)``, single-threaded BLAS), over ``--frames`` frames;
* the frame rate the tracker sustains when fed those frames back to back.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one core, before numpy loads BLAS

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

# this tree's packages, not the installed (editable) ones: run from a git worktree, the bench measures
# that worktree's code (without this line it imported the main checkout's vision)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import cv2  # noqa: E402
import numpy as np  # noqa: E402
from extra_decks import DEBIAN, EXTRA, NPM, extra_face_dir  # noqa: E402

from vision.calibration import calibrate  # noqa: E402
from vision.deck import canonical_card, enroll, read_face_dir  # noqa: E402
from vision.deckart import face_dir, list_decks  # noqa: E402
from vision.detect import Detection, Detector  # noqa: E402
from vision.evaluate import Score, score_scene  # noqa: E402
from vision.scene import FaceSet, render_scene  # noqa: E402
from vision.service import tabled_allowed  # noqa: E402
from vision.tracking import Tracker  # noqa: E402

# Decks used while developing (looked at, tuned on) and decks kept out of sight for this report.
TUNING = ("anglo", "tigullio", "paris", "bellot", "simplistic", "berlin", "ornamental", "gnomangelo",
          "lattmann", "swiss-xvii", "neoclassical_4_color", "tango",
          # held out until session 5; after six runs these three held 32 of the 40 errors left, in ways
          # no tuning deck showed, so they were opened up and a fresh held-out set took their place
          "plastic", "slavic_costumes", "tango_nuevo",
          # held out in session 11; after the bisect of its loss (151 -> 68/153 up, vision/index_layout.py's
          # scan tolerance, 8545896) it had steered work, so it is a tuning deck since (issue #22)
          "x-pysol-kabale",
          # since session 17: three hard PySol designs chosen as tuning decks, to look at the kinds of
          # failure the held-out hard designs count without looking at those (debian_decks.py)
          "x-pysol-india-pantheon", "x-pysol-transformation", "x-pysol-joan-darc",
          # since session 32: this bench's held-out run printed its first fifteen errors, momoko's card codes
          # (session 11's slip again); a design that was looked at is tuned on, and six hard Debian designs
          # stay held out (the six)
          "x-pysol-momoko")
CPU_MS: list[float] = []
#: What the engine's public state says of these scenes, as the vision service passes it to the detector
#: (vision.service.PhaseGate): dealt streets, 3rd to 7th, a hand being bet: no cards tabled.
STREET = tabled_allowed("betting")
HELD_OUT = ("ancient_french", "anglo_modern", "dondorf", "guyenne-classic", "rheinland",
            "orell", "atlasnye", "anglo_poker", "tarocco",
            *NPM,  # designs from npm (extra_decks.py), since sessions 5 and 10
            *(d for d in DEBIAN if d not in TUNING))  # since session 11: hard designs from Debian's card
# packages (debian_decks.py); x-pysol-kabale left them for TUNING after the bisect of its loss (#22)


def deck_faces(deck: str) -> Path:
    """Flat faces of an Aisleriot deck or of one of the extra (npm) designs."""
    return extra_face_dir(deck) if deck in EXTRA else face_dir(deck)


class WholeCardBaseline:
    """Naive recognizer: every blob is one card; match the whole card against whole faces."""

    def __init__(self, detector: Detector, faces: dict[str, np.ndarray], back: np.ndarray | None) -> None:
        self.det = detector
        aspect = detector.deck.aspect
        size = (24, round(24 * aspect))
        vecs, labels = [], []
        for code, img in [*faces.items(), *([("back", back)] if back is not None else [])]:
            card = cv2.resize(canonical_card(img, aspect), size, interpolation=cv2.INTER_AREA)
            for view in (card, cv2.rotate(card, cv2.ROTATE_180)):
                v = view.astype(np.float32).ravel()
                v -= v.mean()
                vecs.append(v / (np.linalg.norm(v) + 1e-6))
                labels.append(code)
        self.t = np.stack(vecs)
        self.labels = labels
        self.size = size

    def detect(self, frame: np.ndarray) -> list[Detection]:
        out = []
        d = self.det
        for tab in d.segmenter.blobs(frame):
            area = cv2.contourArea(tab)
            if area < 0.2 * d.w_mm * d.h_mm:
                continue
            (cx, cy), (rw, rh), ang = cv2.minAreaRect(tab)
            if area / max(rw * rh, 1e-6) < 0.7 or max(rw, rh) < 0.5 * d.h_mm or max(rw, rh) > 3 * d.h_mm:
                continue
            box = cv2.boxPoints(((cx, cy), (rw, rh), ang)).astype(np.float64)
            if np.linalg.norm(box[1] - box[0]) > np.linalg.norm(box[2] - box[1]):
                box = np.roll(box, 1, axis=0)
            img_pts = d.calib.to_image(box).astype(np.float32)
            w, h = self.size
            m = cv2.getPerspectiveTransform(img_pts, np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32))
            crop = cv2.warpPerspective(frame, m, (w, h), flags=cv2.INTER_AREA).astype(np.float32).ravel()
            crop -= crop.mean()
            crop /= np.linalg.norm(crop) + 1e-6
            label = self.labels[int(np.argmax(self.t @ crop))]
            up = label != "back"
            out.append(Detection(label if up else None, up, d.calib.to_image(box), box, 0.0))
        return out


def _one_deck(deck: str, scenes: int, seed0: int, baseline: bool) -> tuple[str, Score, Score]:
    d = deck_faces(deck)
    faces, back = read_face_dir(d)
    model = enroll(faces, back, deck)
    fs = FaceSet.load(d)
    sc_deck, base = Score(), Score()
    for k in range(scenes):
        scene = render_scene(fs, seed0 + k)
        calib = calibrate(scene.image, scene.layout)
        det = Detector(model, calib)
        det.at_showdown = STREET
        sc_deck.add(score_scene(scene, det.detect(scene.image)))
        if baseline:
            base.add(score_scene(scene, WholeCardBaseline(det, faces, back).detect(scene.image)))
    sc_deck.errors = [f"{deck}: {e}" for e in sc_deck.errors]
    return deck, sc_deck, base


def _one_deck_star(args: tuple[str, int, int, bool]) -> tuple[str, Score, Score]:
    cv2.setNumThreads(1)
    return _one_deck(*args)


def accuracy(decks: list[str], scenes: int, seed0: int, baseline: bool = True,
             jobs: int = 1) -> tuple[Score, Score, dict[str, Score]]:
    ours, base = Score(), Score()
    per_deck: dict[str, Score] = {}
    work = [(deck, scenes, seed0, baseline) for deck in decks]
    if jobs > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            results = pool.imap(_one_deck_star, work)
            results = list(_report(results))
    else:
        results = list(_report(map(_one_deck_star, work)))
    for deck, sc_deck, b in results:
        per_deck[deck] = sc_deck
        ours.add(sc_deck)
        base.add(b)
    return ours, base, per_deck


def _report(results):  # type: ignore[no-untyped-def]
    for deck, sc_deck, b in results:
        print(f"  {deck:18s} up {sc_deck.up_correct}/{sc_deck.up_total}  down {sc_deck.down_found}/{sc_deck.down_total}"
              f"  false {sc_deck.false_cards}", flush=True)
        yield deck, sc_deck, b


def speed(deck: str, frames: int, distinct: int, seed0: int) -> tuple[list[float], dict[str, float], int]:
    d = deck_faces(deck)
    faces, back = read_face_dir(d)
    model = enroll(faces, back, deck)
    fs = FaceSet.load(d)
    rendered = []
    for k in range(distinct):
        scene = render_scene(fs, seed0 + k, seats=8, street=6, all_active=True, close_up=False,
                             off_felt=False, half_turned=False)
        rendered.append((scene, calibrate(scene.image, scene.layout)))
    times, cpu = [], []
    cards = 0
    dets_by_pose = [Detector(model, calib) for _scene, calib in rendered]  # built once per camera pose
    for det in dets_by_pose:
        det.at_showdown = STREET  # sixth street, as the service reads it
    for i in range(frames):
        scene, calib = rendered[i % distinct]
        det = dets_by_pose[i % distinct]
        t0, c0 = time.perf_counter(), time.process_time()
        dets = det.detect(scene.image)
        for dd in dets:  # seat assignment
            calib.layout.seat_at(dd.table_center)
        times.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
        cards += len(dets)
    CPU_MS[:] = cpu
    # Tracker throughput, one camera pose, frames back to back through detection + tracking:
    # (a) every frame read afresh (a hand dealing somewhere changes some blob every frame), and
    # (b) the service's detector (reuse=True) on a still table with new sensor noise each frame.
    scene, calib = rendered[0]
    rng = np.random.default_rng(1)
    noisy = [np.clip(scene.image + rng.normal(0, 3, scene.image.shape), 0, 255).astype(np.uint8) for _ in range(8)]
    fps = {}
    for name, reuse in (("cold", False), ("still", True)):
        det = Detector(model, calib, reuse=reuse)
        det.at_showdown = STREET
        tr = Tracker(calib.layout, 5)
        t0 = time.perf_counter()
        for i in range(frames):
            tr.update(i, det.detect(noisy[i % len(noisy)]), time.perf_counter(), det.occluders)
        fps[name] = frames / (time.perf_counter() - t0)
    return times, fps, cards // frames


def dev(args: argparse.Namespace) -> int:
    """Tuning decks only: what development is scored on (the held-out decks stay unseen)."""
    decks = [d for d in args.decks.split(",") if d] if args.decks != ",".join(HELD_OUT) else list(TUNING)
    leaked = sorted(set(decks) & set(HELD_OUT))
    if leaked:
        print(f"error: --dev never scores held-out decks: {leaked}", file=sys.stderr)
        return 1
    t0 = time.time()
    ours, _, _ = accuracy(decks, args.scenes, args.seed, baseline=False, jobs=args.jobs)
    print(f"  ({time.time() - t0:.0f} s)")
    print(f"dev (tuning decks) up {ours.up_accuracy * 100:6.2f}% ({ours.up_correct}/{ours.up_total})  "
          f"down {ours.down_recall * 100:6.2f}% ({ours.down_found}/{ours.down_total})  "
          f"false/scene {ours.false_per_scene:.3f} ({ours.false_cards} in {ours.scenes})")
    for e in ours.errors:
        print("  " + e)
    if "--frames" in sys.argv:
        times, _fps, cards = speed("anglo", args.frames, min(20, args.frames), args.seed + 5000)
        print(f"speed (anglo, {cards} cards/frame): median {statistics.median(times):.1f} ms wall, "
              f"{statistics.median(CPU_MS):.1f} ms CPU; load {os.getloadavg()[0]:.2f}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--decks", default=",".join(HELD_OUT), help="comma-separated Aisleriot decks (default: held out)")
    ap.add_argument("--scenes", type=int, default=20, help="scenes per deck (default 20)")
    ap.add_argument("--frames", type=int, default=200, help="frames for the speed run (default 200)")
    ap.add_argument("--speed-deck", default="guyenne-classic")
    ap.add_argument("--seed", type=int, default=10_000)
    ap.add_argument("--dev", action="store_true",
                    help="development scoring: the tuning decks only (never the held-out ones), no baseline, "
                         "no speed run unless --frames is given; prints every error")
    ap.add_argument("--jobs", type=int, default=1, help="processes for the accuracy run (not for the speed run)")
    ap.add_argument("--speed-only", action="store_true",
                    help="only the speed run and the tracker's frame rate (no accuracy scenes: the held-out decks stay unscored)")
    args = ap.parse_args()
    cv2.setNumThreads(1)
    if args.dev:
        return dev(args)
    if args.speed_only:
        _speed_report(args)
        return 0
    decks = [d for d in args.decks.split(",") if d]
    missing = [d for d in decks if d not in list_decks() and d not in EXTRA]
    if missing:
        print(f"error: decks not installed: {missing}; apt-get install gnome-cards-data", file=sys.stderr)
        return 1
    print(f"accuracy: {len(decks)} held-out decks x {args.scenes} scenes (2-8 seats, 3rd-7th street, tilt <= 25 deg)")
    t0 = time.time()
    ours, base, _ = accuracy(decks, args.scenes, args.seed, jobs=args.jobs)
    print(f"  ({time.time() - t0:.0f} s)")
    print(f"ours      up cards {ours.up_accuracy * 100:6.2f}% ({ours.up_correct}/{ours.up_total})  "
          f"down found {ours.down_recall * 100:6.2f}% ({ours.down_found}/{ours.down_total})  "
          f"false cards/scene {ours.false_per_scene:.3f} ({ours.false_cards} in {ours.scenes})")
    print(f"baseline  up cards {base.up_accuracy * 100:6.2f}% ({base.up_correct}/{base.up_total})  "
          f"down found {base.down_recall * 100:6.2f}% ({base.down_found}/{base.down_total})  "
          f"false cards/scene {base.false_per_scene:.3f}   [whole-card template matching, one card per blob]")
    print(f"targets   up >= 99.5%, down >= 99%, false <= 0.1/scene: "
          f"{'MET' if ours.up_accuracy >= 0.995 and ours.down_recall >= 0.99 and ours.false_per_scene <= 0.1 else 'NOT MET'}")
    # A held-out deck's errors are never printed (counts only): looking at them would make it a tuning deck.
    errs = [e for e in ours.errors if e.split(":", 1)[0] not in HELD_OUT][:15]
    if errs:
        print("first errors (tuning decks only):\n  " + "\n  ".join(errs))
    _speed_report(args)
    return 0


def _speed_report(args: argparse.Namespace) -> None:
    times, fps, cards = speed(args.speed_deck, args.frames, min(20, args.frames), args.seed + 5000)
    med = statistics.median(times)
    p90 = float(np.percentile(times, 90))
    cpu_med = statistics.median(CPU_MS)
    print(f"speed: 1920x1080, 8 seats at 6th street ({cards} cards/frame), one core, {len(times)} frames: "
          f"median {med:.1f} ms wall, {cpu_med:.1f} ms CPU; p90 {p90:.1f} ms wall ({1000 / med:.1f} frames/s); "
          f"target <= 33 ms: {'MET' if med <= 33 else 'NOT MET'} (wall), {'MET' if cpu_med <= 33 else 'NOT MET'} (CPU)")
    print(f"tracker sustains {fps['cold']:.1f} frames/s reading every frame afresh, "
          f"{fps['still']:.1f} frames/s on a still table with the service's blob reuse (fresh sensor noise each frame)")
    print(f"machine load average while running: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    sys.exit(main())
