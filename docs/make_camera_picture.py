"""Make docs/screenshots/camera-view.png: what the demo's simulated camera sees on fifth street,
with what the vision service read drawn on top (green: a card read, yellow: a card face down,
red: something irregular).  Usage: python docs/make_camera_picture.py [--out PATH] [--seed N]"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import cv2
import numpy as np

from engine.cards import DECK
from vision.calibration import calibrate
from vision.camera_sim import TableCamera
from vision.deck import enroll, read_face_dir
from vision.deckart import face_dir
from vision.detect import Detector
from vision.scene import FaceSet
from vision.tracking import Tracker


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("docs/screenshots/camera-view.png"))
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args()
    d = face_dir("anglo")
    faces, back = read_face_dir(d)
    camera = TableCamera(FaceSet.load(d), 6, seed=args.seed)
    calib = calibrate(camera.frame(), camera.layout)
    deck = [str(c) for c in DECK]
    random.Random(args.seed).shuffle(deck)
    for street in range(5):
        for seat in range(1, 7):
            if seat == 4 and street >= 3:
                continue  # seat 4 folded on fifth street... and its cards stay for the picture
            camera.deal(seat, deck.pop(), street >= 2)
    camera.pitch_off_felt(5, deck.pop(), True)  # a card on the rail: irregular
    detector, tracker = Detector(enroll(faces, back, "anglo"), calib), Tracker(calib.layout, 1)
    frame = camera.frame()
    found = detector.detect(frame)
    obs = tracker.update(1, found, 0.0)
    out = frame.copy()
    off = {c for kind, _, c in obs.irregular if kind == "off_felt"}
    for det in found:
        colour = (0, 0, 255) if det.card in off and det.card else (60, 220, 60) if det.face_up else (0, 220, 255)
        cv2.polylines(out, [np.round(det.corners).astype(np.int32)], True, colour, 3, cv2.LINE_AA)

    def label(text: str, at: np.ndarray, colour: tuple[int, int, int]) -> None:
        (w, h), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 0.9, 2)
        x, y = int(at[0] - w / 2), int(at[1])
        cv2.rectangle(out, (x - 8, y - h - 10), (x + w + 8, y + 10), (30, 30, 30), -1)
        cv2.putText(out, text, (x, y), cv2.FONT_HERSHEY_SIMPLEX, 0.9, colour, 2, cv2.LINE_AA)

    for n, (up, down) in sorted(obs.seats.items()):
        seat = calib.layout.seats[n]
        inward = np.array(seat.center) + np.array(seat.forward) * 190
        px = calib.to_image(np.array([inward], np.float64))[0]
        label(f"{n}: {' '.join(up)} +{down}", px, (255, 255, 255))
    for kind, n, card in obs.irregular:
        det = next(d for d in found if d.card == card)
        label(f"{kind.replace('_', ' ')}: seat {n}", det.center + np.array([0.0, -70.0]), (80, 80, 255))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(args.out), cv2.resize(out, (1280, 720), interpolation=cv2.INTER_AREA))
    print(f"{args.out}: {len(found)} cards, irregular {obs.irregular}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
