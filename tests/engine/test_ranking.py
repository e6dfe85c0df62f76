"""Hand ranking, proven against PokerKit 0.7.7 (and treys for high hands).

PokerKit is the oracle: ``StandardHighHand`` for stud high, ``RegularLowHand``
for razz (ace-to-five, straights and flushes ignored, pairs count) and
``EightOrBetterLowHand`` for the low half of stud-8.  An evaluator is right
when sorting hands by our value puts PokerKit's hands in the same order with
the same ties, so the oracle checks are written as "sort, then compare
neighbours", which checks the whole order in one pass.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Sequence
from typing import Any

import pokerkit
import pytest
import treys
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.cards import DECK, RANKS, Card, CardError, parse_cards
from engine.ranking import (
    FLUSH,
    FOUR_OF_A_KIND,
    FULL_HOUSE,
    HAND_CLASSES,
    HIGH_CARD,
    LOW8_WORST,
    PAIR,
    STRAIGHT,
    STRAIGHT_FLUSH,
    THREE_OF_A_KIND,
    TWO_PAIR,
    describe_board_high,
    describe_board_low,
    describe_high,
    describe_low,
    high_board_value,
    high_category,
    high_category_index,
    high_value,
    low8_value,
    low_board_value,
    low_category,
    low_value,
)


def cards(text: str) -> tuple[Card, ...]:
    return parse_cards(text)


def pk_text(hand: Sequence[Card]) -> str:
    return "".join(str(c) for c in hand)


def random_hands(seed: int, count: int, sizes: Sequence[int] = (5, 6, 7)) -> list[tuple[Card, ...]]:
    rng = random.Random(seed)
    return [tuple(rng.sample(DECK, rng.choice(sizes))) for _ in range(count)]


def paired_hands(seed: int, count: int) -> list[tuple[Card, ...]]:
    """Hands drawn from few ranks, so that pairs, trips and quads are common."""
    rng = random.Random(seed)
    hands = []
    for _ in range(count):
        ranks = rng.sample(RANKS, rng.choice((2, 3, 4, 5)))
        pool = [c for c in DECK if c.rank in ranks]
        n = min(len(pool), rng.choice((5, 6, 7)))
        if n >= 5:
            hands.append(tuple(rng.sample(pool, n)))
    return hands


def assert_same_order(
    hands: Sequence[Sequence[Card]],
    ours: Callable[[Sequence[Card]], Any],
    oracle: Callable[[Sequence[Card]], Any],
) -> None:
    """Our values and the oracle's must order the hands identically, ties included."""
    scored = sorted(((ours(h), oracle(h), h) for h in hands), key=lambda t: t[0])
    for (v0, o0, h0), (v1, o1, h1) in itertools.pairwise(scored):
        if v0 == v1:
            assert o0 == o1, f"we tie {pk_text(h0)} and {pk_text(h1)}; the oracle does not"
        else:
            assert o0 < o1, f"we rank {pk_text(h0)} below {pk_text(h1)}; the oracle does not"


def pk_high(hand: Sequence[Card]) -> pokerkit.Hand:
    return pokerkit.StandardHighHand.from_game(pk_text(hand))


def pk_low(hand: Sequence[Card]) -> pokerkit.Hand:
    return pokerkit.RegularLowHand.from_game(pk_text(hand))


class _Unqualified:
    """Sorts below every 8-or-better low, like our None."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Unqualified)

    def __lt__(self, other: object) -> bool:
        return not isinstance(other, _Unqualified)

    def __hash__(self) -> int:
        return 0


def pk_low8(hand: Sequence[Card]) -> Any:
    found = pokerkit.EightOrBetterLowHand.from_game_or_none(pk_text(hand))
    return _Unqualified() if found is None else found


def low8_or_minus_one(hand: Sequence[Card]) -> int:
    value = low8_value(hand)
    return -1 if value is None else value


# --- against the oracles ---------------------------------------------------------


def test_high_matches_pokerkit_on_random_hands() -> None:
    hands = random_hands(1, 1500) + paired_hands(2, 400)
    assert_same_order(hands, high_value, pk_high)


def test_high_matches_pokerkit_on_flush_heavy_hands() -> None:
    rng = random.Random(3)
    hands = []
    for _ in range(400):
        suits = rng.sample("cdhs", 2)
        pool = [c for c in DECK if c.suit in suits]
        hands.append(tuple(rng.sample(pool, rng.choice((5, 6, 7)))))
    assert_same_order(hands, high_value, pk_high)


def test_high_matches_treys_on_seven_card_hands() -> None:
    evaluator = treys.Evaluator()
    hands = random_hands(4, 6000, sizes=(7,))

    def treys_strength(hand: Sequence[Card]) -> int:
        ints = [treys.Card.new(str(c)) for c in hand]
        return -int(evaluator.evaluate(ints[:2], ints[2:]))  # treys: smaller is better

    assert_same_order(hands, high_value, treys_strength)


def test_low_matches_pokerkit_razz() -> None:
    hands = random_hands(5, 1200) + paired_hands(6, 700)
    assert_same_order(hands, low_value, pk_low)


def test_low8_matches_pokerkit_eight_or_better() -> None:
    hands = random_hands(7, 1000) + paired_hands(8, 300)
    rng = random.Random(9)
    small = [c for c in DECK if c.rank in "A2345678"]
    hands += [tuple(rng.sample(small, rng.choice((5, 6, 7)))) for _ in range(500)]
    assert_same_order(hands, low8_or_minus_one, pk_low8)


def rank_multisets(n: int) -> list[tuple[Card, ...]]:
    """One hand for every multiset of n ranks, suited so that no flush is possible.

    Ranks come sorted, so the copies of one rank get consecutive, hence distinct,
    suits, and seven cards spread over four suits hold at most two of each.
    """
    hands = []
    for ranks in itertools.combinations_with_replacement(range(13), n):
        if max(ranks.count(r) for r in ranks) <= 4:
            hands.append(tuple(Card.parse(RANKS[r] + "cdhs"[j % 4]) for j, r in enumerate(ranks)))
    return hands


ALL_MULTISETS = {n: rank_multisets(n) for n in (5, 6, 7)}


def test_every_rank_multiset_matches_treys() -> None:
    """Exhaustive for non-flush hands: all 6175 + 18395 + 49205 rank multisets."""
    evaluator = treys.Evaluator()
    ints = {c: treys.Card.new(str(c)) for c in DECK}
    pairs = []
    for n in (5, 6, 7):
        for hand in ALL_MULTISETS[n]:
            t = [ints[c] for c in hand]
            pairs.append((high_value(hand), -evaluator.evaluate(t[:2], t[2:])))
    assert len(pairs) == 6175 + 18395 + 49205
    pairs.sort()
    for (v0, t0), (v1, t1) in itertools.pairwise(pairs):
        assert (v0 == v1) == (t0 == t1) and t0 <= t1


def test_every_flush_matches_treys() -> None:
    """Exhaustive for flushes: every set of 5 to 7 ranks in one suit, topped up off-suit."""
    evaluator = treys.Evaluator()
    rng = random.Random(11)
    pairs = []
    for k in (5, 6, 7):
        for ranks in itertools.combinations(RANKS, k):
            hand = [Card.parse(r + "h") for r in ranks]
            hand += rng.sample([c for c in DECK if c.suit != "h"], rng.randint(0, 7 - k))
            t = [treys.Card.new(str(c)) for c in hand]
            pairs.append((high_value(hand), -evaluator.evaluate(t[:2], t[2:])))
            assert high_category(pairs[-1][0]) in ("flush", "straight flush")
    pairs.sort()
    for (v0, t0), (v1, t1) in itertools.pairwise(pairs):
        assert (v0 == v1) == (t0 == t1) and t0 <= t1


def test_every_five_card_rank_multiset_matches_pokerkit_lows() -> None:
    assert_same_order(ALL_MULTISETS[5], low_value, pk_low)
    assert_same_order(ALL_MULTISETS[5], low8_or_minus_one, pk_low8)


def test_every_six_and_seven_card_low_is_its_best_five() -> None:
    """Best of n cards = best of the best of each (n-1)-card subset, for every rank multiset.

    With five-card lows proven against PokerKit above, this makes the razz and
    8-or-better lows exhaustively right for six and seven cards too.
    """
    for n in (6, 7):
        for hand in ALL_MULTISETS[n]:
            subsets = [hand[:i] + hand[i + 1 :] for i in range(n)]
            assert low_value(hand) == max(low_value(s) for s in subsets), hand
            best8 = [v for v in map(low8_value, subsets) if v is not None]
            assert low8_value(hand) == (max(best8) if best8 else None), hand


hand_strategy = st.integers(5, 7).flatmap(
    lambda n: st.lists(st.sampled_from(DECK), min_size=n, max_size=n, unique=True)
)


@settings(max_examples=150, deadline=None)
@given(hand_strategy, hand_strategy)
def test_high_pairwise_agrees_with_pokerkit(a: list[Card], b: list[Card]) -> None:
    assert (high_value(a) > high_value(b)) == (pk_high(a) > pk_high(b))
    assert (high_value(a) == high_value(b)) == (pk_high(a) == pk_high(b))


@settings(max_examples=150, deadline=None)
@given(hand_strategy, hand_strategy)
def test_low_pairwise_agrees_with_pokerkit(a: list[Card], b: list[Card]) -> None:
    assert (low_value(a) > low_value(b)) == (pk_low(a) > pk_low(b))
    assert (low_value(a) == low_value(b)) == (pk_low(a) == pk_low(b))
    assert (low8_value(a) is None) == (pokerkit.EightOrBetterLowHand.from_game_or_none(pk_text(a)) is None)


@settings(max_examples=100, deadline=None)
@given(hand_strategy, st.randoms(use_true_random=False))
def test_order_of_cards_does_not_matter(hand: list[Card], rnd: random.Random) -> None:
    shuffled = list(hand)
    rnd.shuffle(shuffled)
    assert high_value(shuffled) == high_value(hand)
    assert low_value(shuffled) == low_value(hand)
    assert low8_value(shuffled) == low8_value(hand)


@settings(max_examples=100, deadline=None)
@given(hand_strategy)
def test_category_agrees_with_pokerkit_label(hand: list[Card]) -> None:
    label = pk_high(hand).entry.label.value.lower().replace("one pair", "pair")
    assert high_category(high_value(hand)) == label


# --- hand-written high cases ---------------------------------------------------


def test_wheel_is_a_five_high_straight() -> None:
    wheel = high_value(cards("Ah 2c 3d 4s 5h Kc Kd"))
    six_high = high_value(cards("2c 3d 4s 5h 6c"))
    trips = high_value(cards("Ac Ad Ah 2s 3c"))
    assert high_category(wheel) == "straight"
    assert trips < wheel < six_high
    assert describe_high(cards("Ah 2c 3d 4s 5h Kc Kd")) == "five-high straight"


def test_steel_wheel_is_a_five_high_straight_flush() -> None:
    steel = high_value(cards("As 2s 3s 4s 5s 6d Ad"))
    assert high_category(steel) == "straight flush"
    assert high_value(cards("Kc Kd Kh Ks Ac")) < steel < high_value(cards("2h 3h 4h 5h 6h"))
    assert describe_high(cards("As 2s 3s 4s 5s 6d Ad")) == "five-high straight flush"


def test_ace_high_straight_and_royal_flush() -> None:
    assert describe_high(cards("Ah Kd Qc Js Tc 2d 2c")) == "ace-high straight"
    assert describe_high(cards("Ah Kh Qh Jh Th 9h 8h")) == "royal flush"
    assert high_value(cards("Ah Kh Qh Jh Th")) > high_value(cards("Kh Qh Jh Th 9h"))


def test_no_wrap_around_straight() -> None:
    assert high_category(high_value(cards("Qc Kd Ah 2s 3c"))) == "high card"


def test_best_five_of_seven_picks_the_flush_over_a_straight() -> None:
    hand = cards("4h 5h 6h 7h Jh 8c 9d")
    assert high_category(high_value(hand)) == "flush"
    assert describe_high(hand) == "jack-high flush"


def test_straight_flush_inside_a_bigger_flush() -> None:
    hand = cards("2d 3d 4d 5d 6d Kd Ad")
    assert describe_high(hand) == "six-high straight flush"


def test_full_house_from_two_trips() -> None:
    hand = cards("3c 3d 3h 9s 9c 9d 2c")
    assert describe_high(hand) == "full house, nines full of treys"
    assert high_value(hand) == high_value(cards("9s 9c 9d 3c 3d"))


def test_kickers_decide_and_the_sixth_and_seventh_cards_do_not() -> None:
    a = cards("Ac Ad Kh Qs 9c 3d 2h")
    b = cards("As Ah Kd Qc 9d 4s 3s")
    c = cards("As Ah Kd Qc 8d 7s 6s")
    assert high_value(a) == high_value(b) > high_value(c)


def test_category_numbers_and_names() -> None:
    examples = {
        HIGH_CARD: "Ac Kd 9h 7s 3c",
        PAIR: "Kc Kd 9h 7s 3c",
        TWO_PAIR: "Ac Ad 5h 5s 3c",
        THREE_OF_A_KIND: "7c 7d 7h As 3c",
        STRAIGHT: "9c Td Jh Qs Kc",
        FLUSH: "2c 5c 9c Jc Kc",
        FULL_HOUSE: "3c 3d 3h 9s 9c",
        FOUR_OF_A_KIND: "Kc Kd Kh Ks 3c",
        STRAIGHT_FLUSH: "9c Tc Jc Qc Kc",
    }
    values = []
    for category, text in examples.items():
        value = high_value(cards(text))
        assert high_category_index(value) == category
        assert high_category(value) == HAND_CLASSES[category]
        values.append(value)
    assert values == sorted(values)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Ac Kd 9h 7s 3c 2d 4h", "ace-king high"),
        ("Kc Kd 9h 7s 3c", "pair of kings"),
        ("Ac Ad 5h 5s 3c 3d Kh", "two pair, aces and fives"),
        ("7c 7d 7h As 3c", "trip sevens"),
        ("Kc 2c 9c 7c 3c", "king-high flush"),
        ("3c 3d 3h 9s 9c", "full house, treys full of nines"),
        ("6c 6d 6h 6s Ac", "four sixes"),
        ("9c Td Jh Qs Kc", "king-high straight"),
        ("9s Ts Js Qs 8s", "queen-high straight flush"),
        ("2c 2d 5h 7s 9c", "pair of deuces"),
    ],
)
def test_describe_high(text: str, words: str) -> None:
    assert describe_high(cards(text)) == words


# --- hand-written low cases ----------------------------------------------------


def test_razz_ignores_straights_and_flushes_and_aces_are_low() -> None:
    wheel = low_value(cards("Ac 2c 3c 4c 5c"))
    assert wheel >= max(low_value(h) for h in random_hands(10, 300))
    assert wheel > low_value(cards("Ac 2c 3c 4c 6c"))
    assert low_value(cards("Kc 2d 3h 4s 5c")) < low_value(cards("Ac 2d 3h 4s 6c"))
    assert low_category(wheel) == "high card"


def test_razz_uses_the_five_lowest_distinct_ranks() -> None:
    assert low_value(cards("Kc Kd 7h 5s 4c 2d Ah")) == low_value(cards("7h 5s 4c 2d Ah"))


def test_razz_with_pairs_counts_them_against_the_hand() -> None:
    paired = low_value(cards("Ac Ad 2h 3s 4c"))
    king_low = low_value(cards("Kc Qd Jh Ts 9c"))
    assert paired < king_low
    assert low_category(paired) == "pair"
    # Four ranks in seven cards: the lowest pair plays, with the other three ranks.
    assert low_value(cards("2c 2d 3h 3s 4c 4d 5h")) == low_value(cards("2c 2d 3h 4c 5h"))
    # Three ranks: two pair beats trips, and the two lowest pairs play.
    assert low_value(cards("Ac Ad 2h 2s 3c 3d 3h")) == low_value(cards("Ac Ad 2h 2s 3c"))
    assert low_value(cards("Ac Ad Ah 2s 3c")) < low_value(cards("Kc Kd Qh Qs Jc"))
    # Two ranks: the lowest full house possible.
    assert low_value(cards("Ac Ad Ah As 2c 2d 2h")) == low_value(cards("Ac Ad Ah 2c 2d"))
    assert low_category(low_value(cards("Ac Ad Ah As 2c"))) == "four of a kind"


def test_low8_qualifier() -> None:
    assert low8_value(cards("9c 7d 6h 5s 4c")) is None
    assert low8_value(cards("Kc Kd Qh 8s 7c 6d 5h")) is None
    assert low8_value(cards("Ac Ad 2h 3s 4c 4d 7h")) is not None
    assert low8_value(cards("Ac Ad 2h 2s 3c 3d 4h")) is None  # only four ranks: no qualifier
    eight = low8_value(cards("8c 7d 6h 5s 4c"))
    assert eight == LOW8_WORST
    wheel = low8_value(cards("Ac 2c 3c 4c 5c Kd Kh"))
    assert wheel is not None and wheel > eight
    # The qualifying low is the razz low of the same cards: one scale for both.
    hand = cards("Ac 3d 6h 8s Kc 2d Qh")
    assert low8_value(hand) == low_value(hand)


@pytest.mark.parametrize(
    ("text", "short", "full"),
    [
        ("7c 5d 4h 2s Ac Kd Kh", "seven-five low", "seven-five-four-two-ace"),
        ("8c 6d 5h 4s 2c", "eight-six low", "eight-six-five-four-two"),
        ("Ac 2d 3h 4s 5c", "five-four low", "five-four-three-two-ace"),
        ("Ac Ad 2h 3s 4c", "pair of aces", "pair of aces"),
        ("2c 2d 3h 3s 4c", "two pair, treys and deuces", "two pair, treys and deuces"),
    ],
)
def test_describe_low(text: str, short: str, full: str) -> None:
    assert describe_low(cards(text)) == short
    assert describe_low(cards(text), full=True) == full


# --- boards ------------------------------------------------------------------


def reference_board_key(up: Sequence[Card], ace_low: bool) -> tuple[Any, ...]:
    """For up to five cards, comparing count patterns lexicographically orders the categories."""
    values = [(1 if ace_low and c.rank == "A" else RANKS.index(c.rank) + 2) for c in up]
    groups = sorted(((values.count(v), v) for v in set(values)), reverse=True)
    pattern = tuple(n for n, _ in groups)
    ranks = tuple(v for _, v in groups)
    if ace_low:
        return tuple(-n for n in pattern), tuple(-v for v in ranks)
    return pattern, ranks


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5])
def test_board_values_match_a_reference(size: int) -> None:
    boards = random_hands(20 + size, 600, sizes=(size,))
    rng = random.Random(size)
    for _ in range(300):
        ranks = rng.sample(RANKS, 3)
        pool = [c for c in DECK if c.rank in ranks]
        boards.append(tuple(rng.sample(pool, size)))
    assert_same_order(boards, high_board_value, lambda b: reference_board_key(b, ace_low=False))
    assert_same_order(boards, low_board_value, lambda b: reference_board_key(b, ace_low=True))


def test_five_card_boards_agree_with_pokerkit_without_straights_or_flushes() -> None:
    boards = [b for b in random_hands(30, 1500, sizes=(5,)) + paired_hands(31, 300) if len(b) == 5]
    plain = [b for b in boards if pk_high(b).entry.label.value not in ("Straight", "Flush", "Straight flush")]
    assert_same_order(plain, high_board_value, pk_high)
    assert_same_order(boards, low_board_value, pk_low)


def test_high_board_pairs_beat_high_cards_and_suits_never_matter() -> None:
    assert high_board_value(cards("2c 2d")) > high_board_value(cards("Ac Kd"))
    assert high_board_value(cards("Kc Kd 5h")) > high_board_value(cards("Qc Qd Ah"))
    assert high_board_value(cards("Kc Kd 5h")) > high_board_value(cards("Kh Ks 4h"))
    assert high_board_value(cards("5c 5d 4h 4s")) > high_board_value(cards("Ac Ad Kh Qs"))
    assert high_board_value(cards("3c 3d 3h 2s")) > high_board_value(cards("Ac Ad Kh Ks"))
    assert high_board_value(cards("2c 2d 2h 2s")) > high_board_value(cards("Ac Ad Ah Ks"))
    # No straights or flushes on a board: a four-flush is just high cards.
    assert high_board_value(cards("9c Tc Jc Qc")) < high_board_value(cards("2d 2h 3s 4c"))
    assert high_board_value(cards("As Kd")) == high_board_value(cards("Ac Kh"))
    assert high_board_value(cards("Ac Kd 9h")) > high_board_value(cards("Ac Kd 8h"))


def test_low_board_lowest_acts_first_and_pairs_are_bad() -> None:
    assert low_board_value(cards("Ac")) > low_board_value(cards("2c"))
    assert low_board_value(cards("7c 4d")) > low_board_value(cards("7h 5d"))
    assert low_board_value(cards("Kc Qd")) > low_board_value(cards("2c 2d"))
    assert low_board_value(cards("8c 6d 4h 2s")) > low_board_value(cards("8h 6s 5d Ac"))
    assert low_board_value(cards("As 2d")) == low_board_value(cards("Ac 2h"))
    # A razz board never makes a straight or a flush.
    assert low_board_value(cards("Ac 2c 3c 4c")) > low_board_value(cards("Ad 2d 3d 5h"))


def test_boards_of_up_to_seven_cards() -> None:
    up = cards("Ac Ad Kc Kd Qc Qd 2s")
    assert high_board_value(up) > high_board_value(cards("Ah As Kh Ks Qh Jd 2c"))
    assert describe_board_high(up) == "two pair, aces and kings"
    assert describe_board_high(cards("9c 9d 9h 4s 4c")) == "full house, nines full of fours"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Kc Kd", "pair of kings"),
        ("Ac Kd 5h", "ace-king high"),
        ("Ac", "ace high"),
        ("5c 5d Ah Ad", "two pair, aces and fives"),
        ("7c 7d 7h", "trip sevens"),
        ("7c 7d 7h 7s", "four sevens"),
        ("Jc 2d 5h 9s", "jack-nine high"),
    ],
)
def test_describe_board_high(text: str, words: str) -> None:
    assert describe_board_high(cards(text)) == words


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("7c 4d", "seven-four low"),
        ("4d 7c 2h", "seven-four low"),
        ("Ac", "ace low"),
        ("Ac 2d 3h", "three-two low"),
        ("9c 9d", "pair of nines"),
        ("Kc 9d 9h", "pair of nines"),
    ],
)
def test_describe_board_low(text: str, words: str) -> None:
    assert describe_board_low(cards(text)) == words


# --- refusals ----------------------------------------------------------------


@pytest.mark.parametrize("fn", [high_value, low_value, low8_value, describe_high, describe_low])
def test_hands_need_five_to_seven_distinct_known_cards(fn: Callable[[Sequence[Card]], Any]) -> None:
    with pytest.raises(ValueError, match="5 to 7"):
        fn(cards("Ac Kd Qh Js"))
    with pytest.raises(ValueError, match="5 to 7"):
        fn(cards("Ac Kd Qh Js Tc 9d 8h 7s"))
    with pytest.raises(CardError, match="unknown card"):
        fn(cards("Ac Kd Qh Js ??"))
    with pytest.raises(CardError, match="twice"):
        fn(cards("Ac Kd Qh Js Ac"))
    with pytest.raises(TypeError):
        fn(["Ac", "Kd", "Qh", "Js", "Tc"])  # type: ignore[list-item]


@pytest.mark.parametrize("fn", [high_board_value, low_board_value, describe_board_high, describe_board_low])
def test_boards_need_one_to_seven_known_cards(fn: Callable[[Sequence[Card]], Any]) -> None:
    with pytest.raises(ValueError, match="1 to 7"):
        fn(())
    with pytest.raises(CardError, match="unknown card"):
        fn(cards("Ac ??"))


@settings(max_examples=100, deadline=None)
@given(hand_strategy, st.data())
def test_cards_built_directly_rank_like_the_deck_cards(hand: list[Card], data: st.DataObject) -> None:
    """The fast path knows the deck's own Card objects; equal copies take the slow path."""
    fresh = [Card(c.rank, c.suit) if data.draw(st.booleans()) else c for c in hand]
    assert high_value(fresh) == high_value(hand)
    assert low_value(fresh) == low_value(hand)
    assert low8_value(fresh) == low8_value(hand)
    with pytest.raises(CardError, match="twice"):
        high_value([*fresh[:4], Card(fresh[0].rank, fresh[0].suit)])
