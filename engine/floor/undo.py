"""Undoing a dealer's input: a correction is a new input, never a deletion.

Theory of operation
-------------------
The floor keeps every input it accepted in the hand in progress (``hand_inputs``, from the
hand's ``start_hand`` on, sensor inputs and the engine's own included) and the floor as it
was just before that hand started (``hand_base``, a ``_checkpoint``).  A ``Correction``
voids one of them: the floor goes back to ``hand_base`` and takes the hand's inputs again,
in their order, without the voided ones.  The hand is folded again from inputs, as the
engine service folds the store at a restart, so a restarted engine (which takes the
correction again from the store) reaches exactly the same state.  The correction itself is
kept among the hand's inputs and leaves an ``EntryUndone`` memo in the hand's log at its place
(the hand log and the history show it, with its console and time).  An input taken again
that the rules now refuse (a call whose bet was the voided raise) is left out too and the
correction says so; the store keeps every input, the voided ones and the correction itself.

What may be undone, and by whom:

* The dealer's own entries: an action, a card keyed by hand, a show, a muck.  A card from
  the shoe or a camera's view is what a sensor saw, not an entry: a card drawn cannot go
  back into the shoe; a misdealt card is ruled on as the rules say (RRoP stud 13 "the cards
  will be corrected, if at all possible, to their proper positions", stud 14 "the card(s)
  must be eliminated from play", 3.4), through the dealer's reports.  Rulings and reports
  are the floor's decisions; they are not undone here.
* Without authority: only the last input the dealer entered in this hand (an undo is an
  entry too, so a second undo in a row needs the floor).  RRoP 2.1: "The proper time to
  draw attention to an error or irregularity is when it occurs or is first noticed."
* An older entry needs the floor's authority: the engine service checks the floor PIN and
  stores only its verdict (``Correction.floor``: ok, wrong, unset), never the PIN; a wrong
  PIN is refused and changes nothing.  RRoP 2.1: "Decisions of the shift supervisor are final."
* Only in the hand in progress: once the pot is awarded the hand is in the hand log, and
  RRoP 2.1 makes a pot ruling the floor's ("the result of a deal must stand"), not an undo.

``dealer_inputs`` is what the console shows before it sends a correction: each entry's
public description ("seat 3 Bob raise to 10 (third street)"; a keyed card is "a card keyed
face down" or "face up", never its name: a card keyed face up by mistake is a hole card) and
what the undo will also take again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.events import CardBurned, CardDealt, CommonCardDealt, EntryUndone
from engine.floor.prompts import FloorError, FloorOutputs
from engine.floor.state import FloorState
from engine.hand import STREET_NAMES, Hand
from engine.inputs import (
    Action,
    CameraView,
    Correction,
    Input,
    ManualCard,
    Muck,
    Report,
    Ruling,
    ShoeCard,
    Show,
)

#: The dealer's entries an undo may void.
UNDOABLE: tuple[type[Input], ...] = (Action, ManualCard, Show, Muck)
#: Everything the dealer enters during a hand (the last of these is "the last dealer input").
DEALER_INPUTS: tuple[type[Input], ...] = (*UNDOABLE, Report, Ruling)
#: How many of the hand's entries the public state lists (the newest).
LISTED = 20

SENSOR_REFUSAL = (
    "a card from the shoe or a camera's view is what a sensor saw, not a dealer's entry: a drawn card "
    "cannot go back; report the irregularity (a card off the table, a premature card, a burn error) "
    "[RRoP stud 13, 14; 3.4]"
)


@dataclass(frozen=True, slots=True)
class HandInput:
    """One input taken in the hand in progress, with its public description (dealer entries)."""

    input: Input
    text: str = ""


def _verb(inp: Action) -> str:
    amount = inp.amount
    return {
        "fold": "fold", "check": "check", "call": "call" if amount is None else f"call {amount}",
        "bring_in": f"bring-in {amount}", "complete": f"complete to {amount}", "bet": f"bet {amount}",
        "raise": f"raise to {amount}",
    }.get(inp.action, inp.action)


class UndoMixin(FloorState):
    """Recording the hand's inputs, describing the dealer's entries, and undoing one."""

    def _describe(self, inp: Input) -> str:
        """The public words for a dealer entry, as the table stands before it is taken."""
        if isinstance(inp, Correction):
            target = self.hand_inputs[inp.input] if 0 < inp.input < len(self.hand_inputs) else None
            return f"undone: {target.text}" if target is not None and target.text else "undone"
        if not isinstance(inp, Action | ManualCard | Show | Muck):  # UNDOABLE
            return ""
        hand = self.table.hand
        seat = inp.seat
        name = ""
        if hand is not None and seat in {s.seat for s in hand.seats}:
            name = hand.seat(seat).name
        elif seat in self.table.seats:
            name = self.table.seats[seat].name
        who = f"seat {seat} {name}".rstrip()
        street = f" ({STREET_NAMES[hand.street]})" if hand is not None and hand.street < len(STREET_NAMES) else ""
        if isinstance(inp, Action):
            return f"{who} {_verb(inp)}{street}"
        if isinstance(inp, ManualCard) and inp.common:
            return f"the common card keyed{street}"  # face up for everyone (RRoP stud 15): no seat
        if isinstance(inp, ManualCard):
            # Never the card's name (the words are on public/state): a down card is SECRET, and a card
            # keyed face up by mistake is a hole card too.
            what = "a card keyed face up" if inp.face_up else "a card keyed face down"
            return f"{who}: {what}{street}"
        if isinstance(inp, Show):
            return f"{who} shows the hand"
        return f"{who} mucks the hand"

    def _record(self, inp: Input, before: tuple[Any, ...], text: str) -> None:
        """Keep an accepted input for a later correction (``before``: the floor before it)."""
        if getattr(inp, "op", None) == "start_hand":
            self.hand_base = before
            self.hand_inputs = [HandInput(inp)]
            self.event_inputs = []
            self.voided = set()
            self.dropped = set()
            self.last_dealer = None
        elif self.hand_base is None:
            return
        else:
            self.hand_inputs.append(HandInput(inp, text))  # a correction too: taken again as its memo
            if isinstance(inp, Correction):
                self.last_dealer = None  # the undo is the dealer's last entry now
            elif isinstance(inp, DEALER_INPUTS):
                self.last_dealer = len(self.hand_inputs) - 1
        self._events_from(len(self.hand_inputs) - 1)

    def _events_from(self, index: int) -> None:
        """The hand's new events came from input ``index`` (``event_inputs``: the history's who and when)."""
        hand = self.table.hand
        if hand is not None:
            self.event_inputs.extend([index] * (len(hand.events) - len(self.event_inputs)))

    def dealer_inputs(self) -> list[dict[str, Any]]:
        """The dealer's entries in the hand in progress that an undo may void (public words only)."""
        hand = self.table.hand
        if hand is None or hand.is_over or self.hand_base is None:
            return []
        listed = [i for i, e in enumerate(self.hand_inputs) if isinstance(e.input, UNDOABLE)][-LISTED:]
        return [
            {"hand": hand.hand_id, "input": i, "text": self.hand_inputs[i].text, "last": i == self.last_dealer,
             "undone": i in self.voided, "dropped": i in self.dropped, "after": self._taken_again(i)}
            for i in listed
        ]

    def _taken_again(self, index: int) -> str:
        """What an undo of entry ``index`` takes again after it ("2 cards and 1 action"), in words."""
        counts = {"card": 0, "action": 0, "entry": 0}
        for i, e in enumerate(self.hand_inputs[index + 1:], index + 1):
            if i in self.voided:
                continue
            x = e.input
            if isinstance(x, ShoeCard | ManualCard):
                counts["card"] += 1
            elif isinstance(x, Action):
                counts["action"] += 1
            elif isinstance(x, DEALER_INPUTS):
                counts["entry"] += 1
        parts = [f"{n} {k}{'s' if n != 1 else ''}" for k, n in counts.items() if n]
        return " and ".join(parts)

    def _on_correction(self, inp: Correction, out: FloorOutputs) -> None:
        hand = self.table.hand
        if hand is None or self.hand_base is None:
            raise FloorError("no hand is in progress: there is nothing to undo", "engine.correction")
        if hand.is_over:
            # RRoP 2.1: after the pot is awarded, a ruling on it is the floor's, not an undo.
            raise FloorError(f"hand #{hand.hand_id} is over and its pot awarded: it is not undone "
                             "(a pot ruling is the floor's) [RRoP 2.1]", "RRoP 2.1")
        if inp.hand != hand.hand_id:
            raise FloorError(f"only the hand in progress (#{hand.hand_id}) is corrected, not hand #{inp.hand}",
                             "engine.correction")
        if inp.input >= len(self.hand_inputs):
            raise FloorError(f"hand #{hand.hand_id} has no input {inp.input}", "engine.correction")
        entry = self.hand_inputs[inp.input]
        if isinstance(entry.input, ShoeCard | CameraView):
            raise FloorError(SENSOR_REFUSAL, "RRoP stud 14")
        if not isinstance(entry.input, UNDOABLE):
            raise FloorError(f"a {entry.input.kind} is not a dealer's entry that an undo voids (actions, cards "
                             "keyed by hand, shows and mucks are)", "engine.correction")
        if inp.input in self.voided:
            raise FloorError(f"{entry.text} was undone already", "engine.correction")

        if inp.floor == "wrong":
            raise FloorError("the floor PIN is wrong: nothing was changed", "engine.floor-pin")
        if inp.floor == "locked":
            raise FloorError("too many wrong floor PINs in this hand: no PIN is taken again until the next hand",
                             "engine.floor-pin")
        if inp.input != self.last_dealer and inp.floor != "ok":
            why = ("and this table has no floor PIN configured (engine config: floor_pin)" if inp.floor == "unset"
                   else "the floor's PIN is needed")
            # RRoP 2.1: "Decisions of the shift supervisor are final."
            raise FloorError(f"{entry.text} is not the last input entered: to undo it {why} [RRoP 2.1]",
                             "RRoP 2.1")
        before = placements(hand)  # (the hand in progress: the rollback below brings it back)
        self.voided = self.voided | {inp.input}
        self._rebuild(out)
        # RRoP stud 13, 14: a card drawn keeps its place on the felt.  Taken again without the
        # entry, a later card from the shoe (or, without a shoe, the camera) must land where it
        # lies: not at another seat (a card keyed for the wrong seat undone), not set aside as
        # premature (the action that closed a round undone).  Else the undo is refused (the
        # handler's rollback puts everything back) and the dealer reports the irregularity.
        after = placements(self.table.hand)
        moved = sorted(c for c, where in before.items() if c in self._sensor_cards(inp.input) and after.get(c) != where)
        if moved:
            raise FloorError(f"{entry.text} cannot be undone: {len(moved)} card(s) dealt after it would not stay "
                             "where they lie, and a drawn card is not moved; report the irregularity instead "
                             "[RRoP stud 13, 14]", "RRoP stud 14")
        self._memo(entry.text, out)
        out.notes.append(f"undone: {entry.text}")

    def _sensor_cards(self, index: int) -> set[str]:
        """The cards the shoe (or, at a table without one, the camera) gave after entry ``index``."""
        cards: set[str] = set()
        for n in range(index + 1, len(self.hand_inputs)):
            got = self.hand_inputs[n].input
            if n in self.voided:
                continue
            if isinstance(got, ShoeCard) and got.card is not None and got.card.known:
                cards.add(str(got.card))
            elif isinstance(got, CameraView) and not self.shoe_active:
                cards |= {str(c) for seen in got.seats for c in seen.up if c.known}
        return cards

    def _memo(self, text: str, out: FloorOutputs) -> None:
        """The correction in the hand's own log (a hand that the inputs taken again ended keeps none)."""
        hand = self.table.hand
        if hand is not None and not hand.is_over:
            self._apply(EntryUndone(text), out)

    def _rebuild(self, out: FloorOutputs) -> None:
        """The hand again from ``hand_base`` and its inputs, without the voided ones."""
        entries, base, voided, last = self.hand_inputs, self.hand_base, set(self.voided), self.last_dealer
        assert base is not None
        self._rollback(self._fresh(base))
        self.event_inputs = []
        dropped: set[int] = set()
        for i, e in enumerate(entries):
            if i in voided:
                continue
            if isinstance(e.input, Correction):  # an earlier undo: its memo, at its place
                self._memo(e.text.removeprefix("undone: "), out)
                self._events_from(i)
                continue
            saved = self._checkpoint()
            try:
                self._step(e.input, out)
            except FloorError:
                self._rollback(saved)
                if i == 0:
                    raise
                dropped.add(i)
                out.notes.append(f"no longer taken: {e.text or e.input.kind}")
            self._events_from(i)
        events = self.event_inputs
        self.hand_inputs, self.hand_base, self.voided, self.dropped = entries, base, voided, dropped
        self.event_inputs = events
        self.last_dealer = last


def placements(hand: Hand | None) -> dict[str, tuple[Any, ...]]:
    """Where each identified card of a hand lies: at a seat (its place in the seat's row, up or
    down), burned, or the common card; a card set aside or not dealt has no place."""
    out: dict[str, tuple[Any, ...]] = {}
    if hand is None:
        return out
    rows: dict[int, int] = {}
    for e in hand.events:
        if isinstance(e, CardDealt):
            k = rows[e.seat] = rows.get(e.seat, 0) + 1
            if e.card.known:
                out[str(e.card)] = ("seat", e.seat, k, e.face_up)
        elif isinstance(e, CardBurned) and e.card.known:
            out[str(e.card)] = ("burn",)
        elif isinstance(e, CommonCardDealt) and e.card.known:
            out[str(e.card)] = ("common",)
    return out
