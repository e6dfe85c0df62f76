"""What a player at the table may see: the projection published on public/state.

The identity of a down card is SECRET while the hand is live (DESIGN: secrecy
of hole cards); here it appears only as a count, or once the player has shown
it.  ``public_tree`` builds the typed tree of ``engine.publicstate`` (the schema
registered in the wire contract); ``public_state`` is its JSON, with the
service's own fields beside it.  Both the dealer console and the table monitor
draw from this and nothing else.
"""

from __future__ import annotations

from typing import Any

from engine.events import ActionWithdrawn, PlayerAction
from engine.hand import Hand, Phase, SeatState, Street
from engine.publicstate import (
    STATE_VERSION,
    AnnouncementView,
    AwardView,
    CardView,
    DealView,
    GameView,
    OptionView,
    PublicState,
    SeatView,
    ServiceView,
)
from engine.rules import GameConfig
from engine.table import Table, TableSeat

__all__ = ["STATE_VERSION", "game_view", "public_seat", "public_state", "public_tree", "round_actions"]


def game_view(config: GameConfig) -> GameView:
    """A game and its stakes as both screens show them."""
    return GameView(config.variant.value, config.variant.long_name, config.ante, config.bring_in, config.small_bet,
                    config.big_bet, config.max_raises, config.rules.name)


_DID = {"bring_in": "brought in", "complete": "completed to", "bet": "bet", "raise": "raised to"}


def round_actions(hand: Hand) -> dict[int, str]:
    """Each seat's last action this betting round, in words (issue 21, 5): from the hand's own
    events since the street began (``street_start``), so a new street clears them; none outside
    the betting and the deal (the showdown has no round).  A call names the level it matched."""
    if hand.phase not in (Phase.BETTING, Phase.DEALING):
        return {}
    words: dict[int, list[str]] = {}
    level = 0
    total: dict[int, int] = {}
    for e in hand.events[hand.street_start:]:
        if isinstance(e, ActionWithdrawn):  # RRoP 3.5: taken back, as if never made
            if words.get(e.seat):
                words[e.seat].pop()
            continue
        if not isinstance(e, PlayerAction):
            continue
        said = words.setdefault(e.seat, [])
        if e.action == "fold":
            said.append("folded")
        elif e.action == "check":
            said.append("checked")
        elif e.action == "call":
            total[e.seat] = level if e.amount is None else total.get(e.seat, 0) + e.amount
            said.append(f"called {total[e.seat]}")
        elif e.action in _DID and e.amount is not None:
            level = total[e.seat] = e.amount
            said.append(f"{_DID[e.action]} {e.amount}")
    return {seat: said[-1] for seat, said in words.items() if said}


def public_seat(hand: Hand | None, ts: TableSeat | None, s: SeatState | None, last_action: str = "") -> SeatView:
    """One seat as a player sees it: ``ts`` from the table, ``s`` from the hand (either may be missing)."""
    number = ts.seat if ts is not None else s.seat if s else 0
    name = ts.name if ts is not None else (s.name if s else "")
    sitting_out = bool(ts.sitting_out) if ts is not None else False
    if s is None or hand is None:
        status = "sitting_out" if ts is not None and ts.sitting_out else "waiting"
        stack = ts.stack if ts is not None else 0
        return SeatView(number, name, stack, sitting_out, s is not None, status, 0, 0, [], 0, [], [])
    stack = s.stack + s.reserved  # a declared all-in keeps its chips behind (RRoP stud 17)
    if hand.is_over:
        # Between hands the seat is the table's (002 3.1): a player who left is gone, chips added
        # count, whatever the last hand's cards (still on the felt until the next deal) say.
        name = ts.name if ts is not None else ""
        stack = ts.stack if ts is not None else 0
    if s.folded:
        status = "dead" if s.killed else "folded"  # killed by a ruling (RRoP 3.3), not thrown away
    elif s.mucked:
        status = "mucked"
    elif (s.stack == 0 or s.reserved) and not hand.is_over:
        status = "all_in"
    else:
        status = "active"
    return SeatView(
        number,
        name,
        stack,
        sitting_out,
        True,
        status,
        s.bet,
        s.committed,
        [str(c) for c in s.up],
        len(s.down),
        # Down cards become public only when their player shows them.
        [str(c) for c in s.down] if s.shown else [],
        [CardView(str(c) if (up or s.shown) else "??", up) for c, up in s.cards],
        last_action,
    )


def public_tree(
    table: Table | None, hand: Hand | None, table_id: str = "table", service: ServiceView | None = None
) -> PublicState:
    """The public snapshot of a table (and its hand in progress or just finished), typed."""
    if hand is None and table is not None:
        hand = table.hand
    config = hand.config if hand else (table.config if table else None)
    in_hand = {s.seat: s for s in hand.seats} if hand else {}
    seat_numbers = sorted(set(table.seats) | set(in_hand)) if table else sorted(in_hand)
    did = round_actions(hand) if hand is not None else {}
    seats = [public_seat(hand, table.seats.get(n) if table else None, in_hand.get(n), did.get(n, ""))
             for n in seat_numbers]
    game = game_view(config) if config is not None else None
    street = street_index = bet_size = None
    options: list[OptionView] = []
    to_call = 0
    announcements: list[AnnouncementView] = []
    awards: list[AwardView] = []
    next_deal = None
    if hand is not None:
        if hand.phase in (Phase.DEALING, Phase.BETTING):
            street = hand.street.label
            street_index = int(hand.street)
            assert config is not None
            bet_size = config.small_bet if hand.street < Street.FIFTH else config.big_bet
        opts = hand.options()
        if opts is not None:
            options = [OptionView(o.action, o.amount, o.all_in, o.label) for o in opts.options]
            to_call = opts.to_call
        announcements = [AnnouncementView(a.kind, a.text, list(a.seats)) for a in hand.announcements[-8:]]
        awards = [AwardView(a.pot, a.amount, a.seat, a.share, a.hand) for a in hand.awards]
        if hand.phase is Phase.DEALING:
            next_deal = [DealView(k, seat, up) for k, seat, up in hand.expected_deal()[:1]]
    return PublicState(
        v=STATE_VERSION,
        table=table_id,
        seat_count=table.seat_count if table else max(seat_numbers, default=0),
        hand_id=hand.hand_id if hand else None,
        hands_played=table.hands_played if table else (hand.hand_id if hand else 0),
        game=game,
        phase=hand.phase.value if hand else "idle",
        street=street,
        street_index=street_index,
        bet_size=bet_size,
        seats=seats,
        pot=hand.pot_total if hand else 0,
        common=[str(c) for c in hand.common] if hand else [],
        to_act=hand.to_act if hand else None,
        options=options,
        to_call=to_call,
        announcements=announcements,
        awards=awards,
        next_deal=next_deal,
        service=service,
    )


def public_state(
    table: Table | None, hand: Hand | None, table_id: str = "table", extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    """``public_tree`` as JSON, with ``extra`` (the service's fields, ``ServiceView``) beside it."""
    state = public_tree(table, hand, table_id).to_json()
    if extra:
        state.update(extra)
    return state
