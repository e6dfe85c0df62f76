"""Corner templates as a lamp's glare leaves them: the ink washed out more at one end of the corner.

Why: a specular band on a glossy card pulls its colours towards the lamp's white, strongly in the
band's middle and less at its flanks (``vision.conditions.paint_glare``; a real lamp's highlight
does the same).  In the channels the detector matches (brightness and two colour differences,
linear in BGR) the washed corner is ``white + g * (corner - white)``, ``g`` the share of the ink's
contrast left.  A uniform ``g`` is nothing to the normalised correlation, but the band is 30 mm
across and a corner 36 mm tall: one end of the corner keeps more of its ink than the other, the
window's normalised picture is no longer the card's, and a ten of hearts read as a four (the ten
was not even among the four cards the full match weighs).  So each face's two plain views are also kept
washed by a few ramps of ``g`` along and across the corner; a weak corner is matched again with
them beside the sharp templates (``FineMatch._through_glare``), and a plain corner, which a ramp
only flatters a little, keeps its reading.

Pure: the deck's whole-card channel images in, template images out; built once per detector.
"""

from __future__ import annotations

import numpy as np

from vision.corner import STRIP_H, STRIP_W, STRIP_X0, STRIP_Y0, channels


def _ramps() -> tuple[tuple[str, np.ndarray], ...]:
    """(name, g over the corner window (STRIP_H, STRIP_W)): the ink's contrast left at each pixel.
    Down the corner (its long side, where a band's flank changes most) to a fifth and to a half,
    either way; across it to a half, either way."""
    y = np.linspace(0.0, 1.0, STRIP_H, dtype=np.float32)[:, None] * np.ones((1, STRIP_W), np.float32)
    x = np.linspace(0.0, 1.0, STRIP_W, dtype=np.float32)[None, :] * np.ones((STRIP_H, 1), np.float32)
    out: list[tuple[str, np.ndarray]] = []
    for low in (0.2, 0.5):
        out += [(f"down to {low}", 1 - (1 - low) * y), (f"up to {low}", 1 - (1 - low) * (1 - y))]
    out += [("right to 0.5", 1 - 0.5 * x), ("left to 0.5", 1 - 0.5 * (1 - x))]
    return tuple(out)


RAMPS = _ramps()
#: the lamp's white in the detector's channels
WHITE = channels(np.full((1, 1, 3), 255, np.uint8)).reshape(3)


def washed_strips(cards: np.ndarray) -> np.ndarray:
    """Whole canonical cards as channel images (N, H, CARD_W, 3) -> their index strips washed by every
    ramp of :data:`RAMPS` (N * R, STRIP_H, STRIP_W, 3), card by card, ramp by ramp."""
    strips = np.asarray(cards, np.float32)[:, STRIP_Y0 : STRIP_Y0 + STRIP_H, STRIP_X0 : STRIP_X0 + STRIP_W]
    gains = np.stack([g for _name, g in RAMPS])[None, :, :, :, None]  # (1, R, H, W, 1)
    out: np.ndarray = WHITE + gains * (strips[:, None] - WHITE)
    return np.ascontiguousarray(out.reshape(-1, STRIP_H, STRIP_W, 3), dtype=np.float32)
