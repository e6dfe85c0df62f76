"""The cards' right angles say how a camera is turned off straight down.

Why: session 28 searched a photograph's camera by reading the picture through a dozen turned
cameras and keeping the one whose readings looked surest; the surest-looking readings are not
always right, and the more cameras tried, the likelier a wrong one wins (a wider search read
fewer cards right).  The picture's outlines say the turn without reading a card.  Every corner
of a card is a right angle on the table, and a convex corner of the outline of cards lying on
one another is always a corner of one of them (where two cards' edges cross, the outline turns
inwards).  A camera turned ``tilt`` degrees off straight down squashes the table along the line
of sight: a right angle whose arms lie across that line comes out some degrees off (8 at 30
degrees, arms at 45 degrees to it), and the farther side of the picture more than the near.
The turn that makes the outline's convex corners square again is the camera's (the metric
rectification of a plane from its right angles, as in Liebowitz and Zisserman 1998), up to the
lens's focal length, which is taken to be a phone's (:data:`vision.camera_tilt.PHONE_FOCAL`).

Pure: a foreground mask in, angles and a turn out.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.camera_tilt import GRADIENT_TILT_DEG, PHONE_FOCAL, camera_tilt, most_tilt

#: an arm of a corner is a straight run of the outline at least this many pixels long (full size)
SHORTEST_ARM_PX = 24.0
#: an arm's points lie within this many pixels (root mean square, full size) of its line
MOST_ARM_STRAY_PX = 1.2
#: a corner whose arms meet at less than this sine is no card's corner seen at any modelled tilt
LEAST_SINE = 0.5
#: a right angle off by more than this many degrees counts no more than this (a corner that is not
#: a card's: a rounded corner cut short, a shadow's, two cards' edges joined across a gap)
MOST_ANGLE_ERROR_DEG = 8.0
#: the outline is simplified within this many half-size pixels before its straight runs are found
OUTLINE_TOL_PX = 2.0
#: a simplified outline's edge this short (full-size pixels) between two long ones is a rounded corner
ROUNDED_CORNER_PX = 16.0
#: at least this many corners to say a turn
FEWEST_CORNERS = 6


@dataclass(frozen=True)
class Corner:
    """A convex corner of the outline: where it is and the directions of its two arms (unit, away
    from it), in full-size picture pixels, and how long the shorter arm is."""

    at: np.ndarray
    arm1: np.ndarray
    arm2: np.ndarray
    length: float


def _arm(points: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The line through the middle of a straight run of the outline: a point on it and its direction
    from ``start`` to ``end`` (the run's ends are left out: they curve into the rounded corners); None
    where the run is no one edge (its points stray more than :data:`MOST_ARM_STRAY_PX` from the line:
    the steps of a row of cards, each a little lower than the last, simplified into one run)."""
    k = len(points)
    core = points[int(0.15 * k) : max(int(0.85 * k), int(0.15 * k) + 2)]
    vx, vy, x0, y0 = cv2.fitLine(core.astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
    d = np.array([vx, vy], np.float64)
    q = np.array([x0, y0], np.float64)
    stray = (core - q) @ np.array([-d[1], d[0]])
    if float(np.sqrt(np.mean(stray**2))) > MOST_ARM_STRAY_PX:
        return None
    if float(np.dot(d, end - start)) < 0:
        d = -d
    return q, d


def outline_corners(mask: np.ndarray, scale: float = 2.0) -> list[Corner]:
    """The convex corners of every blob's outline in ``mask`` (the foreground at ``1 / scale`` of the
    picture's size) whose two arms are straight runs at least :data:`SHORTEST_ARM_PX` long."""
    h, w = mask.shape[:2]
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    out: list[Corner] = []
    for cnt in contours:
        area = cv2.contourArea(cnt)
        if area < 2e-4 * w * h or area > 0.25 * w * h:  # specks; blank paper filling the picture
            continue
        pts = cnt.reshape(-1, 2).astype(np.float64) * scale + (scale - 1) / 2
        poly_at = cv2.approxPolyDP(cnt, OUTLINE_TOL_PX, True).reshape(-1, 2)
        flat = cnt.reshape(-1, 2)
        idx = sorted(int(np.flatnonzero((flat == p).all(axis=1))[0]) for p in poly_at)  # (along the outline)
        n = len(idx)
        if n < 3:
            continue
        turn = np.sign(cv2.contourArea(cnt.astype(np.float32), oriented=True))
        runs = []
        for i in range(n):
            a, b = idx[i], idx[(i + 1) % n]
            run = pts[a : b + 1] if b > a else np.vstack([pts[a:], pts[: b + 1]])
            runs.append((float(np.hypot(*(pts[b] - pts[a]))), run, pts[a], pts[b]))
        for i in range(n):
            for gap in (0, 1):  # the two runs meet, or a rounded corner's short run lies between
                first, second = runs[i], runs[(i + 1 + gap) % n]
                if gap and runs[(i + 1) % n][0] > ROUNDED_CORNER_PX:
                    continue
                if min(first[0], second[0]) < SHORTEST_ARM_PX:
                    continue
                arm1, arm2 = _arm(first[1], first[2], first[3]), _arm(second[1], second[2], second[3])
                if arm1 is None or arm2 is None:
                    continue
                (q1, d1), (q2, d2) = arm1, arm2
                cross = float(d1[0] * d2[1] - d1[1] * d2[0])
                if abs(cross) < LEAST_SINE or np.sign(cross) * turn < 0:  # too sharp or blunt; turning inwards
                    continue
                t = np.linalg.solve(np.array([d1, -d2]).T, q2 - q1)
                at = q1 + t[0] * d1
                if not (0 <= at[0] < w * scale and 0 <= at[1] < h * scale):
                    continue
                out.append(Corner(at, -d1, d2, min(first[0], second[0])))
    return out


def angle_errors(corners: list[Corner], picture_to_top: np.ndarray) -> np.ndarray:
    """How many degrees each corner is off a right angle on the table ``picture_to_top`` shows."""
    if not corners:
        return np.zeros(0)
    pts = np.array([[c.at, c.at + 10 * c.arm1, c.at + 10 * c.arm2] for c in corners]).reshape(-1, 1, 2)
    top = cv2.perspectiveTransform(pts, picture_to_top).reshape(-1, 3, 2)
    a, b = top[:, 1] - top[:, 0], top[:, 2] - top[:, 0]
    cosine = np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    out: np.ndarray = np.degrees(np.arcsin(np.clip(np.abs(cosine), 0.0, 1.0)))
    return out


def squareness(corners: list[Corner], picture_to_top: np.ndarray) -> float:
    """How far from square the corners are on that table: the sum of their squared errors in
    degrees, each at most :data:`MOST_ANGLE_ERROR_DEG`, weighted by its shorter arm's length."""
    err = np.minimum(angle_errors(corners, picture_to_top), MOST_ANGLE_ERROR_DEG)
    wts = np.array([c.length for c in corners])
    return float(np.sum(wts * err**2) / max(float(wts.sum()), 1e-9))


@dataclass(frozen=True)
class Turn:
    """The camera's turn the corners say (:func:`vision.camera_tilt.camera_tilt`'s ``tilt_deg`` and
    ``near_deg``), how square they come out through it, and how square straight down."""

    tilt_deg: float
    near_deg: float
    error: float
    flat_error: float
    corners: int


def turn_from_corners(corners: list[Corner], size: tuple[int, int], focal: float = PHONE_FOCAL) -> Turn | None:
    """The turn (up to :data:`vision.camera_tilt.GRADIENT_TILT_DEG`) through which ``corners`` come
    out squarest: a grid of 2 degrees of tilt by 7.5 of direction, then a finer one about the best;
    None with fewer than :data:`FEWEST_CORNERS` corners."""
    if len(corners) < FEWEST_CORNERS:
        return None

    def error(tilt: float, near: float) -> float:
        t = min(tilt, most_tilt(size, near, focal))
        return squareness(corners, np.linalg.inv(camera_tilt(size, t, near, focal)))

    flat = error(0.0, 0.0)
    best = (flat, 0.0, 0.0)
    for tilt in np.arange(2.0, GRADIENT_TILT_DEG + 1e-9, 2.0):
        for near in np.arange(0.0, 360.0, 7.5):
            best = min(best, (error(float(tilt), float(near)), float(tilt), float(near)))
    _e, tilt0, near0 = best
    for tilt in np.arange(max(tilt0 - 1.5, 0.5), tilt0 + 1.51, 0.5):
        for near in np.arange(near0 - 6.0, near0 + 6.01, 1.5):
            best = min(best, (error(float(tilt), float(near)), float(tilt), float(near % 360.0)))
    return Turn(best[1], best[2], best[0], flat, len(corners))
