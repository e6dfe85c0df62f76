"""The camera's view of the felt, compared with the hand.

Where the view disagrees with the hand (a hole card face up, a card off the felt,
an up card one place off the shoe's order) a prompt opens; on a table without a
shoe the camera's new cards are the deal.
"""

from __future__ import annotations

from engine.cards import UNKNOWN, Card
from engine.events import CardBurned, CardDealt
from engine.floor.prompts import BURN_PROBLEMS, FloorOutputs
from engine.floor.state import FloorState
from engine.hand import Hand, Phase, SeatState, Street
from engine.inputs import CameraView, Irregular, SeatSeen


class CameraMixin(FloorState):
    """Camera views."""

    def _camera_view(self, view: CameraView) -> tuple[list[SeatSeen], list[Irregular]]:
        """The seats and irregular items of a camera view, less what is still the last hand's picture.

        Why: the camera lags the felt (it reports a seat only once it has held still for a few
        frames) and keeps re-sending its view, so when a hand starts it may still show the last
        hand's cards; an old up card that is a new hole card would pass for an exposed card, and on
        a camera-only table the old cards would be dealt again.  A seat is not looked at while it
        shows the last hand's up cards at that seat, in order, over two or three down cards (the
        seat as it lay on some street of that hand), or four or more of the cards the table saw
        of its last hand face up (the hand tabled at the showdown), or, with a shoe (which always
        leads the camera), while it shows more cards than the shoe has dealt it.  An off-felt card
        the last hand had and this one does not show is the last hand's too.
        """
        seats = list(view.seats)
        items = list(view.irregular)
        hand = self.table.hand
        last = self.hands[-1] if self.hands and hand is not None and self.hands[-1] is not hand else None
        if hand is None or last is None:
            return seats, items
        old_up = {s.seat: [str(c) for c, up in s.cards if up] for s in last.seats}
        old_down = {s.seat: sum(1 for _, up in s.cards if not up) for s in last.seats}
        old_cards = {str(c) for s in last.seats for c, _ in s.cards}
        # What the table saw of each seat's last hand: its up cards, and all of a hand shown.
        old_seen = {s.seat: {str(c) for c, up in s.cards if up or s.shown} for s in last.seats}
        held = {s.seat: len(s.cards) for s in hand.seats}
        # A seat the view leaves out is one the camera sees empty (the vision service lists every
        # seat with a card): its last hand's cards are gone, and what it shows from then on is this
        # hand's, even the same card at the same place (at seven seats that happens most nights).
        present = {seen.seat for seen in seats}
        for s in hand.seats:
            if s.seat not in present:
                self.camera_raised.add((hand.hand_id, "seat-cleared", s.seat, ""))
        fresh: list[SeatSeen] = []
        for seen in seats:
            up = [str(c) for c in seen.up]
            if (hand.hand_id, "seat-cleared", seen.seat, "") in self.camera_raised:
                fresh.append(seen)
                continue
            if up and up == old_up.get(seen.seat, [])[: len(up)] and 2 <= seen.down <= old_down.get(seen.seat, 0):
                continue  # the last hand's seat as it lay on some street
            known = [c for c in up if c != "??"]
            if len(up) >= 4 and known and set(known) <= old_seen.get(seen.seat, set()):
                # The hand the seat tabled at the last showdown, still lying there face up: no deal
                # puts four up cards at a seat before fourth street, all of them that seat's last
                # hand's (a camera-only table would take them for this hand's deal).
                continue
            held_here = held.get(seen.seat)
            if self.shoe_active and held_here is not None and len(up) + seen.down > held_here:
                continue
            if (
                held_here is None and (up or seen.down) and seen.seat in old_up and not up
                and seen.down <= old_down[seen.seat]
            ):
                continue  # the last hand's down cards at a seat that is out of this hand
            fresh.append(seen)
        # Only what the table can see decides (issue 19, 1): were the hand's down cards asked, a
        # forged camera could learn whether a card is in the hole by whether a prompt opens.  So
        # an off-felt card the last hand had is taken for the last hand's unless it is an up or
        # shown card of this one; a hole card thrown off the table is the dealer's report then.
        public = {str(c) for c in hand.seen if hand.is_public(c)}
        return fresh, [i for i in items if not (str(i.card) in old_cards and str(i.card) not in public)]

    def _on_camera(self, inp: CameraView, out: FloorOutputs) -> None:
        hand = self.table.hand
        if hand is not None and not hand.is_over:
            self._more_than_seven(hand, inp, out)
        seats, irregular = self._camera_view(inp)
        if hand is None or hand.is_over:
            return
        if hand.phase is Phase.SHOWDOWN:
            # RRoP 3.6: at the showdown hands are tabled face up, anywhere in front of the player:
            # a hole card the camera sees face up is a hand being shown, not one dealt face up, and
            # a card near the rail is not a card dealt off the table (RRoP stud 11 is about the
            # deal).  Only the eight-card count, above, still applies.
            return
        for item in irregular:
            if item.kind == "off_felt":
                key = (hand.hand_id, "stud.card-off-table", item.seat, str(item.card))
                if key not in self.camera_raised:
                    self.camera_raised.add(key)
                    self._open("stud.card-off-table", (item.seat,) if item.seat is not None else (), out)
        in_hand = {s.seat: s for s in hand.seats}
        two_exposed = self._hole_cards_exposed_at_two_seats(hand, seats, out)
        for seen in seats:
            seat = seen.seat
            s = in_hand.get(seat)
            if s is None:
                # RRoP 3.2(i): cards dealt to an empty seat (on any hand; raised once a hand).
                key = (hand.hand_id, "misdeal.empty-seat", seat, "")
                if (seen.up or seen.down) and key not in self.camera_raised:
                    self.camera_raised.add(key)
                    self._open("misdeal.empty-seat", (seat,), out)
                continue
            if seat in two_exposed:
                continue  # RRoP 3.2(b): the misdeal prompt covers it
            if not s.live:
                continue  # a folded hand's cards are dead however they lie (folded face up: shown, not exposed)
            exposed = _exposed(s, seen)
            if exposed:
                # The shoe dealt it down; the camera sees it face up.
                key = (hand.hand_id, "exposed", seat, str(exposed[0]))
                if key in self.camera_raised:
                    continue
                self.camera_raised.add(key)
                if hand.street == Street.THIRD and len(s.cards) <= 3:
                    rule = "stud.both-holecards-exposed" if len(exposed) >= 2 else "stud.exposed-holecard"
                    if self.config.rules.exposed_downcard_misdeal:
                        rule = "stud.exposed-holecard-tournament"
                    self._open(rule, (seat,), out, card_code=str(exposed[0]), source="camera")
                elif hand.street == Street.SEVENTH and len(s.cards) == 7 and s.cards[-1][0] in exposed:
                    # RRoP stud 17-18: the seventh card itself face up (an all-in player may have
                    # turned earlier hole cards up; those are not the last card dealt up).
                    rule = "stud.allin-last-card-up" if s.stack == 0 else "stud.last-card-up"
                    self._open(rule, (seat,), out, card_code=str(s.cards[-1][0]), source="camera")
                continue
        street = hand.street
        if self.shoe_active and Street.FOURTH <= street <= Street.SIXTH and (hand.hand_id, street) not in self.burn_errors:
            found = self._burn_error(hand, inp.seats)
            if found is not None:
                # RRoP stud 13: the camera sees the street's cards one place off the shoe's order.
                burns, seat = found
                self.burn_errors[(hand.hand_id, street)] = burns
                self._open("stud.burn-error", (seat,), out, burns=burns, problem=BURN_PROBLEMS[burns])
                return
        if not self.shoe_active and hand.phase is Phase.DEALING:
            self._camera_deal(hand, {seen.seat: seen for seen in seats if seen.seat not in two_exposed}, out)
            common = next((i.card for i in irregular if i.kind == "common" and i.card not in (None, "??")), None)
            if common is not None and not self.prompts and self.observed_deal() == ("common", None, True):
                # RRoP stud 15: the common card turned face up in the centre, seen by the camera
                # (vision.tracking: a face-up card in the middle of the felt, in no seat's place).
                self._common_observed(hand, Card.parse(common), out)

    def _camera_deal(self, hand: Hand, seen: dict[int, SeatSeen], out: FloorOutputs) -> None:
        """A table without a shoe: the camera's new cards are the deal, taken in the deal's order
        (RRoP stud: two down cards and the door card on third street, each round from the dealer's
        left), since one view may show several cards laid since the last (a dealer is quicker than
        the camera's still frames).  A card is matched to the next slot at its seat: the next up
        card by position in the row (a card read differently from one the engine holds is a misread,
        not a new card), or one more down card than the engine holds.  A hole card laid face up is
        the irregularity ``_deal_observed`` rules on; no match: wait for the next view."""
        for _ in range(64):  # at most the cards of one street; a guard, not a limit reached
            if hand.phase is not Phase.DEALING or self.prompts or self._out_of_cards(out):
                return  # RRoP stud 15: at the last card the dealer stops and rules (one view, many cards)
            slot = next((sl for sl in hand.expected_deal() if sl[0] == "card"), None)
            if slot is None:
                return
            _, seat_no, face_up = slot
            assert seat_no is not None
            view = seen.get(seat_no)
            s = hand.seat(seat_no)
            if view is None:
                return
            new_up = [c for c in list(view.up)[len(s.up):] if c not in s.up]
            more_down = view.down > len(s.down)
            if face_up and new_up:
                self._deal_observed(hand, seat_no, new_up[0], True, out)
            elif not face_up and more_down:
                self._deal_observed(hand, seat_no, UNKNOWN, False, out)
            elif not face_up and new_up:
                self._deal_observed(hand, seat_no, new_up[0], True, out)  # a hole card laid face up
            else:  # nothing new at the seat due (or a card face down where an up card is due): wait
                return

    def _more_than_seven(self, hand: Hand, view: CameraView, out: FloorOutputs) -> None:
        """RRoP stud 19: "A hand with more than seven cards is dead": the camera sees eight or more
        cards at a seat in the hand that has been dealt seven.

        The prompt offers "Seven cards" beside "Dead hand": the camera counts a fan or a heap of
        tabled cards, and a covered card's pips read as one more card would otherwise leave the
        dealer no way on but to kill a hand that holds seven."""
        # Only at a seat dealt its seventh card: before it, eight cards at a seat are the last hand's
        # still lying there (a tabled hand, the dealer not yet done pulling cards in) beside the new
        # deal, and a card too many from the shoe is the deal's own prompt.
        full = {s.seat for s in hand.live_seats if len(s.cards) >= 7}
        for seen in view.seats:
            seat = seen.seat
            count = len(seen.up) + seen.down
            raised = (hand.hand_id, "stud.seven-card-limit", seat, "")
            if seat in full and count > 7 and raised not in self.camera_raised:
                self.camera_raised.add(raised)
                self._open(
                    "stud.seven-card-limit", (seat,), out, count=count, source="camera",
                    counted=" as the camera counts them: count the seat's cards",
                )

    def _hole_cards_exposed_at_two_seats(
        self, hand: Hand, seats: list[SeatSeen], out: FloorOutputs
    ) -> set[int]:
        """RRoP 3.2(b): "Two or more cards have been exposed by the dealer" is a misdeal.  At one
        seat stud's own rule governs (8.1: one hole card up, the third comes down; both up, a dead
        hand); across seats it is the misdeal, offered while it can still be called (3.2: before
        two players have acted).  The seats newly seen with a hole card face up, if the prompt opened."""
        if hand.street != Street.THIRD or self.config.rules.exposed_downcard_misdeal or self._action_occurred():
            return set()
        in_hand = {s.seat: s for s in hand.live_seats}
        new: dict[int, list[str]] = {}
        for seen in seats:
            seat = seen.seat
            s = in_hand.get(seat)
            if s is None or len(s.cards) > 3:
                continue
            exposed = [str(c) for c in _exposed(s, seen)]
            if exposed and (hand.hand_id, "exposed", seat, exposed[0]) not in self.camera_raised:
                new[seat] = exposed
        before = {k[2] for k in self.camera_raised if k[0] == hand.hand_id and k[1] == "exposed"}
        before -= {k[2] for k in self.camera_raised if k[0] == hand.hand_id and k[1] == "player-turned"}
        if not new or len(before | set(new)) < 2:
            return set()
        for seat, exposed in new.items():
            self.camera_raised.add((hand.hand_id, "exposed", seat, exposed[0]))
        self._open(
            "misdeal.exposed-first-cards", tuple(sorted(new)), out, exposed={str(k): v for k, v in new.items()}
        )
        return set(new)

    def _burn_error(self, hand: Hand, views: tuple[SeatSeen, ...]) -> tuple[int, int] | None:
        """RRoP stud 13: the burns the dealer really made on this street (0 or 2) and the first seat
        they moved, judged from the street's up cards at two seats next to each other in the deal.

        Why two seats: a burn error moves every card after it, so a seat shows the card the shoe's
        order gives its neighbour and the neighbour does not show it (a card lies in one place).
        One seat alone is as likely a misreading that happens to name the neighbour's card (a worn
        index, glare), and the prompt stops the hand.  The burn card itself is never compared: it is
        hidden, and a forged camera could learn it from whether the prompt opens (DESIGN: trust
        boundaries); a no-burn error is seen at the second seat instead, which shows the first
        seat's card.  A seat counts only where its earlier up cards are the hand's (the camera may
        show it before the shoe's draw reaches it, never the last hand's cards)."""
        draws = hand.street_draws()
        if not draws or not isinstance(draws[0], CardBurned):
            return None
        street = hand.street
        # The street's deal as the shoe recorded it (a seat dealt and since folded keeps its place),
        # then the seats still due a card: the shoe's card for order[i] is shoe[i].
        dealt = [ev for ev in draws[1:] if isinstance(ev, CardDealt)]
        order = [ev.seat for ev in dealt]
        order += [s.seat for s in hand.live_seats if s.seat not in order]
        shoe = [ev.card if ev.face_up else None for ev in dealt]  # (a card dealt down is no one's to compare)
        live = {s.seat for s in hand.live_seats}
        seen_at: dict[int, Card | None] = {}
        for view in views:
            if view.seat in live and list(view.up[:street]) == hand.seat(view.seat).up[:street]:
                seen_at[view.seat] = view.up[street] if len(view.up) > street else None
        for i, seat in enumerate(order):
            card = seen_at.get(seat)
            if card is None or (i < len(shoe) and card == shoe[i]):
                continue
            if 1 <= i <= len(shoe) and card == shoe[i - 1]:
                before = seen_at.get(order[i - 1])
                if before is not None and before != shoe[i - 1]:
                    return 0, order[i - 1]  # no burn: each card one seat late
            if i + 1 < len(shoe) and card == shoe[i + 1] and order[i + 1] in seen_at and seen_at[order[i + 1]] != card:
                return 2, seat  # two burns: each card one seat early
        return None


def _exposed(s: SeatState, seen: SeatSeen) -> list[Card]:
    """The hole cards the shoe dealt this seat that the camera sees face up (RRoP stud 5; 002 8.1).

    Why the counts: a card dealt down that lies face up is one more up card and one fewer down card
    than the shoe dealt the seat.  A view with exactly the shoe's counts that reads one of the up
    cards as a hole card is the camera misreading that up card (a worn index, glare: the camera's
    reading is a check on the shoe's tag, not the truth), and a hole card named on the dealer's
    screen for it would tell the table what the seat holds and stop the hand for a misdeal prompt
    that is not one.  A view that lags the shoe (a card not yet seen) has other counts and is read
    as before."""
    if len(seen.up) == s.n_up and seen.down == s.n_down:
        return []
    known_down = {c for c in s.down if c.known}
    return [c for c in seen.up if c in known_down]
