"""The tuning decks enrolled once per test process, shared by every vision test module.

Enrolling a deck from its flat faces takes 15-20 s of CPU and is deterministic (see
test_discriminant.py), so a test that only needs a deck's model with the default options takes it
from here; tests about enrollment itself (determinism, errors, deck files and their versions, live
enrollment, a deck without its back) still call :func:`vision.deck.enroll`.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from vision.deck import DeckModel, enroll, read_face_dir


@functools.cache
def enrolled(directory: Path) -> DeckModel:
    """The deck of ``directory`` (a ``faces_dir`` fixture's answer) enrolled with the default options.

    The model is shared, so its arrays are made read-only: a test or a detector that wrote into them
    would fail here instead of changing what later tests read (derive a variant with
    ``dataclasses.replace``).
    """
    faces, back = read_face_dir(directory)
    model = enroll(faces, back, directory.name)
    for array in [v for v in vars(model).values() if isinstance(v, np.ndarray)] + list(model.clf):
        array.flags.writeable = False
    return model
