"""Betting: fixed-limit rounds, the legal options with their exact amounts, and the wagers.

One ``BettingRound`` holds a street's wagers; the house-rule profile
(``engine.rules.HouseRules``) decides the points where the rule books differ:
the open-pair big bet, the raise cap heads-up, short all-ins, the short
bring-in.  ``options()`` answers, for the player to act, every legal action with
its exact amount, and a player action is accepted only as one of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from engine.cards import UNKNOWN
from engine.events import Announcement, PlayerAction
from engine.hand.board import _BOARDS, _board_entry
from engine.hand.seats import SeatState, Street
from engine.hand.state import HandState, IllegalAction, Phase, _announcement, _new
from engine.rules import Variant

_DEALING, _BETTING, _COMPLETE = Phase.DEALING, Phase.BETTING, Phase.COMPLETE
_RAZZ = Variant.RAZZ
_THIRD, _FOURTH, _FIFTH, _SEVENTH = Street.THIRD, Street.FOURTH, Street.FIFTH, Street.SEVENTH


@dataclass(frozen=True)
class Option:
    """One legal action: ``amount`` is chips added for call and bring-in, the
    street total ("to") for complete, bet and raise."""

    action: str
    amount: int = 0
    all_in: bool = False

    @property
    def label(self) -> str:
        suffix = " (all in)" if self.all_in else ""
        match self.action:
            case "fold" | "check":
                return self.action.capitalize() + suffix
            case "call":
                return f"Call {self.amount}{suffix}"
            case "bring_in":
                return f"Bring in {self.amount}{suffix}"
            case "complete":
                return f"Complete to {self.amount}{suffix}"
            case "bet":
                return f"Bet {self.amount}{suffix}"
            case _:
                return f"Raise to {self.amount}{suffix}"

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "amount": self.amount, "all_in": self.all_in, "label": self.label}


@dataclass(frozen=True)
class Options:
    seat: int
    options: tuple[Option, ...]
    to_call: int

    def find(self, action: str, amount: int | None = None) -> Option | None:
        for o in self.options:
            if o.action == action and (amount is None or o.amount == amount):
                return o
        return None

    def to_json(self) -> dict[str, Any]:
        return {"seat": self.seat, "to_call": self.to_call, "options": [o.to_json() for o in self.options]}


@dataclass(slots=True)
class BettingRound:
    """A street's wagers.  Field names follow the rule text where they can."""

    street: Street
    unit: int  # the bet for this street (small or big)
    big_option: bool = False  # RRoP stud 4: open pair on 4th, small or big bet until a big one is made
    to: int = 0  # the level everyone must match ("current bet")
    full_to: int = 0  # the last level reached by a full wager (RRoP 3.5 short all-ins)
    count: int = 0  # bets/completions/raises counted against the cap
    capped: bool = False
    bring_in_open: bool = False  # third street before anyone has brought it in
    bring_in_forced: bool = False  # the player to act must bring in or complete (cannot fold)
    completion_pending: bool = False  # third street before anyone has completed
    last_increment: int = 0  # largest wager increment so far (PokerKit's reopen test)
    short_all_ins: list[int] = field(default_factory=list)
    acted: set[int] = field(default_factory=set)  # seats that acted since the last full wager
    to_act: list[int] = field(default_factory=list)
    aggressor: int | None = None
    opener: int | None = None
    # Seats that may only call on this street (RRoP stud 14: premature seventh card kept).
    call_only: set[int] = field(default_factory=set)

    def secret_state(self) -> dict[str, Any]:
        return {
            "street": self.street,
            "unit": self.unit,
            "big_option": self.big_option,
            "to": self.to,
            "full_to": self.full_to,
            "count": self.count,
            "capped": self.capped,
            "bring_in_open": self.bring_in_open,
            "bring_in_forced": self.bring_in_forced,
            "completion_pending": self.completion_pending,
            "last_increment": self.last_increment,
            "short_all_ins": list(self.short_all_ins),
            "acted": sorted(self.acted),
            "to_act": list(self.to_act),
            "aggressor": self.aggressor,
            "opener": self.opener,
            "call_only": sorted(self.call_only),
        }


# Options are immutable values and the same few recur at every table: built once, reused.
_option: Callable[[str, int, bool], Option] = lru_cache(maxsize=1024)(Option)
_OPTIONS_MEMO_SIZE = 20_000
_OPTIONS: dict[tuple[int | str | bool, ...], Options] = {}  # see ``BettingMixin._options_for``
_wager_words: dict[tuple[int | str | bool, ...], Announcement] = {}  # see ``BettingMixin._wager``
_RAISE_NAMES = {2: "Raise", 3: "Three bets", 4: "Four bets"}
_FOLD = Option("fold")
_CHECK = Option("check")


def _options(seat: int, options: tuple[Option, ...], to_call: int) -> Options:
    """``Options(seat, options, to_call)`` without the frozen dataclass's ``__init__``."""
    opts = _new(Options)
    fields_ = opts.__dict__
    fields_["seat"] = seat
    fields_["options"] = options
    fields_["to_call"] = to_call
    return opts


class BettingMixin(HandState):
    """The betting rounds: who acts, what they may do, and what each action does."""

    def options(self) -> Options | None:
        """Every legal action for the player to act, with exact amounts."""
        rnd = self.round
        if self.phase is not _BETTING or rnd is None or not rnd.to_act:
            return None
        # Asked once by the screen and once more by ``apply``: computed once per position in the log.
        cached = self._options_cache
        position = len(self.events)
        if cached is not None and cached[0] == position:
            return cached[1]
        opts = self._options_for(rnd.to_act[0])
        self._options_cache = (position, opts)
        return opts

    def _begin_betting(self) -> None:
        cfg = self.config
        street = self.street
        rnd = BettingRound(street, cfg.small_bet if street < _FIFTH else cfg.big_bet)
        if street == _THIRD:
            self._open_bring_in(rnd)
        else:
            self._open_high_board(rnd)
        # Nobody to bet against: a lone player with chips does not act.
        if len(rnd.to_act) == 1:
            rnd.to_act.clear()
        self.round = rnd
        self.phase = _BETTING
        if not rnd.to_act:
            self._end_round()

    def _open_bring_in(self, rnd: BettingRound) -> None:
        """Third street: who brings it in, who acts, and the dealer's words (RRoP stud 1, 2, 5, 8; razz 3)."""
        cfg = self.config
        seats = self.seats
        razz = cfg.variant is _RAZZ
        # One pass over the live seats finds who opens and the two largest stacks (bet
        # included): a player can act only while someone else can still match a wager.
        live: list[int] = []
        top = second = -1
        opener = -1
        # RRoP stud 1: lowest up card by suit brings it in (ace high); razz 3: highest, ace
        # low.  As one number: rank * 4 + suit.  An unidentified door card (a gap in a
        # record) is never taken to be the bring-in, as in PokerKit.
        best = -2 if razz else 61
        for i, s in enumerate(seats):
            if s.folded or s.mucked:
                continue
            live.append(i)
            total = s.bet + s.stack
            if total > second:
                if total > top:
                    second, top = top, total
                else:
                    second = total
            door = UNKNOWN
            for c, up in s.cards:
                if up:
                    door = c
                    break
            if razz:
                key = door.low_rank_value * 4 + door.suit_value if door.known else -1
                if key > best:
                    opener, best = i, key
            else:
                key = door.rank_value * 4 + door.suit_value if door.known else 60
                if key < best:
                    opener, best = i, key
        rnd.bring_in_open = True
        rnd.completion_pending = True
        rnd.opener = opener
        low = seats[opener]
        first = opener
        if low.exposed_door:
            # RRoP stud 5: the exposed card would have been low: action starts to that player's left,
            # who may fold, bring in or complete; the exposed player acts in turn, unforced.
            first = live[(live.index(opener) + 1) % len(live)]
        k = live.index(first)
        order = live[k:] + live[:k] if k else live
        rnd.to_act = to_act = [i for i in order if seats[i].stack > 0 and second > seats[i].bet]
        rnd.bring_in_forced = bool(to_act) and (
            to_act[0] == opener or not cfg.rules.bring_in_passes_with_fold
        ) and not low.exposed_door
        door = low.up[0]
        text = f"{door.name.capitalize()} brings it in"
        if low.exposed_door:
            text = (
                f"The exposed {door.name} would be low: seat {seats[order[0]].seat} acts first "
                "and may fold, bring it in or complete"
            )
        elif low.stack == 0:
            # RRoP stud 8: the low card is all in for the ante; the player to the left acts first.
            text = f"{door.name.capitalize()} is low but all in for the ante; seat {self._seat_after(opener)} acts first"
        self.announcements.append(_announcement("low_card", text, (low.seat,)))

    def _open_high_board(self, rnd: BettingRound) -> None:
        """Fourth street on: the high board acts first (RRoP stud 1; razz 3: the low board), the open pair."""
        cfg = self.config
        street = self.street
        seats = self.seats
        razz = cfg.variant is _RAZZ
        # One pass over the live seats finds who opens and the two largest stacks (bet
        # included): a player can act only while someone else can still match a wager.
        live: list[int] = []
        top = second = -1
        opener = -1
        # RRoP stud 1: high board acts first (razz 3: low board); ties by position.  Each
        # board is looked up once by its rank key (``SeatState.up_key``), for the opener,
        # the open pair and the pairs.
        memo = _BOARDS[razz]
        common_key = 1
        if cfg.rules.common_card_opens:
            for c in self.common:
                common_key *= c.prime
        best_value: tuple[int, ...] | None = None
        paired: list[int] = []  # live seats with a pair among their up cards
        for i, s in enumerate(seats):
            if s.folded or s.mucked:
                continue
            live.append(i)
            total = s.bet + s.stack
            if total > second:
                if total > top:
                    second, top = top, total
                else:
                    second = total
            key = s.up_key
            entry = memo.get(key)
            if entry is None:
                entry = _board_entry(key, [c for c, up in s.cards if up and c.known], razz)
            if entry[1]:
                paired.append(i)
            if common_key != 1:
                # RRoP stud 15: the common card plays in every hand; "the player who is now
                # high using the common card initiates the action for the last round".
                key *= common_key
                entry = memo.get(key) or _board_entry(key, self.up_cards_for_ranking(s), razz)
            value = entry[0]
            if best_value is None or value > best_value:
                opener, best_value = i, value
        rnd.opener = opener
        # RRoP stud 4: an open pair on fourth street (stud high only) allows the big bet.
        if street == _FOURTH and paired and cfg.variant is Variant.STUD and cfg.rules.open_pair_big_bet:
            rnd.big_option = True
        k = live.index(opener)
        order = live[k:] + live[:k] if k else live
        rnd.to_act = [i for i in order if seats[i].stack > 0 and second > seats[i].bet]
        self._announce_board(opener, rnd, paired)

    def _seat_after(self, index: int) -> int:
        n = len(self.seats)
        for k in range(1, n + 1):
            s = self.seats[(index + k) % n]
            if not s.folded and not s.mucked and s.stack > 0:
                return s.seat
        return self.seats[index].seat

    def _not_all_in_count(self) -> int:
        return sum(1 for s in self.seats if not s.folded and not s.mucked and s.stack > 0)

    def _options_for(self, idx: int) -> Options:
        rnd = self.round
        assert rnd is not None
        s = self.seats[idx]
        cfg = self.config
        stack = s.stack
        key: tuple[int | str | bool, ...]
        if rnd.bring_in_open:
            # RRoP stud 2: the forced bet may open for a full bet; stud 8: after an all-in low card
            # the next player may also fold.
            amount = min(stack, cfg.bring_in)
            complete = (
                min(stack, cfg.small_bet) if stack > cfg.bring_in or not cfg.rules.short_bring_in_calls_full else 0
            )
            key = (s.seat, "bring_in", rnd.bring_in_forced, amount, amount == stack, complete, complete == stack)
            answer = _OPTIONS.get(key)
            if answer is None:
                opts: list[Option] = []
                if not rnd.bring_in_forced:
                    opts.append(_FOLD)
                opts.append(_option("bring_in", amount, amount == stack))
                if complete:
                    opts.append(_option("complete", complete, complete == stack))
                answer = _OPTIONS[key] = _options(s.seat, tuple(opts), 0)
            return answer
        to = rnd.to
        bet = s.bet
        to_call = to - bet
        if to_call > stack:
            to_call = stack
        elif to_call < 0:
            to_call = 0
        targets = self._raise_targets(idx, s, rnd)
        # The same answers recur at every table: one memo, keyed by what decides the answer.
        if not targets:
            key = (s.seat, to_call, to_call == stack)
        elif len(targets) == 1:
            if rnd.completion_pending or (rnd.full_to == 0 and to > 0 and cfg.rules.half_bet_all_in_reopens):
                kind = "complete"
            elif to == 0:
                kind = "bet"
            else:
                kind = "raise"
            most = stack + bet
            amount = targets[0]
            if amount > most:
                amount = most
            key = (s.seat, to_call, to_call == stack, kind, amount, amount == most)
        else:
            return self._options_with_targets(s, to_call, targets)
        answer = _OPTIONS.get(key)
        if answer is None:
            answer = self._options_with_targets(s, to_call, targets)
            if len(_OPTIONS) >= _OPTIONS_MEMO_SIZE:
                _OPTIONS.clear()
            _OPTIONS[key] = answer
        return answer

    def _options_with_targets(self, s: SeatState, to_call: int, targets: list[int]) -> Options:
        """The options of the player to act who must put in ``to_call`` (0: may check) and may
        bet, complete or raise to each of ``targets`` (or all in for less)."""
        rnd = self.round
        assert rnd is not None
        stack = s.stack
        if to_call > 0:
            first: tuple[Option, ...] = (_FOLD, _option("call", to_call, to_call == stack))
        else:
            first = (_CHECK,)
        if not targets:
            return _options(s.seat, first, to_call)
        if rnd.completion_pending or (
            rnd.full_to == 0 and rnd.to > 0 and self.config.rules.half_bet_all_in_reopens
        ):
            kind = "complete"
        elif rnd.to == 0:
            kind = "bet"
        else:
            kind = "raise"
        most = stack + s.bet
        wagers = []
        for target in targets:
            amount = min(target, most)
            wagers.append(_option(kind, amount, amount == most))
        return _options(s.seat, first + tuple(wagers), to_call)

    def _raise_targets(self, idx: int, s: SeatState, rnd: BettingRound) -> list[int]:
        """The street totals the player at ``idx`` (``s``, to act in ``rnd``) may bet, complete
        or raise to (empty if none)."""
        if rnd.call_only and idx in rnd.call_only:
            return []  # RRoP stud 14: premature seventh card kept, may only call on sixth street
        to = rnd.to
        if s.stack <= to - s.bet:
            return []  # covered: calling puts this player all in
        for o in self.seats:
            if o is not s and not o.folded and not o.mucked and o.stack + o.bet > to:
                break
        else:
            return []  # nobody left who could call a raise
        # RRoP 3.5: a bet and three raises, unlimited heads-up unless capped first.
        if rnd.capped:
            return []
        cfg = self.config
        rules = cfg.rules
        if rnd.count > cfg.max_raises and not (rules.unlimited_heads_up and self._not_all_in_count() <= 2):
            return []  # ``count >= cfg.bet_cap``
        if rules.half_bet_all_in_reopens:
            # RRoP 3.5: an all-in under half a bet does not reopen betting for those who acted.
            if to > rnd.full_to and idx in rnd.acted:
                return []
            if rnd.completion_pending:
                return self._with_big_option([cfg.small_bet], rnd) if rnd.big_option else [cfg.small_bet]
            target = rnd.full_to + rnd.unit
            return self._with_big_option([target], rnd) if rnd.big_option else [target]
        # PokerKit 0.7.7 (wsop2023): only a full raise reopens the betting.
        to_call = to - s.bet  # less than the stack (covered players returned above)
        last_increment = rnd.last_increment
        if to_call < last_increment:
            return []
        if rnd.short_all_ins and sum(rnd.short_all_ins) < last_increment and idx in rnd.acted:
            return []
        if rnd.completion_pending:
            return [cfg.small_bet]
        return [to + (last_increment if last_increment > rnd.unit else rnd.unit)]

    def _with_big_option(self, targets: list[int], rnd: BettingRound) -> list[int]:
        # RRoP stud 4: with an open pair on fourth street, small or big until a big wager is made.
        if rnd.big_option and not rnd.completion_pending:
            big = rnd.full_to + self.config.big_bet
            if big not in targets:
                targets = [*targets, big]
        return targets

    def _on_player_action(self, e: PlayerAction) -> None:
        rnd = self.round
        assert rnd is not None
        idx = self._index.get(e.seat, -1)
        if idx < 0:
            self.seat(e.seat)  # refuses the unknown seat
        s = self.seats[idx]
        to_act = rnd.to_act
        if not to_act:
            raise IllegalAction("engine.turn", "no player is due to act")
        if to_act[0] != idx:
            # RRoP 3.5: acting out of turn; the irregularity layer decides whether it binds.
            raise IllegalAction(
                "RRoP 3.5 out of turn", f"seat {e.seat} acted out of turn; seat {self.to_act} is to act"
            )
        # ``options()``: usually just asked by the dealer's screen, so remembered for this position.
        cached = self._options_cache
        if cached is not None and cached[0] == len(self.events):
            opts = cached[1]
        else:
            opts = self._options_for(idx)
            self._options_cache = (len(self.events), opts)
        action = e.action
        amount = e.amount
        for chosen in opts.options:
            if chosen.action == action and (
                chosen.amount == amount or (amount is None and (action == "check" or action == "fold"))
            ):
                break  # the usual case; everything else is checked in ``_match_option``
        else:
            chosen = self._match_option(opts, e)
            action = chosen.action
        if action == "check" or action == "call":
            amount = chosen.amount
            if amount:
                s.stack -= amount
                s.bet += amount
                s.committed += amount
            del to_act[0]
            rnd.acted.add(idx)
        elif action == "fold":
            s.folded = True
            del to_act[0]
            rnd.acted.add(idx)
            live = 0
            for o in self.seats:
                if not o.folded and not o.mucked:
                    live += 1
            if live == 1:
                self._award_uncontested()
                return
            if not to_act:
                self._end_round()
            return
        elif action == "bring_in":
            self._put(s, chosen.amount)
            del to_act[0]
            rnd.acted.add(idx)
            rnd.bring_in_open = False
            rnd.bring_in_forced = False
            # RRoP stud 4 (000): others enter for at least the normal bring-in.
            level = self.config.bring_in if self.config.rules.short_bring_in_calls_full else chosen.amount
            rnd.to = max(rnd.to, level)
            rnd.aggressor = None
            self.announcements.append(
                _announcement("bring_in", f"Seat {s.seat} brings it in for {chosen.amount}", (s.seat,))
            )
        else:
            self._wager(idx, chosen)
        if s.stack == 0 and action != "check" and not s.folded and not s.mucked:
            self.announcements.append(_announcement("all_in", f"Seat {s.seat} is all in", (s.seat,)))
        if not rnd.to_act:
            self._end_round()

    def _match_option(self, opts: Options, e: PlayerAction) -> Option:
        if e.amount is not None:
            for o in opts.options:
                if o.action == e.action and o.amount == e.amount:
                    return o  # the usual case; everything else is checked below
        same = [o for o in opts.options if o.action == e.action]
        if not same:
            allowed = ", ".join(o.label.lower() for o in opts.options)
            raise IllegalAction(
                self._why_not(e.action),
                f"seat {e.seat} cannot {e.action.replace('_', ' ')} now; allowed: {allowed}",
            )
        if e.amount is None:
            if len(same) > 1:
                raise IllegalAction(
                    "RRoP stud 4", f"say how much: {' or '.join(str(o.amount) for o in same)}"
                )
            return same[0]
        for o in same:
            if o.amount == e.amount:
                return o
        amounts = " or ".join(str(o.amount) for o in same)
        what = "to" if e.action in ("complete", "bet", "raise") else "for"
        raise IllegalAction(
            "RRoP 3.5 fixed limit",
            f"seat {e.seat} cannot {e.action.replace('_', ' ')} {what} {e.amount}; the amount is {amounts}",
        )

    def _why_not(self, action: str) -> str:
        rnd = self.round
        if action == "fold" and rnd and not rnd.bring_in_open:
            return "RRoP stud 7: fold with no wager"
        if action in ("check", "call", "fold") and rnd and rnd.bring_in_open:
            return "RRoP stud 1: forced bring-in"
        if action in ("bet", "raise", "complete"):
            if rnd and rnd.capped:
                return "RRoP 3.5 raise cap"
            return "RRoP 3.5"
        return "engine.options"

    def _put(self, s: SeatState, amount: int) -> None:
        s.stack -= amount
        s.bet += amount
        s.committed += amount

    def _wager(self, idx: int, chosen: Option) -> None:
        rnd = self.round
        assert rnd is not None
        seats = self.seats
        s = seats[idx]
        rules = self.config.rules
        target = chosen.amount
        previous_to = rnd.to
        increment = target - previous_to
        added = target - s.bet
        s.stack -= added
        s.bet = target
        s.committed += added
        all_in = s.stack == 0
        rnd.bring_in_open = False
        rnd.bring_in_forced = False
        was_completion = rnd.completion_pending
        if rules.half_bet_all_in_reopens:
            base = 0 if rnd.completion_pending else rnd.full_to
            full_size = self.config.small_bet if rnd.completion_pending else rnd.unit
            # RRoP 3.5: an all-in of half a bet or more is a full bet.
            full = not all_in or (target - base) * 2 >= full_size or target >= base + full_size
            if full:
                if rnd.big_option and target - base >= self.config.big_bet and not was_completion:
                    # RRoP stud 4: after a big bet or raise on the open pair, all raises are big.
                    rnd.unit = self.config.big_bet
                    rnd.big_option = False
                rnd.full_to = target
                rnd.count += 1
                rnd.acted = {idx}
                rnd.completion_pending = False
            rnd.to = max(rnd.to, target)
        else:
            rnd.completion_pending = False
            if increment >= rnd.last_increment:
                rnd.acted = {idx}
            rnd.last_increment = max(rnd.last_increment, increment)
            rnd.count += 1
            if all_in:
                rnd.short_all_ins.append(increment)
            else:
                rnd.short_all_ins.clear()
            if sum(rnd.short_all_ins) >= rnd.last_increment:
                rnd.short_all_ins.clear()
            rnd.to = target
            rnd.full_to = target
        rnd.acted.add(idx)
        rnd.aggressor = idx
        # Everyone else who can still act must answer the wager, from this player's left.
        to_act = [i for i in range(idx + 1, len(seats)) if (o := seats[i]).stack > 0 and not o.folded and not o.mucked]
        if idx:
            to_act += [i for i in range(idx) if (o := seats[i]).stack > 0 and not o.folded and not o.mucked]
        rnd.to_act = to_act
        if rnd.count >= self.config.bet_cap and self._not_all_in_count() >= 3:
            rnd.capped = True
        # The words depend on these only, and recur: remembered.
        key = (s.seat, chosen.action, target, rnd.count, rnd.capped, was_completion)
        announcement = _wager_words.get(key)
        if announcement is None:
            if len(_wager_words) >= _OPTIONS_MEMO_SIZE:
                _wager_words.clear()
            announcement = _wager_words[key] = self._wager_announcement(s, chosen, rnd, was_completion)
        self.announcements.append(announcement)

    def _wager_announcement(
        self, s: SeatState, o: Option, rnd: BettingRound, completion: bool
    ) -> Announcement:
        if completion and o.action == "complete":
            text = f"Seat {s.seat} completes to {o.amount}"
        elif o.action == "bet":
            text = f"Seat {s.seat} bets {o.amount}"
        elif rnd.count <= 1:
            text = f"Seat {s.seat} {'completes' if o.action == 'complete' else 'raises'} to {o.amount}"
        else:
            text = _RAISE_NAMES.get(rnd.count, f"{rnd.count} bets")
            if rnd.capped:
                text += ", capped"
            text = f"{text}: seat {s.seat} to {o.amount}"
        return _announcement("raise" if rnd.count > 1 else "bet", text, (s.seat,))

    def _maybe_close_round(self) -> None:
        rnd = self.round
        assert rnd is not None
        if self.phase is _COMPLETE:
            return
        if not rnd.to_act:
            self._end_round()

    def _end_round(self) -> None:
        rnd = self.round
        assert rnd is not None
        # An uncalled bet, or the part of it nobody matched, goes back to its owner: whatever
        # is above the second largest bet.
        seats = self.seats
        top = cutoff = -1
        for s in seats:
            bet = s.bet
            if bet > cutoff:
                if bet > top:
                    cutoff, top = top, bet
                else:
                    cutoff = bet
        live = 0
        for s in seats:
            if s.bet:
                if s.bet > cutoff:
                    s.stack += s.bet - cutoff
                    s.committed -= s.bet - cutoff
                s.bet = 0
            if not s.folded and not s.mucked:
                live += 1
        self.last_round = rnd
        self.round = None
        if live == 1:
            self._award_uncontested()
            return
        if self.street == _SEVENTH:
            self._begin_showdown(rnd)
            return
        self.street = Street(self.street + 1)
        # RRoP 3.4: an extra card returned on third street is already the fourth-street burn.
        self.burned_this_street = self.burn_ahead
        self.burn_ahead = False
        self.street_start = len(self.events) + 1  # the input being applied is appended after this
        self.phase = _DEALING
        self._owed = self._owed_cards()
        self._deal_from = 0
