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
    CardBurned,
    CardDealt,
    CardsRemoved,
    CardsShown,
    ChipsAdded,
    Event,
    HandKilled,
    HandMucked,
    HandVoided,
    HoleCardExposed,
    PlayerAction,
    SeatLeft,
    SeatTaken,
    SittingOut,
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
}


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
        self.hands: list[Hand] = []  # finished hands, in order

    # ----------------------------------------------------------------- queries

    @property
    def hand(self) -> Hand | None:
        return self.table.hand

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
        """Things that follow by themselves: held actions coming due, absent players reached."""
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
                rnd.call_only.add(hand._index[seat])
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
            # RRoP stud 14, 3.4: a card dealt before the betting is complete will not play.
            self._open("stud.premature-card", (), out, cards=[str(c)])
            return
        if hand.phase is not Phase.DEALING:
            self._open("stud.premature-card", (), out, cards=[str(c)])
            return
        if self.pending_removals > 0:
            self.pending_removals -= 1
            self._apply(CardsRemoved((c,)), out)
            return
        slot = hand.next_deal()
        if slot is None:
            raise FloorError("no card is due")
        kind, seat, face_up = slot
        if kind == "burn":
            self._apply(CardBurned(c), out)
        else:
            assert seat is not None
            self._apply(CardDealt(seat, c, face_up), out)

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

    def _on_camera(self, inp: Mapping[str, Any], out: FloorOutputs) -> None:
        hand = self.table.hand
        if hand is None or hand.is_over:
            return
        seats = inp.get("seats", {})
        if not isinstance(seats, Mapping):
            raise FloorError("camera seats must be an object keyed by seat number")
        for item in inp.get("irregular", []) or []:
            if isinstance(item, Mapping) and item.get("kind") == "off_felt":
                seat = item.get("seat")
                self._open("stud.card-off-table", (seat,) if isinstance(seat, int) else (), out)
        in_hand = {s.seat: s for s in hand.seats}
        for key, view in seats.items():
            try:
                seat = int(key)
            except (TypeError, ValueError):
                raise FloorError(f"camera seat {key!r} is not a number") from None
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
                if hand.street == 0 and len(s.cards) <= 3:
                    rule = "stud.both-holecards-exposed" if len(exposed) >= 2 else "stud.exposed-holecard"
                    if self.config.rules.exposed_downcard_misdeal:
                        rule = "stud.exposed-holecard-tournament"
                    self._open(rule, (seat,), out, card_code=str(exposed[0]))
                elif hand.street == 4:
                    rule = "stud.allin-last-card-up" if s.stack == 0 else "stud.last-card-up"
                    self._open(rule, (seat,), out, card_code=str(exposed[0]))
                continue
            if self.shoe_active or hand.phase is not Phase.DEALING:
                continue
            # Camera-only table: the camera's new cards are the deal.
            for c in up_seen:
                if c not in s.up:
                    self._deal_observed(hand, seat, c, True, out)
                    if self.prompts:
                        return
            missing_down = int(view.get("down", 0)) - len(s.down)
            for _ in range(max(0, missing_down)):
                self._deal_observed(hand, seat, UNKNOWN, False, out)

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
        if rule_id == "betting.unaware-of-raise" and hand is not None:
            last = hand.events[-1]
            if not isinstance(last, PlayerAction) or last.seat != seat:
                raise FloorError(
                    f"seat {seat}'s action can be taken back only if nobody has acted after it [RRoP 3.5]"
                )
        self._open(rule_id, seats, out, **{k: v for k, v in inp.items() if k not in ("kind", "report", "seat")})

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
        self._apply(CardsRemoved(cards), out)
        # RRoP stud 14: after the round, one more card per active player is set aside.
        if hand.phase is Phase.BETTING:
            self.pending_removals += sum(1 for s in hand.live_seats)

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

    _rule_stud_allin_last_card_up = _rule_stud_last_card_up
