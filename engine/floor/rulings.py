"""Rulings: the dealer's choice on an open prompt, and what each rule's choice does.

``EFFECTS`` is the table of rulings that change something, keyed by rule id
(engine/irregularities.py); a rule without an entry only records the decision.
Each effect is applied as ordinary hand events, so the hand still replays from
its own log.
"""

from __future__ import annotations

from collections.abc import Callable

from engine.cards import UNKNOWN, Card
from engine.events import (
    ActionWithdrawn,
    AllInDeclared,
    BringInWithdrawn,
    CallOnly,
    CardBurned,
    CardDealt,
    CardsRemoved,
    CardTakenBack,
    DealCorrected,
    DeckReshuffled,
    ExtraCardReturned,
    FinalCardKept,
    HandKilled,
    HandVoided,
    HoleCardExposed,
    PlayerAction,
    UpCardCorrected,
)
from engine.floor.prompts import FloorError, FloorOutputs, Prompt
from engine.floor.state import FloorState
from engine.hand import Phase, Street
from engine.inputs import Ruling, ShoeCard


class RulingsMixin(FloorState):
    """The ``ruling`` input and the effect of each rule's options."""

    def _on_ruling(self, inp: Ruling, out: FloorOutputs) -> None:
        pid, option = inp.prompt, inp.option
        prompt = self.prompts.get(pid)
        if prompt is None:
            raise FloorError(f"prompt {pid!r} is not open", "engine.ruling", field="prompt")
        if option in prompt.withheld:
            raise FloorError(
                f"prompt {pid}: {option!r} is not an option here: {prompt.withheld[option]}",
                prompt.rule.id,
                field="option",
            )
        if option not in {o.id for o in prompt.options}:
            allowed = ", ".join(o.id for o in prompt.options)
            raise FloorError(
                f"prompt {pid} has no option {option!r}; options: {allowed}", prompt.rule.id, field="option"
            )
        effect = EFFECTS.get(prompt.rule.id)
        del self.prompts[prompt.id]
        if effect is not None:
            try:
                effect(self, prompt, option, out)
            except FloorError as exc:
                if exc.rule == "engine.floor":
                    exc.rule = prompt.rule.id
                raise
        out.closed.append(prompt.id)

    # -------------------------------------------------------------- effects
    # One method per rule id that changes the hand (``EFFECTS``); the rest only record the decision.

    def _void(self, rule: str, out: FloorOutputs) -> None:
        hand = self.table.hand
        if hand is not None and not hand.is_over:
            self._apply(HandVoided(rule), out)

    def _turned_by_player(self, p: Prompt) -> None:
        """The dealer says the player turned the seat's cards up: not the dealer's error, so not one
        of the cards a misdeal counts either (RRoP 3.2(b): "exposed by the dealer")."""
        hand = self._live_hand()
        self.camera_raised.add((hand.hand_id, "player-turned", p.seats[0], ""))

    def _rule_stud_exposed_holecard(self, p: Prompt, option: str, out: FloorOutputs) -> None:
        if option == "player":
            self._turned_by_player(p)  # RRoP 3.4: "A card that is flashed by a player will play"
            return
        hand = self._live_hand()
        seat = p.seats[0]
        if hand.street == Street.THIRD:
            self._apply(HoleCardExposed(seat), out)

    def _rule_stud_both_holecards_exposed(self, p: Prompt, option: str, out: FloorOutputs) -> None:
        # RRoP stud 5: dead hand, ante returned; a player who turned the cards up plays them (RRoP 3.4).
        if option == "player":
            self._turned_by_player(p)
            return
        self._apply(HandKilled(p.seats[0], p.rule.id, refund_ante=True), out)

    def _rule_stud_exposed_holecard_tournament(self, p: Prompt, option: str, out: FloorOutputs) -> None:
        if option == "misdeal":  # else played on: too late for a misdeal (RRoP 3.2)
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

    def _rule_dead_showdown_kill(self, p: Prompt, option: str, out: FloorOutputs) -> None:
        # RRoP 3.3(d): "The hand does not contain the proper number of cards" - dead; 3.6: the dealer
        # kills hands before the pot is awarded.  Only while the showdown is still on.
        if option != "confirm":
            return
        hand = self._live_hand()
        if hand.phase is not Phase.SHOWDOWN:
            raise FloorError("the showdown is over: there is no hand to kill [RRoP 3.3]", "RRoP 3.3")
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

    def _rule_misdeal_exposed_first_cards(self, p: Prompt, option: str, out: FloorOutputs) -> None:
        # RRoP 3.2(b): hole cards exposed at two or more seats; played on, each seat's exposed
        # hole cards are ruled as stud's own rule says (8.1: the exposed card is the up card and
        # the third comes down; both hole cards up, a dead hand with the ante returned).
        self._misdeal(p, option, out)
        if option == "misdeal":
            return
        hand = self._live_hand()
        for seat, codes in sorted(p.data.get("exposed", {}).items()):
            s = hand.seat(int(seat))
            if not s.live or hand.street != Street.THIRD:
                continue
            if len(codes) >= 2:
                self._apply(HandKilled(s.seat, "stud.both-holecards-exposed", refund_ante=True), out)
            else:
                self._apply(HoleCardExposed(s.seat), out)

    def _rule_betting_out_of_turn(self, p: Prompt, option: str, out: FloorOutputs) -> None:
        hand = self.table.hand
        seat = p.seats[0]
        if (
            option == "void"
            and p.data.get("action") == "check"
            and hand is not None
            and hand.round is not None
            and hand.seat(seat).live
        ):
            # RRoP 3.5: "A player who checks out of turn may not bet or raise on the next turn to
            # act", also when the check itself is ruled not binding.
            self._apply(CallOnly(seat), out)
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

    def _rule_betting_unaware_of_raise(self, p: Prompt, option: str, out: FloorOutputs) -> None:
        self._apply(ActionWithdrawn(p.seats[0]), out)

    def _rule_stud_last_card_up(self, p: Prompt, option: str, out: FloorOutputs) -> None:
        # RRoP stud 16-18: the last card dealt face up is kept and plays face up (turned up by the
        # player, RRoP 3.4: it plays as dealt, nothing changes).
        if option == "player":
            self._turned_by_player(p)
            return
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
        if (hand.street == Street.THIRD and s.n_up == 0) or (hand.street == Street.SEVENTH and s.n_down == 3):
            self._apply(HoleCardExposed(s.seat), out)

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
            if hand.reshuffle_pool() >= hand.waiting_count():
                raise FloorError(
                    f"{hand.reshuffle_pool()} cards can serve the {hand.waiting_count()} players: reshuffle, "
                    "no common card [RRoP stud 15]"
                )
            self.card_mode = "common"
            return
        self._apply(DeckReshuffled(), out)
        self.card_mode = "reshuffled"
        # A draw held while the prompt was open is the last card taken out to be mixed in: it is
        # dealt when it comes out of the scrambled packet, not now.
        drawn = [h for h in self.held if isinstance(h, ShoeCard)]
        if drawn:
            self.held = [h for h in self.held if not isinstance(h, ShoeCard)]
            # The shoe reads them again from the scrambled packet: not duplicates.
            self.mixed_in.extend((hand.hand_id, h.card) for h in drawn if h.card is not None)
            out.notes.append(f"{len(drawn)} draw(s) before the reshuffle went into the mixed cards")


Effect = Callable[[RulingsMixin, Prompt, str, FloorOutputs], None]

#: What a ruling does, by rule id (engine/irregularities.py); rules not here only record it.
EFFECTS: dict[str, Effect] = {
    "stud.exposed-holecard": RulingsMixin._rule_stud_exposed_holecard,
    "stud.both-holecards-exposed": RulingsMixin._rule_stud_both_holecards_exposed,
    "stud.exposed-holecard-tournament": RulingsMixin._rule_stud_exposed_holecard_tournament,
    "stud.absent-player": RulingsMixin._rule_stud_absent_player,
    "stud.upcards-picked-up": RulingsMixin._rule_stud_upcards_picked_up,
    "stud.fold-without-wager": RulingsMixin._rule_stud_fold_without_wager,
    "stud.premature-card": RulingsMixin._rule_stud_premature_card,
    "stud.seven-card-limit": RulingsMixin._rule_stud_seven_card_limit,
    "dead.joker": RulingsMixin._rule_dead_joker,
    "dead.clock": RulingsMixin._rule_dead_clock,
    "dead.showdown-kill": RulingsMixin._rule_dead_showdown_kill,
    "deck.duplicate-card": RulingsMixin._rule_deck_duplicate_card,
    "deck.foreign-card": RulingsMixin._rule_deck_foreign_card,
    "deck.unknown-tag": RulingsMixin._rule_deck_unknown_tag,
    "misdeal.exposed-first-cards": RulingsMixin._rule_misdeal_exposed_first_cards,
    "misdeal.boxed-cards": RulingsMixin._misdeal,
    "misdeal.extra-cards": RulingsMixin._misdeal,
    "misdeal.out-of-sequence": RulingsMixin._misdeal,
    "misdeal.empty-seat": RulingsMixin._misdeal,
    "betting.out-of-turn": RulingsMixin._rule_betting_out_of_turn,
    "deck.boxed-card": RulingsMixin._rule_deck_boxed_card,
    "deck.joker": RulingsMixin._rule_deck_boxed_card,
    "betting.unaware-of-raise": RulingsMixin._rule_betting_unaware_of_raise,
    "stud.last-card-up": RulingsMixin._rule_stud_last_card_up,
    "stud.allin-last-card-up": RulingsMixin._rule_stud_last_card_up,
    "stud.card-off-table": RulingsMixin._rule_stud_card_off_table,
    "deal.flashed-card": RulingsMixin._rule_stud_card_off_table,
    "stud.wrong-bring-in": RulingsMixin._rule_stud_wrong_bring_in,
    "stud.burn-error": RulingsMixin._rule_stud_burn_error,
    "stud.final-downcard-kept": RulingsMixin._rule_stud_final_downcard_kept,
    "deal.extra-card-before-betting": RulingsMixin._rule_deal_extra_card_before_betting,
    "stud.out-of-cards": RulingsMixin._rule_stud_out_of_cards,
}
