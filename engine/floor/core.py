"""The table as the engine service runs it: sensors, dealer, rulings.

Theory of operation
-------------------
``Floor`` is the pure core of the engine service.  It holds the ``Table``
(and through it the hand in progress), the open irregularity prompts and the
sensor inputs held while a prompt is open.  Inputs arrive as JSON objects with a
``kind`` (the same records the event store keeps and scenarios script) and are
parsed once, by ``engine.inputs.parse_input``, into typed inputs; ``INPUTS`` is
the handler of each input type:

==================  ================  ===================================
``handle`` turns an input into hand events: a shoe draw becomes the burn or
the card for the seat the deal calls for next; a camera view is compared
with the hand, and where it disagrees (a hole card face up, a card off the
felt) an irregularity prompt opens instead.  A prompt changes nothing until
the dealer rules on it; then its effect is applied as ordinary hand events,
so the hand alone still replays from its own log.  While a prompt is open,
the console inputs it blocks are refused with a reason; sensor inputs it
blocks (a card already drawn cannot be refused) wait and are applied after
the ruling.  A refused input raises ``FloorError`` (with the rule, the input
and the phase) and changes nothing at all: ``handle`` saves the floor's
bookkeeping first and puts it back, the hand by folding its own log back, if
any step of the input is refused.

Layout
------
``Floor`` (this module) holds the state, the input table (``INPUTS``), the
table ops, player actions and what follows by itself (``_after``); one mixin per
part does the rest: ``engine.floor.shoe`` (shoe draws, manual cards),
``engine.floor.camera`` (camera views), ``engine.floor.reports`` (dealer reports),
``engine.floor.rulings`` (rulings and their effects, ``EFFECTS``), ``engine.floor.undo``
(the hand's inputs kept, and a correction that voids one of them), over
``engine.floor.state`` (fields, applying events, opening prompts) and
``engine.floor.prompts`` (``Prompt``, ``FloorOutputs``, ``FloorError``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from engine.cards import Card
from engine.events import (
    CallOnly,
    CardsShown,
    ChipsAdded,
    HandKilled,
    HandMucked,
    PlayerAction,
    SeatChanged,
    SeatLeft,
    SeatTaken,
    SittingOut,
)
from engine.floor.camera import CameraMixin
from engine.floor.prompts import FloorError, FloorOutputs
from engine.floor.reports import ReportsMixin
from engine.floor.rulings import RulingsMixin
from engine.floor.shoe import ShoeMixin
from engine.floor.undo import UndoMixin
from engine.hand import DealSlot, Hand, IllegalAction, Phase, Street
from engine.inputs import (
    SENSOR_INPUTS,
    Action,
    CameraView,
    Correction,
    Input,
    InputError,
    ManualCard,
    Muck,
    Report,
    Ruling,
    ShoeCard,
    Show,
    SourceStatus,
    TableOp,
    parse_input,
)
from engine.rules import ConfigError, GameConfig
from engine.table import Table

SENSOR_KINDS = frozenset(cls.kind for cls in SENSOR_INPUTS)


class Floor(ShoeMixin, CameraMixin, ReportsMixin, RulingsMixin, UndoMixin):
    """One table's engine core.  See the module docstring."""

    def __init__(self, config: GameConfig, table_id: str = "table", seat_count: int = 8) -> None:
        self.config = config
        self.table_id = table_id
        self.table = Table(config, seat_count)
        self.prompts = {}
        self.prompt_counter = 0
        self.held = []  # sensor inputs waiting for a ruling
        self.shoe_active = True  # a shoe supplies card identities and the deal order
        # The table has no shoe at all (engine config ``shoe = false``), not one gone offline: nobody
        # reports the burns, so the floor counts them as the rules deal them (``_burn_unseen``).
        self.shoe_absent = False
        self.camera_active = True
        self.absent = set()
        self.folded_no_wager = set()  # RRoP stud 7: dealt on until a bet kills the hand
        self.out_of_turn = {}  # held binding actions, by seat
        self.pending_removals = 0  # RRoP stud 14: cards still to set aside after a premature deal
        self.removal_due = False  # RRoP stud 14: count them once the betting round is over
        # RRoP stud 14: cards drawn during this betting round: (card, seat it would have gone to
        # in the next street's deal, None for the burn), keyed by (hand, street).
        self.premature = []
        self.premature_key = (-1, -1)
        self.burn_errors = {}  # RRoP stud 13: (hand, street) -> burns
        self.card_mode = None  # RRoP stud 15 on seventh street: "reshuffled" or "common"
        self.hands = []  # finished hands, in order
        # What the camera already raised, per hand: a card lying off the felt or a hole card face up is
        # one irregularity however many observations repeat it (the camera re-sends its view).
        self.camera_raised = set()
        self.mixed_in = []  # RRoP stud 15: the last card, drawn, mixed with the burns
        self.boxed_cards = []  # RRoP 3.2(c): (hand, card) boxed cards reported on the deal
        # Cards dealt from the camera's view or keyed by hand while the shoe was offline: (hand, card).
        # The shoe keeps a draw made while its cable is out and sends it when it is back; that late
        # report is the same card, not a duplicate (DESIGN: sensors may fail mid-game; nothing twice).
        self.dealt_without_shoe = []
        self.hand_inputs = []  # engine/floor/undo.py
        self.hand_base = None
        self.voided = set()
        self.dropped = set()
        self.last_dealer = None
        self.event_inputs = []

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

    def parse(self, data: Mapping[str, Any] | Input) -> Input:
        """The typed input ``data`` stands for (``engine.inputs.parse_input``, with this table's
        seats); ``FloorError`` naming the field if it is not well formed."""
        try:
            return parse_input(data, self.table.seat_count)
        except InputError as exc:
            raise FloorError(str(exc), "engine.input", input=data, phase=self._phase(), field=exc.field) from None

    def handle(self, inp: Mapping[str, Any] | Input) -> FloorOutputs:
        """Apply one input; raises FloorError (changing nothing at all) if it is refused.

        All or nothing: the floor's bookkeeping is saved first (``_checkpoint``) and put back
        if any step refuses, the hand by folding its own log back to where it was."""
        parsed = self.parse(inp)
        out = FloorOutputs()
        text = self._describe(parsed)  # before it changes the hand: its street, its player
        saved = self._checkpoint()
        try:
            self._step(parsed, out)
        except FloorError as exc:
            self._rollback(saved)
            if exc.input is None:
                exc.input = parsed
            if exc.phase is None:
                exc.phase = self._phase()
            raise
        self._record(parsed, saved, text)
        return out

    def _step(self, parsed: Input, out: FloorOutputs) -> None:
        """One input's effect (a correction takes the hand's inputs again through this)."""
        if isinstance(parsed, SENSOR_INPUTS) and self._sensor_blocked():
            self.held.append(parsed)
            out.notes.append(f"{parsed.kind} held until the open prompt is ruled on")
            return
        INPUTS[type(parsed)](self, parsed, out)
        if isinstance(parsed, Ruling) and not self._sensor_blocked():
            while self.held and not self._sensor_blocked():
                held = self.held.pop(0)
                INPUTS[type(held)](self, held, out)
        self._after(out)

    def next_deal(self) -> list[DealSlot]:
        """What the deal tracker tells the dealer to do next (public/state ``next_deal``): the
        hand's ``expected_deal``, except where the floor knows better (``seventh_street_due``:
        RRoP stud 15's reshuffle, the burn again or not, the common card)."""
        hand = self.table.hand
        if hand is None or hand.phase is not Phase.DEALING:
            return []
        if self.shoe_absent and not any(p.rule.id == "stud.out-of-cards" for p in self.prompts.values()):
            observed = self.observed_deal()  # the burns are the dealer's own (``_burn_unseen``)
            return [observed] if observed is not None else []
        due = self.seventh_street_due()
        return [due] if due is not None else hand.expected_deal()[:1]

    # ------------------------------------------------------------- the table

    def _on_table(self, inp: TableOp, out: FloorOutputs) -> None:
        op = inp.op
        seat = inp.seat if inp.seat is not None else 0
        try:
            if op == "seat":
                self._apply(SeatTaken(seat, inp.name, inp.amount), out)
            elif op == "move":
                # RRoP 3.1: a seat change keeps the stack (engine/table.py).
                assert inp.to is not None
                self._apply(SeatChanged(seat, inp.to), out)
            elif op == "leave":
                self._apply(SeatLeft(seat), out)
            elif op == "add_chips":
                self._apply(ChipsAdded(seat, inp.amount), out)
            elif op in ("sit_out", "sit_in"):
                self._apply(SittingOut(seat, op == "sit_out"), out)
            elif op == "game":
                self._change_game(inp, out)
            else:  # start_hand (engine.inputs.TABLE_OPS)
                if self.prompts:
                    raise FloorError("rule on the open prompts before the next hand", "engine.prompt-open")
                start = self.table.start_hand()
                self.config = self.table.config  # a game changed during the last hand starts now
                self.absent &= {s.seat for s in start.seats}
                self.folded_no_wager.clear()
                self.out_of_turn.clear()
                self.pending_removals = 0
                self.removal_due = False
                self.premature = []
                self.burn_errors.clear()
                self.card_mode = None
                self._apply(start, out)
        except IllegalAction as exc:
            raise FloorError(f"table {op}: {exc}", exc.rule) from None

    def _change_game(self, inp: TableOp, out: FloorOutputs) -> None:
        """Game and stakes from the next hand: a hand in progress plays to its end under the game it
        started with (its ``HandStarted`` holds it; RRoP 2.1: "the result of a deal must stand"), so a
        change during a hand is taken now and waits for the next ``start_hand`` (a table that deals
        on by itself has no moment between hands to wait for)."""
        current = self.table.config
        try:
            new = GameConfig.from_json({**current.to_json(), **dict(inp.game or {})})
        except ConfigError as exc:
            raise FloorError(f"game change: {exc}", "engine.game") from None
        self.table.config = new
        if not self.table.in_hand:
            self.config = new
        when = "from the next hand" if self.table.in_hand else "now"
        out.notes.append(f"game: {new.variant.long_name} {new.small_bet}/{new.big_bet}, {when}")

    # --------------------------------------------------------------- actions

    def _on_action(self, inp: Action, out: FloorOutputs) -> None:
        hand = self._live_hand()
        self._console_blocked("action")
        seat, action, amount = inp.seat, inp.action, inp.amount
        if hand.phase is Phase.BETTING and hand.to_act is not None and seat != hand.to_act:
            s = hand.seat(seat) if seat in {x.seat for x in hand.seats} else None
            if s is None or not s.live:
                raise FloorError(f"seat {seat} is not in this hand", "engine.seats")
            if seat in self.out_of_turn:
                raise FloorError(f"seat {seat} already has an action held out of turn", "RRoP 3.5 out of turn")
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
        if not self._out_of_cards(out):
            self._turns_that_play_themselves(out)

    def _out_of_cards(self, out: FloorOutputs) -> bool:
        """RRoP stud 15: opens the out-of-cards prompt when the stub cannot serve seventh street."""
        hand = self.table.hand
        if (
            hand is None
            or hand.phase is not Phase.DEALING
            or hand.street != Street.SEVENTH
            or self.card_mode is not None
            or self.prompts
            or hand.common_card_street()
        ):
            return False
        waiting = hand.waiting_count()
        stub = hand.stub_size()
        if stub >= waiting:
            return False
        pool = hand.reshuffle_pool()
        removed = f" and the {len(hand.removed)} cards set aside" if hand.removed else ""
        if stub <= 1:
            # RRoP stud 15: every card is dealt but the last; it is mixed with the burn cards.
            then = (
                "burn one and deal the rest" if pool > waiting
                else "deal the rest without a burn, so that each player gets a fresh card" if pool == waiting
                else "there are still too few: burn one and turn one common card face up for every hand"
            )
            p = self._open("stud.out-of-cards", (), out, stub=stub, waiting=waiting, pool=pool,
                           burns=len(hand.burns), removed=removed, then=then)
            if pool >= waiting:
                p.withheld["common"] = (f"{pool} cards can serve the {waiting} players: reshuffle, "
                                        "no common card [RRoP stud 15]")
            return True
        if pool < waiting and waiting == len(hand.live_seats):
            # RRoP stud 15: "If the dealer determines that there will not be enough fresh cards for all
            # of the remaining players, then the dealer announces to the table that a common card will
            # be used" - before anyone's seventh card (every hand gets the same one), not after dealing
            # all but the last (a player given a fresh card would then have eight with the common card).
            p = self._open("stud.out-of-cards", (), out, stub=stub, waiting=waiting, pool=pool,
                           burns=len(hand.burns), removed=removed, then="")
            p.text = (f"Out of cards: {stub} cards left for {waiting} players, and only {pool} with the "
                      f"{len(hand.burns)} burn cards{removed}: not enough fresh cards for everyone. Announce a "
                      "common card: burn one and turn one card face up in the centre; it plays in every hand.")
            p.withheld["reshuffle"] = (f"even reshuffled, {pool} cards cannot give the {waiting} players a fresh "
                                       "card each: a common card is used [RRoP stud 15]")
            return True
        return False

    def _turns_that_play_themselves(self, out: FloorOutputs) -> None:
        """Absent players reached (RRoP stud 6), a fold without a wager checked along (stud 7),
        actions held out of turn coming due (3.5)."""
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
                    if held["action"] == "check" and hand.round is rnd and hand.phase is Phase.BETTING:
                        # RRoP 3.5: it binds, and if the betting comes back to this player, "a
                        # player who checks out of turn may not bet or raise on the next turn".
                        self._apply(CallOnly(seat), out)
                    continue
                except FloorError as exc:
                    out.notes.append(f"seat {seat}'s out-of-turn {held['action']} cannot stand: {exc}")
            else:
                out.notes.append(f"seat {seat}'s out-of-turn {held['action']} is void: a player in between bet or called")
            if held["action"] == "check":
                # RRoP 3.5: a player who checks out of turn may not bet or raise on the next turn.
                self._apply(CallOnly(seat), out)
            return

    def _on_show(self, inp: Show, out: FloorOutputs) -> None:
        hand = self._live_hand()
        if hand.phase is not Phase.SHOWDOWN:
            # RRoP 3.6: cards are shown at the showdown.  Refused before any card is looked at, so
            # that no answer tells anything of the down cards (issue 19 item 1).
            raise FloorError(f"cards are shown at the showdown; the hand is {hand.phase.value}", "RRoP 3.6")
        seat = inp.seat
        cards = inp.cards or self._shown_as_dealt(hand, seat)
        if seat in {s.seat for s in hand.seats}:
            s = hand.seat(seat)
            own = {c for c in s.all_cards if c.known}
            down = {c for c in s.down if c.known}
            guessed = any(not c.known for c in s.down)
            # RRoP 3.4: "If two cards of the same rank and suit are found, all action is void": a
            # down card shown (as dealt, or identifying an unknown one) whose twin is in plain
            # sight.  Only public cards are looked at: a twin among the down cards of a seat not
            # shown would answer the console about that seat's cards (DESIGN: secrets); it is
            # caught when that seat shows.
            elsewhere = [
                c for c in cards
                if c.known and (c in down or (guessed and c not in own)) and _in_sight(hand, seat, c)
            ]
            if elsewhere:
                c = elsewhere[0]
                name = c.name if hand.is_public(c) else "same card"  # as the shoe's prompt (shoe.py)
                self._open("deck.duplicate-card", (seat,), out, card=name, card_code=str(c))
                return
        self._apply(CardsShown(seat, cards), out)

    def _shown_as_dealt(self, hand: Hand, seat: int) -> tuple[Card, ...]:
        """A show with no cards: the down cards as the shoe or camera identified them (the console,
        which never sees a hole card, taps "show"); refused, naming no card, when one was never
        identified (the dealer then keys the cards the player turns up)."""
        try:
            s = hand.seat(seat)
        except IllegalAction:
            raise FloorError(f"seat {seat} has no cards in this hand", "RRoP 3.6") from None
        down = tuple(c for c, up in s.cards if not up)
        if not all(c.known for c in down):
            raise FloorError(f"seat {seat}'s down cards were not all identified when dealt: key the shown cards",
                             "RRoP 3.6")
        return down

    def _on_muck(self, inp: Muck, out: FloorOutputs) -> None:
        self._live_hand()
        self._apply(HandMucked(inp.seat), out)

    def _on_source(self, inp: SourceStatus, out: FloorOutputs) -> None:
        """A device went offline, came back, or skipped messages (DESIGN: sensors may fail mid-game)."""
        device = inp.device
        status = inp.status
        is_shoe = device.startswith(("shoe", "bridge"))
        if status == "offline":
            if is_shoe:
                self.shoe_active = False
            elif device.startswith(("cam", "vision")):
                self.camera_active = False
            # A device that drops again while its prompt is open: the same prompt counts it (issue 21, 8).
            same = next((p for p in self.prompts.values()
                         if p.rule.id == "source.offline" and p.data.get("device") == device), None)
            if same is None:
                self._open("source.offline", (), out, device=device)
            else:
                times = same.data["times"] = int(same.data.get("times", 1)) + 1
                same.text = same.rule.ruling.format(device=device).replace(
                    "went offline", f"went offline ({times} times)", 1)
                out.notes.append(f"{device} offline again: prompt {same.id} counts it ({times} times)")
        elif status == "config":  # RRoP 3.1: seats are taken at the table; the file's are reported, not applied
            self._open("table.config-seats", (), out, device=device, problem=inp.problem)
        elif status == "absent":
            # The table has none (engine config shoe = false): the camera's cards are the deal, no prompt.
            if is_shoe:
                self.shoe_active = False
                self.shoe_absent = True
            elif device.startswith(("cam", "vision")):
                self.camera_active = False
        elif status == "online":
            if is_shoe:
                self.shoe_active = True
                self.shoe_absent = False
            elif device.startswith(("cam", "vision")):
                self.camera_active = True
        elif status == "gap":
            # Sequence gaps the engine counts carry their channel and fold; a fault a device
            # reports itself (no channel) is a prompt of its own.
            if not inp.channel or not self._fold_source("source.gap", inp, out):
                self._open("source.gap", (), out, device=device, missing=inp.missing, channel=inp.channel)
        elif status == "restart":
            missing = "some" if inp.missing is None else inp.missing
            self._open("source.restart", (), out, device=device, missing=missing)
        elif status == "forged":
            if not self._fold_source("source.forged", inp, out):
                self._open("source.forged", (), out, device=device, channel=inp.channel)
        elif status == "lost":  # shoe messages that never came: its next cards wait for the ruling
            self._open("source.lost", (), out, device=device, missing=inp.missing)
        else:  # store (engine.inputs.SOURCE_STATUSES): the service opens this one itself, outside the log
            self._open("source.store", (), out, device=device, problem=inp.problem)

    def _fold_source(self, rule_id: str, inp: SourceStatus, out: FloorOutputs) -> bool:
        """One open ``source.forged`` / ``source.gap`` prompt per channel: a report while one is open
        updates its count and text instead of opening another (a console naming a new device in
        every message must not fill the prompt list past the wire's limit).  Here in the core, so
        the counts are the stored reports replayed (a restart shows what the dealer saw).  False:
        none open."""
        for p in self.prompts.values():
            if p.rule.id != rule_id or str(p.data.get("channel", "")) != inp.channel:
                continue
            devices: list[str] = p.data.setdefault("devices", [str(p.data.get("device", ""))])
            if inp.device not in devices:
                if len(devices) < FOLD_NAMES_KEPT:
                    devices.append(inp.device)
                else:  # a flood of names: counted, not kept (the prompt's size stays bounded)
                    p.data["unlisted"] = int(p.data.get("unlisted", 0)) + 1
            reports = p.data["reports"] = int(p.data.get("reports", 1)) + 1
            missing = int(p.data.get("missing_total", p.data.get("missing") or 0)) + (inp.missing or 0)
            p.data["missing_total"] = missing
            named = len(devices) + int(p.data.get("unlisted", 0))
            shown = ", ".join(devices[:FOLD_NAMES_SHOWN]) + (
                f" and {named - FOLD_NAMES_SHOWN} more" if named > FOLD_NAMES_SHOWN else "")
            if rule_id == "source.forged":
                p.text = (f"{reports} messages on {inp.channel} claimed to come from {named} "
                          f"device(s) that may not send there ({shown}): they were refused. "
                          "Check which devices are connected to this table.")
            else:
                p.text = (f"{reports} reports on {inp.channel}: {named} device(s) ({shown}) "
                          f"skipped {missing} message(s) in all. Check the cards on the table against the screen.")
            out.notes.append(f"{rule_id} on {inp.channel} from {inp.device!r} folded into prompt {p.id} "
                             f"({reports} reports)")
            return True
        return False


#: A folded source prompt lists this many device names and counts the rest.
FOLD_NAMES_SHOWN = 5
FOLD_NAMES_KEPT = 32

Handler = Callable[[Floor, Any, FloorOutputs], None]

#: The handler of each input, by its type (engine/inputs.py).
INPUTS: dict[type[Input], Handler] = {
    TableOp: Floor._on_table,
    Action: Floor._on_action,
    ShoeCard: Floor._on_shoe_card,
    CameraView: Floor._on_camera,
    ManualCard: Floor._on_manual_card,
    Show: Floor._on_show,
    Muck: Floor._on_muck,
    Report: Floor._on_report,
    Ruling: Floor._on_ruling,
    SourceStatus: Floor._on_source,
    Correction: Floor._on_correction,
}


def _in_sight(hand: Hand, seat: int, c: Card) -> bool:
    """Whether ``c`` is in plain sight other than among ``seat``'s own down cards (which it is
    showing): an up card anywhere, a card of a hand already shown, the common card."""
    return c in hand.common or any(
        d == c and (up or s.shown) for s in hand.seats for d, up in s.cards if up or s.seat != seat
    )
