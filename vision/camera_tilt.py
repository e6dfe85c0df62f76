"""A camera turned off straight down: the homography of a photograph taken from a chair, and
the tilt that a picture's card sizes say.

Why: a photograph of cards on a table is rarely taken from straight above.  Thirty degrees off,
the near cards are half as big again as the far ones and every card is squashed along the line
of sight; the detector reads a card within about 8 % of the size and shape the calibration says
(session 23).  A picture's cards do say how their size changes across it (the gradient), but not
the squash; a camera model turns the one into the other: a phone's lens (its focal length over
the picture's longer side, :data:`PHONE_FOCAL`) turned by an angle sees the table through
``K R K^-1``, and that angle is fixed by the gradient.  Pure: numbers in, matrices out; the
picture renderer (:mod:`vision.scene_picture`) draws tilted pictures with :func:`camera_tilt`,
and the markerless scale (:mod:`vision.scale`) inverts it.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

#: a phone's focal length in pixels over the picture's longer side (a 26 mm-equivalent lens)
PHONE_FOCAL = 0.8
#: no tilt is modelled past this (the far edge of the picture nears the horizon)
MOST_TILT_DEG = 60.0
#: the size gradient at the picture's centre grows with the tilt up to about 55 degrees (a phone's
#: lens), then falls: :func:`tilt_for_gradient` answers up to this
GRADIENT_TILT_DEG = 50.0


def _apply(m: np.ndarray, pts: np.ndarray) -> np.ndarray:
    out: np.ndarray = cv2.perspectiveTransform(np.asarray(pts, np.float64).reshape(-1, 1, 2), m).reshape(-1, 2)
    return out


def camera_tilt(size: tuple[int, int], tilt_deg: float, near_deg: float, focal: float = PHONE_FOCAL) -> np.ndarray:
    """The homography from a top view to the view of the same camera turned ``tilt_deg`` off
    straight down, the table's near side (where cards come out bigger) at ``near_deg`` in the
    picture (0: right, 90: down), zoomed about the picture's centre so that a card there keeps its
    area.  The picture's centre is where the turned camera's axis meets the table, farther off than
    the point straight below: there the table is seen at the tilt, and a card squashed along the
    line of sight by its cosine.  ``focal``: the lens's focal length over the picture's longer side."""
    w, h = size
    f = focal * max(w, h)
    k = np.array([[f, 0, w / 2], [0, f, h / 2], [0, 0, 1]], np.float64)
    a = math.radians(near_deg)
    # turning about the axis at right angles to the near side's direction lifts the far side away
    axis = np.array([-math.sin(a), math.cos(a), 0.0]) * math.radians(tilt_deg)
    rot, _ = cv2.Rodrigues(axis)
    m = k @ rot @ np.linalg.inv(k)
    m /= m[2, 2]
    # a card at the picture's centre (where the turned camera's axis meets the table) keeps its area
    c = np.array([w / 2, h / 2])
    p0 = _apply(np.linalg.inv(m), c[None, :])[0]  # the top view's point seen there
    wc = float(m[2, 0] * p0[0] + m[2, 1] * p0[1] + m[2, 2])
    jac = (m[:2, :2] - np.outer(c, m[2, :2])) / wc  # the homography's derivative there
    s = 1.0 / math.sqrt(abs(float(np.linalg.det(jac))))
    back = np.array([[s, 0, w / 2 - s * c[0]], [0, s, h / 2 - s * c[1]], [0, 0, 1]], np.float64)
    out: np.ndarray = back @ m
    return out


def scale_gradient(top_to_picture: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """How fast a card's size changes at the picture's centre, per pixel across it (x, y), relative
    to its size there, for the view ``top_to_picture`` of a flat table.

    A homography's area scale at a point goes as the cube of its inverse's third coordinate there,
    so a card's size (the area's square root) as its 1.5th power."""
    w, h = size
    n = np.linalg.inv(top_to_picture)
    wc = float(n[2, 0] * w / 2 + n[2, 1] * h / 2 + n[2, 2])
    out: np.ndarray = 1.5 * n[2, :2] / wc
    return out


def most_tilt(size: tuple[int, int], near_deg: float, focal: float = PHONE_FOCAL) -> float:
    """The most tilt towards ``near_deg`` modelled: :data:`MOST_TILT_DEG`, and every corner of the picture
    well short of the horizon (85 degrees off straight down)."""
    w, h = size
    a = math.radians(near_deg)
    reach = max(abs(dx * math.cos(a) + dy * math.sin(a)) for dx in (-w / 2, w / 2) for dy in (-h / 2, h / 2))
    return min(MOST_TILT_DEG, 85.0 - math.degrees(math.atan(reach / (focal * max(w, h)))))


def tilt_for_gradient(size: tuple[int, int], gradient: np.ndarray, focal: float = PHONE_FOCAL) -> tuple[float, float]:
    """(tilt_deg, near_deg) of the camera (:func:`camera_tilt`) whose cards' size changes by
    ``gradient`` (relative, per pixel, at the picture's centre), the tilt at most :data:`GRADIENT_TILT_DEG`."""
    g = float(np.hypot(*gradient))
    near = math.degrees(math.atan2(float(gradient[1]), float(gradient[0])))
    lo, hi = 0.0, min(GRADIENT_TILT_DEG, most_tilt(size, near, focal))
    if float(np.hypot(*scale_gradient(camera_tilt(size, hi, near, focal), size))) <= g:
        return hi, near
    for _ in range(30):  # the gradient grows with the tilt
        mid = (lo + hi) / 2
        if float(np.hypot(*scale_gradient(camera_tilt(size, mid, near, focal), size))) < g:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2, near
