"""Shared fixtures: real Aisleriot card art, rendered once per machine and cached (never committed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vision.deckart import AISLERIOT_DIR, face_dir

# The tests use tuning decks only (anglo, paris, tigullio, bellot); the held-out decks are the bench's
# (bench/bench_vision.py), so that tests never become a way of tuning on them.
# A deck's enrolled model (default options) comes from tests.vision.decks.enrolled(faces_dir(deck)),
# enrolled once per test process; call vision.deck.enroll only where enrollment itself is tested.


def _need_art() -> None:
    if not AISLERIOT_DIR.is_dir():
        pytest.skip("Debian's gnome-cards-data (Aisleriot decks) is not installed")


@pytest.fixture(scope="session")
def faces_dir() -> object:
    """deck name -> directory of flat faces (As.png ... back.png)."""
    _need_art()
    cache: dict[str, Path] = {}

    def get(deck: str) -> Path:
        if deck not in cache:
            cache[deck] = face_dir(deck)
        return cache[deck]

    return get
