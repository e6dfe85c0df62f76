"""The floor's state and the steps every part of it takes: apply an event, open a prompt."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from engine.cards import Card
from engine.events import Event, PlayerAction
from engine.floor.prompts import FloorError, FloorOutputs, Prompt
from engine.hand import STREET_NAMES, Hand, IllegalAction, Street
from engine.inputs import Input
from engine.irregularities import BY_ID
from engine.rules import GameConfig
from engine.table import Table

if TYPE_CHECKING:
    from engine.floor.undo import HandInput

#: what a prompt's text says where its data names nothing (issue 21, 8: no blank, no "{seat}" left)
BLANKS: dict[str, Any] = {
    "street": "this street", "problem": "in error", "extra": "", "rest": "", "card": "same card",
    "count": "the wrong number of", "action": "an action", "device": "a device", "missing": "some", "channel":
    "a channel", "stub": "one", "waiting": "the", "burns": "", "removed": "", "then": "deal on",
    "counted": "",
}

TOO_LATE_FOR_MISDEAL = (
    "two players have acted after the bring-in: no misdeal; the hand is played to its end [RRoP 3.2]"
)


class FloorState:
    """The fields of a floor (``Floor.__init__`` sets them) and its shared steps."""

    config: GameConfig
    table_id: str
    table: Table
    prompts: dict[str, Prompt]
    prompt_counter: int
    held: list[Input]  # sensor inputs waiting for a ruling
    shoe_active: bool  # a shoe supplies card identities and the deal order
    shoe_absent: bool  # the table has no shoe (not one offline): the floor counts the burns
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
    mixed_in: list[tuple[int, Card]]  # RRoP stud 15: (hand, card) last cards drawn and mixed with the burns
    boxed_cards: list[tuple[int, str]]  # RRoP 3.2(c): (hand, card) boxed cards found on the deal
    dealt_without_shoe: list[tuple[int, Card]]
    # engine/floor/undo.py: the hand's inputs, the floor before the hand, what was undone
    hand_inputs: list[HandInput]
    hand_base: tuple[Any, ...] | None
    voided: set[int]  # numbers in hand_inputs undone by a correction
    dropped: set[int]  # inputs the rules refused when the hand was taken again without the voided ones
    last_dealer: int | None  # the number of the dealer's last entry (None: an undo came after it)
    event_inputs: list[int]  # for each event of the hand, the number of the input that made it

    if TYPE_CHECKING:
        # Provided by the parts (engine.floor.core puts them together).
        def _deal_drawn(self, hand: Hand, c: Card, out: FloorOutputs) -> None: ...
        def _deal_observed(self, hand: Hand, seat: int, c: Card, face_up: bool, out: FloorOutputs) -> None: ...
        def _step(self, inp: Input, out: FloorOutputs) -> None: ...
        def _out_of_cards(self, out: FloorOutputs) -> bool: ...
        def observed_deal(self) -> tuple[str, int | None, bool] | None: ...
        def _common_observed(self, hand: Hand, c: Card, out: FloorOutputs) -> None: ...

    @property
    def hand(self) -> Hand | None:
        return self.table.hand

    def _phase(self) -> str:
        hand = self.table.hand
        return hand.phase.value if hand is not None else "idle"

    def state(self) -> dict[str, Any]:
        """Everything the floor holds, as plain data (SECRET: the hand's down cards are in it).

        Two floors with equal ``state()`` behave alike; a refused input leaves it unchanged."""
        return {
            "table": self.table.secret_state(),
            "prompts": {
                pid: {**p.to_json(), "data": dict(p.data), "withheld": dict(p.withheld)} for pid, p in self.prompts.items()
            },
            "prompt_counter": self.prompt_counter,
            "held": [h.to_json() for h in self.held],
            "shoe_active": self.shoe_active,
            "shoe_absent": self.shoe_absent,
            "camera_active": self.camera_active,
            "absent": sorted(self.absent),
            "folded_no_wager": sorted(self.folded_no_wager),
            "out_of_turn": {seat: dict(v) for seat, v in sorted(self.out_of_turn.items())},
            "pending_removals": self.pending_removals,
            "removal_due": self.removal_due,
            "premature": list(self.premature),
            "premature_key": self.premature_key,
            "burn_errors": sorted(self.burn_errors.items()),
            "card_mode": self.card_mode,
            "hands": [h.hand_id for h in self.hands],
            "camera_raised": sorted(self.camera_raised, key=repr),
            "boxed_cards": list(self.boxed_cards),
            "dealt_without_shoe": [(n, str(c)) for n, c in self.dealt_without_shoe],
            "game": self.config.to_json(),
            "hand_inputs": [(e.input.to_json(), e.text) for e in self.hand_inputs],
            "hand_base": self.hand_base is not None,
            "voided": sorted(self.voided),
            "dropped": sorted(self.dropped),
            "last_dealer": self.last_dealer,
            "event_inputs": list(self.event_inputs),
        }

    def _checkpoint(self) -> tuple[Any, ...]:
        """What ``_rollback`` needs to put the floor back as it is now (cheap: small copies)."""
        table = self.table
        hand = table.hand
        return (
            [(p, dict(p.data), dict(p.withheld)) for p in self.prompts.values()],
            self.prompt_counter,
            list(self.held),
            self.shoe_active,
            self.camera_active,
            set(self.absent),
            set(self.folded_no_wager),
            dict(self.out_of_turn),
            self.pending_removals,
            self.removal_due,
            list(self.premature),
            self.premature_key,
            dict(self.burn_errors),
            self.card_mode,
            list(self.hands),
            set(self.camera_raised),
            list(self.boxed_cards),
            list(self.dealt_without_shoe),
            {n: replace(s) for n, s in table.seats.items()},
            hand,
            len(hand.events) if hand is not None else 0,
            table.hands_played,
            dict(table.short_buy_ins),
            self.config,
            table.config,
            list(self.hand_inputs),
            self.hand_base,
            set(self.voided),
            set(self.dropped),
            self.last_dealer,
            list(self.event_inputs),
            self.shoe_absent,
        )

    @staticmethod
    def _fresh(saved: tuple[Any, ...]) -> tuple[Any, ...]:
        """A copy of a checkpoint that can be rolled back to again (``hand_base`` is, at every undo)."""
        out = [type(x)(x) if isinstance(x, list | set | dict) else x for x in saved]
        out[0] = [(p, dict(d), dict(w)) for p, d, w in saved[0]]  # the prompts and their data
        out[18] = {n: replace(s) for n, s in saved[18].items()}  # the table's seats
        return tuple(out)

    def _rollback(self, saved: tuple[Any, ...]) -> None:
        """Put the floor back as ``_checkpoint`` found it; the hand by folding its log back."""
        (prompts, self.prompt_counter, self.held, self.shoe_active, self.camera_active, self.absent,
         self.folded_no_wager, self.out_of_turn, self.pending_removals, self.removal_due, self.premature,
         self.premature_key, self.burn_errors, self.card_mode, self.hands, self.camera_raised,
         self.boxed_cards, self.dealt_without_shoe, seats, hand, n_events, hands_played, shorts, self.config,
         table_config, self.hand_inputs, self.hand_base, self.voided, self.dropped, self.last_dealer,
         self.event_inputs, self.shoe_absent) = saved
        for p, data, withheld in prompts:
            p.data, p.withheld = data, withheld
        self.prompts = {p.id: p for p, _, _ in prompts}
        table = self.table
        table.seats = seats
        table.hand = hand
        table.hands_played = hands_played
        table.short_buy_ins = shorts
        table.config = table_config
        if hand is not None and len(hand.events) != n_events:
            hand.__dict__.update(Hand.replay(hand.events[:n_events]).__dict__)

    def _sensor_blocked(self) -> bool:
        return any(p.blocks("deal") for p in self.prompts.values())

    def _console_blocked(self, what: str) -> None:
        for p in self.prompts.values():
            if p.blocks(what):
                raise FloorError(f"prompt {p.id} ({p.rule.title}) is open: rule on it first", "engine.prompt-open")

    def _apply(self, event: Event, out: FloorOutputs) -> None:
        hand = self.table.hand
        try:
            self.table.apply(event)
        except IllegalAction as exc:
            raise FloorError(str(exc), exc.rule) from None
        out.events.append(event)
        # By identity: ``in`` would compare every finished hand's whole state (``Hand.__eq__``),
        # quadratic in the hands of a session (a restart replaying 300 hands spent 90 % of its time here).
        if hand is not None and hand.is_over and not (self.hands and self.hands[-1] is hand):
            self.hands.append(hand)
            out.hand_finished = hand

    def _open(self, rule_id: str, seats: tuple[int, ...], out: FloorOutputs, **data: Any) -> Prompt:
        """Open the prompt of ``rule_id``, its text with every blank filled (issue 21, 8): from
        ``data``, else ``BLANKS``; a rule about a seat when none is known says "a seat"."""
        rule = BY_ID[rule_id]
        self.prompt_counter += 1
        fmt: dict[str, Any] = dict(BLANKS)
        hand = self.table.hand
        if hand is not None and hand.street < len(STREET_NAMES):
            fmt["street"] = STREET_NAMES[hand.street]
        fmt.update({k: v for k, v in data.items() if isinstance(v, str | int) and v != ""})
        ruling = rule.ruling
        if seats:
            fmt["seat"] = seats[0]
        else:  # no seat known (the camera saw a card off the felt, not where): the text says so
            ruling = ruling.replace("Seat {seat}", "A seat").replace("seat {seat}", "a seat")
        try:
            text = " ".join(ruling.format(**fmt).split())  # an empty blank leaves no double space
        except (KeyError, IndexError, ValueError):  # pragma: no cover - tests/engine/test_prompt_words.py
            text = rule.title
        prompt = Prompt(f"p{self.prompt_counter}", rule, seats, text, dict(data))
        count = data.get("count")
        if rule_id == "stud.seven-card-limit" and isinstance(count, int) and not 6 <= count <= 7:
            # RRoP stud 19: "A hand with more than seven cards is dead"; "ruled live" is only for a
            # hand missing its seventh card.
            prompt.withheld["live"] = (
                f"a hand with {count} cards is dead; only a hand missing its seventh card may be ruled live "
                "(a hand with more than seven cards is dead) [RRoP stud 19]"
            )
        if data.get("source") != "camera" and "player" in {o.id for o in rule.options}:
            # Only the camera cannot tell the dealer's error from a player's own hand turning a card.
            prompt.withheld["player"] = "a card dealt face up is the dealer's error: the player did not turn it [RRoP 3.4]"
        if rule_id == "stud.seven-card-limit" and data.get("source") != "camera":
            # The dealer who reports a count has counted; the camera's count is a reading of a fan
            # or a heap and may be wrong, and a hand is not killed on it unless the dealer counts
            # the same (RRoP stud 19 is about the cards the seat holds, not about a picture of them).
            prompt.withheld["seven"] = "the dealer reported this count: rule the hand dead or live [RRoP stud 19]"
        offers_misdeal = rule_id.startswith("misdeal.") or "misdeal" in {o.id for o in rule.options}
        if offers_misdeal and self._action_occurred():
            # RRoP 3.2: "Once action occurs, a misdeal can no longer be declared" - on every
            # path to a misdeal, the camera's and the shoe's as well as the dealer's report.
            prompt.withheld["misdeal"] = TOO_LATE_FOR_MISDEAL
        self.prompts[prompt.id] = prompt
        out.opened.append(prompt)
        return prompt

    def _action_occurred(self) -> bool:
        """RRoP 3.2: "Action is considered to occur in stud games when two players after the forced
        bet have acted on their hands" (on third street; any later street is after action)."""
        hand = self.table.hand
        if hand is None:
            return False
        if hand.street > Street.THIRD:
            return True
        actions = [e for e in hand.events if isinstance(e, PlayerAction)]
        return len(actions) >= 3  # the forced bet, then two players

    def _live_hand(self) -> Hand:
        hand = self.table.hand
        if hand is None or hand.is_over:
            raise FloorError("no hand is in progress", "engine.no-hand")
        return hand
