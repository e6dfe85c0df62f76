"""The index corner's geometry and colour channels, shared by enrollment and recognition.

A template is the strip at a card's top-left corner, resampled to :data:`STRIP_W` x
:data:`STRIP_H` pixels in a canonical card :data:`CARD_W` pixels wide, as the three
channels of :func:`channels`.  :mod:`vision.deck` (enrollment) and
:mod:`vision.discriminant` (the corner discriminant it trains) both build on this
module, which imports neither of them.
"""

from __future__ import annotations

import cv2
import numpy as np

CARD_W = 64  # canonical card width in template pixels
STRIP_X0, STRIP_Y0 = 1, 1
STRIP_W, STRIP_H = 16, 36
QUERY_BLUR = 0.4  # the detector's blur of what the camera shows (the templates get deck.BLUR)

#: rows: output channel; columns: input B, G, R
_CHANNELS = np.array([[1 / 3, 1 / 3, 1 / 3], [0.0, -0.8, 0.8], [0.6, -0.3, -0.3]], np.float32)
_UNCHANNELS = np.linalg.inv(_CHANNELS.astype(np.float64)).astype(np.float32)


def channels(bgr: np.ndarray) -> np.ndarray:
    """(H, W, 3) uint8/float BGR -> float32 (H, W, 3): brightness, red-green, blue-yellow."""
    out: np.ndarray = cv2.transform(np.ascontiguousarray(bgr, dtype=np.float32), _CHANNELS)
    return out


def bgr_of(chans: np.ndarray) -> np.ndarray:
    """:func:`channels` undone: (H, W, 3) brightness, red-green, blue-yellow -> float32 BGR."""
    out: np.ndarray = cv2.transform(np.ascontiguousarray(chans, dtype=np.float32), _UNCHANNELS)
    return out
