"""The floor's state and the steps every part of it takes: apply an event, open a prompt."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.cards import Card
from engine.events import Event
from engine.floor.prompts import FloorError, FloorOutputs, Prompt
from engine.hand import STREET_NAMES, Hand, IllegalAction
from engine.irregularities import BY_ID
from engine.rules import GameConfig
from engine.table import Table


class FloorState:
    """The fields of a floor (``Floor.__init__`` sets them) and its shared steps."""

    config: GameConfig
    table_id: str
    table: Table
    prompts: dict[str, Prompt]
    prompt_counter: int
    log: list[dict[str, Any]]
    held: list[dict[str, Any]]  # sensor inputs waiting for a ruling
    shoe_active: bool  # a shoe supplies card identities and the deal order
    camera_active: bool
    absent: set[int]
    folded_no_wager: set[int]  # RRoP stud 7: dealt on until a bet kills the hand
    out_of_turn: dict[int, dict[str, Any]]  # held binding actions, by seat
    pending_removals: int  # RRoP stud 14: cards still to set aside after a premature deal
    removal_due: bool  # RRoP stud 14: count them once the betting round is over
    premature: list[tuple[str, int | None]]
    premature_key: tuple[int, int]
    burn_errors: dict[tuple[int, int], int]  # RRoP stud 13: (hand, street) -> burns
    card_mode: str | None  # RRoP stud 15 on seventh street: "reshuffled" or "common"
    hands: list[Hand]  # finished hands, in order
    camera_raised: set[tuple[int, str, int | None, str]]
    dealt_without_shoe: list[tuple[int, Card]]

    if TYPE_CHECKING:
        # Provided by the parts (engine.floor.core puts them together).
        def _deal_drawn(self, hand: Hand, c: Card, out: FloorOutputs) -> None: ...
        def _deal_observed(self, hand: Hand, seat: int, c: Card, face_up: bool, out: FloorOutputs) -> None: ...

    @property
    def hand(self) -> Hand | None:
        return self.table.hand

    def _sensor_blocked(self, kind: str) -> bool:
        return any(p.blocks("deal") for p in self.prompts.values())

    def _console_blocked(self, what: str) -> None:
        for p in self.prompts.values():
            if p.blocks(what):
                raise FloorError(f"prompt {p.id} ({p.rule.title}) is open: rule on it first")

    def _apply(self, event: Event, out: FloorOutputs) -> None:
        hand = self.table.hand
        try:
            self.table.apply(event)
        except IllegalAction as exc:
            raise FloorError(str(exc)) from None
        out.events.append(event)
        if hand is not None and hand.is_over and hand not in self.hands:
            self.hands.append(hand)
            out.hand_finished = hand

    def _open(self, rule_id: str, seats: tuple[int, ...], out: FloorOutputs, **data: Any) -> Prompt:
        rule = BY_ID[rule_id]
        self.prompt_counter += 1
        fmt = {"seat": seats[0] if seats else "", "street": "", "problem": "", "extra": "", "rest": ""}
        hand = self.table.hand
        if hand is not None and hand.street < len(STREET_NAMES):
            fmt["street"] = STREET_NAMES[hand.street]
        fmt.update({k: v for k, v in data.items() if isinstance(v, str | int)})
        try:
            text = rule.ruling.format(**fmt)
        except (KeyError, IndexError):
            text = rule.ruling
        prompt = Prompt(f"p{self.prompt_counter}", rule, seats, text, dict(data))
        self.prompts[prompt.id] = prompt
        out.opened.append(prompt)
        return prompt

    def _live_hand(self) -> Hand:
        hand = self.table.hand
        if hand is None or hand.is_over:
            raise FloorError("no hand is in progress")
        return hand
