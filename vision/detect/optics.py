"""Corner templates as a degraded camera sees them: out of focus, or smeared by motion.

Why: the fine match scores a corner by its normalised correlation with each card's sharp
template.  A blurred corner correlates less with every sharp template, and not by the same
amount: a blurred 8 can correlate better with a sharp 6 than with a sharp 8, so the right card
falls out of the shortlist or behind a neighbour (issue #22: motion blur of 9 px and a 720p
camera).  The matched filter for a blurred corner is the template through the same optics, so
each card's two plain views are also blurred by a small bank of kernels at the template's scale:
a defocus and a motion smear at four angles (a row is cut out along its own direction, so the
motion's angle in the crop is any; four angles leave it at most 22.5 degrees off).  A row's
read corners say whether it is blurred and how (one kernel fits them clearly better than the
sharp templates: ``DetectParams.optics_gain``); only such a row is matched again with that
kernel's templates, so a sharp frame reads as before.

Pure: the deck's whole-card channel images in, template images out; built once per detector.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.classifier import motion_kernel
from vision.corner import STRIP_H, STRIP_W, STRIP_X0, STRIP_Y0


#: (name, kernel) at the template scale (64 px a card): a 9 px smear of a 70-100 px camera card is
#: 6-8 template px; 720p shows a card 43-65 px, which the crop upsamples to 64 (a soft corner).
#: (Session 20: smears of 6 and 9 px, or eight angles, read a few more tuning cards under motion blur
#: and none more held out: not kept; docs/vision.md)
def _bank() -> tuple[tuple[str, np.ndarray], ...]:
    g = cv2.getGaussianKernel(9, 1.4)
    out: list[tuple[str, np.ndarray]] = [("defocus 1.4", (g @ g.T).astype(np.float32))]
    out += [(f"motion 6 at {a}", motion_kernel(6.0, float(a))) for a in (0, 45, 90, 135)]
    return tuple(out)


KERNELS = _bank()


def blurred_strips(cards: np.ndarray) -> np.ndarray:
    """Whole canonical cards as channel images (N, H, CARD_W, 3) -> their index strips through every
    kernel of :data:`KERNELS` (N * K, STRIP_H, STRIP_W, 3), card by card, kernel by kernel (the
    strip cut after the blur, so what lies beside the corner smears into it as in a frame)."""
    out = np.empty((len(cards) * len(KERNELS), STRIP_H, STRIP_W, 3), np.float32)
    k = 0
    for card in cards:
        c = np.ascontiguousarray(card, dtype=np.float32)
        for _name, kern in KERNELS:
            b = cv2.filter2D(c, -1, kern, borderType=cv2.BORDER_REPLICATE)
            out[k] = b[STRIP_Y0 : STRIP_Y0 + STRIP_H, STRIP_X0 : STRIP_X0 + STRIP_W]
            k += 1
    return out
