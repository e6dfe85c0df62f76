"""The showdown: who shows first, cards shown and mucked, and the pots awarded.

Pots and how they are split are ``engine.showdown``'s (pure functions over the
seats); this part orders the showdown (RRoP 3.6), checks the cards shown against
the cards dealt ("cards speak"), and awards every pot when the hand completes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.events import CardsShown, HandMucked, PotAward
from engine.hand.state import HandState, IllegalAction, Phase, _announcement
from engine.ranking import describe_high, describe_low
from engine.rules import Variant
from engine.showdown import Pot, Scores, build_pots, kill_losing_hands, pots_without, split_pot

if TYPE_CHECKING:
    from engine.hand.betting import BettingRound

_RAZZ = Variant.RAZZ

# Showdown words by hand value (``describe_high`` and ``describe_low`` read the value only);
# a few thousand values at most.
_high_words: dict[int, str] = {}
_low_words: dict[int, str] = {}


class ShowdownMixin(HandState):
    """RRoP 3.6: the showdown and the award of the pots."""

    def _rotate(self, indices: list[int], first: int) -> list[int]:
        """Seat indices (given in ascending order) from ``first`` round the table to its right."""
        return [i for i in indices if i >= first] + [i for i in indices if i < first]

    def _begin_showdown(self, last: BettingRound) -> None:
        # RRoP 3.6: the last bettor or raiser shows first; if all checked, the first to act.
        first = last.aggressor if last.aggressor is not None else last.opener
        assert first is not None
        live = [i for i, s in enumerate(self.seats) if not s.folded and not s.mucked]
        order = self._rotate(live, first)
        if self.config.rules.separate_pots:
            # RRoP 3.6: "players involved in the side pot should show their hands before anyone
            # who is all-in for only the main pot", at every level: whoever put in more contests
            # more pots and shows first (a stable sort keeps the order among equals).
            seats = self.seats
            order.sort(key=lambda i: -seats[i].committed)
        self.to_show = order
        self.phase = Phase.SHOWDOWN
        self.announcements.append(
            _announcement(
                "showdown",
                f"Showdown: seat {self.seats[order[0]].seat} shows first",
                (self.seats[order[0]].seat,),
            )
        )

    def _on_cards_shown(self, e: CardsShown) -> None:
        s = self.seat(e.seat)
        if not s.live:
            raise IllegalAction("engine.show", f"seat {e.seat} is out of the hand")
        down_positions = [k for k, (_, up) in enumerate(s.cards) if not up]
        shown = list(e.cards)
        if len(shown) == len(s.cards):
            # All seven given: the up cards must match what is on the table.
            for (c, up), new in zip(s.cards, shown, strict=True):
                if up and c != new:
                    raise IllegalAction(
                        "engine.show", f"seat {e.seat}'s up card {c} is on the table: show the up cards as they lie"
                    )
            shown = [new for (_, up), new in zip(s.cards, shown, strict=True) if not up]
        if len(shown) != len(down_positions):
            raise IllegalAction(
                "RRoP 3.6", f"seat {e.seat} has {len(down_positions)} down cards; {len(shown)} shown"
            )
        if any(not c.known for c in shown):
            raise IllegalAction("RRoP 3.6", "a shown card must be identified")
        as_dealt = True  # the very cards dealt (identified when dealt): nothing to check or record
        for k, new in zip(down_positions, shown, strict=True):
            old = s.cards[k][0]
            if old is new:
                continue
            as_dealt = False
            if old.known and old != new:
                raise IllegalAction(
                    "RRoP 3.6 cards speak",
                    f"seat {e.seat}'s cards shown are not the cards dealt to it face down: show the cards as dealt",
                )
            # RRoP 3.4: an unknown down card shown as a card in plain sight elsewhere.  Only public
            # cards are checked (DESIGN: secrets); a down card's twin is caught when it is shown.
            if not old.known and self.is_public(new) and new not in {c for c in s.all_cards if c.known}:
                raise IllegalAction(
                    "RRoP 3.4 duplicate card", "a card shown is already elsewhere in this hand"
                )
        if not as_dealt:
            if len(set(shown)) != len(shown):
                raise IllegalAction("RRoP 3.4 duplicate card", "the same card is shown twice")
            for k, new in zip(down_positions, shown, strict=True):
                s.cards[k] = (new, False)
                self.seen.add(new)
        s.shown = True
        if self.phase is Phase.SHOWDOWN:
            idx = self._index[e.seat]
            if idx in self.to_show:
                self.to_show.remove(idx)
            self._maybe_settle()

    def _on_hand_mucked(self, e: HandMucked) -> None:
        s = self.seat(e.seat)
        idx = self._index[e.seat]
        if not s.live or idx not in self.to_show:
            raise IllegalAction("engine.show", f"seat {e.seat} has no hand to muck at this showdown")
        s.mucked = True
        self.to_show.remove(idx)
        if len(self.live_seats) == 1:
            self._award_uncontested()
            return
        self._maybe_settle()

    def _maybe_settle(self) -> None:
        if self.to_show:
            return
        contenders = self.live_seats
        for s in contenders:
            if any(not c.known for c, _ in s.cards):
                raise IllegalAction("RRoP 3.6", f"seat {s.seat} must show all cards to win")
        self._settle()

    def _award_uncontested(self) -> None:
        winner = self.live_seats[0]
        level = winner.committed
        # RRoP 3.6, 3.3: the last live hand wins only the pots it is in.  An all-in short stack
        # left alone because the other hands were mucked or killed (at the showdown, or killed
        # before it) does not win the chips above its own level: those side pots are not contested
        # by a live hand and go back to the hands that put them in and did not fold (a mucked
        # hand concedes only the pots it contests; house reading for a killed one, documented in
        # docs/rules.md).  Chips folded into them stay in them.
        claimants = sorted((s for s in self.seats if s is not winner and not s.live and (s.mucked or s.killed)
                            and s.committed > level), key=lambda s: s.committed)
        if not claimants or all(s.committed <= level for s in self.seats):
            self.pots = build_pots(self.seats, self.config.rules)
            for k, pot in enumerate(self.pots):
                self.awards.append(PotAward(k, pot.amount, winner.seat, "uncontested"))
            self._finish()
            return
        main = sum(min(s.committed, level) for s in self.seats)
        pots = [Pot(main, (winner.seat,))]
        previous = level
        for c in claimants:
            if c.committed <= previous:
                continue
            amount = sum(min(s.committed, c.committed) - min(s.committed, previous) for s in self.seats)
            pots.append(Pot(amount, tuple(x.seat for x in claimants if x.committed >= c.committed)))
            previous = c.committed
        leftover = sum(max(0, s.committed - previous) for s in self.seats)
        if leftover:
            pots[-1] = Pot(pots[-1].amount + leftover, pots[-1].eligible)
        self.pots = pots
        self.awards.append(PotAward(0, main, winner.seat, "uncontested"))
        for k, pot in enumerate(pots[1:], 1):
            n = len(pot.eligible)
            for i, seat in enumerate(pot.eligible):  # an odd chip to the first in seat order
                self.awards.append(PotAward(k, pot.amount // n + (1 if i < pot.amount % n else 0), seat,
                                            "uncontested"))
        self._finish()

    def _settle(self) -> None:
        rules = self.config.rules
        variant = self.config.variant
        scores = Scores(self.seats, self.common)
        pots = build_pots(self.seats, rules)
        # RRoP 3.6: all losing hands are killed before a pot is awarded.
        killed = kill_losing_hands(pots, self.seats, self.common, variant, scores)
        for s in killed:
            s.mucked = True
        if killed:
            pots = pots_without(pots, {s.seat for s in killed}, rules) or build_pots(self.seats, rules)
        self.pots = pots
        live = self.live_seats
        anyone_low = variant is Variant.STUD8 and any(scores.low8(s.seat) is not None for s in live)
        for k, pot in enumerate(self.pots):
            for seat, amount, share in split_pot(
                pot, self.seats, self.common, variant, rules, anyone_low, scores
            ):
                # A hand's words depend on its value only (engine.ranking): remembered by value.
                if share == "low" or variant is _RAZZ:
                    value = scores.low(seat)
                    desc = _low_words.get(value)
                    if desc is None:
                        desc = _low_words[value] = describe_low(scores.cards[seat])
                else:
                    value = scores.high(seat)
                    desc = _high_words.get(value)
                    if desc is None:
                        desc = _high_words[value] = describe_high(scores.cards[seat])
                self.awards.append(PotAward(k, amount, seat, share, desc))
        self._finish()

    def _finish(self) -> None:
        for a in self.awards:
            self.seat(a.seat).stack += a.amount
        for s in self.seats:
            if s.reserved:
                s.stack += s.reserved  # RRoP stud 17: a declared all-in's chips behind come back
                s.reserved = 0
        self.phase = Phase.COMPLETE
        self.round = None
        self.to_show = []
        by_seat: dict[int, int] = {}
        for a in self.awards:
            by_seat[a.seat] = by_seat.get(a.seat, 0) + a.amount
        for seat, amount in by_seat.items():
            hands = {a.hand for a in self.awards if a.seat == seat and a.hand}
            with_hand = f" with {', '.join(sorted(hands))}" if hands else ""
            self.announcements.append(
                _announcement("winner", f"Seat {seat} wins {amount}{with_hand}", (seat,))
            )
