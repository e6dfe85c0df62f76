"""The table as the engine service runs it: sensors, dealer, rulings.

Theory of operation
-------------------
``Floor`` is the pure core of the engine service.  It holds the ``Table``
(and through it the hand in progress), the open irregularity prompts and the
log of every input it accepted.  Inputs are plain JSON objects with a
``kind`` (the same records the event store keeps and scenarios script):

==============  ==========================================================
kind            fields
==============  ==========================================================
``table``       ``op`` (seat, leave, add_chips, sit_out, sit_in, start_hand), seat, name, amount
``action``      seat, action, amount: a player's action entered by the dealer
``shoe_card``   card (or null), status (ok, unknown_tag, foreign_deck, duplicate), counter
``camera``      seats {"3": {"up": [...], "down": 2}}, irregular [...]
``manual_card`` seat, card, face_up: a card keyed in when shoe or camera is down
``show``        seat, cards / ``muck``: seat (showdown)
``report``      report (an irregularity rule id or short name), seat, details
``ruling``      prompt, option
``source``      device, status (online, offline, gap), missing
==============  ==========================================================

``handle`` turns an input into hand events: a shoe draw becomes the burn or
the card for the seat the deal calls for next; a camera view is compared
with the hand, and where it disagrees (a hole card face up, a card off the
felt) an irregularity prompt opens instead.  A prompt changes nothing until
the dealer rules on it; then its effect is applied as ordinary hand events,
so the hand alone still replays from its own log.  While a prompt is open,
the console inputs it blocks are refused with a reason; sensor inputs it
blocks (a card already drawn cannot be refused) wait and are applied after
the ruling.  A refused input raises ``FloorError`` and changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.cards import UNKNOWN, Card, CardError, parse_cards
from engine.events import (
    ActionWithdrawn,
    AllInDeclared,
    BringInWithdrawn,
    CallOnly,
    CardBurned,
    CardDealt,
    CardsRemoved,
    CardsShown,
    CardTakenBack,
    ChipsAdded,
    CommonCardDealt,
    DealCorrected,
    DeckReshuffled,
    Event,
    ExtraCardReturned,
    FinalCardKept,
    HandKilled,
    HandMucked,
    HandVoided,
    HoleCardExposed,
    PlayerAction,
    SeatLeft,
    SeatTaken,
    SittingOut,
    UpCardCorrected,
)
from engine.hand import STREET_NAMES, Hand, IllegalAction, Phase
from engine.irregularities import BY_ID, Rule, RuleOption
from engine.rules import GameConfig
from engine.table import Table

SENSOR_KINDS = frozenset({"shoe_card", "camera"})

# Short names the console may use for its report buttons (the wire allows lower-case words
# with underscores; hyphens are accepted too).
REPORT_ALIASES = {
    "player-absent": "stud.absent-player",
    "picked-up-upcards": "stud.upcards-picked-up",
    "out-of-turn": "betting.out-of-turn",
    "absent": "stud.absent-player",
    "upcards-picked-up": "stud.upcards-picked-up",
    "card-off-table": "stud.card-off-table",
    "misdeal": "misdeal.exposed-first-cards",
    "fold-without-wager": "stud.fold-without-wager",
    "exposed-holecard": "stud.exposed-holecard",
    "foreign-card": "deck.foreign-card",
    "boxed-card": "deck.boxed-card",
    "joker": "deck.joker",
    "flashed-card": "deal.flashed-card",
    "unaware-of-raise": "betting.unaware-of-raise",
    "final-downcard-kept": "stud.final-downcard-kept",
    "wrong-bring-in": "stud.wrong-bring-in",
    "burn-error": "stud.burn-error",
    "extra-card": "deal.extra-card-before-betting",
}

BURN_PROBLEMS = {0: "skipped (no card burned)", 2: "doubled (two cards burned)"}


class FloorError(ValueError):
    """An input refused in the current state; nothing was changed."""


@dataclass
class Prompt:
    id: str
    rule: Rule
    seats: tuple[int, ...]
    text: str
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def options(self) -> tuple[RuleOption, ...]:
        return self.rule.options or (RuleOption("confirm", "Confirm", "apply the ruling"),)

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
            "clause": self.rule.clause,
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
            "clause": self.rule.clause,
            "seats": list(self.seats),
        }


@dataclass
class FloorOutputs:
    events: list[Event] = field(default_factory=list)
    opened: list[Prompt] = field(default_factory=list)
    closed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    hand_finished: Hand | None = None


class Floor:
    """One table's engine core.  See the module docstring."""

    def __init__(self, config: GameConfig, table_id: str = "table", seat_count: int = 8) -> None:
        self.config = config
        self.table_id = table_id
        self.table = Table(config, seat_count)
        self.prompts: dict[str, Prompt] = {}
        self.prompt_counter = 0
        self.log: list[dict[str, Any]] = []
        self.held: list[dict[str, Any]] = []  # sensor inputs waiting for a ruling
        self.shoe_active = True  # a shoe supplies card identities and the deal order
        self.camera_active = True
        self.absent: set[int] = set()
        self.folded_no_wager: set[int] = set()  # RRoP stud 7: dealt on until a bet kills the hand
        self.out_of_turn: dict[int, dict[str, Any]] = {}  # held binding actions, by seat
        self.pending_removals = 0  # RRoP stud 14: cards still to set aside after a premature deal
        self.removal_due = False  # RRoP stud 14: count them once the betting round is over
        # RRoP stud 14: cards drawn during this betting round: (card, seat it would have gone to
        # in the next street's deal, None for the burn), keyed by (hand, street).
        self.premature: list[tuple[str, int | None]] = []
        self.premature_key: tuple[int, int] = (-1, -1)
        self.burn_errors: dict[tuple[int, int], int] = {}  # RRoP stud 13: (hand, street) -> burns
        self.card_mode: str | None = None  # RRoP stud 15 on seventh street: "reshuffled" or "common"
        self.hands: list[Hand] = []  # finished hands, in order
        # What the camera already raised, per hand: a card lying off the felt or a hole card face up is
        # one irregularity however many observations repeat it (the camera re-sends its view).
        self.camera_raised: set[tuple[int, str, int | None, str]] = set()
        # Cards dealt from the camera's view or keyed by hand while the shoe was offline: (hand, card).
        # The shoe keeps a draw made while its cable is out and sends it when it is back; that late
        # report is the same card, not a duplicate (DESIGN: sensors may fail mid-game; nothing twice).
        self.dealt_without_shoe: list[tuple[int, Card]] = []

    # ----------------------------------------------------------------- queries

    @property
    def hand(self) -> Hand | None:
        return self.table.hand

    def set_aside_due(self) -> int:
        """How many of the next shoe draws are set aside, not dealt (RRoP stud 14)."""
        hand = self.table.hand
        if hand is None or hand.phase is not Phase.DEALING:
            return 0
        if self.removal_due:
            return sum(1 for s in hand.live_seats if s.seat not in hand.early)
        return self.pending_removals

    def open_prompts(self) -> list[dict[str, Any]]:
        return [p.to_json() for p in self.prompts.values()]

    # ------------------------------------------------------------------ driver

    def handle(self, inp: Mapping[str, Any]) -> FloorOutputs:
        """Apply one input; raises FloorError (changing nothing) if it is refused."""
        if not isinstance(inp, Mapping) or not isinstance(inp.get("kind"), str):
            raise FloorError("an input is a JSON object with a 'kind'")
        kind = inp["kind"]
        handler = getattr(self, f"_on_{kind}", None)
        if handler is None:
            raise FloorError(f"unknown input kind {kind!r}")
        out = FloorOutputs()
        if kind in SENSOR_KINDS and self._sensor_blocked(kind):
            self.held.append(dict(inp))
            out.notes.append(f"{kind} held until the open prompt is ruled on")
            self.log.append(dict(inp))
            return out
        handler(inp, out)
        self.log.append(dict(inp))
        if kind == "ruling" and not self._sensor_blocked("shoe_card"):
            while self.held and not self._sensor_blocked(self.held[0]["kind"]):
                held = self.held.pop(0)
                getattr(self, f"_on_{held['kind']}")(held, out)
        self._after(out)
        return out

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

    # ------------------------------------------------------------- the table

    def _on_table(self, inp: Mapping[str, Any], out: FloorOutputs) -> None:
        op = inp.get("op")
        seat: Any = inp.get("seat")
        try:
            if op == "seat":
                self._apply(SeatTaken(int(seat), str(inp.get("name", "")), int(inp.get("amount", 0))), out)
            elif op == "leave":
                self._apply(SeatLeft(int(seat)), out)
            elif op == "add_chips":
                self._apply(ChipsAdded(int(seat), int(inp.get("amount", 0))), out)
            elif op in ("sit_out", "sit_in"):
                self._apply(SittingOut(int(seat), op == "sit_out"), out)
            elif op == "start_hand":
                if self.prompts:
                    raise FloorError("rule on the open prompts before the next hand")
                start = self.table.start_hand()
                self.absent &= {s.seat for s in start.seats}
                self.folded_no_wager.clear()
                self.out_of_turn.clear()
                self.pending_removals = 0
                self.removal_due = False
                self.premature = []
                self.burn_errors.clear()
                self.card_mode = None
                self._apply(start, out)
            else:
                raise FloorError(f"unknown table op {op!r}")
        except (TypeError, ValueError) as exc:
            if isinstance(exc, FloorError):
                raise
            raise FloorError(f"table {op}: {exc}") from None

    # --------------------------------------------------------------- actions

    def _on_action(self, inp: Mapping[str, Any], out: FloorOutputs) -> None:
        hand = self._live_hand()
        self._console_blocked("action")
        seat, action, amount = inp.get("seat"), inp.get("action"), inp.get("amount")
        if not isinstance(seat, int) or not isinstance(action, str):
            raise FloorError("an action needs a seat number and an action")
        if hand.phase is Phase.BETTING and hand.to_act is not None and seat != hand.to_act:
            s = hand.seat(seat) if seat in {x.seat for x in hand.seats} else None
            if s is None or not s.live:
                raise FloorError(f"seat {seat} is not in this hand")
            if seat in self.out_of_turn:
                raise FloorError(f"seat {seat} already has an action held out of turn")
            rnd = hand.round
            assert rnd is not None
            # RRoP 3.5: an out-of-turn action may bind if nobody in between bets or raises.
            self._open(
                "betting.out-of-turn",
                (seat,),
                out,
                action=action,
                amount=amount,
                since=len(hand.events),
            )
            return
        self._apply(PlayerAction(seat, action, amount), out)

    def _after(self, out: FloorOutputs) -> None:
        """Things that follow by themselves: held actions coming due, absent players reached,
        the deck running short on seventh street."""
        hand = self.table.hand
        if (
            hand is not None
            and hand.phase is Phase.DEALING
            and hand.street == 4
            and self.card_mode is None
            and not self.prompts
            and hand.stub_size() <= 1
            and not hand.common_card_street()
        ):
            waiting = self._waiting(hand)
            if hand.stub_size() < waiting:
                # RRoP stud 15: every card is dealt but the last; it is mixed with the burn cards.
                self._open("stud.out-of-cards", (), out, stub=hand.stub_size(), waiting=waiting,
                           pool=hand.reshuffle_pool())
                return
        for _ in range(64):
            hand = self.table.hand
            if hand is None or hand.is_over or hand.phase is not Phase.BETTING or self.prompts:
                return
            seat = hand.to_act
            rnd = hand.round
            if seat is None or rnd is None:
                return
            if seat in self.absent:
                # RRoP stud 6: the ante and forced bet are forfeited; the hand is killed when betting reaches it.
                opts = hand.options()
                if opts is not None and opts.find("bring_in") and rnd.bring_in_forced:
                    bring = opts.find("bring_in")
                    assert bring is not None
                    self._apply(PlayerAction(seat, "bring_in", bring.amount), out)
                if hand.seat(seat).live and not hand.is_over:
                    self._apply(HandKilled(seat, "stud.absent-player"), out)
                continue
            if seat in self.folded_no_wager:
                # RRoP stud 7: the seat checks along until it faces a bet, which kills the hand.
                opts = hand.options()
                if opts is not None and opts.find("check"):
                    self._apply(PlayerAction(seat, "check"), out)
                else:
                    self._apply(HandKilled(seat, "stud.fold-without-wager"), out)
                continue
            held = self.out_of_turn.pop(seat, None)
            if held is None:
                return
            # RRoP 3.5: it binds if no player in between bet, called or raised after it was made.
            between = [
                e for e in hand.events[held["since"]:]
                if isinstance(e, PlayerAction) and e.seat != seat and e.action not in ("check", "fold")
            ]
            if not between:
                try:
                    self._apply(PlayerAction(seat, held["action"], held["amount"]), out)
                    out.notes.append(f"seat {seat}'s out-of-turn {held['action']} binds")
                    continue
                except FloorError as exc:
                    out.notes.append(f"seat {seat}'s out-of-turn {held['action']} cannot stand: {exc}")
            else:
                out.notes.append(f"seat {seat}'s out-of-turn {held['action']} is void: a player in between bet or called")
            if held["action"] == "check":
                # RRoP 3.5: a player who checks out of turn may not bet or raise on the next turn.
                self._apply(CallOnly(seat), out)
            return

    # ------------------------------------------------------------------ cards

    def _on_shoe_card(self, inp: Mapping[str, Any], out: FloorOutputs) -> None:
        status = inp.get("status", "ok")
        code = inp.get("card")
        hand = self.table.hand
        if hand is None or hand.is_over:
            out.notes.append("a card was drawn between hands; ignored")
            return
        try:
            c = Card.parse(code) if code is not None else UNKNOWN
        except CardError as exc:
            raise FloorError(f"shoe card: {exc}") from None
        if c.known and c in hand.recycled and c not in hand.seen:
            status = "ok"  # RRoP stud 15: reshuffled back into play; the shoe saw it once before
        if c.known and (hand.hand_id, c) in self.dealt_without_shoe and status in ("ok", "duplicate"):
            self.dealt_without_shoe.remove((hand.hand_id, c))
            out.notes.append(f"the shoe reports the {c.name} late; it was already dealt while the shoe was offline")
            return
        if status == "duplicate" or (c.known and c in hand.seen):
            self._open("deck.duplicate-card", (), out, card=c.name, card_code=str(c))
            return
        if status == "foreign_deck":
            self._open("deck.foreign-card", (), out, card_code=str(c))
            return
        if status == "unknown_tag" or code is None:
            self._open("deck.unknown-tag", (), out)
            return
        if status != "ok":
            raise FloorError(f"unknown shoe status {status!r}")
        self._deal_drawn(hand, c, out)

    def _deal_drawn(self, hand: Hand, c: Card, out: FloorOutputs) -> None:
        if hand.phase is Phase.BETTING:
            rnd = hand.round
            if hand.street == 0 and rnd is not None and rnd.bring_in_open and not rnd.acted:
                # RRoP 3.4: one extra card before the first betting round becomes the burn;
                # 3.2(d): a second one in the starting hands is a misdeal.
                if hand.burn_ahead:
                    self._open("misdeal.extra-cards", (), out, cards=[str(c)])
                else:
                    self._open("deal.extra-card-before-betting", (), out, card=str(c))
                return
            # RRoP stud 14, 3.4: a card dealt before the betting is complete will not play.
            self._open("stud.premature-card", (), out, cards=[str(c)])
            self._note_premature(hand, c)
            return
        if hand.phase is not Phase.DEALING:
            self._open("stud.premature-card", (), out, cards=[str(c)])
            return
        if self.removal_due:
            # RRoP stud 14: after the round, one card for each player still active (and still
            # to receive a card) is taken out too.
            self.removal_due = False
            self.pending_removals = sum(1 for s in hand.live_seats if s.seat not in hand.early)
        if self.pending_removals > 0:
            self.pending_removals -= 1
            self._apply(CardsRemoved((c,)), out)
            return
        slot = hand.next_deal()
        if hand.street == 4 and (self.card_mode is not None or (slot is not None and slot[0] == "burn")):
            slot = self._seventh_street_slot(hand, slot)
            if slot[0] == "common":
                self._apply(CommonCardDealt(c), out)
                return
        if slot is None:
            raise FloorError("no card is due")
        kind, seat, face_up = slot
        if kind == "burn":
            self._apply(CardBurned(c), out)
        else:
            assert seat is not None
            self._apply(CardDealt(seat, c, face_up), out)

    def _waiting(self, hand: Hand) -> int:
        return sum(1 for s in hand.live_seats if hand.needs(s) != (0, 0))

    def _seventh_street_slot(
        self, hand: Hand, slot: tuple[str, int | None, bool] | None
    ) -> tuple[str, int | None, bool]:
        """RRoP stud 15: where a seventh-street draw goes when the cards run short."""
        waiting = self._waiting(hand)
        stub = hand.stub_size()
        if self.card_mode is not None and hand.reshuffle_pool() < waiting:
            # Not enough fresh cards for everyone: burn (if a card can be spared) and turn a common card.
            if not hand.burned_this_street and stub >= 2:
                return ("burn", None, False)
            return ("common", None, True)
        if not hand.burned_this_street and stub > waiting:
            return ("burn", None, False)  # after the reshuffle the dealer burns again
        # No burn when there are not as many cards as players still to receive one.
        for kind, seat, face_up in hand.expected_deal():
            if kind == "card":
                return (kind, seat, face_up)
        raise FloorError("no card is due")

    def _note_premature(self, hand: Hand, c: Card) -> None:
        """Remember where a card drawn during the betting would have gone in the next street's deal."""
        key = (hand.hand_id, hand.street)
        if self.premature_key != key:
            self.premature_key = key
            self.premature = []
        order: list[int | None] = [None] + [s.seat for s in hand.live_seats]
        n = len(self.premature)
        self.premature.append((str(c), order[n] if n < len(order) else None))

    def _on_manual_card(self, inp: Mapping[str, Any], out: FloorOutputs) -> None:
        hand = self._live_hand()
        self._console_blocked("deal")
        seat, face_up = inp.get("seat"), inp.get("face_up")
        if not isinstance(seat, int) or not isinstance(face_up, bool):
            raise FloorError("a manual card needs a seat and face_up true or false")
        try:
            c = Card.parse(inp.get("card", "??"))
        except CardError as exc:
            raise FloorError(str(exc)) from None
        self._deal_observed(hand, seat, c, face_up, out)

    def _deal_observed(self, hand: Hand, seat: int, c: Card, face_up: bool, out: FloorOutputs) -> None:
        """A card seen (camera) or keyed (console) at a seat, where no shoe says what was due."""
        if c.known and not self.shoe_active:
            self.dealt_without_shoe.append((hand.hand_id, c))
        s = hand.seat(seat)
        down, up = hand.needs(s)
        if hand.phase is Phase.DEALING and face_up and not up and down and hand.street == 4:
            rule = "stud.allin-last-card-up" if s.stack == 0 else "stud.last-card-up"
            self._open(rule, (seat,), out, card_code=str(c))
            return
        if hand.phase is Phase.DEALING and face_up and hand.street == 0 and down and s.n_up == 0 and s.n_down < 2:
            # RRoP stud 5: a hole card dealt face up: it becomes the up card; the third card comes down.
            self._apply(CardDealt(seat, c, True), out)
            self._open("stud.exposed-holecard", (seat,), out, card_code=str(c))
            return
        if hand.phase is Phase.DEALING and face_up and hand.street == 0 and s.n_up == 1 and s.n_down < 2:
            self._open("stud.both-holecards-exposed", (seat,), out, card_code=str(c))
            return
        self._apply(CardDealt(seat, c, face_up), out)

    def _camera_view(
        self, seats: Mapping[str, Any], irregular: list[Any]
    ) -> tuple[dict[int, Mapping[str, Any]], list[Mapping[str, Any]]]:
        """The seats and irregular items of a camera view, less what is still the last hand's picture.

        Why: the camera lags the felt (it reports a seat only once it has held still for a few
        frames) and keeps re-sending its view, so when a hand starts it may still show the last
        hand's cards; an old up card that is a new hole card would pass for an exposed card, and on
        a camera-only table the old cards would be dealt again.  A seat is not looked at while it
        shows the last hand's up cards at that seat, in order, over two or three down cards (the
        seat as it lay on some street of that hand), or, with a shoe (which always leads the
        camera), while it shows more cards than the shoe has dealt it.  An off-felt card
        the last hand had and this one has not dealt is the last hand's too.
        """
        parsed: dict[int, Mapping[str, Any]] = {}
        for key, view in seats.items():
            try:
                seat = int(key)
            except (TypeError, ValueError):
                raise FloorError(f"camera seat {key!r} is not a number") from None
            if not isinstance(view, Mapping):
                raise FloorError(f"camera seat {key!r}: the view must be an object with up and down")
            try:
                parse_cards(view.get("up", []))
                int(view.get("down", 0))
            except (CardError, TypeError, ValueError) as exc:
                raise FloorError(f"camera seat {key!r}: {exc}") from None
            parsed[seat] = view
        items = [i for i in irregular if isinstance(i, Mapping)]
        hand = self.table.hand
        last = self.hands[-1] if self.hands and hand is not None and self.hands[-1] is not hand else None
        if hand is None or last is None:
            return parsed, items
        old_up = {s.seat: [str(c) for c, up in s.cards if up] for s in last.seats}
        old_down = {s.seat: sum(1 for _, up in s.cards if not up) for s in last.seats}
        old_cards = {str(c) for s in last.seats for c, _ in s.cards}
        held = {s.seat: len(s.cards) for s in hand.seats}
        fresh: dict[int, Mapping[str, Any]] = {}
        for seat, view in parsed.items():
            up = [str(c) for c in view.get("up", [])]
            down = int(view.get("down", 0))
            if up and up == old_up.get(seat, [])[: len(up)] and 2 <= down <= old_down.get(seat, 0):
                continue  # the last hand's seat as it lay on some street
            if self.shoe_active and len(up) + int(view.get("down", 0)) > held.get(seat, 0):
                continue
            fresh[seat] = view
        dealt = {str(c) for c in hand.seen}
        return fresh, [i for i in items if not (str(i.get("card")) in old_cards and str(i.get("card")) not in dealt)]

    def _on_camera(self, inp: Mapping[str, Any], out: FloorOutputs) -> None:
        seats_in = inp.get("seats", {})
        if not isinstance(seats_in, Mapping):
            raise FloorError("camera seats must be an object keyed by seat number")
        seats, irregular = self._camera_view(seats_in, list(inp.get("irregular", []) or []))
        hand = self.table.hand
        if hand is None or hand.is_over:
            return
        for item in irregular:
            if item.get("kind") == "off_felt":
                seat = item.get("seat")
                key = (hand.hand_id, "stud.card-off-table", seat if isinstance(seat, int) else None,
                       str(item.get("card")))
                if key not in self.camera_raised:
                    self.camera_raised.add(key)
                    self._open("stud.card-off-table", (seat,) if isinstance(seat, int) else (), out)
        in_hand = {s.seat: s for s in hand.seats}
        for seat, view in seats.items():
            s = in_hand.get(seat)
            if s is None:
                if view.get("up") or view.get("down"):
                    self._open("misdeal.empty-seat", (seat,), out)
                continue
            up_seen = [Card.parse(c) for c in view.get("up", [])]
            known_down = {c for c in s.down if c.known}
            exposed = [c for c in up_seen if c in known_down]
            if exposed:
                # The shoe dealt it down; the camera sees it face up.
                key = (hand.hand_id, "exposed", seat, str(exposed[0]))
                if key in self.camera_raised:
                    continue
                self.camera_raised.add(key)
                if hand.street == 0 and len(s.cards) <= 3:
                    rule = "stud.both-holecards-exposed" if len(exposed) >= 2 else "stud.exposed-holecard"
                    if self.config.rules.exposed_downcard_misdeal:
                        rule = "stud.exposed-holecard-tournament"
                    self._open(rule, (seat,), out, card_code=str(exposed[0]))
                elif hand.street == 4:
                    rule = "stud.allin-last-card-up" if s.stack == 0 else "stud.last-card-up"
                    self._open(rule, (seat,), out, card_code=str(exposed[0]))
                continue
            street = hand.street
            if (
                self.shoe_active
                and 1 <= street <= 3
                and len(up_seen) > street
                and (len(s.up) <= street or up_seen[street] != s.up[street])
                and (hand.hand_id, street) not in self.burn_errors
            ):
                burns = self._burn_shift(hand, seat, up_seen[street])
                if burns is not None:
                    # RRoP stud 13: the camera sees the card one place off the shoe's order.
                    self.burn_errors[(hand.hand_id, street)] = burns
                    self._open("stud.burn-error", (seat,), out, burns=burns, problem=BURN_PROBLEMS[burns])
                    return
            if self.shoe_active or hand.phase is not Phase.DEALING:
                continue
            # Camera-only table: the camera's new cards are the deal.
            # New up cards by position (the row is laid in order): a card read differently from the
            # one the engine holds is a misread to report, not a new card.
            for c in up_seen[len(s.up):]:
                if c not in s.up:
                    self._deal_observed(hand, seat, c, True, out)
                    if self.prompts:
                        return
            missing_down = int(view.get("down", 0)) - len(s.down)
            for _ in range(max(0, missing_down)):
                self._deal_observed(hand, seat, UNKNOWN, False, out)

    def _burn_shift(self, hand: Hand, seat: int, seen: Card) -> int | None:
        """RRoP stud 13: the burns the dealer really made on this street (0 or 2), judged from an up
        card the camera sees at ``seat`` one draw before or after the one the shoe's order gives it."""
        draws = hand.street_draws()
        if not draws or not isinstance(draws[0], CardBurned):
            return None
        cards = [ev.card for ev in draws]
        if seen not in cards:
            return None
        order = [None] + [s.seat for s in hand.live_seats]
        if seat not in order:
            return None
        shift = order.index(seat) - cards.index(seen)
        return {1: 0, -1: 2}.get(shift)

    def _on_show(self, inp: Mapping[str, Any], out: FloorOutputs) -> None:
        self._live_hand()
        try:
            cards = parse_cards(inp.get("cards", []))
        except CardError as exc:
            raise FloorError(str(exc)) from None
        self._apply(CardsShown(int(inp["seat"]), cards), out)

    def _on_muck(self, inp: Mapping[str, Any], out: FloorOutputs) -> None:
        self._live_hand()
        self._apply(HandMucked(int(inp["seat"])), out)

    # --------------------------------------------------------- reports, rulings

    def _on_report(self, inp: Mapping[str, Any], out: FloorOutputs) -> None:
        name = inp.get("report")
        short = str(name).replace("_", "-")
        rule_id = REPORT_ALIASES.get(short, short)
        rule = BY_ID.get(rule_id)
        if rule is None or rule.handling == "enforced":
            known = ", ".join(sorted(REPORT_ALIASES))
            raise FloorError(f"unknown report {name!r}; reports are {known} or a rule id")
        seat = inp.get("seat")
        hand = self.table.hand
        seats: tuple[int, ...] = ()
        if seat is not None:
            if hand is None or seat not in {s.seat for s in hand.seats}:
                raise FloorError(f"seat {seat} has no cards in this hand")
            seats = (int(str(seat)),)
        if rule_id.startswith("misdeal."):
            self._live_hand()
            if self._action_occurred():
                raise FloorError(
                    "two players have acted after the bring-in: no misdeal; the hand is played to its end "
                    "[RRoP 3.2]"
                )
        elif hand is None or hand.is_over:
            raise FloorError("no hand is in progress")
        if rule_id == "stud.fold-without-wager" and hand is not None:
            rnd = hand.round
            if rnd is None or hand.to_act != seat:
                raise FloorError(f"seat {seat} is not the player to act")
            if rnd.to > hand.seat(int(str(seat))).bet:
                raise FloorError(f"seat {seat} faces a wager: that is an ordinary fold")
        extra: dict[str, Any] = {}
        if rule_id == "stud.wrong-bring-in" and hand is not None:
            seats, extra = self._check_wrong_bring_in(hand, inp)
        if rule_id == "stud.burn-error" and hand is not None:
            burns = inp.get("burns")
            if burns not in (0, 2):
                raise FloorError("say how many cards were burned: burns = 0 (none) or 2 (two) [RRoP stud 13]")
            if hand.street == 0:
                raise FloorError("third street has no burn card [RRoP stud 13]")
            assert isinstance(burns, int)
            self.burn_errors[(hand.hand_id, hand.street)] = burns
            extra = {"problem": BURN_PROBLEMS[burns]}
        if rule_id == "stud.final-downcard-kept" and hand is not None:
            if seat is None:
                raise FloorError("say which seat kept the last card")
            extra = self._check_final_card(hand, int(str(seat)), inp)
        if rule_id == "betting.unaware-of-raise" and hand is not None:
            last = hand.events[-1]
            if not isinstance(last, PlayerAction) or last.seat != seat:
                raise FloorError(
                    f"seat {seat}'s action can be taken back only if nobody has acted after it [RRoP 3.5]"
                )
        data = {k: v for k, v in inp.items() if k not in ("kind", "report", "seat")}
        self._open(rule_id, seats, out, **{**data, **extra})

    def _check_wrong_bring_in(self, hand: Hand, inp: Mapping[str, Any]) -> tuple[tuple[int, ...], dict[str, Any]]:
        """RRoP stud 9: an up card corrected after the bring-in; the seat that is truly low."""
        rnd = hand.round
        if hand.street != 0 or rnd is None or rnd.opener is None:
            raise FloorError("a wrong bring-in is ruled on third street, during its betting [RRoP stud 9]")
        actions = [k for k, e in enumerate(hand.events) if isinstance(e, PlayerAction)]
        if not actions:
            raise FloorError("nobody has brought it in yet: correct the card and the engine designates the low card")
        try:
            c = Card.parse(str(inp.get("card", "")))
            corrected = int(str(inp.get("seat")))
            probe = Hand.replay(hand.events[: actions[0]])
            probe.apply(UpCardCorrected(corrected, c))
        except (CardError, ValueError, TypeError) as exc:
            raise FloorError(f"wrong bring-in: give the seat and its true up card ({exc})") from None
        wrong = hand.seats[rnd.opener].seat
        assert probe.round is not None and probe.round.opener is not None
        true_low = probe.seats[probe.round.opener].seat
        if true_low == wrong:
            raise FloorError(f"with the {c.name} at seat {corrected}, seat {wrong} is still low: the bring-in stands")
        return (true_low,), {"card": str(c), "corrected_seat": corrected, "wrong_seat": wrong}

    def _check_final_card(self, hand: Hand, seat: int, inp: Mapping[str, Any]) -> dict[str, Any]:
        """RRoP stud 13-14: which card the player keeps, and why."""
        if hand.street == 3 and hand.phase is Phase.BETTING:
            code = inp.get("card")
            if code is None and self.premature_key == (hand.hand_id, hand.street):
                code = next((c for c, to in self.premature if to == seat), None)
            if code is None:
                raise FloorError(
                    f"no card drawn during this betting round was due to seat {seat}: report it with the card"
                )
            return {"card": str(code), "extra": " and may only call on sixth street"}
        if hand.street == 4:
            burns = inp.get("burns", self.burn_errors.get((hand.hand_id, 4)))
            if burns not in (0, 2):
                raise FloorError(
                    "on seventh street the last card is kept after a burn error: say burns = 0 or 2 [RRoP stud 13]"
                )
            return {"burns": burns, "extra": " where it lies (the burn error is not corrected)"}
        raise FloorError("the last down card is kept early only on sixth street or after a seventh-street burn error")

    def _on_source(self, inp: Mapping[str, Any], out: FloorOutputs) -> None:
        """A device went offline, came back, or skipped messages (DESIGN: sensors may fail mid-game)."""
        device = str(inp.get("device", "device"))
        status = inp.get("status")
        is_shoe = device.startswith(("shoe", "bridge"))
        if status == "offline":
            if is_shoe:
                self.shoe_active = False
            elif device.startswith(("cam", "vision")):
                self.camera_active = False
            self._open("source.offline", (), out, device=device)
        elif status == "online":
            if is_shoe:
                self.shoe_active = True
            elif device.startswith(("cam", "vision")):
                self.camera_active = True
        elif status == "gap":
            self._open("source.gap", (), out, device=device, missing=int(inp.get("missing", 1)))
        else:
            raise FloorError(f"unknown source status {status!r}; use online, offline or gap")

    def _action_occurred(self) -> bool:
        """RRoP 3.2: two players have acted after the forced bet on third street."""
        hand = self.table.hand
        if hand is None:
            return False
        actions = [e for e in hand.events if isinstance(e, PlayerAction)]
        after_bring_in = [a for a in actions[1:]] if actions else []
        return hand.street > 0 or len(after_bring_in) >= 2

    def _on_ruling(self, inp: Mapping[str, Any], out: FloorOutputs) -> None:
        pid, option = inp.get("prompt"), inp.get("option")
        prompt = self.prompts.get(str(pid))
        if prompt is None:
            raise FloorError(f"prompt {pid!r} is not open")
        if option not in {o.id for o in prompt.options}:
            allowed = ", ".join(o.id for o in prompt.options)
            raise FloorError(f"prompt {pid} has no option {option!r}; options: {allowed}")
        effect = getattr(self, "_rule_" + prompt.rule.id.replace(".", "_").replace("-", "_"), None)
        del self.prompts[prompt.id]
        try:
            if effect is not None:
                effect(prompt, str(option), out)
        except FloorError:
            self.prompts[prompt.id] = prompt
            raise
        out.closed.append(prompt.id)

    # -------------------------------------------------------------- effects
    # One method per rule id that changes the hand; the rest only record the decision.

    def _void(self, rule: str, out: FloorOutputs) -> None:
        hand = self.table.hand
        if hand is not None and not hand.is_over:
            self._apply(HandVoided(rule), out)

    def _rule_stud_exposed_holecard(self, p: Prompt, option: str, out: FloorOutputs) -> None:
        hand = self._live_hand()
        seat = p.seats[0]
        if hand.street == 0:
            self._apply(HoleCardExposed(seat), out)

    def _rule_stud_both_holecards_exposed(self, p: Prompt, option: str, out: FloorOutputs) -> None:
        # RRoP stud 5: dead hand, ante returned.
        self._apply(HandKilled(p.seats[0], p.rule.id, refund_ante=True), out)

    def _rule_stud_exposed_holecard_tournament(self, p: Prompt, option: str, out: FloorOutputs) -> None:
        self._void(p.rule.id, out)

    def _rule_stud_absent_player(self, p: Prompt, option: str, out: FloorOutputs) -> None:
        if option == "confirm":
            self.absent.add(p.seats[0])
        else:
            self.absent.discard(p.seats[0])

    def _rule_stud_upcards_picked_up(self, p: Prompt, option: str, out: FloorOutputs) -> None:
        if option == "confirm":
            self._apply(HandKilled(p.seats[0], p.rule.id), out)

    def _rule_stud_fold_without_wager(self, p: Prompt, option: str, out: FloorOutputs) -> None:
        # RRoP stud 7: the seat keeps receiving cards; it is killed by the first bet it faces.
        if option == "confirm":
            self.folded_no_wager.add(p.seats[0])

    def _rule_stud_premature_card(self, p: Prompt, option: str, out: FloorOutputs) -> None:
        hand = self._live_hand()
        cards = tuple(Card.parse(c) for c in p.data.get("cards", []))
        if cards:
            self._apply(CardsRemoved(cards), out)
        # RRoP stud 14: after the round, one more card per active player is set aside (counted
        # when the round is over, once however many cards came early).
        if hand.phase is Phase.BETTING:
            self.removal_due = True

    def _rule_stud_seven_card_limit(self, p: Prompt, option: str, out: FloorOutputs) -> None:
        if option == "dead":
            self._apply(HandKilled(p.seats[0], p.rule.id), out)

    def _rule_dead_joker(self, p: Prompt, option: str, out: FloorOutputs) -> None:
        self._apply(HandKilled(p.seats[0], p.rule.id), out)

    def _rule_dead_clock(self, p: Prompt, option: str, out: FloorOutputs) -> None:
        self._apply(HandKilled(p.seats[0], p.rule.id), out)

    def _rule_deck_duplicate_card(self, p: Prompt, option: str, out: FloorOutputs) -> None:
        self._void(p.rule.id, out)

    def _rule_deck_foreign_card(self, p: Prompt, option: str, out: FloorOutputs) -> None:
        if option == "confirm":
            self._void(p.rule.id, out)

    def _rule_deck_unknown_tag(self, p: Prompt, option: str, out: FloorOutputs) -> None:
        hand = self._live_hand()
        if option == "foreign":
            self._void("deck.foreign-card", out)
        else:
            self._deal_drawn(hand, UNKNOWN, out)

    def _misdeal(self, p: Prompt, option: str, out: FloorOutputs) -> None:
        if option == "misdeal":
            self._void(p.rule.id, out)
        elif p.data.get("cards"):
            # Play on: the card the shoe drew does not play (it is kept aside with the removed cards).
            self._apply(CardsRemoved(tuple(Card.parse(c) for c in p.data["cards"]), p.rule.id), out)

    _rule_misdeal_exposed_first_cards = _misdeal
    _rule_misdeal_boxed_cards = _misdeal
    _rule_misdeal_extra_cards = _misdeal
    _rule_misdeal_out_of_sequence = _misdeal
    _rule_misdeal_empty_seat = _misdeal

    def _rule_betting_out_of_turn(self, p: Prompt, option: str, out: FloorOutputs) -> None:
        if option == "hold":
            seat = p.seats[0]
            self.out_of_turn[seat] = {
                "action": p.data.get("action"),
                "amount": p.data.get("amount"),
                "since": p.data.get("since", 0),
            }

    def _rule_deck_boxed_card(self, p: Prompt, option: str, out: FloorOutputs) -> None:
        # RRoP 3.4: a boxed card (a joker likewise) is a scrap of paper replaced by the next card.
        # With a shoe it has just been drawn and delivered: take it back, the next draw replaces it.
        code = p.data.get("card")
        hand = self.table.hand
        if not code or hand is None or hand.is_over:
            return
        c = Card.parse(str(code))
        last = hand.events[-1]
        if isinstance(last, CardDealt | CardBurned) and last.card == c:
            self._apply(CardTakenBack(c, p.rule.id), out)
        else:
            out.notes.append(f"the {c.name} is not the card just delivered: set it aside by hand")

    _rule_deck_joker = _rule_deck_boxed_card

    def _rule_betting_unaware_of_raise(self, p: Prompt, option: str, out: FloorOutputs) -> None:
        self._apply(ActionWithdrawn(p.seats[0]), out)

    def _rule_stud_last_card_up(self, p: Prompt, option: str, out: FloorOutputs) -> None:
        # RRoP stud 16-18: the last card dealt face up is kept and plays face up.
        hand = self._live_hand()
        seat = p.seats[0]
        code = p.data.get("card_code")
        self._apply(HoleCardExposed(seat), out)
        if code and hand.phase is Phase.DEALING and hand.needs(hand.seat(seat))[1]:
            self._apply(CardDealt(seat, Card.parse(code), True), out)
        if option == "all-in":
            self._apply(AllInDeclared(seat), out)
        live = [s for s in hand.live_seats if s.seat != seat]
        if p.rule.id == "stud.last-card-up" and len(live) == 1 and hand.phase is Phase.DEALING:
            other = live[0]
            if other.n_down < 3 and not other.last_up:
                # RRoP stud 17(b): heads-up, the first player's last card dealt up means the
                # second player's last card is dealt face up too.
                self._apply(HoleCardExposed(other.seat), out)

    _rule_stud_allin_last_card_up = _rule_stud_last_card_up

    def _rule_stud_card_off_table(self, p: Prompt, option: str, out: FloorOutputs) -> None:
        # RRoP stud 11, 3.4: a card dealt off the table (or flashed by the dealer) is an exposed card.
        # A hole card on third street: stud 5 (it plays as the up card, the third card comes down);
        # the seventh card: stud 16-18 (it plays face up).  An up card changes nothing.
        hand = self._live_hand()
        if not p.seats or hand.phase is not Phase.DEALING:
            return
        s = hand.seat(p.seats[0])
        if not s.live or not s.cards or s.cards[-1][1]:
            return
        if (hand.street == 0 and s.n_up == 0) or (hand.street == 4 and s.n_down == 3):
            self._apply(HoleCardExposed(s.seat), out)

    _rule_deal_flashed_card = _rule_stud_card_off_table

    def _rule_stud_wrong_bring_in(self, p: Prompt, option: str, out: FloorOutputs) -> None:
        # RRoP stud 9: the card is corrected; if the next player has not acted the wrong low takes
        # the wager back and the true low must bring it in; otherwise the wager stands and the true
        # low has no obligation.
        hand = self._live_hand()
        wrong = int(p.data["wrong_seat"])
        self._apply(UpCardCorrected(int(p.data["corrected_seat"]), Card.parse(p.data["card"])), out)
        actions = [e for e in hand.events if isinstance(e, PlayerAction)]
        if len(actions) == 1 and actions[0].seat == wrong:
            self._apply(BringInWithdrawn(wrong), out)
            out.notes.append(f"seat {wrong} takes back the bring-in; seat {p.seats[0]} must bring it in")
        else:
            out.notes.append(f"the next player has acted: the wager stands; seat {p.seats[0]} has no obligation")

    def _rule_stud_burn_error(self, p: Prompt, option: str, out: FloorOutputs) -> None:
        # RRoP stud 13: corrected to the proper positions if at all possible (the shoe's order is
        # the proper one: nothing changes); otherwise the cards play where they lie.
        if option == "cannot-correct":
            self._apply(DealCorrected(int(p.data["burns"])), out)

    def _rule_stud_final_downcard_kept(self, p: Prompt, option: str, out: FloorOutputs) -> None:
        # RRoP stud 13-14: the player must keep (accept) the last down card.
        hand = self._live_hand()
        seat = p.seats[0]
        if "burns" in p.data:
            self._apply(DealCorrected(int(p.data["burns"])), out)
            return
        code = str(p.data["card"])
        self._apply(FinalCardKept(seat, Card.parse(code)), out)
        for q in list(self.prompts.values()):
            if q.rule.id == "stud.premature-card" and code in q.data.get("cards", []):
                # The card is no longer to be set aside: the prompt keeps only the others.
                q.data["cards"] = [c for c in q.data["cards"] if c != code]
                if not q.data["cards"]:
                    del self.prompts[q.id]
                    out.closed.append(q.id)
        if self.pending_removals and not self.removal_due:
            self.pending_removals = sum(1 for s in hand.live_seats if s.seat not in hand.early)

    def _rule_deal_extra_card_before_betting(self, p: Prompt, option: str, out: FloorOutputs) -> None:
        # RRoP 3.4: the extra card is returned and used as the fourth-street burn.
        self._apply(ExtraCardReturned(Card.parse(p.data["card"])), out)

    def _rule_stud_out_of_cards(self, p: Prompt, option: str, out: FloorOutputs) -> None:
        # RRoP stud 15: the last card is mixed with the burn (and removed) cards, scrambled and cut;
        # if there will not be enough fresh cards for everyone, one common card plays for all.
        hand = self._live_hand()
        if option == "common":
            if hand.reshuffle_pool() >= self._waiting(hand):
                raise FloorError(
                    f"{hand.reshuffle_pool()} cards can serve the {self._waiting(hand)} players: reshuffle, "
                    "no common card [RRoP stud 15]"
                )
            self.card_mode = "common"
            return
        self._apply(DeckReshuffled(), out)
        self.card_mode = "reshuffled"
        # A draw held while the prompt was open is the last card taken out to be mixed in: it is
        # dealt when it comes out of the scrambled packet, not now.
        drawn = [h for h in self.held if h.get("kind") == "shoe_card"]
        if drawn:
            self.held = [h for h in self.held if h.get("kind") != "shoe_card"]
            out.notes.append(f"{len(drawn)} draw(s) before the reshuffle went into the mixed cards")
