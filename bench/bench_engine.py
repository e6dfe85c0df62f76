"""Engine benchmarks: hands per second against PokerKit, and the differential run.

    python bench/bench_engine.py                 # speed, all three variants
    python bench/bench_engine.py --diff 10000    # also 10,000 differential hands per variant

    python bench/bench_engine.py --hands 0 --replay 1000   # PokerKit's own hands through the CLI

``--replay N``: N fresh random hands per variant, 2 to 8 players, played and
dealt by PokerKit (which recycles burns and folded cards when its deck runs
out) and written by PokerKit as PHH files, replayed by ``studtable history
replay --rules wsop2023``; it counts the files that end on PokerKit's stacks.

The differential plays one hand in four with six to eight players who fold
rarely, so that the deck often runs out on seventh street (a reshuffle of the
burns and folded hands, or a common card: RRoP stud 15 as PokerKit does it);
it prints how many hands ran out of cards.

Speed: complete random hands (deal every card, a random legal action at every
decision with the legal options queried first, showdown, pot awarded), the
engine and PokerKit 0.7.7 on the same seeds in the same run.  The goal is at
least 10 times PokerKit.

Both sides pick each action with the same weights (``ACTION_WEIGHTS``, by the
same ``pick_weighted``), so both play hands of the same length: with PokerKit
choosing uniformly it folded a third of the time and played about 18 decisions
a hand against the engine's 28.  From the same seed both shuffle the same deck
and draw the same random numbers, so they play the very same hands (same
cards, same actions, same finishing stacks).

Timing is interleaved so that other work on the machine slows both sides
alike: the seeds are cut into blocks (``--chunk`` hands), and each block is
played by the engine and by PokerKit back to back (which goes first
alternates), each timed on its own (wall clock, ``time.perf_counter``; with
``--clock cpu`` the process's CPU time, which leaves out the time other
programs had the processor), after a garbage collection.  A block's ratio is PokerKit's time over the engine's for
those hands; the figure reported is the median over the blocks, with the
lowest block and the ratio of the summed times beside it.

Both sides are measured warm, on other seeds first: PokerKit one block (its
later blocks are no faster), the engine ``--warmup`` hands, since its memos
(board values and words by ranks, options, announcements) fill over the first
few thousand hands, as they do in the first hour of a table.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.cards import DECK
from engine.events import DeckReshuffled
from engine.rules import GameConfig, Variant
from engine.simulate import ACTION_WEIGHTS, SimulatedDealer, new_hand, pick_weighted
from tests.engine.pokerkit_oracle import pokerkit_random_hand, pokerkit_state, run_differential

CLOCK = time.perf_counter  # what the speed run times with (``--clock``)


def engine_hands(variant: Variant, seeds: range, players: int) -> float:
    config = GameConfig(variant, 1, 2, 5, 10, rules="wsop2023")
    start = CLOCK()
    for seed in seeds:
        rng = random.Random(seed)
        hand = new_hand(variant.value, players, rng, "wsop2023", config=config, stacks=[200] * players)
        dealer = SimulatedDealer(hand, rng)
        while (event := dealer.next_event()) is not None:
            dealer.apply(event)
        assert hand.is_over
    return CLOCK() - start


def pokerkit_hands(variant: Variant, seeds: range, players: int) -> float:
    config = GameConfig(variant, 1, 2, 5, 10, rules="wsop2023")
    start = CLOCK()
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
    return CLOCK() - start


def timed(run: Callable[[Variant, range, int], float], variant: Variant, seeds: range, players: int) -> float:
    gc.collect()  # the other side's garbage is not this side's to collect
    return run(variant, seeds, players)


def replay_pokerkit_hands(count: int) -> int:
    """PokerKit's random hands, written by PokerKit, replayed by ``studtable history replay``."""
    print(f"PokerKit random hands replayed by 'studtable history replay --rules wsop2023', {count} per variant:")
    bad_total = 0
    with tempfile.TemporaryDirectory() as tmp:
        for variant in Variant:
            hands = [pokerkit_random_hand(random.Random(f"replay-{variant.value}-{k}"), variant) for k in range(count)]
            paths = []
            for k, h in enumerate(hands):
                path = Path(tmp) / f"{variant.name}-{k}.phh"
                path.write_text(h.text)
                paths.append(str(path))
            t0 = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-m", "engine.cli", "history", "replay", "--rules", "wsop2023", *paths],
                capture_output=True, text=True, check=False,
            )
            lines = [json.loads(line) for line in proc.stdout.splitlines()]
            same = sum(
                1 for h, line in zip(hands, lines, strict=False) if line.get("finishing_stacks") == h.finishing_stacks
            )
            ran_out = [line for h, line in zip(hands, lines, strict=False) if h.reshuffled]
            ran_out_same = sum(
                1 for h, line in zip(hands, lines, strict=False)
                if h.reshuffled and line.get("finishing_stacks") == h.finishing_stacks
            )
            bad_total += count - same
            for line in lines:
                if "error" in line and count - same <= 3:
                    print(f"    {line['file']}: {line['error']}")
            print(
                f"  {variant.value:6} {same} of {count} files replayed to PokerKit's stacks; "
                f"{len(ran_out)} ran out of cards ({ran_out_same} of them replayed) "
                f"({time.perf_counter() - t0:.0f} s)"
            )
    print(f"  files that did not replay to PokerKit's stacks: {bad_total}")
    return 1 if bad_total else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=2000, help="hands per variant, played by both sides")
    ap.add_argument("--players", type=int, default=6)
    ap.add_argument("--chunk", type=int, default=100, help="hands per timed block (blocks alternate the sides)")
    ap.add_argument("--rounds", type=int, default=1, help="passes over the hands")
    ap.add_argument("--warmup", type=int, default=2000, help="engine hands played untimed first, per variant")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall", help="time blocks by wall clock or CPU time")
    ap.add_argument("--diff", type=int, default=0, help="differential hands per variant (0: skip)")
    ap.add_argument("--replay", type=int, default=0, help="PokerKit PHH files per variant replayed by the CLI")
    args = ap.parse_args()
    global CLOCK
    CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    status = 0
    if args.replay:
        status = replay_pokerkit_hands(args.replay)
    if not args.hands and not args.diff:
        return status
    chunk = max(1, min(args.chunk, args.hands or 1))
    if args.hands:
        print(
            f"engine vs PokerKit 0.7.7, {args.hands} complete random hands per variant (the same hands both sides), "
            f"{args.players} players; interleaved blocks of {chunk} hands, {args.rounds} pass(es), {args.clock} clock"
        )
        worst = float("inf")
        for variant in Variant:
            # Warm-up, untimed (see the module docstring).
            engine_hands(variant, range(10**6, 10**6 + args.warmup), args.players)
            pokerkit_hands(variant, range(10**6, 10**6 + chunk), args.players)
            ours_total = theirs_total = 0.0
            ratios: list[float] = []
            k = 0
            for _ in range(args.rounds):
                for first in range(0, args.hands, chunk):
                    seeds = range(first, min(first + chunk, args.hands))
                    if k % 2 == 0:
                        ours = timed(engine_hands, variant, seeds, args.players)
                        theirs = timed(pokerkit_hands, variant, seeds, args.players)
                    else:
                        theirs = timed(pokerkit_hands, variant, seeds, args.players)
                        ours = timed(engine_hands, variant, seeds, args.players)
                    k += 1
                    ours_total += ours
                    theirs_total += theirs
                    ratios.append(theirs / ours)
            played = args.hands * args.rounds
            median = statistics.median(ratios)
            worst = min(worst, median)
            print(
                f"  {variant.value:6} engine {played / ours_total:6.0f} hands/s   pokerkit {played / theirs_total:5.0f} hands/s   "
                f"ratio: median {median:5.1f}x   lowest block {min(ratios):5.1f}x   summed times {theirs_total / ours_total:5.1f}x"
                f"   ({len(ratios)} blocks)"
            )
        print(f"  worst variant: median ratio {worst:.1f}x (goal: at least 10x)")
    if args.diff:
        print(f"differential against PokerKit (wsop2023), {args.diff} hands per variant:")
        total_bad = 0
        total_out = 0
        for variant in Variant:
            bad = 0
            decisions = 0
            out_of_cards = reshuffled = 0
            t0 = time.perf_counter()
            for k in range(args.diff):
                # One hand in four: six to eight players who rarely fold, to run the deck out.
                result = run_differential(
                    random.Random(f"bench-{variant.value}-{k}"), variant, fold_rarely=k % 4 == 3
                )
                decisions += result.decisions
                if result.out_of_cards:
                    out_of_cards += 1
                    reshuffled += any(isinstance(e, DeckReshuffled) for e in result.events)
                if result.mismatches:
                    bad += 1
                    if bad <= 3:
                        print(f"    mismatch {variant.value} #{k}: {result.mismatches}")
            total_bad += bad
            total_out += out_of_cards
            print(
                f"  {variant.value:6} {args.diff} hands, {decisions} decisions compared, "
                f"{bad} mismatches; {out_of_cards} ran out of cards on seventh street "
                f"({reshuffled} reshuffled, {out_of_cards - reshuffled} with a common card) "
                f"({time.perf_counter() - t0:.0f} s)"
            )
        print(f"  total mismatches: {total_bad}; hands that ran out of cards: {total_out}")
        return 1 if total_bad or status else 0
    return status


if __name__ == "__main__":
    sys.exit(main())
