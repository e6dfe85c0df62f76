"""A dealer's shift items on the real console offscreen, driven by accessible name, against a real
engine and broker (the demo table's stack: amqtt, the engine service, the shoe on a pty through
the bridge), with the table monitor on the same public state (issue 21, items 1, 2 and 5):

- a seat change from the console keeps the stack; asked for during a hand it is refused in the
  engine's words beside the seating controls, and nothing moves;
- each seat shows what it did this betting round on both screens, cleared at the next street;
- the dealer kills a hand at the showdown (``showdown.kill``, then the engine's prompt);
- the result (who won what with which hand) holds on both screens until ``hand.next``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from dealer_console.demo.options import DemoOptions
from dealer_console.demo.run import ConsoleScreen
from dealer_console.demo.stack import TableStack
from dealer_console.driver import ConsoleDriver
from dealer_console.monitor import MonitorWindow


@pytest.fixture
def live(qtbot: Any) -> Iterator[tuple[TableStack, ConsoleScreen, ConsoleDriver, MonitorWindow]]:
    opts = DemoOptions(players=3, camera=False, seed=7)
    opts.check()
    stack = TableStack(opts).start()
    screen = ConsoleScreen(stack, opts)
    monitor = MonitorWindow(screen.model)
    monitor.resize(1920, 1080)
    monitor.show()
    try:
        qtbot.waitUntil(lambda: screen.model.controls_enabled and len(screen.model.snapshot.seats) == 3,
                        timeout=15000)
        yield stack, screen, ConsoleDriver(screen.window), monitor
    finally:
        monitor.close()
        screen.stop()
        stack.stop()


def _state(screen: ConsoleScreen) -> dict[str, Any]:
    return screen.model.raw_state


def _took(qtbot: Any, screen: ConsoleScreen, before: Any) -> None:
    """Wait until the engine applied a new input (the state's ``input`` moved) or refused one."""
    error = _state(screen).get("last_error")
    qtbot.waitUntil(lambda: _state(screen).get("input") != before or _state(screen).get("last_error") not in (None, error),
                    timeout=10000)
    assert _state(screen).get("input") != before, _state(screen).get("last_error")


def _tap(qtbot: Any, d: ConsoleDriver, name: str) -> None:
    """A finger's tap: after the double-tap guard's interval, as the demo's dealer waits."""
    wait = d.guard_wait(name)
    if wait:
        qtbot.wait(int(wait * 1000) + 10)
    d.tap(name)


def _status(d: ConsoleDriver, seat: int) -> str:
    """The word at a seat (in full: a narrow seat shortens what it shows, its tooltip does not)."""
    w = d.find(f"seat.{seat}.status")
    return w.toolTip() if w is not None else ""


def _monitor_status(monitor: MonitorWindow, seat: int) -> str:
    return monitor.table.seats[seat].status.toolTip()


def _play_to_the_showdown(qtbot: Any, stack: TableStack, screen: ConsoleScreen, d: ConsoleDriver,
                          monitor: MonitorWindow, seen: dict[str, str]) -> None:
    """Deal from the shoe and check or call every round, noting what the seats show."""
    for _ in range(200):
        s = _state(screen)
        if s["phase"] == "showdown":
            return
        assert not s.get("prompts"), s["prompts"]
        before = s.get("input")
        if s["phase"] == "dealing":
            stack.sim.draw()
        else:
            qtbot.wait(420)  # a finger's pace: past the double-tap guard, on the buttons of this state
            if _state(screen) is not s:
                continue
            names = d.names("action.")
            name = next(n for n in ("action.check", "action.call", "action.bring_in") if n in names)
            seat = s["to_act"]
            _tap(qtbot, d, name)
            _took(qtbot, screen, before)
            now = _state(screen)
            if now["phase"] != "betting" or now["street"] != s["street"]:
                continue  # that action closed the round: the next street starts with no words
            key = f"{s['street']}: seat {seat}"
            qtbot.waitUntil(lambda seat=seat: _status(d, seat) != "", timeout=5000)
            seen[key] = _status(d, seat)
            seen[key + " (monitor)"] = _monitor_status(monitor, seat)
            continue
        _took(qtbot, screen, before)
    raise AssertionError("no showdown after 200 inputs")


def test_a_hand_from_seat_change_to_killed_hand_and_held_result(live: Any, qtbot: Any) -> None:
    stack, screen, d, monitor = live
    # Seat change between hands: Bob moves from seat 2 to seat 5 with his stack.
    bob = screen.model.snapshot.seat(2)
    assert bob is not None and bob.name
    d.tap("page.seats")
    d.tap("seat.2.move")
    assert "Move here" in d.text("seating.title")
    assert d.find("seat.5.sit-down") is None  # the open seats offer Move here instead
    d.tap("seat.5.move-here")
    qtbot.waitUntil(lambda: (s := screen.model.snapshot.seat(5)) is not None and s.name == bob.name, timeout=10000)
    moved = screen.model.snapshot.seat(5)
    assert moved is not None and moved.stack == bob.stack
    assert screen.model.snapshot.seat(2) is None or not screen.model.snapshot.seat(2).name  # type: ignore[union-attr]

    # The first hand.
    d.tap("page.table")
    stack.sim.load()
    before = _state(screen).get("input")
    _tap(qtbot, d, "hand.next")
    _took(qtbot, screen, before)
    qtbot.waitUntil(lambda: _state(screen)["phase"] == "dealing", timeout=10000)

    # During the hand a seat change is refused in the engine's words, and nothing moves.
    d.tap("page.seats")
    _tap(qtbot, d, "seat.1.move")
    _tap(qtbot, d, "seat.2.move-here")
    qtbot.waitUntil(lambda: d.find("refusal.seating") is not None, timeout=10000)
    assert "between hands" in d.text("refusal.seating"), d.text("refusal.seating")
    assert screen.model.snapshot.seat(1) is not None and screen.model.snapshot.seat(1).name  # type: ignore[union-attr]
    d.tap("page.table")

    seen: dict[str, str] = {}
    _play_to_the_showdown(qtbot, stack, screen, d, monitor, seen)
    third = {k: v for k, v in seen.items() if k.startswith("third street") and "monitor" not in k}
    assert sorted(third.values())[0].startswith(("brought in 2", "called 2")), seen
    assert "brought in 2" in third.values(), seen
    assert all(seen[k + " (monitor)"] == v for k, v in seen.items() if "monitor" not in k), seen
    assert any(v == "checked" for k, v in seen.items() if k.startswith("seventh")), seen
    # The showdown has no betting round: the seats' words are gone.
    s = _state(screen)
    assert all(seat.get("last_action") == "" for seat in s["seats"])

    # Kill the hand of the first seat to show; the engine asks to confirm, then it is dead.
    victim = s["to_act"]
    assert d.text("showdown.seat").startswith(f"Seat {victim}")
    before = s.get("input")
    _tap(qtbot, d, "showdown.kill")
    qtbot.waitUntil(lambda: d.find("prompt.option.confirm") is not None, timeout=10000)
    assert any(p["rule"] == "dead.showdown-kill" and f"Seat {victim}'s hand is killed" in p["text"]
               for p in _state(screen)["prompts"])
    _tap(qtbot, d, "prompt.option.confirm")
    qtbot.waitUntil(lambda: not _state(screen).get("prompts"), timeout=10000)
    dead = next(x for x in _state(screen)["seats"] if x["seat"] == victim)
    assert dead["status"] == "dead"  # killed by the ruling, not folded
    qtbot.waitUntil(lambda: _status(d, victim) == "DEAD", timeout=5000)
    assert _monitor_status(monitor, victim) == "DEAD"
    assert _state(screen)["phase"] == "showdown" and _state(screen)["to_act"] != victim

    # The others show as the shoe identified their cards.
    for _ in range(3):
        if _state(screen)["phase"] != "showdown":
            break
        before = _state(screen).get("input")
        _tap(qtbot, d, "showdown.show")
        _took(qtbot, screen, before)
    s = _state(screen)
    assert s["phase"] == "complete" and s["awards"]
    assert victim not in {a["seat"] for a in s["awards"]}

    # The result holds on both screens until the dealer taps Next hand.
    qtbot.wait(1500)
    assert _state(screen)["phase"] == "complete" and _state(screen)["hand_id"] == 1
    winner = screen.model.snapshot.seat(s["awards"][0]["seat"])
    assert winner is not None
    assert f"{winner.name} wins" in monitor.announce.text() and f"{winner.name} wins" in d.text("announcements")
    assert _status(d, winner.seat).startswith("WINS") and _monitor_status(monitor, winner.seat).startswith("WINS")
    losers = [x for x in s["seats"] if x["status"] == "mucked" and x["shown"]]
    assert losers, s["seats"]  # (seed 7: one of the two hands shown loses)
    for x in losers:  # a losing hand that was shown is labelled so, not MUCKED
        assert _status(d, x["seat"]) == "SHOWN" and _monitor_status(monitor, x["seat"]) == "SHOWN"
    assert d.usable("hand.next")
    stack.sim.load()
    before = _state(screen).get("input")
    _tap(qtbot, d, "hand.next")
    _took(qtbot, screen, before)
    qtbot.waitUntil(lambda: _state(screen)["hand_id"] == 2, timeout=10000)
