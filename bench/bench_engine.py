"""Engine benchmarks: hands per second against PokerKit, and the differential run.

    python bench/bench_engine.py                 # speed, all three variants
    python bench/bench_engine.py --diff 10000    # also 10,000 differential hands per variant

Speed: complete random hands (deal every card, a random legal action at every
decision with the legal options queried first, showdown, pot awarded), the
engine and PokerKit 0.7.7 on the same seeds in the same run.  The goal is at
least 10 times PokerKit.

Both sides pick each action with the same weights (``ACTION_WEIGHTS``, by the
same ``pick_weighted``), so both play hands of the same length: with PokerKit
choosing uniformly it folded a third of the time and played about 18 decisions
a hand against the engine's 28.  Timing rounds alternate between the two and
the best round of each counts, so a busy machine slows both alike.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.cards import DECK
from engine.rules import GameConfig, Variant
from engine.simulate import ACTION_WEIGHTS, SimulatedDealer, new_hand, pick_weighted
from tests.engine.pokerkit_oracle import pokerkit_state, run_differential


def engine_hands(variant: Variant, seeds: range, players: int) -> float:
    config = GameConfig(variant, 1, 2, 5, 10, rules="wsop2023")
    start = time.perf_counter()
    for seed in seeds:
        rng = random.Random(seed)
        hand = new_hand(variant.value, players, rng, "wsop2023", config=config, stacks=[200] * players)
        dealer = SimulatedDealer(hand, rng)
        while (event := dealer.next_event()) is not None:
            dealer.apply(event)
        assert hand.is_over
    return time.perf_counter() - start


def pokerkit_hands(variant: Variant, seeds: range, players: int) -> float:
    config = GameConfig(variant, 1, 2, 5, 10, rules="wsop2023")
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in seeds:
            rng = random.Random(seed)
            deck = list(DECK)
            rng.shuffle(deck)
            state = pokerkit_state(config, [200] * players)
            while state.status:
                if state.can_burn_card():
                    state.burn_card(str(deck.pop()) if len(deck) > players else "??")
                elif state.can_deal_hole():
                    state.deal_hole(str(deck.pop()) if deck else None)
                elif state.can_deal_board():
                    state.deal_board(str(deck.pop()) if deck else None)
                elif state.actor_index is not None:
                    # Query the options (with amounts) as a dealer screen would, then pick one
                    # with the weights the engine's simulated players use.
                    choices = []
                    to_call = None
                    if state.can_fold():
                        choices.append("fold")
                    if state.can_check_or_call():
                        to_call = state.checking_or_calling_amount
                        choices.append("check" if to_call == 0 else "call")
                    bring_in = state.can_post_bring_in()
                    if bring_in:
                        state.effective_bring_in_amount  # noqa: B018
                        choices.append("bring_in")
                    if state.can_complete_bet_or_raise_to():
                        state.min_completion_betting_or_raising_to_amount  # noqa: B018
                        choices.append("complete" if bring_in else "bet" if to_call == 0 else "raise")
                    pick = pick_weighted(rng, choices, [ACTION_WEIGHTS[c] for c in choices])
                    if pick == "fold":
                        state.fold()
                    elif pick in ("check", "call"):
                        state.check_or_call()
                    elif pick == "bring_in":
                        state.post_bring_in()
                    else:
                        state.complete_bet_or_raise_to()
                else:
                    break
    return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=2000, help="hands per variant for the speed run")
    ap.add_argument("--players", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=3, help="timing rounds per side (the best counts)")
    ap.add_argument("--diff", type=int, default=0, help="differential hands per variant (0: skip)")
    args = ap.parse_args()
    print(f"engine vs PokerKit 0.7.7, {args.hands} complete random hands per variant, {args.players} players")
    worst = float("inf")
    for variant in Variant:
        seeds = range(args.hands)
        ours = theirs = float("inf")
        for _ in range(args.rounds):
            ours = min(ours, engine_hands(variant, seeds, args.players))
            theirs = min(theirs, pokerkit_hands(variant, range(args.hands // 4), args.players) * 4)
        ratio = theirs / ours
        worst = min(worst, ratio)
        print(
            f"  {variant.value:6} engine {args.hands / ours:9.0f} hands/s   "
            f"pokerkit {args.hands / theirs:7.0f} hands/s   ratio {ratio:5.1f}x"
        )
    print(f"  worst ratio {worst:.1f}x (goal: at least 10x)")
    if args.diff:
        print(f"differential against PokerKit (wsop2023), {args.diff} hands per variant:")
        total_bad = 0
        for variant in Variant:
            bad = 0
            decisions = 0
            t0 = time.perf_counter()
            for k in range(args.diff):
                result = run_differential(random.Random(f"bench-{variant.value}-{k}"), variant)
                decisions += result.decisions
                if result.mismatches:
                    bad += 1
                    if bad <= 3:
                        print(f"    mismatch {variant.value} #{k}: {result.mismatches}")
            total_bad += bad
            print(
                f"  {variant.value:6} {args.diff} hands, {decisions} decisions compared, "
                f"{bad} mismatches ({time.perf_counter() - t0:.0f} s)"
            )
        print(f"  total mismatches: {total_bad}")
        return 1 if total_bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
