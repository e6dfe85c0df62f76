"""Scoring detections against a rendered scene's ground truth (used by the tests and the bench).

A detection matches a true card when their centres are within a third of a
card width in the image.  Up cards count as correct only with the right code;
down cards count as found when a face-down detection matches them; every
detection that matches nothing is a false card.  Cards the picture cuts off
(a corner outside the frame) are not scored, and a detection on one is not a
false card either: there is a card there.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from vision.detect import Detection
from vision.scene import Scene


@dataclass
class Score:
    up_total: int = 0
    up_correct: int = 0
    down_total: int = 0
    down_found: int = 0
    false_cards: int = 0
    scenes: int = 0
    errors: list[str] = field(default_factory=list)

    def add(self, other: Score) -> None:
        self.up_total += other.up_total
        self.up_correct += other.up_correct
        self.down_total += other.down_total
        self.down_found += other.down_found
        self.false_cards += other.false_cards
        self.scenes += other.scenes
        self.errors.extend(other.errors)

    @property
    def up_accuracy(self) -> float:
        return self.up_correct / self.up_total if self.up_total else 1.0

    @property
    def down_recall(self) -> float:
        return self.down_found / self.down_total if self.down_total else 1.0

    @property
    def false_per_scene(self) -> float:
        return self.false_cards / self.scenes if self.scenes else 0.0


def score_scene(scene: Scene, dets: list[Detection]) -> Score:
    sc = Score(scenes=1)
    truth = [c for c in scene.cards if c.in_view]
    used: set[int] = set()
    for t in truth:
        width = float(np.linalg.norm(t.corners[1] - t.corners[0]))
        if t.role == "half_turned":
            width = float(np.linalg.norm(t.corners[3] - t.corners[0])) / 1.4
        best, best_d = None, width / 3
        for i, d in enumerate(dets):
            if i in used:
                continue
            dist = float(np.linalg.norm(d.center - t.center))
            if dist < best_d:
                best, best_d = i, dist
        if best is not None:
            used.add(best)
        det = dets[best] if best is not None else None
        tag = f"seed {scene.seed} seat {t.seat} {t.role} #{t.order} {t.code}"
        if t.role == "up" or (t.role == "off_felt" and t.face_up):
            sc.up_total += 1
            if det is not None and det.face_up and det.card == t.code:
                sc.up_correct += 1
            else:
                sc.errors.append(f"{tag}: read {det.card if det else 'nothing'}")
        elif t.role == "down" or t.role == "off_felt":
            sc.down_total += 1
            if det is not None and not det.face_up:
                sc.down_found += 1
            else:
                sc.errors.append(f"{tag} (down): {'read as ' + str(det.card) if det else 'not found'}")
    cut_off = [c for c in scene.cards if not c.in_view]
    for i, d in enumerate(dets):
        if i not in used and not any(
            np.linalg.norm(d.center - c.center) < np.linalg.norm(c.corners[1] - c.corners[0]) / 3 for c in cut_off
        ):
            sc.false_cards += 1
            sc.errors.append(f"seed {scene.seed}: false card {d.card} face_up={d.face_up} at {np.round(d.center)}")
    return sc
