"""The simulated people at the table: the dealer and the players, who act only through the console."""


from __future__ import annotations

import logging
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

from dealer_console.console import ConsoleWindow
from dealer_console.demo.drills import Drills
from dealer_console.demo.options import (
    ACTION_WEIGHTS,
    NAMES,
    DemoError,
    DemoOptions,
)
from dealer_console.demo.shift import Shift
from dealer_console.demo.stack import TableStack, signature
from dealer_console.demo.truth import TruthCheck
from dealer_console.driver import DriverError, ThreadedDriver
from dealer_console.snapshot import option_names

# ----------------------------------------------------------------------------- the simulated people


log = logging.getLogger("studtable.demo")


@dataclass
class HandTruth:
    hand_id: int
    cards: list[tuple[str, int | None, bool | None, str]] = field(default_factory=list)  # (kind, seat, up, card)
    actions: list[tuple[int, str, int | None]] = field(default_factory=list)
    shown: dict[int, list[str]] = field(default_factory=dict)
    #: a camera-only table: the down cards as dealt (``cards`` has them as "??", as the engine must)
    hole: dict[int, list[str]] = field(default_factory=dict)
    #: the game the dealer knows this hand is played under (a change between hands plays from the next)
    game: str = ""
    #: a shift: who the dealer knows is dealt in, with what (the ledger), ``{seat: (name, stack)}``
    seats: dict[int, tuple[str, int]] | None = None

    def down_cards(self, seat: int) -> list[str]:
        if seat in self.hole:
            return list(self.hole[seat])
        return [c for kind, s, up, c in self.cards if kind == "card" and s == seat and not up]


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    xs = sorted(values)
    k = min(len(xs) - 1, max(0, round(q / 100 * (len(xs) - 1))))
    return xs[k]


def latency_summary(values_s: list[float]) -> dict[str, Any]:
    ms = [v * 1000 for v in values_s]
    def r(x: float | None) -> float | None:
        return None if x is None else round(x, 2)
    return {"n": len(ms), "p50": r(percentile(ms, 50)), "p99": r(percentile(ms, 99)),
            "max": r(max(ms) if ms else None)}


class Narrator:
    """Prints the hands as they are played, as the table monitor would show them (no hole cards)."""

    def __init__(self, out: TextIO | None) -> None:
        self.out = out
        self._said: set[str] = set()

    def say(self, text: str) -> None:
        if self.out is not None:
            print(text, file=self.out, flush=True)

    def announcements(self, state: Mapping[str, Any]) -> None:
        for a in state.get("announcements", []):
            key = f"{state.get('hand_id')}:{a.get('kind')}:{a.get('text')}"
            if key not in self._said:
                self._said.add(key)
                self.say(f"    dealer: {a.get('text')}")


class SimulatedTable(Drills, Shift, TruthCheck):
    """The dealer and the players: they see only the console's view and act on it."""

    def __init__(self, stack: TableStack, opts: DemoOptions, narrate: TextIO | None = None) -> None:
        self.stack = stack
        self.opts = opts
        self.rng = random.Random(opts.seed)
        self.watch = stack.watch
        self.say = Narrator(narrate)
        self.truths: dict[int, HandTruth] = {}
        self.names: dict[int, str] = {i + 1: NAMES[i] for i in range(opts.players)}
        self.latencies: list[float] = []
        self.inputs = {"cards_drawn": 0, "actions": 0, "shows": 0, "rulings": 0}
        self.prompts_seen: dict[str, dict[str, Any]] = {}
        self.prompts_resolved: list[str] = []
        # RRoP stud 15: seven or eight players can run out of cards on seventh street; the rules say
        # what to do, so the engine's prompt is part of such a table's play, not a fault.
        self.expected_rules: set[str] = {"stud.out-of-cards"} if opts.players >= 7 else set()
        self.drill_report: dict[str, Any] = {}
        self.drill_done = False
        self.undo_done = False  # once a demo the dealer taps a wrong option and undoes it (issue 21, 4)
        self.failures: list[str] = []
        self.verified: list[str] = []
        self.hand_events = 0
        self.chips: dict[str, int] = {}
        self.hand_games: dict[str, str] = {}
        self.camera_checks: list[dict[str, Any]] = []
        self.camera_stalled_until: int | None = None  # camera-stall drill: the street it comes back on
        self.hand_decks: dict[int, list[str]] = {}  # a manual table: the deck in the dealer's hand
        # A table without a shoe: the cards the dealer burned (hand -> cards) and the street of the
        # last burn decision (hand -> street index; -1 after a reshuffle: "burns again", RRoP stud 15).
        self.hand_burns: dict[int, list[str]] = {}
        self.burn_street: dict[int, int] = {}
        self.reshuffled: set[int] = set()
        #: the dealer's hands on the console's touch screen (``run`` attaches the window's driver)
        self.console: ThreadedDriver | None = None
        self._shift_init()

    # -- plumbing ---------------------------------------------------------------------
    def _pause(self, factor: float = 1.0) -> None:
        if self.opts.pace > 0:
            self.watch.stopping.wait(self.opts.pace * factor)

    def _press(self, name: str, sig: str | None = None, *, sends: bool = True) -> None:
        """Tap the console's control ``name`` once the console shows the state the people decided on
        (``sig``: the watch's signature then), as a dealer's finger does; never a command behind it."""
        console = self.console
        if console is None:
            raise DemoError("the simulated dealer has no console to press (SimulatedTable.console is unset)")
        window = console.driver.window
        assert isinstance(window, ConsoleWindow)
        want = self.watch.sig if sig is None else sig
        if not self.opts.autoplay:
            # A person at the console presses it; wait for the state to move on.
            self.watch.wait(lambda: self.watch.sig != want, 24 * 3600, f"you to press {name!r} on the console")
            return

        def ready() -> bool:
            return signature(window.model.raw_state) == want

        sent = console.run(lambda: window.sent)
        for attempt in range(3):
            try:
                console.press(name, ready=ready, timeout=self.opts.step_timeout)
            except DriverError as exc:
                raise DemoError(f"the dealer could not press {name!r} on the console: {exc}") from None
            self.inputs["taps"] = self.inputs.get("taps", 0) + 1
            if not sends or console.run(lambda: window.sent) > sent:
                return
            # Nothing went out (the tap missed, or the guard took it for a double tap): a dealer
            # sees the button still there and taps again.
            self.inputs["taps_repeated"] = self.inputs.get("taps_repeated", 0) + 1
            log.warning("demo: the tap on %s sent nothing (attempt %d); tapping again", name, attempt + 1)
        raise DemoError(f"three taps on {name!r} sent nothing from the console")

    def _press_action(self, seat: int, option: Mapping[str, Any], *, wait: bool = True) -> None:
        """The player's choice, pressed on the console's action bar (its button found by name)."""
        state = self.watch.current()
        options = list(state.get("options") or [])
        names = option_names([(str(o["action"]), int(o.get("amount") or 0)) for o in options])
        name = names[options.index(option)]
        amount = None if option["action"] in ("fold", "check") else option["amount"]
        sig, err = self.watch.sig, state.get("last_error")
        self._press(name, sig)
        self.truths[int(state["hand_id"])].actions.append((seat, str(option["action"]), amount))
        self.inputs["actions"] += 1
        self.say.say(f"    {self.names.get(seat, seat)}: {option.get('label') or option['action']}")
        if wait:
            self._await_change(sig, err, f"seat {seat}'s {option['action']}")

    def _await_change(self, sig: str, error: Any, what: str, timeout: float | None = None) -> dict[str, Any]:
        """Wait until the state shows the engine took our input; a new refusal is a failure."""
        w = self.watch

        def changed() -> bool:
            s = w.state or {}
            return w.sig != sig or (s.get("last_error") is not None and s.get("last_error") != error)

        w.wait(changed, timeout or self.opts.step_timeout, f"the engine to take {what}")
        state = w.current()
        if w.sig == sig and state.get("last_error"):
            raise DemoError(f"the engine refused {what}: {state['last_error'].get('reason')}")
        return state

    def _draw(self, state: Mapping[str, Any], slot: Mapping[str, Any] | None, wait: bool = True,
              kind: str | None = None, lay: Callable[[Any, int, str], None] | None = None) -> str:
        """The dealer draws the next card from the shoe and puts it where ``slot`` says
        (``lay(camera_table, seat, card)`` puts it somewhere else: the drills' mistakes)."""
        sig, err = self.watch.sig, state.get("last_error")
        uid = self.stack.sim.draw()
        card = str(self.stack.deck.tags[uid])
        self.inputs["cards_drawn"] += 1
        truth = self.truths[int(state["hand_id"])]
        if kind is None:
            assert slot is not None
            kind = str(slot["kind"])
            truth.cards.append((kind, slot.get("seat"), bool(slot.get("face_up")) if kind == "card" else None, card))
            if kind == "card" and self.stack.camera is not None:
                felt = self.stack.camera.table_camera
                if lay is not None:
                    lay(felt, int(slot["seat"]), card)
                else:
                    felt.deal(int(slot["seat"]), card, bool(slot.get("face_up")))
        else:
            truth.cards.append((kind, None, None, card))
        if wait:
            self._await_change(sig, err, f"the {card} from the shoe")
            drawn_at = self.stack.draw_times.get(uid)
            if drawn_at is not None:
                self.latencies.append(self.watch.sig_at - drawn_at)
        return card

    # -- one hand ----------------------------------------------------------------------
    def play(self) -> None:
        for k in range(self.opts.hands):
            if self.watch.stopping.is_set():
                break
            self.play_hand(k)
        if self.opts.shift and not self.watch.stopping.is_set():
            # The chips on the table once the shift is over, as the engine shows them.
            self.chips["table_end"] = sum(int(s["stack"]) for s in self.watch.current()["seats"] if s.get("name"))

    def play_hand(self, k: int) -> None:
        w = self.watch
        # A prompt may be open as the hand starts (a device's gap reported late): the loop below rules on it.
        done = set(self.truths)

        def started() -> bool:
            s = w.state or {}
            return s.get("phase") == "dealing" and s.get("hand_id") not in done

        while not started():
            w.wait(lambda: w.state is not None, self.opts.step_timeout, "the table's state")
            state = w.current()
            if state.get("prompts"):
                self._rule(state)
            elif state.get("phase") in ("idle", "complete"):
                # The result stays on both screens until the dealer taps Next hand.
                self._between_hands(len(self.truths))  # a shift: seats and the game change here
                self._pause()
                sig, err = w.sig, state.get("last_error")
                self._press("hand.next", sig)
                self._await_change(sig, err, "the next hand")
            else:
                w.wait(started, self.opts.step_timeout, "the next hand to start")
        state = w.current()
        hand_id = int(state["hand_id"])
        self.truths[hand_id] = HandTruth(hand_id, game=self.game, seats={
            n: (name, stack) for n, (name, stack) in sorted(self.ledger.items()) if stack > 0} if self.opts.shift else None)
        if self.stack.sim is not None:
            self.stack.sim.load()  # the dealer loads a freshly shuffled deck into the shoe
        if self.stack.camera is not None:
            self.stack.camera.table_camera.clear()  # the last hand's cards are in the muck
        self.say.say(f"Hand {hand_id}: {state['game']['name']}, "
                     + ", ".join(f"{s['name']} {s['stack']}" for s in state["seats"] if s["in_hand"]))
        street = None
        while not w.stopping.is_set():
            state = w.current()
            if state.get("hand_id") != hand_id or state.get("phase") == "complete":
                break
            self.say.announcements(state)
            if state.get("street") != street and state.get("phase") == "betting":
                street = state.get("street")
                self.say.say(f"  {street}, pot {state['pot']}: " + "  ".join(
                    f"{s['name']} [{' '.join(c['card'] if c['up'] else 'xx' for c in s['cards'])}]"
                    for s in state["seats"] if s["status"] in ("active", "all_in")))
            if self._drill(state, k):
                continue
            if state.get("prompts"):
                self._rule(state)
            elif state["phase"] == "dealing":
                self._deal(state)
            elif state["phase"] == "betting":
                self._act(state)
            elif state["phase"] == "showdown":
                self._show(state)
            else:
                raise DemoError(f"the table is in phase {state['phase']!r}, which the dealer does not know")
        self._check_camera(hand_id)
        self._check_hand(hand_id)

    def _deal(self, state: Mapping[str, Any]) -> None:
        slots = state.get("next_deal") or []
        if not slots:
            seats = "; ".join(f"{x['seat']} {x['status']} " + " ".join(c["card"] if c["up"] else "xx" for c in x["cards"])
                              for x in state["seats"])
            raise DemoError(f"the state says dealing but names no next card (next_deal is empty); street "
                            f"{state.get('street_index')}, prompts {state.get('prompts')}, seats: {seats}")
        if slots[0].get("kind") == "set_aside":
            # RRoP stud 14: the engine says the next draws after a premature card are set aside.
            card = self._draw(state, None, wait=True, kind="removed")
            self.say.say(f"    set aside {card}")
            return
        self._pause(0.4)
        if self.opts.manual:
            self._key(state, slots[0])
        elif self.opts.no_shoe:
            self._lay(state, slots[0])
        else:
            self._draw(state, slots[0])

    def _lay(self, state: Mapping[str, Any], slot: Mapping[str, Any]) -> None:
        """A camera-only table: the dealer deals the next card from the deck in hand onto the felt;
        the engine learns it from the camera alone (an up card by its face, a down card as a back,
        the common card face up in the middle)."""
        hand_id = int(state["hand_id"])
        kind = slot.get("kind")
        if kind not in ("card", "common"):
            raise DemoError(f"a camera-only table was told to deal a {kind!r}; only cards are laid")
        camera = self.stack.camera
        assert camera is not None
        deck = self.hand_decks.setdefault(hand_id, self._shuffled())
        self._burn_if_due(state, slot, deck)
        card = deck.pop(0)
        sig, err = self.watch.sig, state.get("last_error")
        truth = self.truths[hand_id]
        if kind == "common":
            truth.cards.append(("common", None, None, card))
            camera.table_camera.deal_common(card)
            self.inputs["common_cards"] = self.inputs.get("common_cards", 0) + 1
            self.say.say(f"    the {card} is turned up in the centre: the common card")
            self._await_change(sig, err, f"the camera to see the common card {card}")
            return
        seat, up = int(slot["seat"]), bool(slot.get("face_up"))
        truth.cards.append(("card", seat, up, card if up else "??"))
        if not up:
            truth.hole.setdefault(seat, []).append(card)
        camera.table_camera.deal(seat, card, up)
        self.inputs["cards_laid"] = self.inputs.get("cards_laid", 0) + 1
        self._await_change(sig, err, f"the camera to see the {card} at seat {seat}")

    def _key(self, state: Mapping[str, Any], slot: Mapping[str, Any]) -> None:
        """A manual table: the dealer deals the next card from the deck in hand and keys it on the
        console's card picker (the seat and up/down are preset to the card due; checked, not assumed;
        the common card of RRoP stud 15 likewise, the panel's seat reading "Common card")."""
        hand_id = int(state["hand_id"])
        kind = slot.get("kind")
        if kind not in ("card", "common"):
            raise DemoError(f"a manual table was told to deal a {kind!r}; only cards are keyed")
        deck = self.hand_decks.setdefault(hand_id, self._shuffled())
        self._burn_if_due(state, slot, deck)
        card = deck.pop(0)
        sig, err = self.watch.sig, state.get("last_error")
        console = self.console
        assert console is not None
        if kind == "common":
            self._press("manual.pick", sig, sends=False)  # once the console shows the state (``sig``)
            title = console.text("card-picker.title")
            if "common card" not in title:
                raise DemoError(f"the common card is due but the picker opened for {title!r}")
            self._press(f"card-picker.{card}", sig)
            self.truths[hand_id].cards.append(("common", None, None, card))
            self.inputs["common_cards"] = self.inputs.get("common_cards", 0) + 1
            self.say.say(f"    the {card} is turned up in the centre: the common card")
            self._await_change(sig, err, f"the common card {card} keyed")
            return
        seat, up = int(slot["seat"]), bool(slot.get("face_up"))
        for _ in range(len(state["seats"]) + 1):
            if console.text("manual.seat") == f"Seat {seat}":
                break
            self._press("manual.seat.next", sig, sends=False)
        self._press("manual.up" if up else "manual.down", sig, sends=False)
        self._press("manual.pick", sig, sends=False)
        self._press(f"card-picker.{card}", sig)
        self.truths[hand_id].cards.append(("card", seat, up, card))
        self.inputs["cards_keyed"] = self.inputs.get("cards_keyed", 0) + 1
        self._await_change(sig, err, f"the {card} keyed for seat {seat}")

    def _burn_if_due(self, state: Mapping[str, Any], slot: Mapping[str, Any], deck: list[str]) -> None:
        """A table without a shoe: before a street's first card the dealer burns one, as the rules
        say, by the dealer's own count of the deck in hand (nobody reports it; the engine counts it,
        and the check compares the two).  RRoP stud 13: one burn each round from fourth street; stud
        15 on seventh: no burn if there are only as many cards as players still to get one; a burn
        before dealing all but the last if there are fewer; after the burns are reshuffled the dealer
        "burns again" if the cards allow; before the common card "the dealer burns a card" if one is
        left besides it."""
        hand_id = int(state["hand_id"])
        street = int(state.get("street_index") or 0)
        if street == 0 or self.burn_street.get(hand_id) == street:
            return
        self.burn_street[hand_id] = street
        waiting = sum(1 for s in state["seats"] if s.get("status") in ("active", "all_in") and len(s["cards"]) < 7)
        left = len(deck)
        if street < 4:
            burn = True
        elif slot.get("kind") == "common":
            burn = left >= 2
        elif hand_id in self.reshuffled:
            burn = left > waiting
        else:
            burn = left > waiting or 2 <= left < waiting
        if burn:
            self.hand_burns.setdefault(hand_id, []).append(deck.pop(0))
            self.truths[hand_id].cards.append(("burn", None, None, "??"))
            self.inputs["burns_unreported"] = self.inputs.get("burns_unreported", 0) + 1

    def _shuffled(self) -> list[str]:
        from engine.cards import DECK

        cards = [str(c) for c in DECK]
        self.rng.shuffle(cards)
        return cards

    def _act(self, state: Mapping[str, Any]) -> None:
        seat = int(state["to_act"])
        options = list(state.get("options") or [])
        if not options:
            raise DemoError(f"seat {seat} is to act but the state lists no options")
        if not self.opts.autoplay:
            # A person presses the console's buttons; just wait for the state to move on.
            self._await_change(self.watch.sig, state.get("last_error"), f"seat {seat}'s action", timeout=24 * 3600)
            return
        self._pause()
        table = self.opts.action_weights if self.opts.action_weights is not None else ACTION_WEIGHTS
        weights = [table.get(o["action"], 1) for o in options]
        if not any(weights):
            weights = [1] * len(options)
        o = self.rng.choices(options, weights)[0]
        if not self.undo_done and state.get("dealer_inputs"):
            self._mistake_and_undo(options, o)
        self._press_action(seat, o)
        if o["action"] == "fold" and self.stack.camera is not None:
            self.stack.camera.table_camera.muck(seat)  # the dealer pulls the folded cards in

    def _mistake_and_undo(self, options: list[Mapping[str, Any]], meant: Mapping[str, Any]) -> None:
        """The dealer taps another option than the player's (never a fold: it may end the hand), sees
        it and undoes it on the console (``correction.undo``, which shows the entry, then confirm)."""
        wrong = next((x for x in options if x["action"] not in ("fold", meant["action"])), None)
        if wrong is None:
            return
        self.undo_done = True
        state = self.watch.current()
        names = option_names([(str(o["action"]), int(o.get("amount") or 0)) for o in options])
        sig, err = self.watch.sig, state.get("last_error")
        self._press(names[options.index(wrong)], sig)
        after = self._await_change(sig, err, f"the mistaken {wrong['action']}")
        sig, err = self.watch.sig, after.get("last_error")
        self._press("correction.undo", sig, sends=False)
        self._press("correction.confirm", sig)
        self._await_change(sig, err, "the undo of the mistaken action")
        self.inputs["undone"] = self.inputs.get("undone", 0) + 1
        self.say.say(f"    (the dealer tapped {wrong.get('label')} by mistake and undid it)")

    def _show(self, state: Mapping[str, Any]) -> None:
        seat = int(state["to_act"])
        truth = self.truths[int(state["hand_id"])]
        # The cards dealt down, less any the ruling made an up card (a hole card exposed: RRoP stud 5).
        seat_now: dict[str, Any] = next((s for s in state["seats"] if s["seat"] == seat), {})
        up_now = {c["card"] for c in seat_now.get("cards", []) if c.get("up")}
        cards = [c for c in truth.down_cards(seat) if c not in up_now]
        self._pause()
        if self.stack.camera is not None:
            self.stack.camera.table_camera.turn_up(seat)  # the player tables the hand face up
        sig, err = self.watch.sig, state.get("last_error")
        if all(c != "??" for c in cards) and self.stack.sim is not None:
            self._press("showdown.show", sig)  # the shoe identified every down card: show them as dealt
        else:
            self._press("showdown.pick", sig, sends=False)  # the dealer keys the cards the player turns up
            for c in cards:
                self._press(f"card-picker.{c}", sig, sends=len(cards) == 1)
            if len(cards) > 1:
                self._press("card-picker.done", sig)
        truth.shown[seat] = cards
        self.inputs["shows"] += 1
        seat_view = next(s for s in state["seats"] if s["seat"] == seat)
        self.say.say(f"    {self.names.get(seat, seat)} shows {' '.join(cards)} + "
                     f"{' '.join(seat_view.get('up', []))}")
        self._await_change(sig, err, f"seat {seat}'s hand shown")

    def _rule(self, state: Mapping[str, Any], expected: bool = False) -> None:
        """The dealer rules on the first open prompt: the rules' default (confirm, else the first option)."""
        p = state["prompts"][0]
        pid, rule = str(p["id"]), str(p["rule"])
        self.prompts_seen.setdefault(pid, {"rule": rule, "text": p.get("text"), "expected": expected
                                           or rule in self.expected_rules, "hand": state.get("hand_id")})
        if not self.opts.autoplay:
            self._await_change(self.watch.sig, state.get("last_error"), f"a ruling on {rule}", timeout=24 * 3600)
            return
        ids = [o["id"] for o in p.get("options", [])]
        option = "confirm" if "confirm" in ids or not ids else ids[0]
        if rule == "stud.out-of-cards" and self.stack.sim is None and "common" in ids:
            # A table without a shoe, short of fresh cards: the dealer announces the common card
            # (RRoP stud 15) rather than scramble the burns first and then turn one up anyway.
            option = "common"
        if rule == "stud.seven-card-limit" and "seven" in ids and self.stack.camera is not None and p.get("seats"):
            # The camera counted more than seven (a fan of tabled cards read one card twice): the
            # dealer counts the cards lying at the seat, and a hand of seven plays (RRoP stud 19).
            felt = self.stack.camera.table_camera.truth().get(int(p["seats"][0]), {})
            if len(felt.get("up", [])) + int(felt.get("down", 0)) <= 7:
                option = "seven"
        self.say.say(f"    prompt {rule}: {p.get('text')} -> {option}")
        self._pause()
        err = state.get("last_error")
        self._press(f"prompt.option.{option}")
        self.inputs["rulings"] += 1
        w = self.watch

        def closed() -> bool:
            s = w.state or {}
            return pid not in [p["id"] for p in s.get("prompts", [])] or (
                s.get("last_error") is not None and s.get("last_error") != err)

        w.wait(closed, self.opts.step_timeout, f"the engine to take the ruling on {rule}")
        s = w.current()
        if pid in [p["id"] for p in s.get("prompts", [])]:
            raise DemoError(f"the engine refused the ruling on {rule}: {s['last_error'].get('reason')}")
        self.prompts_resolved.append(pid)
        if rule == "stud.out-of-cards":
            self.inputs[f"out_of_cards_{option}"] = self.inputs.get(f"out_of_cards_{option}", 0) + 1
        if rule == "stud.out-of-cards" and option == "reshuffle":
            self._reshuffle(int(state["hand_id"]))

    def _reshuffle(self, hand_id: int) -> None:
        """RRoP stud 15: the dealer mixes the last card(s) with the burns and the cards set aside,
        scrambles, cuts and puts them back in the shoe (the shoe reads their tags again)."""
        truth = self.truths[hand_id]
        sim = self.stack.sim
        if sim is None:
            # No shoe: the last card, in the dealer's hand, is mixed with the burned cards by hand.
            deck = self.hand_decks.setdefault(hand_id, self._shuffled())
            back = self.hand_burns.pop(hand_id, [])
            deck += back
            self.rng.shuffle(deck)
            self.reshuffled.add(hand_id)
            self.burn_street[hand_id] = -1  # RRoP stud 15: "burns again" before the rest
            self.say.say(f"    out of cards: {len(back)} burn cards mixed with the last {len(deck) - len(back)}")
            return
        by_card = {str(c): uid for uid, c in self.stack.deck.tags.items()}
        back = [by_card[c] for kind, _, _, c in truth.cards if kind in ("burn", "removed")]

        def reload(now: float) -> None:
            order = list(sim.model.order) + back
            self.rng.shuffle(order)
            sim.model.order = order

        sim.call(reload)
        self.say.say(f"    out of cards: {len(back)} burn and set-aside cards mixed with the stub and reshuffled")

