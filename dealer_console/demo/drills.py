"""The drills: one thing made to go wrong mid-hand, on purpose."""


from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from dealer_console.demo.options import (
    ENGINE_DEVICE,
    SHOE_DEVICE,
    DemoError,
)
from dealer_console.demo.stack import ProcessEngine, signature
from dealer_console.demo.table_parts import TableParts
from dealer_console.snapshot import option_names


class Drills(TableParts):
    """The drills, as methods of the simulated table (``SimulatedTable`` mixes them in)."""

    # -- drills -------------------------------------------------------------------------
    def _drill(self, state: Mapping[str, Any], k: int) -> bool:
        """Run the drill when its moment comes (once, in the first hand that allows it)."""
        drill = self.opts.drill
        if (self.camera_stalled_until is not None and not state.get("prompts")
                and (state.get("street_index") or 0) >= self.camera_stalled_until):
            self._resume_camera()
        if drill is None or self.drill_done or state.get("prompts"):
            return False
        street = state.get("street_index")
        phase = state.get("phase")
        if drill == "shoe-cable" and phase == "dealing" and (street or 0) >= 1:
            slot = (state.get("next_deal") or [{}])[0]
            if slot.get("kind") == "card":
                self._drill_shoe_cable(state, slot)
                return True
        if drill == "broker-restart" and phase == "betting" and (street or 0) >= 1:
            self._drill_broker_restart(state)
            return True
        if drill == "engine-kill" and phase == "betting" and (street or 0) >= 1:
            self._drill_engine_kill(state)
            return True
        if drill == "premature-card" and phase == "betting" and self._cards_allow_premature(state):
            self._drill_premature(state)
            return True
        if drill in ("exposed-holecard", "card-off-table") and phase == "dealing" and street == 0:
            slot = (state.get("next_deal") or [{}])[0]
            seat_view: dict[str, Any] = next((s for s in state["seats"] if s["seat"] == slot.get("seat")), {})
            if slot.get("kind") == "card" and not slot.get("face_up") and not seat_view.get("cards"):
                self._drill_misplaced_holecard(state, slot, drill)
                return True
        if drill == "camera-stall" and phase == "betting" and (street or 0) >= 1:
            self._drill_camera_stall(state)
            return True
        return False

    def _drill_shoe_cable(self, state: Mapping[str, Any], slot: Mapping[str, Any]) -> None:
        w, sim = self.watch, self.stack.sim
        self.drill_done = True
        self.expected_rules.add("source.offline")
        self.say.say("  DRILL shoe-cable: the shoe's USB cable is pulled")
        t0 = time.monotonic()
        sim.unplug()
        w.wait(lambda: w.avail.get(SHOE_DEVICE) is False, 10, "the console to see the shoe go offline")
        seen_offline = time.monotonic() - t0
        w.wait(lambda: any(p["rule"] == "source.offline" for p in (w.state or {}).get("prompts", [])), 10,
               "the engine's prompt that the shoe is offline")
        # The dealer, not looking at the screen, draws the card that was due: the shoe keeps it.
        sig, err = w.sig, state.get("last_error")
        hand_id = int(state["hand_id"])
        uid = sim.draw()
        card = str(self.stack.deck.tags[uid])
        self.inputs["cards_drawn"] += 1
        self.truths[hand_id].cards.append(("card", slot.get("seat"), bool(slot.get("face_up")), card))
        self.stack.watch.stopping.wait(0.5)
        kept = sim.pending_events()
        self.say.say(f"  DRILL shoe-cable: {card} drawn while unplugged ({kept} event(s) waiting in the shoe); "
                     "cable back in")
        sim.plug()
        w.wait(lambda: w.avail.get(SHOE_DEVICE) is True, 15, "the shoe to come back online")
        back_online = time.monotonic() - t0
        after = self._await_change(sig, err, f"the {card} drawn while the cable was out")
        seat = slot.get("seat")
        seat_view: dict[str, Any] = next((s for s in after["seats"] if s["seat"] == seat), {})
        cards_now = seat_view.get("cards", [])
        self.drill_report = {
            "name": "shoe-cable", "hand": hand_id, "card_drawn_while_unplugged": card, "for_seat": seat,
            "events_kept_in_shoe": kept, "console_saw_offline_after_s": round(seen_offline, 3),
            "back_online_after_s": round(back_online, 3),
            "card_delivered_after_reconnect": len(cards_now) > 0,
        }

    def _drill_broker_restart(self, state: Mapping[str, Any]) -> None:
        w = self.watch
        self.drill_done = True
        hand_id = int(state["hand_id"])
        before = w.current()
        self.say.say("  DRILL broker-restart: stopping the broker mid-hand")
        # The embedded broker keeps nothing across a restart: a camera observation it had taken but
        # not yet delivered is gone, and the engine rightly says so (source.gap).  The shoe's draws are
        # made after the restart and the hand check would catch one lost.
        self.expected_rules.add("source.gap")
        t0 = time.monotonic()
        console, publisher = self.stack.console, self.stack.publisher
        assert console is not None
        self.stack.broker.stop()
        w.wait(lambda: not console.connected, 10, "the console to see the broker go")
        self.watch.stopping.wait(1.0)  # a second with no broker at all
        self.stack.broker.start()
        restarted = time.monotonic() - t0
        w.wait(lambda: console.connected and (publisher.bus.connected if publisher is not None
                                              else w.avail.get(SHOE_DEVICE) is True), 20,
               "the console and the shoe bridge to reconnect")
        self.stack.probe_engine()
        resumed = time.monotonic() - t0
        after = w.current()
        same = signature(after) == signature(before)
        self.say.say(f"  DRILL broker-restart: broker back after {restarted:.1f} s, table resumed after "
                     f"{resumed:.1f} s; state unchanged: {same}")
        self.drill_report = {"name": "broker-restart", "hand": hand_id, "broker_down_s": round(restarted, 3),
                             "resumed_after_s": round(resumed, 3), "state_same_after_restart": same}
        if not same:
            self.failures.append("the table state after the broker restart differs from before it")

    def _drill_engine_kill(self, state: Mapping[str, Any]) -> None:
        w, stack = self.watch, self.stack
        engine = stack.engine
        if not isinstance(engine, ProcessEngine):
            raise DemoError("the engine-kill drill needs the engine as a process")
        self.drill_done = True
        hand_id = int(state["hand_id"])
        before = w.current()
        pid = engine.pid
        self.say.say(f"  DRILL engine-kill: kill -9 {pid} mid-hand")
        engine.kill()
        w.wait(lambda: w.avail.get(ENGINE_DEVICE) is False, 15, "the engine's Last Will (offline)")
        # The console locks its controls while the engine is unreachable (an action it never
        # receives is worse than no button): the player's buttons must be disabled now.
        opts = [o for o in before["options"] if o["action"] in ("check", "call", "bring_in")] or before["options"]
        o = opts[0]
        seat = int(before["to_act"])
        locked = None
        if self.console is not None:
            d = self.console
            names = option_names([(str(x["action"]), int(x.get("amount") or 0)) for x in before["options"]])
            name = names[before["options"].index(o)]
            d.wait_for(lambda: not d.driver.usable(name), 10, "the console to lock its controls")
            locked = True
        self.say.say(f"    the console is locked while the engine is down: {locked}")
        engine.start()
        w.wait(lambda: w.avail.get(ENGINE_DEVICE) is True, 20, "the engine to come back")
        self._press_action(seat, o, wait=False)
        after = self._await_change(signature(before), before.get("last_error"),
                                   "the action entered once the engine was back")
        self.drill_report = {"name": "engine-kill", "hand": hand_id, "killed_pid": pid,
                             "controls_locked_while_down": locked,
                             "action_after_restart": [seat, o["action"], o.get("amount")],
                             "applied_after_restart": after.get("to_act") != seat or after["pot"] != before["pot"]}

    def _await_prompt(self, rule: str, timeout: float, what: str) -> dict[str, Any]:
        w = self.watch
        w.wait(lambda: any(p["rule"] == rule for p in (w.state or {}).get("prompts", [])), timeout, what)
        return w.current()

    def _drill_misplaced_holecard(self, state: Mapping[str, Any], slot: Mapping[str, Any], drill: str) -> None:
        """A first hole card that lands face up among the down cards, or off the felt: only the camera sees it."""
        self.drill_done = True
        rule = "stud.exposed-holecard" if drill == "exposed-holecard" else "stud.card-off-table"
        self.expected_rules.add(rule)
        hand_id, seat = int(state["hand_id"]), int(slot["seat"])
        if drill == "exposed-holecard":
            self.say.say(f"  DRILL exposed-holecard: seat {seat}'s first hole card is dealt face up")
            def lay(felt: Any, s: int, c: str) -> None:
                felt.deal(s, c, True, spot="down")
        else:
            self.say.say(f"  DRILL card-off-table: seat {seat}'s first hole card flies off the felt")
            def lay(felt: Any, s: int, c: str) -> None:
                felt.pitch_off_felt(s, c, True)
        t0 = time.monotonic()
        card = self._draw(state, slot, lay=lay)
        prompted = self._await_prompt(rule, 20, f"the camera to raise {rule}")
        seen_after = time.monotonic() - t0
        prompt = next(p for p in prompted["prompts"] if p["rule"] == rule)
        self._rule(prompted, expected=True)
        # RRoP stud 5 / 11: the card plays as the up card; the dealer squares it into the stud row.
        assert self.stack.camera is not None
        self.stack.camera.table_camera.move(card, seat, face_up=True, spot="up")
        after = self.watch.current()
        seat_view: dict[str, Any] = next((s for s in after["seats"] if s["seat"] == seat), {})
        up_now = [c["card"] for c in seat_view.get("cards", []) if c.get("up")]
        nxt = [d for d in after.get("next_deal") or [] if d.get("seat") == seat][:1]
        self.drill_report = {"name": drill, "hand": hand_id, "seat": seat, "card": card,
                             "camera_raised_after_s": round(seen_after, 3), "prompt": prompt["id"],
                             "text": prompt.get("text"), "ruling": "confirm", "card_plays_up": card in up_now,
                             "seat_next_card": nxt[0] if nxt else None}
        if card not in up_now:
            self.failures.append(f"{drill}: after the ruling the {card} does not play as seat {seat}'s up card")

    def _drill_camera_stall(self, state: Mapping[str, Any]) -> None:
        """The camera stops delivering frames mid-hand; the vision service says offline; play goes on."""
        from dealer_console.demo.camera import CAMERA_DEVICE

        w = self.watch
        camera = self.stack.camera
        assert camera is not None
        self.drill_done = True
        self.expected_rules.add("source.offline")
        street = int(state.get("street_index") or 0)
        self.say.say(f"  DRILL camera-stall: the camera freezes on {state.get('street')}")
        t0 = time.monotonic()
        camera.capture.stall()
        w.wait(lambda: w.avail.get(CAMERA_DEVICE) is False, 15, "the console to see the camera go offline")
        offline_after = time.monotonic() - t0
        prompted = self._await_prompt("source.offline", 15, "the engine's source.offline prompt for the camera")
        self._rule(prompted, expected=True)
        self.camera_stalled_until = min(street + 1, 4)
        self.drill_report = {"name": "camera-stall", "hand": int(state["hand_id"]), "street": state.get("street"),
                             "offline_seen_after_s": round(offline_after, 3),
                             "frames_before": camera.stats()["frames"]}

    def _resume_camera(self) -> None:
        from dealer_console.demo.camera import CAMERA_DEVICE

        w = self.watch
        camera = self.stack.camera
        assert camera is not None
        self.camera_stalled_until = None
        t0 = time.monotonic()
        frames = camera.stats()["frames"]
        camera.capture.resume()
        w.wait(lambda: w.avail.get(CAMERA_DEVICE) is True, 15, "the camera to come back online")
        self.say.say("  DRILL camera-stall: frames again; the camera is back online")
        self.drill_report.update({"online_again_after_s": round(time.monotonic() - t0, 3),
                                  "frames_while_stalled": frames - self.drill_report.get("frames_before", frames)})

    def _cards_allow_premature(self, state: Mapping[str, Any]) -> bool:
        """Enough cards left in the shoe for the premature card, the set-aside cards and the rest."""
        street = int(state.get("street_index") or 0)
        if street >= 4:
            return False
        live = sum(1 for s in state["seats"] if s["status"] in ("active", "all_in"))
        drawn = len(self.truths[int(state["hand_id"])].cards)
        needed = 1 + live + (4 - street) * (1 + live)
        return 52 - drawn >= needed

    def _drill_premature(self, state: Mapping[str, Any]) -> None:
        w = self.watch
        self.drill_done = True
        self.expected_rules.add("stud.premature-card")
        hand_id = int(state["hand_id"])
        live = sum(1 for s in state["seats"] if s["status"] in ("active", "all_in"))
        self.say.say("  DRILL premature-card: the dealer draws while betting is open")
        sig, err = w.sig, state.get("last_error")
        card = self._draw(state, None, wait=False, kind="removed")
        prompted = self._await_change(sig, err, "the premature-card prompt")
        prompts = [p for p in prompted.get("prompts", []) if p["rule"] == "stud.premature-card"]
        if not prompts:
            raise DemoError(f"the engine raised no stud.premature-card prompt for the {card} "
                            f"(prompts: {prompted.get('prompts')})")
        self._rule(prompted, expected=True)
        # After the round the engine's state names the cards to set aside (next_deal: set_aside).
        self.drill_report = {"name": "premature-card", "hand": hand_id, "street": state.get("street"),
                             "card": card, "prompt": prompts[0]["id"], "ruling": "confirm",
                             "live_players": live, "text": prompts[0].get("text")}

