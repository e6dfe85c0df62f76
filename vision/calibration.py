"""Calibration: ArUco markers on the layout -> the image-to-table homography.

A calibration is the layout (seat zones, felt, dealer area, marker places, in
mm) plus one homography from image pixels to table millimetres for one camera
pose.  It is found once, when the camera is mounted, from the printed markers
(``studtable vision calibrate``), and saved as JSON; per frame the detector
only applies it, because marker detection costs more than the whole per-frame
budget on a 1080p frame.

Pure: arrays in, a :class:`Calibration` out.  Reading and writing files is the
CLI's business.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from vision.layout import ARUCO_DICT, TableLayout

MIN_MARKERS = 2


class CalibrationError(ValueError):
    """The markers did not give a usable homography; the message says what was seen."""


@dataclass(frozen=True)
class Calibration:
    layout: TableLayout
    image_to_table: np.ndarray  # 3x3
    image_size: tuple[int, int]  # (width, height)
    markers_seen: tuple[int, ...] = ()
    reprojection_mm: float = 0.0

    @functools.cached_property
    def table_to_image(self) -> np.ndarray:
        return np.linalg.inv(self.image_to_table)

    def to_table(self, pts: np.ndarray) -> np.ndarray:
        """Image pixel points (N,2) -> table mm (N,2)."""
        return cv2.perspectiveTransform(np.asarray(pts, np.float64).reshape(-1, 1, 2), self.image_to_table).reshape(-1, 2)

    def to_image(self, pts: np.ndarray) -> np.ndarray:
        return cv2.perspectiveTransform(np.asarray(pts, np.float64).reshape(-1, 1, 2), self.table_to_image).reshape(-1, 2)

    def px_per_mm(self, table_pt: tuple[float, float]) -> float:
        """Local image scale at a table point (geometric mean of the two axes)."""
        x, y = table_pt
        (a, b, c), (d, e, f), (g, h, i) = self._t2i_rows

        def image(u: float, v: float) -> tuple[float, float]:  # plain floats: called per row, per frame
            w = g * u + h * v + i
            return (a * u + b * v + c) / w, (d * u + e * v + f) / w

        (x0, y0), (x1, y1), (x2, y2) = image(x, y), image(x + 10, y), image(x, y + 10)
        return math.sqrt(math.hypot(x1 - x0, y1 - y0) * math.hypot(x2 - x0, y2 - y0)) / 10

    @functools.cached_property
    def _t2i_rows(self) -> tuple[tuple[float, ...], ...]:
        return tuple(tuple(float(v) for v in row) for row in self.table_to_image)

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": 1,
            "image_size": list(self.image_size),
            "image_to_table": self.image_to_table.tolist(),
            "markers_seen": list(self.markers_seen),
            "reprojection_mm": round(self.reprojection_mm, 3),
            "layout": self.layout.to_dict(),
        }

    def dumps(self) -> str:
        return json.dumps(self.to_dict(), indent=1)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Calibration:
        if d.get("version") != 1:
            raise CalibrationError(f"calibration version {d.get('version')!r} is not supported (expected 1)")
        try:
            h = np.array(d["image_to_table"], np.float64)
            if h.shape != (3, 3):
                raise ValueError("image_to_table must be 3x3")
            w, hh = d["image_size"]
            return cls(
                layout=TableLayout.from_dict(d["layout"]),
                image_to_table=h,
                image_size=(int(w), int(hh)),
                markers_seen=tuple(int(i) for i in d.get("markers_seen", ())),
                reprojection_mm=float(d.get("reprojection_mm", 0.0)),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise CalibrationError(f"calibration file is malformed: {e}") from e


def aruco_dictionary() -> Any:
    return cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, ARUCO_DICT))


def find_markers(image: np.ndarray) -> dict[int, np.ndarray]:
    """ArUco marker id -> its 4 image corners (TL, TR, BR, BL of the printed marker)."""
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    detector = cv2.aruco.ArucoDetector(aruco_dictionary(), params)
    corners, ids, _rejected = detector.detectMarkers(gray)
    if ids is None:
        return {}
    return {int(i): c.reshape(4, 2).astype(np.float64) for c, i in zip(corners, ids.ravel(), strict=True)}


def calibrate(image: np.ndarray, layout: TableLayout) -> Calibration:
    """Find the layout's markers in ``image`` and fit the homography (RANSAC over all corners)."""
    found = find_markers(image)
    known = {i: c for i, c in found.items() if i in layout.markers}
    if len(known) < MIN_MARKERS:
        raise CalibrationError(
            f"found {len(known)} of the layout's ArUco markers ({ARUCO_DICT}, ids {sorted(layout.markers)}) "
            f"in the image (other markers seen: {sorted(set(found) - set(known))}); need at least {MIN_MARKERS}. "
            "Check that the camera sees the printed markers near the rail, in focus and not covered."
        )
    img_pts = np.concatenate([known[i] for i in sorted(known)])
    tab_pts = np.concatenate([np.array(layout.markers[i], np.float64) for i in sorted(known)])
    h, _inliers = cv2.findHomography(img_pts, tab_pts, cv2.RANSAC, 3.0)
    if h is None:
        raise CalibrationError("the marker corners do not fit a plane homography; is the camera image distorted?")
    proj = cv2.perspectiveTransform(img_pts.reshape(-1, 1, 2), h).reshape(-1, 2)
    err = float(np.sqrt(np.mean(np.sum((proj - tab_pts) ** 2, axis=1))))
    return Calibration(layout, h, (image.shape[1], image.shape[0]), tuple(sorted(known)), err)


def draw_preview(image: np.ndarray, calib: Calibration) -> np.ndarray:
    """The image with felt, rail, seat zones (numbered), dealer area and markers drawn on it."""
    out = image.copy()
    lay = calib.layout

    def poly(pts: np.ndarray, color: tuple[int, int, int], thick: int = 2) -> None:
        p = calib.to_image(np.asarray(pts, np.float64)).round().astype(np.int32)
        cv2.polylines(out, [p], True, color, thick, cv2.LINE_AA)

    poly(lay.felt_polygon(), (0, 255, 255))
    poly(lay.table_polygon(), (0, 128, 255))
    for n, seat in lay.seats.items():
        poly(np.array(seat.zone), (255, 255, 0), 3)
        c = calib.to_image(np.array([seat.center]))[0]
        cv2.putText(out, str(n), (int(c[0]) - 12, int(c[1]) + 12), cv2.FONT_HERSHEY_SIMPLEX, 1.2, (255, 255, 0), 3)
    poly(np.array(lay.dealer), (255, 0, 255), 3)
    for i in calib.markers_seen:
        poly(np.array(lay.markers[i]), (0, 0, 255), 2)
    return out
