"""Corrections: the hand events a ruling on an irregularity produces.

Each handler here is the hand's side of a floor ruling (engine/floor/rulings.py
decides *which* events a ruling makes; engine/irregularities.py says why): a hole
card exposed, a hand killed or voided, an action or a bring-in taken back, a
boxed card replaced, premature cards set aside, a burn error played where it
lies, an up card corrected.  Like every handler they check before they change.
Where a ruling takes back something already applied, the hand is rebuilt from
its own log without it (``replay``), so the result is exactly the hand that
would have been.
"""

from __future__ import annotations

from engine.events import (
    ActionWithdrawn,
    AllInDeclared,
    Announcement,
    BringInWithdrawn,
    CallOnly,
    CardBurned,
    CardDealt,
    CardsRemoved,
    CardTakenBack,
    DealCorrected,
    EntryUndone,
    ExtraCardReturned,
    FinalCardKept,
    HandKilled,
    HandVoided,
    HoleCardExposed,
    PlayerAction,
    UpCardCorrected,
)
from engine.hand.seats import DUE, STREET_NAMES, SeatState, Street
from engine.hand.state import HandState, IllegalAction, Phase

_THIRD, _SIXTH, _SEVENTH = Street.THIRD, Street.SIXTH, Street.SEVENTH


class CorrectionsMixin(HandState):
    """The ruling handlers (RRoP 3.2-3.5; stud 5, 9, 13, 14, 16-17)."""

    def _on_hole_card_exposed(self, e: HoleCardExposed) -> None:
        s = self.seat(e.seat)
        if not s.live:
            raise IllegalAction("engine.ruling", f"seat {e.seat} is out of the hand")
        if self.street == _THIRD:
            # RRoP stud 5: a first or second hole card turned up becomes the up card; the third comes down.
            if s.n_up == 0 and s.n_down > 0:
                k = max(i for i, (_, up) in enumerate(s.cards) if not up)
                s.cards[k] = (s.cards[k][0], True)
                self._recount(s)
            elif not (s.n_up == 1 and s.n_down < 2):
                raise IllegalAction("RRoP stud 5", f"seat {e.seat} has no exposed hole card on third street")
            s.exposed_door = True
            self.announcements.append(
                Announcement("ruling", f"Seat {e.seat}'s hole card was exposed: the third card comes down", (e.seat,))
            )
        elif self.street == _SEVENTH:
            # RRoP stud 16-17: the last card dealt face up is kept and plays face up.
            rnd = self.round
            if rnd is not None and (rnd.acted or rnd.to or s.n_down <= 2):
                raise IllegalAction("RRoP stud 17", "the last card is ruled face up before the betting starts")
            if s.n_down > 2:
                k = max(i for i, (_, up) in enumerate(s.cards) if not up)
                s.cards[k] = (s.cards[k][0], True)
                self._recount(s)
            s.last_up = True
            self.announcements.append(
                Announcement("ruling", f"Seat {e.seat}'s last card plays face up", (e.seat,))
            )
        else:
            raise IllegalAction("RRoP stud 5", "a hole card is exposed on third or seventh street only")
        if self.round is not None:
            # RRoP stud 17: the last card was dealt before anyone acted: the hand now high on the
            # board using all the up cards starts the action.
            self.round = None
            self._begin_betting()
            return
        self._after_card()

    def _on_hand_killed(self, e: HandKilled) -> None:
        s = self.seat(e.seat)
        if not s.live:
            raise IllegalAction("engine.ruling", f"seat {e.seat}'s hand is already out")
        idx = self._index[e.seat]
        s.folded = True
        s.killed = e.rule
        if e.refund_ante:
            # RRoP stud 5: both hole cards dealt up: dead hand, ante returned.
            s.stack += s.ante
            s.committed -= s.ante
            s.ante = 0
        self.announcements.append(Announcement("dead_hand", f"Seat {e.seat}'s hand is dead", (e.seat,)))
        if len(self.live_seats) == 1:
            self._award_uncontested()
            return
        if self.phase is Phase.BETTING and self.round is not None:
            if idx in self.round.to_act:
                self.round.to_act.remove(idx)
            self._maybe_close_round()
        elif self.phase is Phase.DEALING:
            self._after_card()
        elif self.phase is Phase.SHOWDOWN:
            if idx in self.to_show:
                self.to_show.remove(idx)
            self._maybe_settle()

    def _on_hand_voided(self, e: HandVoided) -> None:
        # RRoP 3.2 misdeal; 3.4 foreign or duplicate card: all action void, chips back to who wagered them.
        for s in self.seats:
            s.stack = s.starting_stack
            s.committed = 0
            s.bet = 0
            s.reserved = 0
        self.voided = True
        self.round = None
        self.to_show = []
        self.phase = Phase.COMPLETE
        self.announcements.append(Announcement("voided", "All action is void: every chip goes back", ()))

    def _on_action_withdrawn(self, e: ActionWithdrawn) -> None:
        # RRoP 3.5: unaware of a raise, a player may withdraw the chips and reconsider,
        # provided no one else has acted after.  The hand is rebuilt without that action.
        last = self.events[-1] if self.events else None
        if not isinstance(last, PlayerAction) or last.seat != e.seat:
            raise IllegalAction(
                "RRoP 3.5", f"only seat {e.seat}'s own last action, with nobody acting after it, can be withdrawn"
            )
        full = self.events
        rebuilt = type(self).replay(full[:-1])
        self.__dict__.update(rebuilt.__dict__)
        self.events = full
        self._options_cache = None
        self.announcements.append(
            Announcement("ruling", f"Seat {e.seat} takes back the {last.action}: seat {self.to_act} to act", (e.seat,))
        )

    def _on_all_in_declared(self, e: AllInDeclared) -> None:
        # RRoP stud 17(a),(b): the player whose last card was dealt face up may declare all in
        # before the betting starts; the chips behind are set aside until the hand is over.
        s = self.seat(e.seat)
        rnd = self.round
        if self.street != _SEVENTH or not s.live or not s.last_up:
            raise IllegalAction("RRoP stud 17", f"seat {e.seat}'s last card was not dealt face up")
        if self.phase is Phase.BETTING and rnd is not None and (rnd.count or rnd.acted or rnd.to):
            raise IllegalAction("RRoP stud 17", "the all-in is declared before the betting action starts")
        if s.stack == 0:
            raise IllegalAction("RRoP stud 17", f"seat {e.seat} is all in already")
        s.reserved, s.stack = s.stack, 0
        self.announcements.append(Announcement("all_in", f"Seat {e.seat} declares all in", (e.seat,)))
        if self.phase is Phase.BETTING and rnd is not None:
            idx = self._index[e.seat]
            if idx in rnd.to_act:
                rnd.to_act.remove(idx)
            if len(rnd.to_act) == 1:
                rnd.to_act.clear()  # nobody left to bet against
            self._options_cache = None
            self._maybe_close_round()

    def _on_card_taken_back(self, e: CardTakenBack) -> None:
        # RRoP 3.4: a boxed card (or a joker) is a scrap of paper, replaced by the next card.
        # Only the card just delivered can be taken back; the hand is rebuilt without it and
        # the card is set aside, so the seat (or the burn) is due again.
        last = self.events[-1] if self.events else None
        if not isinstance(last, CardDealt | CardBurned) or last.card != e.card or not e.card.known:
            raise IllegalAction(
                "RRoP 3.4", "only the card just delivered can be taken back, and that card was not"
            )
        full = self.events
        rebuilt = type(self).replay(full[:-1])
        rebuilt._take_from_stub(e.card)
        rebuilt.removed.append(e.card)
        self.__dict__.update(rebuilt.__dict__)
        self.events = full
        self._options_cache = None
        where = f"seat {last.seat}" if isinstance(last, CardDealt) else "the burn"
        self.announcements.append(
            Announcement("ruling", f"The {e.card.name} is a scrap of paper: the next card goes to {where}", ())
        )

    def _on_cards_removed(self, e: CardsRemoved) -> None:
        # RRoP stud 14: premature cards do not play; they are held aside for a reshuffle.
        if not e.cards:
            raise IllegalAction("RRoP stud 14", "no cards to remove")
        for c in e.cards:
            self._check_new_card(c, "set aside")
        for c in e.cards:
            self._take_from_stub(c)
            self.removed.append(c)

    def _on_final_card_kept(self, e: FinalCardKept) -> None:
        # RRoP stud 14: a premature final down card looked at or mixed in is kept; the player
        # may not bet or raise on sixth street (holding all seven cards), but can call.
        rnd = self.round
        if self.street != _SIXTH or rnd is None:
            raise IllegalAction("RRoP stud 14", "only a seventh card dealt during sixth-street betting is kept early")
        s = self.seat(e.seat)
        if not s.live:
            raise IllegalAction("engine.ruling", f"seat {e.seat} is out of the hand")
        if len(s.cards) != sum(DUE[_SIXTH]) or s.seat in self.early:
            raise IllegalAction("RRoP stud 14", f"seat {e.seat} already has {len(s.cards)} cards")
        if e.card.known and e.card in self.removed:
            self.removed.remove(e.card)  # it was set aside as premature: it comes back to the player
        else:
            self._check_new_card(e.card, "kept by seat", e.seat)
            self._take_from_stub(e.card)
        s.cards.append((e.card, False))
        s.n_down += 1
        self.early.add(s.seat)
        rnd.call_only.add(self._index[e.seat])
        self.announcements.append(
            Announcement(
                "ruling", f"Seat {e.seat} keeps the last card and may only call on sixth street", (e.seat,)
            )
        )

    def _on_deal_corrected(self, e: DealCorrected) -> None:
        # RRoP stud 13: two burns or no burn, and the cards cannot be put back in position:
        # the street's draws play where they lie (burn(s) first, then the seats in dealing order).
        if self.street == _THIRD or self.common:
            raise IllegalAction("RRoP stud 13", "only a street with a burn card (fourth to seventh) can be corrected")
        if e.burns not in (0, 2):
            raise IllegalAction("RRoP stud 13", "the correction is for no burn (0) or two burns (2)")
        rest_events = self.events[self.street_start:]
        if any(not isinstance(ev, CardBurned | CardDealt) for ev in rest_events):
            raise IllegalAction(
                "RRoP stud 13", f"too late to correct the deal on {STREET_NAMES[self.street]}: play has moved on"
            )
        draws = self.street_draws()
        if self.burned_this_street and not any(isinstance(ev, CardBurned) for ev in draws):
            raise IllegalAction("RRoP 3.4", "this street's burn was the extra card returned on third street")
        cards = [ev.card for ev in draws]
        if len(cards) <= e.burns:
            raise IllegalAction("RRoP stud 13", f"only {len(cards)} card(s) drawn on {STREET_NAMES[self.street]}")
        received: dict[int, int] = {}
        for ev in draws:
            if isinstance(ev, CardDealt):
                received[ev.seat] = received.get(ev.seat, 0) + 1
        # Each live seat's holding before this street, and what it is due on it.
        plan: list[tuple[SeatState, bool]] = []
        for s in self.seats:
            if not s.live:
                continue
            k = received.get(s.seat, 0)
            kept = s.cards[: len(s.cards) - k] if k else s.cards
            n_down = sum(1 for _, up in kept if not up)
            n_up = len(kept) - n_down
            down_due, up_due = self.due(s)
            plan += [(s, True)] * max(0, up_due - n_up) + [(s, False)] * max(0, down_due - n_down)
        rest = cards[e.burns:]
        if len(rest) > len(plan):
            raise IllegalAction(
                "RRoP stud 13", f"{len(cards)} cards were drawn for {len(plan)} players and {e.burns} burn(s)"
            )
        # Checked; now change.
        if self.burned_this_street:
            self.burns.pop()
        for s in self.seats:
            k = received.get(s.seat, 0)
            for _ in range(k):
                _, up = s.cards.pop()
                if up:
                    s.n_up -= 1
                else:
                    s.n_down -= 1
        self.burns.extend(cards[: e.burns])
        self.burned_this_street = e.burns > 0
        for c, (s, up) in zip(rest, plan, strict=False):
            s.cards.append((c, up))
        for s in self.seats:
            self._recount(s)
        what = "no card was burned" if e.burns == 0 else "two cards were burned"
        self.announcements.append(
            Announcement("ruling", f"On {STREET_NAMES[self.street]} {what}: the cards play where they lie", ())
        )
        self.round = None
        self.phase = Phase.DEALING
        self._after_card()

    def _on_up_card_corrected(self, e: UpCardCorrected) -> None:
        # An up card misread by the camera or keyed wrongly; RRoP stud 9 when it decides the bring-in.
        s = self.seat(e.seat)
        ups = [k for k, (_, up) in enumerate(s.cards) if up]
        if e.position >= len(ups):
            raise IllegalAction("engine.ruling", f"seat {e.seat} has no up card number {e.position + 1}")
        if not e.card.known:
            raise IllegalAction("engine.ruling", "the corrected card must be identified")
        k = ups[e.position]
        old = s.cards[k][0]
        if old == e.card:
            raise IllegalAction("engine.ruling", f"seat {e.seat}'s up card is already the {e.card.name}")
        if e.card in self.seen and self.is_public(e.card):
            # RRoP 3.4: refused only for a twin in plain sight; a down card's twin is not refused,
            # or the answer would tell a console which cards are down (DESIGN: secrets).
            raise IllegalAction("RRoP 3.4 duplicate card", f"the {e.card.name} is already face up in this hand")
        s.cards[k] = (e.card, True)
        self._recount(s)
        self.seen.discard(old)
        self.seen.add(e.card)
        self.announcements.append(
            Announcement("ruling", f"Seat {e.seat}'s up card is the {e.card.name}, not the {old.name}", (e.seat,))
        )
        rnd = self.round
        if rnd is not None and not rnd.acted and rnd.to == 0 and not any(
            isinstance(ev, PlayerAction) for ev in self.events[self.street_start:]
        ):
            # Nobody has acted on this round yet: who opens is decided on the true cards.
            self.round = None
            self._begin_betting()

    def _on_bring_in_withdrawn(self, e: BringInWithdrawn) -> None:
        # RRoP stud 9: the wrong low card bet and the next player has not acted: the wager is
        # taken back and the true low card must bring it in.  The hand is rebuilt without it.
        if self.street != _THIRD or self.round is None:
            raise IllegalAction("RRoP stud 9", "a wrong bring-in is taken back on third street only")
        since = max(
            (k for k, ev in enumerate(self.events) if isinstance(ev, BringInWithdrawn)), default=0
        )
        actions = [k for k in range(since, len(self.events)) if isinstance(self.events[k], PlayerAction)]
        first = self.events[actions[0]] if len(actions) == 1 else None
        if not isinstance(first, PlayerAction) or first.seat != e.seat:
            raise IllegalAction(
                "RRoP stud 9",
                f"seat {e.seat}'s bring-in can be taken back only if it is the only action so far; "
                "once the next player acts the wager stands",
            )
        k = actions[0]
        full = self.events
        rebuilt = type(self).replay(full[:k] + full[k + 1:])
        self.__dict__.update(rebuilt.__dict__)
        self.events = full
        self._options_cache = None
        self.announcements.append(
            Announcement("ruling", f"Seat {e.seat} takes back the bring-in: seat {self.to_act} is low", (e.seat,))
        )

    def _on_entry_undone(self, e: EntryUndone) -> None:
        """A memo: the floor has already taken the hand again without the entry."""

    def _on_call_only(self, e: CallOnly) -> None:
        # RRoP 3.5: a player who checks out of turn may not bet or raise on the next turn to act.
        rnd = self.round
        s = self.seat(e.seat)
        if rnd is None or not s.live:
            raise IllegalAction("RRoP 3.5", f"seat {e.seat} has no turn to act in this round")
        rnd.call_only.add(self._index[e.seat])

    def _on_extra_card_returned(self, e: ExtraCardReturned) -> None:
        # RRoP 3.4: before the first betting round one extra card goes back and is the next burn.
        rnd = self.round
        if self.street != _THIRD or (rnd is not None and (rnd.acted or not rnd.bring_in_open)):
            raise IllegalAction("RRoP 3.4", "only an extra card before the first betting round is returned as the burn")
        if self.burn_ahead:
            raise IllegalAction("RRoP 3.2(d)", "a second extra card in the starting hands is a misdeal")
        self._check_new_card(e.card, "returned as the burn")
        self._take_from_stub(e.card)
        self.burns.append(e.card)
        self.burn_ahead = True
        self.announcements.append(
            Announcement("ruling", "The extra card is the burn card for fourth street", ())
        )
