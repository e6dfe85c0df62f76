"""What the floor says back: prompts for the dealer, outputs, refusals."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.citations import cite
from engine.events import Event
from engine.hand import Hand
from engine.irregularities import Rule, RuleOption

# Offered when every option of a rule is withheld (a misdeal after action: RRoP 3.2).
PLAY_ON = RuleOption("play-on", "Play on", "too late for a misdeal: the hand is played to its conclusion")
BURN_PROBLEMS = {0: "skipped (no card burned)", 2: "doubled (two cards burned)"}


class FloorError(ValueError):
    """An input refused in the current state; nothing was changed.

    ``rule`` is the clause or engine rule that refuses it (``engine.*`` for the engine's own
    invariants), ``input`` the input refused (typed, or the raw object if it did not parse),
    ``phase`` the hand's phase then (``idle`` between hands), ``field`` the input's field at
    fault if one is.  The message is built from public data only (DESIGN: trust boundaries)."""

    def __init__(
        self,
        message: str,
        rule: str = "engine.floor",
        *,
        input: Any = None,
        phase: str | None = None,
        field: str = "",
    ) -> None:
        super().__init__(message)
        self.reason = message
        self.rule = rule
        self.input = input
        self.phase = phase
        self.field = field


@dataclass
class Prompt:
    id: str
    rule: Rule
    seats: tuple[int, ...]
    text: str
    data: dict[str, Any] = field(default_factory=dict)
    # Options of the rule this prompt does not offer, with the reason (the clause that rules
    # them out here: RRoP 3.2 after two players acted, stud 19 for more than seven cards).
    withheld: dict[str, str] = field(default_factory=dict)

    @property
    def options(self) -> tuple[RuleOption, ...]:
        offered = self.rule.options or (RuleOption("confirm", "Confirm", "apply the ruling"),)
        if self.withheld:
            offered = tuple(o for o in offered if o.id not in self.withheld) or (PLAY_ON,)
        return offered

    def blocks(self, what: str) -> bool:
        return what in self.rule.blocks

    def to_json(self) -> dict[str, Any]:
        """As carried in public/state ``prompts``."""
        return {
            "id": self.id,
            "rule": self.rule.id,
            "title": self.rule.title,
            "seats": list(self.seats),
            "text": self.text,
            "clause": cite(self.rule.clause),  # in words (issue 21, 8)
            "options": [{"id": o.id, "label": o.label} for o in self.options],
        }

    def to_wire(self) -> dict[str, Any]:
        """As carried in the dealer/prompt ``open`` list (engine/wire.py)."""
        return {
            "prompt": self.id,
            "text": self.text,
            "options": [o.id for o in self.options],
            "labels": [o.label for o in self.options],
            "rule": self.rule.id,
            "clause": cite(self.rule.clause),  # in words (issue 21, 8)
            "seats": list(self.seats),
        }


@dataclass
class FloorOutputs:
    events: list[Event] = field(default_factory=list)
    opened: list[Prompt] = field(default_factory=list)
    closed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    hand_finished: Hand | None = None
