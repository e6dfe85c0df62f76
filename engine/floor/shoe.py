"""Cards from the shoe and cards keyed by hand: where each goes, or which prompt it raises.

Where a drawn card goes is the hand's deal tracker's answer (``Hand.draw_slot``);
this part adds what only the floor knows: cards to set aside after a premature
deal (RRoP stud 14), a draw while betting is open, the shoe's own statuses
(duplicate, foreign deck, unknown tag), and cards dealt while the shoe was off.
"""

from __future__ import annotations

from engine.cards import UNKNOWN, Card
from engine.events import CardBurned, CardDealt, CardsRemoved, CommonCardDealt
from engine.floor.prompts import FloorError, FloorOutputs
from engine.floor.state import FloorState
from engine.hand import Hand, Phase, Street
from engine.inputs import ManualCard, ShoeCard


class ShoeMixin(FloorState):
    """Shoe draws and manual cards."""

    def _on_shoe_card(self, inp: ShoeCard, out: FloorOutputs) -> None:
        status = inp.status
        hand = self.table.hand
        if hand is None or hand.is_over:
            out.notes.append("a card was drawn between hands; ignored")
            return
        c = inp.card if inp.card is not None else UNKNOWN
        if c.known and c not in hand.seen and (c in hand.recycled or (hand.hand_id, c) in self.mixed_in):
            status = "ok"  # RRoP stud 15: reshuffled back into play; the shoe saw it once before
        if c.known and (hand.hand_id, c) in self.dealt_without_shoe and status in ("ok", "duplicate"):
            self.dealt_without_shoe.remove((hand.hand_id, c))
            out.notes.append("the shoe reports a card late; it was already dealt while the shoe was offline")
            return
        if status == "duplicate" or (c.known and c in hand.seen):
            # The prompt names the card only if its twin is in plain sight: a duplicate of a down
            # card is that down card's identity (issue 19 item 1).
            name = c.name if c.known and hand.is_public(c) else "same card"
            self._open("deck.duplicate-card", (), out, card=name, card_code=str(c))
            return
        if status == "foreign_deck":
            self._open("deck.foreign-card", (), out, card_code=str(c))
            return
        if status == "unknown_tag" or inp.card is None:
            self._open("deck.unknown-tag", (), out)
            return
        self._deal_drawn(hand, c, out)

    def _deal_drawn(self, hand: Hand, c: Card, out: FloorOutputs) -> None:
        if hand.phase is Phase.BETTING:
            rnd = hand.round
            if hand.street == Street.THIRD and rnd is not None and rnd.bring_in_open and not rnd.acted:
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
        slot = hand.draw_slot(self.card_mode)
        if slot is None:
            raise FloorError("no card is due")
        kind, seat, face_up = slot
        if kind == "common":
            self._apply(CommonCardDealt(c), out)
        elif kind == "burn":
            self._apply(CardBurned(c), out)
        else:
            assert seat is not None
            self._apply(CardDealt(seat, c, face_up), out)

    def seventh_street_due(self) -> tuple[str, int | None, bool] | None:
        """Where the next seventh-street draw goes when it differs from the hand's own deal order
        (RRoP stud 15: no burn when the stub is short, the reshuffled burns, a common card), so the
        dealer's screen can say it; None when ``expected_deal`` already does."""
        hand = self.table.hand
        if hand is None or hand.phase is not Phase.DEALING:
            return None
        if any(p.rule.id == "stud.out-of-cards" for p in self.prompts.values()):
            return ("reshuffle", None, False)  # RRoP stud 15: mix the last card with the burns first
        if self.prompts:
            return None
        slot = hand.draw_slot(self.card_mode)
        return None if slot == hand.next_deal() else slot

    def _note_premature(self, hand: Hand, c: Card) -> None:
        """Remember where a card drawn during the betting would have gone in the next street's deal."""
        key = (hand.hand_id, hand.street)
        if self.premature_key != key:
            self.premature_key = key
            self.premature = []
        order: list[int | None] = [None] + [s.seat for s in hand.live_seats]
        n = len(self.premature)
        self.premature.append((str(c), order[n] if n < len(order) else None))

    def _on_manual_card(self, inp: ManualCard, out: FloorOutputs) -> None:
        hand = self._live_hand()
        self._console_blocked("deal")
        if inp.common:
            self._common_keyable(hand)
            self._common_observed(hand, inp.card, out)
            return
        self._deal_observed(hand, inp.seat, inp.card, inp.face_up, out)

    def _common_keyable(self, hand: Hand) -> None:
        """A common card keyed on the console is taken only when it is the next card due, as the
        camera's is: keyed before the burn at a shoe table, the burn was lost and the shoe's real
        burn came as a premature card (RRoP stud 15)."""
        if hand.phase is not Phase.DEALING or hand.street != Street.SEVENTH or hand.common:
            return  # ``_common_observed`` refuses it in its own words
        due = self.observed_deal() if self.shoe_absent else hand.draw_slot(self.card_mode)
        if due == ("common", None, True):
            return
        if due is not None and due[0] == "burn":
            # RRoP stud 15: "The dealer burns a card and turns one card face up in the center".
            raise FloorError("the burn comes first: burn a card from the shoe, then key the common card "
                             "[RRoP stud 15]", "RRoP stud 15")
        raise FloorError("the common card is not the next card due: it is dealt only when the floor rules "
                         "that the cards cannot serve every player [RRoP stud 15]", "RRoP stud 15")

    def _burn_unseen(self, hand: Hand, out: FloorOutputs) -> None:
        """A table without a shoe: the burn the rules call for before this card, counted unknown.

        Why: RRoP stud 13 has the dealer burn one card before each round from fourth street on, and
        stud 15 decides by the cards left whether the dealer burns on seventh street; a dealer
        dealing from the hand burns as at any table, but no camera or console reports that card.
        Uncounted, the stub is three or four cards too big by seventh street and the out-of-cards
        ruling (stud 15) comes too late or never.  So the floor counts the burn the deal tracker
        expects (``Hand.draw_slot``, the same answer a shoe's draw would get) as an unknown card.
        Only for a table with no shoe: one that went offline reports its draws, burns too, when it
        is back (engine/floor/core.py ``_on_source``)."""
        if not self.shoe_absent or hand.phase is not Phase.DEALING or hand.street == Street.THIRD:
            return
        slot = hand.draw_slot(self.card_mode)
        if slot is not None and slot[0] == "burn":
            self._apply(CardBurned(UNKNOWN), out)

    def _common_observed(self, hand: Hand, c: Card, out: FloorOutputs) -> None:
        """The common card seen (camera) or keyed (console) where no shoe draws it (RRoP stud 15:
        "The dealer burns a card and turns one card face up in the center of the table as a common
        card that plays in everyone's hand")."""
        if hand.phase is not Phase.DEALING or hand.street != Street.SEVENTH or hand.common:
            raise FloorError("a common card is dealt only for the last card, when the floor rules one "
                             "[RRoP stud 15]", "RRoP stud 15")
        self._burn_unseen(hand, out)
        self._apply(CommonCardDealt(c), out)

    def observed_deal(self) -> tuple[str, int | None, bool] | None:
        """On a table without a shoe, the next card the dealer lays (the burn before it is the
        dealer's own, counted by ``_burn_unseen``): what ``Hand.draw_slot`` gives after the burn."""
        hand = self.table.hand
        if hand is None or hand.phase is not Phase.DEALING:
            return None
        slot = hand.draw_slot(self.card_mode)
        if slot is None or slot[0] != "burn":
            return slot
        if hand.street == Street.SEVENTH and self.card_mode is not None and (
                hand.reshuffle_pool() < hand.waiting_count()):
            return ("common", None, True)  # RRoP stud 15: burn, then the common card
        return next((sl for sl in hand.expected_deal() if sl[0] == "card"), None)

    def _deal_observed(self, hand: Hand, seat: int, c: Card, face_up: bool, out: FloorOutputs) -> None:
        """A card seen (camera) or keyed (console) at a seat, where no shoe says what was due."""
        if c.known and not self.shoe_active:
            self.dealt_without_shoe.append((hand.hand_id, c))
        s = hand.seat(seat)
        if hand.phase is Phase.DEALING and s.live and hand.needs(s) != (0, 0):
            self._burn_unseen(hand, out)
        down, up = hand.needs(s)
        if hand.phase is Phase.DEALING and face_up and not up and down and hand.street == Street.SEVENTH:
            rule = "stud.allin-last-card-up" if s.stack == 0 else "stud.last-card-up"
            self._open(rule, (seat,), out, card_code=str(c))
            return
        if hand.phase is Phase.DEALING and face_up and hand.street == Street.THIRD and down and s.n_up == 0 and s.n_down < 2:
            # RRoP stud 5: a hole card dealt face up: it becomes the up card; the third card comes down.
            self._apply(CardDealt(seat, c, True), out)
            self._open("stud.exposed-holecard", (seat,), out, card_code=str(c))
            return
        if hand.phase is Phase.DEALING and face_up and hand.street == Street.THIRD and s.n_up == 1 and s.n_down < 2:
            self._open("stud.both-holecards-exposed", (seat,), out, card_code=str(c))
            return
        self._apply(CardDealt(seat, c, face_up), out)
