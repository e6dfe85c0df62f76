"""Step 7: one deck.  No card is read twice in a frame; readings are given out surest first,
and a card whose label is taken gets its next reading if it is close, or is left unread."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from vision.deck import BACK
from vision.detect.model import Detection, Key, Opts, Reads
from vision.detect.state import DetectorState


class UniqueStage(DetectorState):
    """Step 7."""

    def _unique(self, out: list[Detection], faces: list[tuple[int, Key]], reads: Reads, opts: Opts) -> None:
        """One deck: no card lies twice.  Cards are given their labels surest first (by the lead of
        their best reading over the next); a card whose best label is taken gets its next best."""
        ranked: list[tuple[float, int, np.ndarray, np.ndarray]] = []
        for j, key in faces:
            labels, scores = opts.get(key, (reads[key].cand, reads[key].total))
            order = np.argsort(-scores)
            labels, scores = labels[order], scores[order]
            if labels[0] != reads[key].label:
                continue
            lead = float(scores[0] - scores[1]) if len(scores) > 1 else 1.0
            ranked.append((lead, j, labels, scores))
        ranked.sort(key=lambda x: -x[0])
        taken: set[int] = set(self._kept_labels)  # (the cards of the blobs kept from the last frame are on the table too)
        for _lead, j, labels, scores in ranked:
            given: int | None = None
            for lab, sc in zip(labels, scores, strict=True):
                if lab == BACK or scores[0] - sc > self.p.unique_slack:
                    break
                if int(lab) not in taken:
                    given = int(lab)
                    break
            if given is None:  # its best reading is a surer card's and nothing close is free: not read
                out[j] = replace(out[j], card=None)
                continue
            taken.add(given)
            if given != labels[0]:
                out[j] = replace(out[j], card=self.deck.code(given))
