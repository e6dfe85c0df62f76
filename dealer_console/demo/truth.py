"""The truth check: each finished hand's record replayed and compared with what was really dealt."""


from __future__ import annotations

import time
from collections import Counter
from typing import Any

from dealer_console.demo.table_parts import TableParts

#: Frames the camera service reads after the hand's last card before its view is compared with the
#: felt: the tracker's stable frames (3) several times over, so one misread frame does not decide, and
#: past the tracker's hold on cards gone from a seat (``Tracker.vanish_s``, 2 s: 24 frames at the demo's
#: 12 a second) where a seat folded at the end.
FRAMES_TO_SETTLE = 40


class TruthCheck(TableParts):
    """The check of each hand against the simulated truth (``SimulatedTable`` mixes it in)."""

    # -- the check ----------------------------------------------------------------------
    def _check_hand(self, hand_id: int) -> None:
        from engine.events import (
            CardBurned,
            CardDealt,
            CardsRemoved,
            CardsShown,
            CommonCardDealt,
            HandStarted,
            PlayerAction,
            event_from_json,
        )
        from engine.hand import Hand

        key = f"{self.opts.table}-{hand_id}"
        w = self.watch
        w.wait(lambda: key in w.histories, self.opts.step_timeout, f"hand {key}'s record on history/hand")
        record = w.histories[key]
        truth = self.truths[hand_id]
        problems: list[str] = []
        try:
            events = [event_from_json(e) for e in record["events"]]
            hand = Hand.replay(events)
        except Exception as exc:
            self.failures.append(f"hand {key}: its record does not replay: {exc}")
            return
        self.hand_events += len(events)
        if not hand.is_over:
            problems.append("the recorded hand is not complete")
        start = events[0]
        assert isinstance(start, HandStarted)
        # The game this hand was played under is the hand's own (its hand_started config): a change
        # between hands plays from the next hand, and the dealer knows which game that is.
        played = start.config.variant.value
        self.hand_games[key] = played
        if truth.game and played != truth.game:
            problems.append(f"played as {played}, but the dealer changed the game to {truth.game} before it")
        if record.get("variant") not in (None, played):
            problems.append(f"the record says {record.get('variant')}, its hand_started {played}")
        dealt = {e.seat: (e.name, e.stack) for e in start.seats}
        if truth.seats is not None and dealt != truth.seats:
            problems.append(f"dealt in {dealt}, but the seats taken and left and the hands before say {truth.seats}")
        before = sum(s.stack for s in start.seats)
        after = sum(hand.finishing_stacks())
        if before != after:
            problems.append(f"chips not conserved: {before} at the start, {after} at the end")
        self.chips.setdefault("start", before)
        self.chips["end"] = after
        if truth.seats is not None:
            # The ledger carries each stack to the next hand (and to the seat's cash-out).
            for s in hand.seats:
                self.ledger[s.seat] = (s.name, s.stack)
        seen: list[tuple[str, int | None, bool | None, str]] = []
        actions: list[tuple[int, str, int | None]] = []
        shown: dict[int, list[str]] = {}
        for e in events:
            if isinstance(e, CardDealt):
                seen.append(("card", e.seat, e.face_up, str(e.card)))
            elif isinstance(e, CommonCardDealt):
                seen.append(("common", None, None, str(e.card)))
            elif isinstance(e, CardBurned):
                seen.append(("burn", None, None, str(e.card)))
            elif isinstance(e, CardsRemoved):
                seen += [("removed", None, None, str(c)) for c in e.cards]
            elif isinstance(e, PlayerAction):
                actions.append((e.seat, e.action, e.amount))
            elif isinstance(e, CardsShown):
                shown[e.seat] = [str(c) for c in e.cards]
        if seen != truth.cards:
            diff = next((i for i, (a, b) in enumerate(zip(seen, truth.cards, strict=False)) if a != b),
                        min(len(seen), len(truth.cards)))
            problems.append(f"cards differ from what the shoe dealt at #{diff}: engine "
                            f"{seen[diff:diff + 2]} vs dealt {truth.cards[diff:diff + 2]} "
                            f"({len(seen)} vs {len(truth.cards)} cards)")
        if actions != truth.actions:
            problems.append(f"actions differ: engine {len(actions)}, entered {len(truth.actions)}")
        if shown != truth.shown:
            problems.append(f"shown hands differ: engine {shown}, shown {truth.shown}")
        for a in getattr(hand, "awards", []):
            self.say.say(f"    {self.names.get(a.seat, a.seat)} wins {a.amount}"
                         + (f" with {a.hand}" if getattr(a, "hand", None) else ""))
        if problems:
            self.failures += [f"hand {key}: {p}" for p in problems]
        else:
            self.verified.append(key)



    def _check_camera(self, hand_id: int) -> None:
        """At the end of the hand, what the vision service reports against what lies on the felt."""
        camera = self.stack.camera
        if camera is None or camera.stalled:
            return
        # A seat that showed its hand at the showdown turned its down cards face up where they lay:
        # the camera lists them among the row's cards by where they lie, so that seat is compared
        # card for card, not in order; every other seat's row in dealing order.
        tabled = set(self.truths[hand_id].shown) if hand_id in self.truths else set()

        def as_compared(seats: dict[int, dict[str, Any]]) -> dict[int, dict[str, Any]]:
            return {n: ({**v, "up": sorted(v.get("up", []))} if n in tabled else v) for n, v in seats.items()}

        truth = as_compared(camera.table_camera.truth())
        # Driven by the camera's frames, not the clock: the view has caught up once the service has
        # read FRAMES_TO_SETTLE frames of the felt as it lies now (a still view needs stable_frames
        # of them); the (niced) camera process may read them slowly on a busy machine, so the clock
        # only bounds a camera that stopped altogether.
        start = int(camera.stats()["frames"])
        deadline = time.monotonic() + 90.0
        view = as_compared(camera.view())
        while view != truth and not self.watch.stopping.is_set():
            if int(camera.stats()["frames"]) - start >= FRAMES_TO_SETTLE or time.monotonic() > deadline:
                break
            self.watch.stopping.wait(0.05)
            view = as_compared(camera.view())
        up_total = sum(len(t["up"]) for t in truth.values())
        up_read = sum(_read_at(t["up"], view.get(n, {}).get("up", []), n in tabled) for n, t in truth.items())
        down_total = sum(int(t["down"]) for t in truth.values())
        down_found = sum(min(int(t["down"]), int(view.get(n, {}).get("down", 0))) for n, t in truth.items())
        check: dict[str, Any] = {"hand": hand_id, "agrees": view == truth, "up_cards": up_total, "up_read": up_read,
                 "down_cards": down_total, "down_found": down_found}
        if view != truth:
            check["differences"] = {n: {"felt": truth.get(n), "camera": view.get(n)}
                                    for n in sorted(set(truth) | set(view)) if truth.get(n) != view.get(n)}
        self.camera_checks.append(check)


def _read_at(felt: list[str], seen: list[str], tabled: bool) -> int:
    """The felt's up cards the camera read: in row order, or (a hand tabled face up) wherever listed."""
    if tabled:
        return sum((Counter(felt) & Counter(seen)).values())
    return sum(1 for i, c in enumerate(felt) if i < len(seen) and seen[i] == c)
