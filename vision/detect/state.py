"""What every stage of the detector reads: the deck's templates as the detector lays them out,
the calibration, the parameters.  :class:`vision.detect.Detector` fills it in at construction."""

from __future__ import annotations

import numpy as np

from vision.calibration import Calibration
from vision.deck import DeckModel, WindowSource
from vision.detect.foreground import FeltSegmenter
from vision.detect.model import Key, Reading, Tables
from vision.detect.params import DetectParams


class DetectorState:
    """Attributes shared by the stage mixins (no behaviour of its own)."""

    p: DetectParams
    deck: DeckModel
    calib: Calibration
    segmenter: FeltSegmenter
    face_floor: float
    w_mm: float  # card width and height on the table
    h_mm: float
    scale: float  # template px per mm
    card_h: int  # card height, template px
    t2i: np.ndarray  # table mm -> image px
    # coarse scan (step 3)
    coarse_labels: np.ndarray
    coarse_ids: np.ndarray
    coarse: np.ndarray  # (D, N) embedded coarse templates
    c_mean: np.ndarray
    c_weight: np.ndarray
    # fine match (step 4)
    labels: np.ndarray
    by_label: dict[int, np.ndarray]
    primary: np.ndarray  # (labels, 2): each label's two plain views
    label_tids: np.ndarray  # (labels, G): each label's templates, padded
    _wt: np.ndarray
    _basis: np.ndarray
    _weighted: np.ndarray
    _shift: np.ndarray
    _plain: np.ndarray
    _plain_shift: np.ndarray
    _atlas: WindowSource  # the frame's face-row bands side by side
    index_views: tuple[bool, bool]  # whether each view (upright, turned round) carries an index
    partial_index: bool  # one of them does not (a deck printed at one corner)
    _covered_primary: np.ndarray  # primary and label_tids for a covered card: index views only
    _covered_tids: np.ndarray
    _optic_ids: np.ndarray  # (labels, 2 * K): each label's two plain views through each kernel of the optics bank
    _sharp: Tables  # the fine match's template tables
    _optic_probe: Tables  # label l * (1 + K) + k: l's two plain views, sharp (k = 0) or through kernel k - 1 alone
    # a card read through the optics bank: its reading with the sharp templates, which the ghost test,
    # calibrated on sharp frames, judges by (a smeared template flatters a pip as it flatters a corner)
    _sharp_reads: dict[Key, Reading]
    _optic_full: list[Tables]  # per kernel: the sharp tables with the label's two views through it added
    _glare_ids: np.ndarray  # (labels, 2 * R): each label's two plain views washed by each ramp of the glare bank
    _glare_full: Tables | None  # the sharp tables with every washed view added (None: no glare bank)
    _hidden: dict[Key, tuple[int, float, float]]  # covered cards read from their visible strip alone
    is_face: np.ndarray
    face_thumbs: np.ndarray
    # the strip look (step 5)
    strip_t: np.ndarray
    strip_csum: np.ndarray
    strip_csq: np.ndarray
    strip_cuts: np.ndarray
    strip_by_label: dict[int, np.ndarray]
    strip_hw: tuple[int, int]
    strip_coarse: list[np.ndarray]  # [c]: (templates, D_c): the cards' first c columns, for the first stage of a card's look
    strip_twins: dict[int, list[tuple[int, float]]]
    _unread_looks: dict[Key, np.ndarray]  # cards read from all their face shows (row ends, cards judged): each label looked at's score
    _strips: dict[Key, tuple[np.ndarray, np.ndarray]]  # per card: the strip's candidates and their scores
    occluders: list[np.ndarray]
    #: the labels of the cards kept from the last frame (blobs unchanged, ``reuse``): one deck with the
    #: blobs read afresh, so step 7 gives none of them to a fresh card
    _kept_labels: set[int]
    reuse: bool  # blobs unchanged since the last frame keep their cards (a tracked camera's stream)
    _blurred_last: bool | None  # the last judgement of whether the camera blurs (step 4's optics), None before one
    #: Whether the last frame was judged smeared by motion (the camera shook; vision.tracking holds the
    #: table's published view through a shake)
    shaken: bool
    _row_outlines: dict[int, np.ndarray]  # the frame's row blobs' outlines (table mm), by blob
    _tabled_ids: set[int]  # ids of the frame's detections read as tabled cards
    #: the frame's foreground contours (half-size px), and the same in table mm once a tabled card asks
    _fg_contours: list[np.ndarray]
    _fg_table: list[np.ndarray] | None
