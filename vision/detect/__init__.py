"""Card detection and recognition on one frame: the pure core of the camera.

Theory of operation
-------------------
1. **Foreground.**  On a half-size copy of the frame, in HSV, a pixel is
   background when its hue is the felt's (or the rail's) and it is at least
   half as saturated, and not much brighter than it (a red pip is the hue of
   a burgundy felt, but twice as bright); the felt and rail colours are
   re-measured every frame at fixed sample points, so slow light changes and
   shadows (which darken but keep hue and most saturation) do not move the
   threshold.  Card faces are
   unsaturated and card backs are another hue, so both come out as
   foreground.  Printed markers are masked out.
2. **Blobs on the table.**  Each outer contour is mapped through the
   calibration homography into table millimetres, where every card has the
   same known size whatever the camera tilt, and fitted with a minimum-area
   rectangle.  One side of a card blob is a card height (cards in a stud row
   and down cards lie side by side along their short side); the other side,
   the blob's length, says whether it is one card, a row, or a card lifted on
   its edge (narrower than a card: half turned).  Anything else (chips, hands,
   arms) is not a card.
3. **Cutting rows into cards.**  The blob is resampled from the full-size
   frame into a canonical strip at the template scale.  The index corner of
   every card in the row is visible at the card's left edge (or, for a row
   laid the other way, at its right edge upside down: the same picture turned
   round, so we scan the strip and the strip turned round).  Sliding every
   learned corner template along the top band gives a score profile; a short
   dynamic programme picks the card edges (the first card at the row's start,
   the top card ending at the row's end, gaps between ``min_gap`` and ``max_gap``
   of a card) that maximise the matched score.  This uses the index
   corners themselves, which every deck has, instead of the thin edge between
   two white cards, which many decks do not draw.  Which way round: the end
   that holds the top card's corner, and never an end that reads as the back
   (the top card lies face up).  A blob whose ends are like the back, and more
   like it than like any face, is face-down cards.
4. **Reading each card.**  The best candidates from the coarse scan are
   re-matched at full template resolution with a few pixels of slack (the
   inner loops compiled: :mod:`vision.window_match`); a card fully in view is also read from its other corner.  The best label wins; the
   back template (if enrolled) makes a card face down.  A weak corner is
   matched again over the band's whole height (a card lower than its row's
   edge), and two weak covered cards side by side are looked for as one.
5. **A second look** where the corner leaves two readings within 0.01: the
   few best are compared again over all the card shows (a covered card's
   visible strip with its big pips, the top card's whole face;
   :mod:`vision.strip_match`).
6. **The deck's corner discriminant** (learned at enrollment from simulated
   camera views, :mod:`vision.discriminant`) has the last word where the best
   readings lie close, and says whether a weakly matching covered corner is an
   index corner at all.  A supposed covered card that the card below explains
   (its face read through the supposed card matches) is dropped: a pip in a
   wide visible strip is not a card.
7. **One deck**: no card is read twice in a frame; readings are given out
   surest first, and a card whose label is taken gets its next reading if it
   is close, or is left unread.

All of it is arrays in, :class:`Detection` list out: no camera, clock or file.

The modules follow the steps: :mod:`~vision.detect.foreground` (1),
:mod:`~vision.detect.blobs` (2), :mod:`~vision.detect.rows` (3),
:mod:`~vision.detect.fine` (4), :mod:`~vision.detect.strip` (5 and the explaining
away of 6), :mod:`~vision.detect.lda` (6), :mod:`~vision.detect.unique` (7);
:mod:`~vision.detect.detector` puts them together.  Every tuning constant is a field
of :class:`~vision.detect.params.DetectParams` (:data:`PARAMS` is the measured set);
a reading is a :class:`~vision.detect.model.Reading`, keyed by a
:class:`~vision.detect.model.Key`.
"""

from vision.detect.detector import Detector
from vision.detect.foreground import FeltSegmenter
from vision.detect.model import Detection
from vision.detect.params import PARAMS, DetectParams

__all__ = ["PARAMS", "DetectParams", "Detection", "Detector", "FeltSegmenter"]
