"""A dealer's shift (``DemoOptions(shift=True)``): between hands, seats taken and left, a buy-in
refused, a game change, a rebuy for a seat out of chips, all through the console's seating and game
pages (issue 21, 2 and 3), and the table's chips kept in a ledger the truth check holds each hand to.

The breaks fall at sixths of the shift (after hand ``hands * i // 6``): a newcomer sits down with a
short buy-in (RRoP 3.1: the one allowed), later leaves, the game changes (stud <-> razz), the
newcomer comes back with less than the table's minimum (refused: RRoP 2.2 or 3.1, shown beside the
seating controls, nothing changed) and then with a full buy-in, and at last seat 1 leaves and a
second newcomer takes an open seat.
"""

from __future__ import annotations

from typing import Any

from dealer_console.demo.options import NAMES, DemoError
from dealer_console.demo.table_parts import TableParts

#: the breaks' work, in the order it is done when several fall on one break (a short shift)
STEPS = ("sit", "leave", "game", "return", "swap")
SHORT_BUY_IN = 60  # under the demo table's minimum of 100 (10 x the big bet): the one short buy-in
REBUY = 100
OTHER_GAME = {"F7S": ("razz", "FR"), "FR": ("stud", "F7S"), "F7S/8": ("razz", "FR")}


class Shift(TableParts):
    """Between hands, the dealer seats and unseats players and changes the game on the console."""

    def _shift_init(self) -> None:
        self.ledger: dict[int, tuple[str, int]] = {i + 1: (NAMES[i], self.opts.stack) for i in range(self.opts.players)}
        self.game = self.opts.variant  # the game the next hand must be played under
        self.shift_log: list[dict[str, Any]] = []
        self.shift_breaks: set[int] = set()
        if self.opts.shift:
            self.chips.update(buy_ins=0, cash_outs=0)
        n = self.opts.hands
        self.shift_plan: dict[int, list[str]] = {}
        for i, step in enumerate(STEPS, start=1):
            self.shift_plan.setdefault(min(n - 1, max(1, n * i // 6)), []).append(step)
        self.newcomer = NAMES[self.opts.players] if self.opts.shift else ""  # a shift starts with 2 to 6
        self.newcomer_left_with: int | None = None
        self.added_now: set[int] = set()

    def _between_hands(self, played: int) -> None:
        """The dealer's work at the break after ``played`` hands, once, before Next hand."""
        if not self.opts.shift or played in self.shift_breaks or played == 0:
            return
        self.shift_breaks.add(played)
        steps = self.shift_plan.get(played, [])
        busted = [n for n, (_, stack) in sorted(self.ledger.items()) if stack == 0]
        if not steps and not busted:
            return
        self._press("page.seats", sends=False)
        self.added_now = set(busted)
        for seat in busted:
            self._add_chips(played, seat, REBUY)  # a seat out of chips buys more (RRoP 3.1: not a buy-in)
        for step in steps:
            if step == "sit":
                self._sit(played, self._open_seat(), self.newcomer, SHORT_BUY_IN)
            elif step == "leave":
                seat = self._seat_of(self.newcomer)
                self.newcomer_left_with = self.ledger[seat][1]
                self._leave(played, seat)
            elif step == "game":
                self._change_game(played)
                self._press("page.seats", sends=False)
            elif step == "return":
                left = self.newcomer_left_with or 0
                under = 50 if left != 50 else 40  # under the minimum and not what was taken away: refused
                seat = self._open_seat()
                self._sit(played, seat, self.newcomer, under, refused=True)
                self._sit(played, seat, self.newcomer, max(left, 100))
            elif step == "swap":
                self._leave(played, 1)
                self._sit(played, self._open_seat(), NAMES[self.opts.players + 1], 200)
        self._press("page.table", sends=False)

    # -- the seating page -------------------------------------------------------------
    def _open_seat(self) -> int:
        # Between hands the state still lists the last hand's seats (the result is on the screens),
        # a player who left among them until the next hand: the dealer seats a newcomer elsewhere.
        shown = {int(s["seat"]) for s in self.watch.current()["seats"] if s.get("name")}
        return next(n for n in range(1, 9) if n not in self.ledger and n not in shown)

    def _answered(self, before: Any, what: str) -> tuple[dict[str, Any], str | None]:
        """Wait for the engine's answer to our input (the state's ``input`` moves on, taken or not):
        the state, and the refusal's words if it refused it."""
        w = self.watch
        w.wait(lambda: (w.state or {}).get("input") != before, self.opts.step_timeout, f"the engine to answer {what}")
        state = w.current()
        err = state.get("last_error")
        return state, (str(err.get("reason")) if err else None)

    def _send(self, name: str, what: str) -> tuple[dict[str, Any], str | None]:
        before = self.watch.current().get("input")
        self._press(name)
        return self._answered(before, what)

    def _taken(self, name: str, what: str) -> dict[str, Any]:
        state, refused = self._send(name, what)
        if refused:
            raise DemoError(f"the engine refused {what}: {refused}")
        return state

    def _seat_of(self, name: str) -> int:
        return next(n for n, (who, _) in self.ledger.items() if who == name)

    def _type(self, pad: str, text: str) -> None:
        for ch in text:
            self._press(f"{pad}.{ch}", sends=False)

    def _sit(self, played: int, seat: int, name: str, amount: int, *, refused: bool = False) -> None:
        """``seat.N.sit-down``, the name on the on-screen keyboard, the buy-in on the number pad."""
        self._press(f"seat.{seat}.sit-down", sends=False)
        self._type("keyboard", name.upper())
        self._type("numpad", str(amount))
        what = f"{name} sitting down at seat {seat} with {amount}"
        before = self.watch.sig
        after, refusal = self._send("seating.confirm", what)
        entry: dict[str, Any] = {"after_hand": played, "op": "sit", "seat": seat, "name": name, "amount": amount}
        if refused:
            entry.update(op="refused", refusal=self._refusal(before, refusal, what))
            self.inputs["buy_ins_refused"] = self.inputs.get("buy_ins_refused", 0) + 1
        else:
            if refusal:
                raise DemoError(f"the engine refused {what}: {refusal}")
            got = next((s for s in after["seats"] if s["seat"] == seat), None)
            if got is None or got.get("name") != name or got.get("stack") != amount:
                raise DemoError(f"{name} sat down at seat {seat} with {amount}; the table shows {got}")
            self.ledger[seat] = (name, amount)
            self.chips["buy_ins"] += amount
        self.shift_log.append(entry)
        self.say.say(f"  (between hands: {name} {'is refused a buy-in of' if refused else 'sits down at seat'}"
                     f"{'' if refused else f' {seat} with'} {amount})")

    def _refusal(self, sig: str, refusal: str | None, what: str) -> str:
        """The engine refuses (its seats do not change) and the console says why beside the seating
        controls."""
        if refusal is None or self.watch.sig != sig:
            raise DemoError(f"the engine took {what}, which is under the table's minimum")
        console = self.console
        assert console is not None
        console.wait_for(lambda: console.driver.find("refusal.seating") is not None, self.opts.step_timeout,
                         "the refusal beside the seating controls")
        text = console.text("refusal.seating")
        if not text.startswith("Not taken: ") or "buy-in" not in text:
            raise DemoError(f"the console shows {text!r} for {what}")
        return text

    def _leave(self, played: int, seat: int) -> None:
        name, stack = self.ledger[seat]
        state = self.watch.current()
        shown = next((s["stack"] for s in state["seats"] if s["seat"] == seat), None)
        # (chips added this break show from the next hand on: the state shows the last hand's stacks)
        if shown != stack and seat not in self.added_now:
            raise DemoError(f"seat {seat} {name} leaves: the table shows {shown} chips, the hands played {stack}")
        # The state shows the last hand's seats until the next hand (the result stays on the screens),
        # so the leave is seen in the next hand's hand_started (the truth check's ledger).
        self._taken(f"seat.{seat}.leave", f"{name} leaving seat {seat}")
        del self.ledger[seat]
        self.chips["cash_outs"] += stack
        self.shift_log.append({"after_hand": played, "op": "leave", "seat": seat, "name": name, "amount": stack})
        self.say.say(f"  (between hands: {name} leaves seat {seat} with {stack})")

    def _add_chips(self, played: int, seat: int, amount: int) -> None:
        self._press(f"seat.{seat}.add-chips", sends=False)
        self._type("numpad", str(amount))
        self._taken("seating.confirm", f"{amount} chips added at seat {seat}")
        name, stack = self.ledger[seat]
        self.ledger[seat] = (name, stack + amount)
        self.chips["buy_ins"] += amount
        self.shift_log.append({"after_hand": played, "op": "add_chips", "seat": seat, "name": name, "amount": amount})

    # -- the game page ------------------------------------------------------------------
    def _change_game(self, played: int) -> None:
        button, code = OTHER_GAME[self.game]
        self._press("page.game", sends=False)
        self._press(f"game.variant.{button}", sends=False)
        s = self._taken("game.apply", f"the game change to {code}")
        if (s.get("next_game") or {}).get("variant") != code:
            raise DemoError(f"the engine took the game change to {code}, but its next game is {s.get('next_game')}")
        self.shift_log.append({"after_hand": played, "op": "game", "from": self.game, "to": code})
        self.say.say(f"  (between hands: the game changes from {self.game} to {code} from the next hand)")
        self.game = code
