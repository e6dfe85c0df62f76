"""What a player at the table may see: the projection published on public/state.

The identity of a down card is SECRET while the hand is live (DESIGN: secrecy
of hole cards); here it appears only as a count, or once the player has shown
it.  Everything in the result is plain JSON.  Both the dealer console and the
table monitor draw from this and nothing else.
"""

from __future__ import annotations

from typing import Any

from engine.hand import STREET_NAMES, Hand, Phase, SeatState
from engine.table import Table

STATE_VERSION = 1


def public_seat(hand: Hand | None, ts: Any, s: SeatState | None) -> dict[str, Any]:
    seat: dict[str, Any] = {
        "seat": ts.seat if ts is not None else s.seat if s else 0,
        "name": ts.name if ts is not None else (s.name if s else ""),
        "stack": ts.stack if ts is not None else 0,
        "sitting_out": bool(ts.sitting_out) if ts is not None else False,
        "in_hand": s is not None,
        "status": "waiting",
        "bet": 0,
        "committed": 0,
        "up": [],
        "down_count": 0,
        "shown": [],
        "cards": [],
    }
    if s is None or hand is None:
        if ts is not None and ts.sitting_out:
            seat["status"] = "sitting_out"
        return seat
    seat["stack"] = s.stack + s.reserved  # a declared all-in keeps its chips behind (RRoP stud 17)
    seat["bet"] = s.bet
    seat["committed"] = s.committed
    seat["up"] = [str(c) for c in s.up]
    seat["down_count"] = len(s.down)
    # Down cards become public only when their player shows them.
    seat["shown"] = [str(c) for c in s.down] if s.shown else []
    seat["cards"] = [{"card": str(c) if (up or s.shown) else "??", "up": up} for c, up in s.cards]
    if s.folded:
        seat["status"] = "folded"
    elif s.mucked:
        seat["status"] = "mucked"
    elif (s.stack == 0 or s.reserved) and not hand.is_over:
        seat["status"] = "all_in"
    else:
        seat["status"] = "active"
    return seat


def public_state(
    table: Table | None, hand: Hand | None, table_id: str = "table", extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The public snapshot of a table (and its hand in progress or just finished)."""
    if hand is None and table is not None:
        hand = table.hand
    config = hand.config if hand else (table.config if table else None)
    in_hand = {s.seat: s for s in hand.seats} if hand else {}
    seat_numbers = sorted(set(table.seats) | set(in_hand)) if table else sorted(in_hand)
    seats = [public_seat(hand, table.seats.get(n) if table else None, in_hand.get(n)) for n in seat_numbers]
    state: dict[str, Any] = {
        "v": STATE_VERSION,
        "table": table_id,
        "seat_count": table.seat_count if table else max(seat_numbers, default=0),
        "hand_id": hand.hand_id if hand else None,
        "hands_played": table.hands_played if table else (hand.hand_id if hand else 0),
        "game": None,
        "phase": hand.phase.value if hand else "idle",
        "street": None,
        "street_index": None,
        "bet_size": None,
        "seats": seats,
        "pot": hand.pot_total if hand else 0,
        "common": [str(c) for c in hand.common] if hand else [],
        "to_act": None,
        "options": [],
        "to_call": 0,
        "announcements": [],
        "awards": [],
    }
    if config is not None:
        state["game"] = {
            "variant": config.variant.value,
            "name": config.variant.long_name,
            "ante": config.ante,
            "bring_in": config.bring_in,
            "small_bet": config.small_bet,
            "big_bet": config.big_bet,
            "max_raises": config.max_raises,
            "rules": config.rules.name,
        }
    if hand is not None:
        if hand.phase in (Phase.DEALING, Phase.BETTING):
            state["street"] = STREET_NAMES[hand.street]
            state["street_index"] = hand.street
            state["bet_size"] = (
                config.small_bet if config and hand.street < 2 else (config.big_bet if config else None)
            )
        state["to_act"] = hand.to_act
        opts = hand.options()
        if opts is not None:
            state["options"] = [o.to_json() for o in opts.options]
            state["to_call"] = opts.to_call
        state["announcements"] = [
            {"kind": a.kind, "text": a.text, "seats": list(a.seats)} for a in hand.announcements[-8:]
        ]
        state["awards"] = [
            {"pot": a.pot, "amount": a.amount, "seat": a.seat, "share": a.share, "hand": a.hand}
            for a in hand.awards
        ]
        if hand.phase is Phase.DEALING:
            state["next_deal"] = [
                {"kind": k, "seat": seat, "face_up": up} for k, seat, up in hand.expected_deal()[:1]
            ]
    if extra:
        state.update(extra)
    return state
