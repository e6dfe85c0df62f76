"""The detector's tuning constants, in one frozen object (:data:`PARAMS` is what was measured).

Every figure in ``docs/vision.md`` is for :data:`PARAMS`; a test or an experiment that
wants another value builds its own with ``dataclasses.replace(PARAMS, name=value)`` and
hands it to ``Detector(..., params=...)``.  Lengths are template pixels (a card is
``vision.corner.CARD_W`` wide) unless the name says otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DetectParams:
    # -- step 1: foreground
    felt_bright: float = 1.6  # felt-coloured but this much brighter than the felt's median is ink (hot spots: 1.3; red pips on burgundy: 2-2.5)
    # -- step 2: blobs on the table
    half_turned_fill: float = 0.8  # a card on its edge fills its rectangle 0.85-0.96; two touching chips 0.70-0.74
    hull_fill: float = 0.9  # a bitten row blob: its hull fills its rectangle, ...
    hull_solidity: float = 0.6  # ... and the bites are under 40 %
    split_radii: tuple[int, ...] = (2, 4)  # half-size px: a gentle cut at narrow necks first, then a harder one
    open_mm: float = 25.0  # a blob that is no row is opened with a disc this big (a chip is 38-43 mm across) ...
    open_lost: float = 0.02  # ... and taken as its pieces when that took off this share of it or cut it apart,
    tall_mm: float = 3.0  # a row blob taller than a card by this much is measured on its opening (something touches it)
    open_max: float = 0.45  # ... unless it took off more than this many cards' area: no chip, but a hand's fingers
    # a blob that is no row may be a hand or an arm over cards (FeltSegmenter.hand_cut): skin-coloured
    # and at least this many cards' area once opened by a disc of hand_open_mm; taken out (an occluder)
    # with hand_margin_mm round it, and what it lay on read as the blob's pieces (0: never)
    hand_min: float = 0.35  # (a chip is 0.2 of a card; the biggest skin-toned part of a tuning deck's face, opened, 0.28)
    hand_open_mm: float = 4.0
    hand_margin_mm: float = 3.0
    hand_deck_share: float = 0.1  # a chroma covering this share of one card (paper, back) is the deck's, not skin
    down_gap_mm: float = 8.0  # gap between face-down cards side by side
    # -- step 2, a blob that is no row: cards tabled at showdown (vision.detect.tabled), read corner first
    tabled: bool = True  # False: blobs that are no row are cut or occluders as before, rows never read again as tabled cards
    tabled_eps_mm: float = 1.2  # the outline cut into straight sides this close to it
    tabled_side_mm: float = 8.0  # a card's edge: a side at least this long
    tabled_round_mm: float = 1.5  # a card's sharp corner lies this far beyond the end of its straight edge
    tabled_coarse: float = 0.55  # ... a corner whose best coarse match (half scale, plain views) is under this is not looked at again
    tabled_labels: int = 6  # the best coarse labels of a corner matched at full scale
    tabled_min: float = 0.86  # a corner matching this well is a card (a covered card's corner in a row must too)
    tabled_m2: float = 4.0  # ... and whose window lies this near the card's corners as the discriminant measures (index_m2)
    tabled_inside: float = 0.8  # at a table calibrated by its markers, a tabled card read lies this much on the frame's cards (foreground), not over the felt
    tabled_lead: float = 0.01  # such a card whose label leads the next by less (as settled: corner, discriminant, strip look) is a close call: left unread or dropped
    tabled_askew_deg: float = 5.0  # a row's blob read as tabled cards is taken for them when one lies this far off the row
    tabled_same_mm: float = 3.0  # two tabled readings this close, edges parallel, are one card (a fan's neighbours: 4 mm and 5 degrees apart)
    tabled_hidden: float = 0.5  # ... as are two each of whose index strips lies this much inside the other's outline (neither index could show)
    tabled_cover: float = 0.4  # the cards read must cover this share of the blob, or it is no tabled hand
    tabled_first_cover: float = 0.9  # a blob that is no row and would come apart when opened is read corner first before, and taken if its cards cover this much of it (a spread touching at corners); over 1: opened first
    tabled_row_cover: float = 0.8  # a row whose cards read cover less of its blob reads badly (read again corner first, as tabled_rows says)
    # -- step 3: cutting rows into cards
    min_gap: float = 0.22  # stud row offsets, as fractions of a card width: at least ...
    max_gap: float = 0.68  # ... and at most
    scan: int = 2  # coarse scan subsampling (pixels of the template scale)
    back_min: float = 0.5  # whole-card likeness to the enrolled back that makes a blob face-down cards
    back_every_end: bool = True  # ... at each end of a row (False: at either end, as before session 34)
    plan_tau: float = 0.5  # coarse score a guessed card edge must beat to be worth a card
    # a row whose far ends read this close under its two ways (neither the back) is turned the way whose
    # plan's covered cards show index corners (the coarse scan's mean over them; 0.03 and 0.06 measured, 1.0
    # (always) cost three-card rows whose plans match alike both ways: docs/vision.md, session 35) ...
    way_tie: float = 0.06
    way_plan_margin: float = 0.1  # ... when that way's is this much the better (way_tie 0: never)
    margin: int = 6  # crop rows above and below the card
    # -- step 4: reading each card
    candidates: int = 16  # best coarse templates whose cards are re-matched at full resolution
    shortlist: int = 4  # candidates given the full match (all views and camera-like variants)
    plain_min: float = 0.6  # plain correlation below this costs score one for one (blank paper is not a card)
    pad_x: int = 2  # slack of the fine match along ...
    pad_y: int = 3  # ... and across
    dy: int = 1  # rows of slack either side of the measured top edge
    covered_min: float = 0.86  # a covered card is only believed when its corner matches this well
    covered_low: float = 0.8  # ... or this well, and the rest of its visible strip strip_rescue well
    # a deck whose index no covered card shows upright (printed at the top right only): a covered card
    # is believed from its corner (it lies turned round) only this well; pips matched up to 0.94
    hidden_index_min: float = 0.95
    hidden_strip_min: float = 0.85  # ... and read from its visible strip alone when the best card matches it this well
    hidden_strip_lead: float = 0.03  # ... and this much better than the next
    strip_rescue: float = 0.88
    wide_below: float = 0.9  # a corner matching less well than this is matched again over the whole band's height
    wide_gain: float = 0.03  # ... and that reading is believed only if it matches this much better
    # a row whose read corners match templates through one kernel of the optics bank (vision.detect.optics:
    # defocus and motion smears) this much better on average than the sharp ones is blurred that way,
    # and matched again with that kernel's templates (0: never) ...
    optics_gain: float = 0.03
    optics_sample: int = 6  # ... in a frame whose best-read corners (this many) say it is blurred:
    optics_frame_gain: float = 0.015  # ... the best kernel fits them this much better at the median
    optics_row_min: float = 0.75  # ... if its corners match the sharp templates this well on average (a face row)
    optics_present: float = 0.89  # ... where a covered card the sharp templates did not find (covered_min) needs this
    # a corner matching less well than this is matched again with the glare bank's washed templates
    # beside the sharp ones (vision.detect.glare) ...
    glare_below: float = 0.95
    glare_gain: float = 0.06  # ... and takes that reading if it is a face matching this much better than its sharp templates (0: never)
    # -- step 5: the second look over the visible strip
    strip_lambda: float = 1.0  # weight of the whole visible strip against the index corner
    strip_bands: int = 3  # the visible strip is matched as this many bands across, each aligned on its own
    strip_pool: int = 2  # the strip is matched at 1/strip_pool of the template scale (pips are big)
    strip_dx: int = 1  # slack of each band's alignment, pooled px, along ...
    strip_dy: int = 1  # ... and across
    strip_blur: float = 0.5  # on the pooled query
    strip_variants: tuple[int, ...] = (0, 2)  # which resamplings of each card are strip templates
    strip_labels: int = 4  # the best index readings given the strip look
    strip_margin: float = 0.01  # index readings this far ahead of the next skip the strip look
    # cards whose index-corner templates are this alike are corner twins (a deck printing its rank away from
    # the corner shows the same pip there on a 4 and an 8): a reading's twins join its strip look (1: none) ...
    strip_twin_min: float = 0.999
    strip_tie: float = 0.005  # ... and so do all its readings this near the best, however many
    unread_look: bool = True  # a row end its corner did not read is read from all of its face it shows ...
    unread_min: float = 0.75  # ... when its best card matches that this well (a low card is mostly paper) ...
    unread_lead: float = 0.05  # ... and this much better than the next
    # a top card (its whole face in view) whose whole face another card matches this much better than the
    # corner's reading is that card (a rank-only index's tiny 3 read as a 2, a court with no rank), unless
    # the two differ only between suits of one colour; inf: never
    top_face_lead: float = 0.1
    covered_face_lead: float = 0.15  # a covered card read is read instead as the card its visible strip matches this much better (inf: never)
    covered_face_below: float = 0.93  # ... where its corner matched under this (the mends matched 0.90-0.92; every covered card looked at cost 7 % of a frame)
    strip_trim: int = 3  # of a covered card's visible strip left out next to the card on top (its shadow)
    # -- step 6: the corner discriminant
    lda_weight: float = 0.02  # the discriminant's say (see DiscriminantStage._discriminant_stage) ...
    lda_nats: float = 200.0  # ... in full from this far behind the best
    index_low: float = 0.75  # a covered card matching only this well is believed if its corner is ...
    index_m2: float = 2.5  # ... this near (see DiscriminantStage._index_distance)
    lda_slack: int = 2  # either way around the read corner where the discriminant aligns each candidate
    #: who has the last word among close readings: "lda" the corner discriminant, "clf" the classifier
    #: trained at enrollment under simulated cardroom conditions (vision.classifier), "both" the two
    #: added (a deck file without a classifier falls back to "lda")
    # "both" since session 13: it wins under every cardroom condition on the tuning decks and held out (docs/vision.md,
    # "the recognition method"), and the whole of tests/vision passes with it (session 11's misreads, seed 30014, were
    # a proposal evicting the right card: fixed in session 12, see DiscriminantStage._classifier_proposals)
    recog: str = "both"
    clf_weight: float = 0.02  # the classifier's say, as lda_weight's ...
    clf_nats: float = 4.0  # ... in full from this far behind the best (log-probability)
    clf_propose: int = 2  # the classifier's best cards that join a weak card's shortlist (0: none; see clf_propose_below)
    clf_below: float = 0.9  # where the fine match read a card less well than this, the
    clf_weak: float = 0.04  # classifier's say is this (the corner's match says less of a degraded corner)
    clf_propose_below: float = 0.9  # proposals for cards the fine match read less well than this (1.0, every card: no gain, session 12)
    # a covered card whose corner matched only clf_index_low..covered_min is believed (beside the discriminant's
    # distance, index_m2) when the classifier gives its reading this probability on its window (0: not asked)
    clf_index: float = 0.5
    clf_index_low: float = 0.75
    # A planned covered card is a ghost when the card below it, read through it, matches its own face
    # explain_min well and the planned card's corner matched less well than explain_score (real cards: 0.9 and up).
    explain_min: float = 0.85
    explain_score: float = 0.9
    # -- step 7: one deck
    unique: bool = True  # one deck on the table: no card is read twice in a frame
    unique_slack: float = 0.05  # how far below a card's best reading its next may be and still be given to it

    @property
    def wide_dy(self) -> range:
        """The second look's rows: every window the band holds, whatever the measured top edge."""
        return range(-self.pad_y, self.pad_y + 1)

    @property
    def wide_dx(self) -> range:
        """... about where the first match put the corner along the band."""
        return range(-1, 2)


PARAMS = DetectParams()
