"""Hand-evaluator speed, side by side with treys and PokerKit on the same hands.

Run: ``python bench/bench_ranking.py [--hands N] [--seed S] [--repeat R]``

Every evaluator sees the same random seven-card hands, each in its own
native card form, converted before any clock starts (treys takes ints split
into hand and board, PokerKit its own ``Card`` objects, ours
``engine.cards.Card``).  Timing runs in rounds, every evaluator once per
round, and each figure is an evaluator's best round: a busy neighbour on a
shared machine then slows a round of all of them rather than skewing one
ratio.  PokerKit is about a hundred times slower than the rest, so it runs on
a slice of the hands, and ours is timed again on that slice for its ratios.
The issue's goal is ``ours / treys >= 2`` for seven-card high hands.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import random
import sys
import time
from collections.abc import Callable, Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.cards import DECK

Runner = Callable[[], None]


def over(fn: Callable[[Any], object], hands: Sequence[Any]) -> Runner:
    def run() -> None:
        for hand in hands:
            fn(hand)

    return run


def over_pairs(fn: Callable[[Any, Any], object], pairs: Sequence[tuple[Any, Any]]) -> Runner:
    """For a two-argument evaluator, called without a wrapper of ours in between."""

    def run() -> None:
        for a, b in pairs:
            fn(a, b)

    return run


def race(runners: dict[str, tuple[Runner, int]], rounds: int) -> dict[str, float]:
    """Evaluations per second of each runner (which does ``count`` evaluations), best round."""
    best = dict.fromkeys(runners, float("inf"))
    for _ in range(rounds):
        for name, (run, _count) in runners.items():
            start = time.perf_counter()
            run()
            best[name] = min(best[name], time.perf_counter() - start)
    return {name: count / best[name] for name, (_run, count) in runners.items()}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--hands", type=int, default=50_000, help="random 7-card hands (default 50000)")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--repeat", type=int, default=5, help="timed rounds; each evaluator's best counts")
    parser.add_argument("--pokerkit-hands", type=int, default=1_000, help="hands for the slow PokerKit peers")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    ranking = importlib.import_module("engine.ranking")
    import_ms = (time.perf_counter() - start) * 1000

    import pokerkit
    import treys

    rng = random.Random(args.seed)
    hands = [tuple(rng.sample(DECK, 7)) for _ in range(args.hands)]
    treys_ints = [[treys.Card.new(str(c)) for c in h] for h in hands]
    treys_hands = [(h[:2], h[2:]) for h in treys_ints]
    evaluate = treys.Evaluator().evaluate
    few = hands[: args.pokerkit_hands]
    pk_hands = [tuple(pokerkit.Card.parse("".join(map(str, h)))) for h in few]

    # Not a test, a sanity check: a fast evaluator that disagrees is worthless.
    pairs = sorted(
        (ranking.high_value(h), -evaluate(a, b)) for h, (a, b) in zip(hands, treys_hands, strict=True)
    )
    agree = all((v0 == v1) == (t0 == t1) and t0 <= t1 for (v0, t0), (v1, t1) in itertools.pairwise(pairs))

    n, m = len(hands), len(few)
    main_rates = race(
        {
            "high": (over(ranking.high_value, hands), n),
            "treys": (over_pairs(evaluate, treys_hands), n),
            "low": (over(ranking.low_value, hands), n),
            "low8": (over(ranking.low8_value, hands), n),
        },
        args.repeat,
    )
    pk_rates = race(
        {
            "pk_high": (over(pokerkit.StandardHighHand.from_game, pk_hands), m),
            "high": (over(ranking.high_value, few), m),
            "pk_low": (over(pokerkit.RegularLowHand.from_game, pk_hands), m),
            "low": (over(ranking.low_value, few), m),
            "pk_low8": (over(pokerkit.EightOrBetterLowHand.from_game_or_none, pk_hands), m),
            "low8": (over(ranking.low8_value, few), m),
        },
        max(1, args.repeat // 2),
    )

    print(
        f"python {sys.version.split()[0]}, treys {version('treys')}, pokerkit {version('pokerkit')}; "
        f"{n} random 7-card hands, seed {args.seed}, best of {args.repeat} rounds"
    )
    print(f"import engine.ranking (tables built): {import_ms:.1f} ms")
    print(f"ours and treys order all {n} hands identically: {'yes' if agree else 'NO'}")
    print()
    print(f"{'7-card evaluator':34} {'evals/s':>12}")
    print(f"{'ours   high_value':34} {main_rates['high']:12,.0f}")
    print(f"{'treys  Evaluator.evaluate':34} {main_rates['treys']:12,.0f}")
    print(f"{'ours   low_value (razz)':34} {main_rates['low']:12,.0f}")
    print(f"{'ours   low8_value (stud-8 low)':34} {main_rates['low8']:12,.0f}")
    print()
    print(f"high: ours / treys = {main_rates['high'] / main_rates['treys']:.2f}x   (goal >= 2x)")
    print()
    print(f"against PokerKit on the first {m} of those hands:")
    for label, ours, theirs in (
        ("StandardHighHand.from_game", "high", "pk_high"),
        ("RegularLowHand.from_game", "low", "pk_low"),
        ("EightOrBetterLowHand.from_game_or_none", "low8", "pk_low8"),
    ):
        p, o = pk_rates[theirs], pk_rates[ours]
        print(f"  {label:40} {p:9,.0f}/s   ours {o:9,.0f}/s   {o / p:6.1f}x")
    return 0 if agree else 1


if __name__ == "__main__":
    raise SystemExit(main())
