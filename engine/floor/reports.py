"""Dealer reports: irregularities no sensor can see, checked before their prompt opens."""

from __future__ import annotations

from typing import Any

from engine.events import PlayerAction, UpCardCorrected
from engine.floor.prompts import BURN_PROBLEMS, FloorError, FloorOutputs
from engine.floor.state import TOO_LATE_FOR_MISDEAL, FloorState
from engine.hand import Hand, IllegalAction, Phase, Street
from engine.inputs import Report
from engine.irregularities import BY_ID

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
    "showdown-kill": "dead.showdown-kill",
    "kill": "dead.showdown-kill",
}


class ReportsMixin(FloorState):
    """The ``report`` input."""

    def _on_report(self, inp: Report, out: FloorOutputs) -> None:
        name = inp.report
        short = name.replace("_", "-")
        rule_id = REPORT_ALIASES.get(short, short)
        rule = BY_ID.get(rule_id)
        if rule is None or rule.handling == "enforced":
            known = ", ".join(sorted(REPORT_ALIASES))
            raise FloorError(f"unknown report {name!r}; reports are {known} or a rule id", "engine.report")
        seat = inp.seat
        hand = self.table.hand
        seats: tuple[int, ...] = ()
        if seat is not None:
            if hand is None or seat not in {s.seat for s in hand.seats}:
                raise FloorError(f"seat {seat} has no cards in this hand", "engine.seats")
            seats = (seat,)
        if rule_id.startswith("misdeal."):
            self._live_hand()
            if self._action_occurred():
                raise FloorError(TOO_LATE_FOR_MISDEAL, "RRoP 3.2")
        elif hand is None or hand.is_over:
            raise FloorError("no hand is in progress", "engine.no-hand")
        if rule_id == "stud.upcards-picked-up" and hand is not None and hand.phase is Phase.SHOWDOWN:
            raise FloorError(
                f"seat {seat} picked up the up cards after the betting: that has no significance at the showdown;"
                " the hand is live until discarded [RRoP stud 10]",
                "RRoP stud 10",
            )
        if rule_id == "dead.showdown-kill" and hand is not None:
            # RRoP 3.3, 3.6: the dealer kills a hand at the showdown, a live one, and says which.
            if hand.phase is not Phase.SHOWDOWN:
                raise FloorError("a hand is killed from the console at the showdown only; before it, report "
                                 "what happened (the hand folds, or a ruling kills it) [RRoP 3.3]", "RRoP 3.3")
            if seat is None:
                raise FloorError("say which seat's hand is killed", "RRoP 3.3", field="seat")
            if not hand.seat(seat).live:
                raise FloorError(f"seat {seat}'s hand is already out of the showdown", "RRoP 3.3", field="seat")
        if rule_id == "deck.boxed-card" and hand is not None:
            code = "?" if inp.card is None else str(inp.card)
            boxed = [c for h, c in self.boxed_cards if h == hand.hand_id]
            if boxed and code not in boxed and not self._action_occurred():
                # RRoP 3.2(c): "Two or more boxed cards (improperly faced cards) are found": misdeal
                # (one is a scrap of paper, 3.4).
                self.boxed_cards.append((hand.hand_id, code))
                self._open("misdeal.boxed-cards", seats, out, cards=[], boxed=[*boxed, code])
                return
            if code not in boxed:
                self.boxed_cards.append((hand.hand_id, code))
        if rule_id == "stud.fold-without-wager" and hand is not None:
            rnd = hand.round
            if rnd is None or seat is None or hand.to_act != seat:
                raise FloorError(f"seat {seat} is not the player to act", "RRoP stud 7")
            if rnd.to > hand.seat(seat).bet:
                raise FloorError(f"seat {seat} faces a wager: that is an ordinary fold", "RRoP stud 7")
        extra: dict[str, Any] = {}
        if rule_id == "stud.wrong-bring-in" and hand is not None:
            seats, extra = self._check_wrong_bring_in(hand, inp)
        if rule_id == "stud.burn-error" and hand is not None:
            burns = inp.burns
            if burns is None:
                raise FloorError(
                    "say how many cards were burned: burns = 0 (none) or 2 (two) [RRoP stud 13]", "RRoP stud 13",
                    field="burns",
                )
            if hand.street == Street.THIRD:
                raise FloorError("third street has no burn card [RRoP stud 13]", "RRoP stud 13")
            self.burn_errors[(hand.hand_id, hand.street)] = burns
            extra = {"problem": BURN_PROBLEMS[burns]}
        if rule_id == "stud.final-downcard-kept" and hand is not None:
            if seat is None:
                raise FloorError("say which seat kept the last card", "RRoP stud 14", field="seat")
            extra = self._check_final_card(hand, seat, inp)
        if rule_id == "betting.unaware-of-raise" and hand is not None:
            last = hand.events[-1]
            if not isinstance(last, PlayerAction) or last.seat != seat:
                raise FloorError(
                    f"seat {seat}'s action can be taken back only if nobody has acted after it [RRoP 3.5]",
                    "RRoP 3.5",
                )
        data = inp.details()
        self._open(rule_id, seats, out, **{**data, **extra})

    def _check_wrong_bring_in(self, hand: Hand, inp: Report) -> tuple[tuple[int, ...], dict[str, Any]]:
        """RRoP stud 9: an up card corrected after the bring-in; the seat that is truly low."""
        rnd = hand.round
        if hand.street != Street.THIRD or rnd is None or rnd.opener is None:
            raise FloorError("a wrong bring-in is ruled on third street, during its betting [RRoP stud 9]", "RRoP stud 9")
        actions = [k for k, e in enumerate(hand.events) if isinstance(e, PlayerAction)]
        if not actions:
            raise FloorError(
                "nobody has brought it in yet: correct the card and the engine designates the low card", "RRoP stud 9"
            )
        c, corrected = inp.card, inp.seat
        if c is None or corrected is None:
            raise FloorError("wrong bring-in: give the seat and its true up card", "RRoP stud 9",
                             field="card" if c is None else "seat")
        try:
            probe = Hand.replay(hand.events[: actions[0]])
            probe.apply(UpCardCorrected(corrected, c))
        except IllegalAction as exc:
            raise FloorError(f"wrong bring-in: give the seat and its true up card ({exc})", exc.rule) from None
        wrong = hand.seats[rnd.opener].seat
        assert probe.round is not None and probe.round.opener is not None
        true_low = probe.seats[probe.round.opener].seat
        if true_low == wrong:
            raise FloorError(
                f"with the {c.name} at seat {corrected}, seat {wrong} is still low: the bring-in stands", "RRoP stud 9"
            )
        return (true_low,), {"card": str(c), "corrected_seat": corrected, "wrong_seat": wrong}

    def _check_final_card(self, hand: Hand, seat: int, inp: Report) -> dict[str, Any]:
        """RRoP stud 13-14: which card the player keeps, and why."""
        if hand.street == Street.SIXTH and hand.phase is Phase.BETTING:
            code = None if inp.card is None else str(inp.card)
            if code is None and self.premature_key == (hand.hand_id, hand.street):
                code = next((c for c, to in self.premature if to == seat), None)
            if code is None:
                raise FloorError(
                    f"no card drawn during this betting round was due to seat {seat}: report it with the card",
                    "RRoP stud 14",
                )
            return {"card": str(code), "extra": " and may only call on sixth street"}
        if hand.street == Street.SEVENTH:
            burns = inp.burns if inp.burns is not None else self.burn_errors.get((hand.hand_id, Street.SEVENTH))
            if burns not in (0, 2):
                raise FloorError(
                    "on seventh street the last card is kept after a burn error: say burns = 0 or 2 [RRoP stud 13]",
                    "RRoP stud 13",
                )
            return {"burns": burns, "extra": " where it lies (the burn error is not corrected)"}
        raise FloorError(
            "the last down card is kept early only on sixth street or after a seventh-street burn error", "RRoP stud 14"
        )
