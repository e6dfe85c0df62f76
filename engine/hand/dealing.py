"""Dealing: what each seat is due, where the next card goes, and the cards as they come.

One deal tracker answers "where does the next card go": ``next_deal`` (the first
slot, cheaply, on the hot path), ``expected_deal`` (every slot still due on the
street, for the screens) and ``draw_slot`` (where a card drawn from the shoe goes,
including the seventh street of RRoP stud 15 when the cards run short).  The
handlers accept the cards: what each seat must receive on the street is checked,
not the order among seats (a deviation there is an irregularity for the floor).
"""

from __future__ import annotations

from engine.events import Announcement, CardBurned, CardDealt, CommonCardDealt, DeckReshuffled
from engine.hand.seats import DUE, HELD, STREET_DEAL, STREET_NAMES, Street
from engine.hand.state import HandState, IllegalAction, Phase

_DEALING = Phase.DEALING
_THIRD, _SEVENTH = Street.THIRD, Street.SEVENTH

#: One place in the deal: ("burn", None, False), ("card", seat, face_up) or, on a short
#: seventh street, ("common", None, True).
DealSlot = tuple[str, int | None, bool]


class DealingMixin(HandState):
    """The deal tracker and the dealing handlers."""

    def expected_deal(self) -> list[DealSlot]:
        """What a dealer delivers next this street, in order: ("burn", None, False)
        or ("card", seat, face_up).  Burns are optional for the hand itself."""
        if self.phase is not _DEALING:
            return []
        slots: list[DealSlot] = []
        if (
            self.street > _THIRD
            and not self.burned_this_street
            and not any(
                len(s.cards) > sum(d + u for d, u in STREET_DEAL[: self.street]) and s.seat not in self.early
                for s in self.live_seats
            )
        ):
            slots.append(("burn", None, False))
        if self.street == _THIRD:
            # Two rounds of down cards, then the door cards, each from the dealer's left
            # (a seat whose hole card was turned up gets its third card down: RRoP stud 5).
            counts = {s.seat: (s.n_down, s.n_up) for s in self.live_seats}
            for rnd in range(3):
                for s in self.live_seats:
                    n_down, n_up = counts[s.seat]
                    if n_down + n_up <= rnd:
                        face_up = n_up == 0 if rnd == 2 else n_down >= 2
                        slots.append(("card", s.seat, face_up))
                        counts[s.seat] = (n_down + (not face_up), n_up + face_up)
        else:
            for s in self.live_seats:
                down, up = self.needs(s)
                if down or up:
                    slots.append(("card", s.seat, bool(up)))
        return slots

    def next_deal(self) -> DealSlot | None:
        """The first of ``expected_deal``, found without listing the rest."""
        if self.phase is not _DEALING:
            return None
        street = self.street
        if street > _THIRD and not self.burned_this_street:
            delivered = DUE[street - 1]
            held = delivered[0] + delivered[1]
            for s in self.seats:
                if not s.folded and not s.mucked and s.n_down + s.n_up > held and not (self.early and s.seat in self.early):
                    break
            else:
                return ("burn", None, False)
        # The seats are looked at in dealing order from ``_deal_from``: every place before it
        # was found served already on this street, and a served seat stays served until a
        # ruling takes cards back (which resets it, in ``_after_card``).
        seats = self.seats
        n = len(seats)
        start = self._deal_from
        if street == _THIRD:
            # Third street: round 0 and 1 down, round 2 the door card (places rnd * n + i).
            for rnd in (0, 1, 2):
                base = rnd * n
                if start >= base + n:
                    continue
                for i in range(start - base if start > base else 0, n):
                    s = seats[i]
                    if s.n_down + s.n_up <= rnd and not s.folded and not s.mucked:
                        self._deal_from = base + i
                        return ("card", s.seat, s.n_up == 0 if rnd == 2 else s.n_down >= 2)
            self._deal_from = 3 * n
            return None
        elif street == _SEVENTH and self.common:
            return None  # the common card plays for everyone (see ``needs``)
        down_due, up_due = DUE[street]
        for i in range(start, n):
            s = seats[i]
            if not s.folded and not s.mucked:
                if s.last_up and street == _SEVENTH:
                    d, u = self.due(s)
                    if s.n_down < d or s.n_up < u:
                        self._deal_from = i
                        return ("card", s.seat, s.n_up < u and s.n_down >= d)
                elif s.n_down < down_due or s.n_up < up_due:
                    self._deal_from = i
                    return ("card", s.seat, s.n_up < up_due and s.n_down >= down_due)
        self._deal_from = n
        return None

    def waiting_count(self) -> int:
        """Live seats still to receive a card on this street."""
        return sum(1 for s in self.live_seats if self.needs(s) != (0, 0))

    def draw_slot(self, card_mode: str | None = None) -> DealSlot | None:
        """Where a card drawn from the shoe now goes (None: no card is due).

        ``card_mode`` is the floor's ruling on a seventh street that ran short (RRoP stud
        15): None, "reshuffled" (the last card was mixed with the burns) or "common"."""
        slot = self.next_deal()
        if self.street == _SEVENTH and (card_mode is not None or (slot is not None and slot[0] == "burn")):
            return self._seventh_street_slot(card_mode)
        return slot

    def _seventh_street_slot(self, card_mode: str | None) -> DealSlot | None:
        """RRoP stud 15: where a seventh-street draw goes when the cards run short."""
        waiting = self.waiting_count()
        stub = self.stub
        if card_mode is not None and self.reshuffle_pool() < waiting:
            # Not enough fresh cards for everyone: burn (if a card can be spared) and turn a common card.
            if not self.burned_this_street and stub >= 2:
                return ("burn", None, False)
            return ("common", None, True)
        if not self.burned_this_street and stub > waiting:
            return ("burn", None, False)  # as on every street; after the reshuffle the dealer burns again
        if not self.burned_this_street and card_mode is None and 2 <= stub < waiting:
            # RRoP stud 15: too few cards for everyone: the dealer burns, then "all the cards are
            # dealt except the last card, which is mixed with the burn cards" (the floor's prompt).
            return ("burn", None, False)
        # "If there are not as many cards as players remaining without a card, the dealer does not
        # burn, so that each player can receive a fresh card": as many cards as players, or the
        # reshuffled packet no larger than the players still waiting.
        for kind, seat, face_up in self.expected_deal():
            if kind == "card":
                return (kind, seat, face_up)
        return None

    def _on_card_dealt(self, e: CardDealt) -> None:
        try:
            s = self.seats[self._index[e.seat]]
        except KeyError:
            s = None
        if s is None:
            s = self.seat(e.seat)  # refuses the unknown seat
        if s.folded or s.mucked:
            raise IllegalAction("engine.deal", f"seat {e.seat} is out of this hand and gets no cards")
        street = self.street
        face_up = e.face_up
        if street == _SEVENTH and (self.common or s.last_up):
            if self.common:
                down_due = up_due = -1  # the common card was the seventh card for everyone
            else:
                down_due, up_due = self.due(s)
        else:
            down_due, up_due = DUE[street]
        n_down = s.n_down
        n_up = s.n_up
        if (n_up >= up_due) if face_up else (n_down >= down_due):
            down, up = max(0, down_due - n_down), max(0, up_due - n_up)
            if down <= 0 and up <= 0:
                raise IllegalAction(
                    "engine.deal", f"seat {e.seat} already has its cards for {STREET_NAMES[self.street]}"
                )
            want = "down" if down > 0 else "up"
            got = "up" if face_up else "down"
            raise IllegalAction(
                "RRoP stud 5/17",
                f"seat {e.seat}'s next card on {STREET_NAMES[self.street]} is dealt {want}, not {got}",
            )
        # RRoP stud 15: before the first seventh card, with the stub short, a common card if
        # even the burns reshuffled cannot give every player a card.
        if street == _SEVENTH and self.stub < self._owed and not any(o.n_down == 3 for o in self.live_seats):
            waiting = self.waiting_count()
            if self.reshuffle_pool() < waiting:
                raise IllegalAction(
                    "RRoP stud 15",
                    f"only {self.reshuffle_pool()} cards for {waiting} players: deal one common card face up",
                )
        c = e.card
        # ``_check_new_card`` and ``_take_from_stub``, inline: every card of every hand comes here.
        if self.stub <= 0 or (c.known and c in self.seen):
            self._check_new_card(c, "dealt to seat", e.seat)
        self.stub -= 1
        if self.recycled:
            self.recycled.discard(c)
        if c.known:
            self.seen.add(c)
        s.cards.append((c, face_up))
        if face_up:
            s.n_up = n_up = n_up + 1
            s.up_key *= c.prime
        else:
            s.n_down = n_down = n_down + 1
        owed = self._owed - 1
        self._owed = owed
        if owed == 0:
            self._begin_betting()  # every live seat has its cards for the street
        elif owed < 0:
            self._after_card()  # cannot happen (test_hand_derived); count again to be safe

    def _on_card_burned(self, e: CardBurned) -> None:
        if self.burned_this_street:
            # RRoP stud 13: two burns for one round is a dealer error to correct.
            raise IllegalAction("RRoP stud 13", f"a card was already burned on {STREET_NAMES[self.street]}")
        delivered = HELD[self.street - 1] if self.street else 0
        for s in self.seats:
            if not s.folded and not s.mucked and len(s.cards) > delivered:
                if not self._burn_may_follow_cards(delivered):
                    raise IllegalAction("RRoP stud 13", "the burn comes before the street's first card")
                break
        c = e.card
        # ``_check_new_card`` and ``_take_from_stub``, inline as for a card dealt.
        if self.stub <= 0 or (c.known and c in self.seen):
            self._check_new_card(c, "burned")
        self._take_from_stub(c)
        self.burns.append(c)
        self.burned_this_street = True

    def _on_common_card_dealt(self, e: CommonCardDealt) -> None:
        # RRoP stud 15: a common card only when there are not enough fresh cards for every player.
        if self.street != _SEVENTH:
            raise IllegalAction(
                "RRoP stud 15", "a common card is dealt only for the last (seventh-street) card"
            )
        waiting = [s for s in self.live_seats if self.needs(s) != (0, 0)]
        if len(waiting) < len(self.live_seats):
            raise IllegalAction(
                "RRoP stud 15", "some players already have their seventh card; deal theirs to all"
            )
        if self.reshuffle_pool() >= len(waiting):
            raise IllegalAction(
                "RRoP stud 15",
                f"{self.reshuffle_pool()} cards can be dealt to {len(waiting)} players: "
                "deal each a card (reshuffle the burns if needed), no common card",
            )
        if not e.card.known:
            raise IllegalAction("engine.deal", "the common card is face up and must be identified")
        self._check_new_card(e.card, "as the common card")
        self._take_from_stub(e.card)
        self.common.append(e.card)
        self.announcements.append(
            Announcement("common_card", f"Common card: the {e.card.name} plays in every hand", ())
        )
        self._after_card()

    def _on_deck_reshuffled(self, e: DeckReshuffled) -> None:
        # RRoP stud 15: only on the last card, when the stub cannot serve every player.
        if self.street != _SEVENTH:
            raise IllegalAction(
                "RRoP stud 15", "the deck is reshuffled only for the last (seventh-street) card"
            )
        waiting = self.waiting_count()
        if self.stub_size() > waiting:
            raise IllegalAction(
                "RRoP stud 15",
                f"{self.stub_size()} cards are left for {waiting} players; no reshuffle is needed",
            )
        back = list(self.burns) + list(self.removed)  # RRoP stud 15: and any cards removed from the deck
        if self.config.rules.reshuffle_includes_muck:
            back += [c for s in self.seats if not s.live for c in s.all_cards]
        back = [c for c in back if c not in self.recycled or not c.known]
        self.stub += len(back)
        self.recycled |= {c for c in back if c.known}
        self.seen -= self.recycled
        self.burned_this_street = False  # RRoP stud 15: the dealer burns again (if cards allow)
        self.announcements.append(
            Announcement(
                "reshuffle", "Out of cards: the last card is mixed with the burn cards, scrambled and cut"
            )
        )

    def _burn_may_follow_cards(self, delivered: int) -> bool:
        """The rare cases where a burn comes after some seat already has this street's card."""
        if self.street == _SEVENTH and (
            self.recycled or any(isinstance(e, DeckReshuffled) for e in self.events[self.street_start :])
        ):
            return True  # RRoP stud 15: after the reshuffle the dealer burns again (unknown burns too)
        return all(len(s.cards) <= delivered or s.seat in self.early for s in self.seats if s.live)

    def _after_card(self) -> None:
        """Betting begins once every live seat has its cards for the street.

        Until then ``_owed`` counts the cards the live seats are still owed on this street:
        set when a street's deal begins and here (after every ruling that changes who holds
        what), and counted down by each card dealt (``_on_card_dealt``), which calls this
        when it reaches zero."""
        self._deal_from = 0
        if self.common and self.street == _SEVENTH:
            self._begin_betting()  # RRoP stud 15: the common card is everyone's seventh card
            return
        self._owed = self._owed_cards()
        if self._owed == 0:
            self._begin_betting()

    def _owed_cards(self) -> int:
        """Cards the live seats are still owed on this street (``needs``, summed)."""
        street = self.street
        down_due, up_due = DUE[street]
        owed = 0
        for s in self.seats:
            if not s.folded and not s.mucked:
                if s.last_up and street == _SEVENTH:
                    d, u = self.due(s)
                    owed += max(0, d - s.n_down) + max(0, u - s.n_up)
                    continue
                if s.n_down < down_due:
                    owed += down_due - s.n_down
                if s.n_up < up_due:
                    owed += up_due - s.n_up
        return owed
