"""Console tests run real widgets offscreen; the broker fixtures come from tests.support when present."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest

try:  # the bus engineer's shared broker fixtures
    from tests.support.fixtures import amqtt_broker, mosquitto_broker  # noqa: F401
    HAVE_BROKER_FIXTURES = True
except ImportError:  # pragma: no cover - depends on the tree
    HAVE_BROKER_FIXTURES = False

STATES = Path(__file__).with_name("states.jsonl")


@pytest.fixture(scope="session")
def recorded() -> list[dict[str, Any]]:
    """The scripted hand's recorded public states: ``{label, tags, event, state}`` per line."""
    return [json.loads(line) for line in STATES.read_text("utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="session")
def images() -> Any:
    from dealer_console.cards import CardImages

    return CardImages()
