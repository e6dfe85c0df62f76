"""Board memos and the dealer's words about boards: who is high, who pairs.

A board's strength and its words depend on the ranks of its up cards only, in any
order (engine.ranking), and the same few thousand sets of ranks come round hand
after hand: remembered by the product of their rank primes (``Card.prime``,
``SeatState.up_key``), one table for stud and stud-8 (high boards), one for razz
(low boards).  An entry is the board's value and whether it shows a pair (RRoP
stud 4, stud 12, razz 5).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from engine.cards import RANK_PLURALS, Card
from engine.events import Announcement
from engine.hand.seats import SeatState
from engine.hand.state import HandState, _announcement
from engine.ranking import describe_board_high, describe_board_low, high_board_value, low_board_value
from engine.rules import Variant

if TYPE_CHECKING:
    from engine.hand.betting import BettingRound

_RAZZ = Variant.RAZZ

_BOARD_MEMO_SIZE = 50_000
_NO_BOARD: tuple[tuple[int, ...], bool] = ((), False)  # nothing identified: it never acts first
_BOARDS: tuple[dict[int, tuple[tuple[int, ...], bool]], ...] = ({1: _NO_BOARD}, {1: _NO_BOARD})
_BOARD_TEXTS: tuple[dict[int, str], ...] = ({}, {})
_high_hand_words: dict[tuple[bool, int, int], Announcement] = {}  # (razz, seat, rank key)


def _rank_key(cards: Iterable[Card]) -> int:
    """The product of the cards' rank primes (``Card.prime``; the unknown card counts 1)."""
    key = 1
    for c in cards:
        key *= c.prime
    return key


def _board_entry(key: int, up: Sequence[Card], razz: bool) -> tuple[tuple[int, ...], bool]:
    """``_BOARDS[razz][key]``, worked out from ``up``: the identified up cards whose rank
    primes multiply to ``key``."""
    memo = _BOARDS[razz]
    if len(memo) >= _BOARD_MEMO_SIZE:
        memo.clear()
        memo[1] = _NO_BOARD
    ranks = [c.rank for c in up]
    value = (low_board_value(up) if razz else high_board_value(up)) if up else ()
    entry = memo[key] = (value, len(set(ranks)) != len(ranks))
    return entry


def _board_words(up: Sequence[Card], razz: bool) -> str:
    """How the dealer names the board that acts first."""
    key = _rank_key(up)
    texts = _BOARD_TEXTS[razz]
    text = texts.get(key)
    if text is None:
        if razz:
            text = f"{describe_board_low(up).capitalize()} acts first"
        else:
            desc = describe_board_high(up)
            desc = desc.removesuffix(" high")  # "ace-king is high", not "ace-king high is high"
            text = f"{desc.capitalize()} is high"
        if len(texts) >= _BOARD_MEMO_SIZE:
            texts.clear()
        texts[key] = text
    return text


class BoardMixin(HandState):
    """The announcements made as a betting round opens on fourth street and after."""

    def _board_rank_key(self, s: SeatState) -> int:
        """``s.up_key``, with the common card when one plays (RRoP stud 15)."""
        key = s.up_key
        for c in self.common:
            key *= c.prime
        return key

    def _announce_board(self, opener: int, rnd: BettingRound, paired: list[int]) -> None:
        """``paired``: the live seats (indices) showing a pair among their up cards."""
        s = self.seats[opener]
        razz = self.config.variant is _RAZZ
        key = (razz, s.seat, self._board_rank_key(s))
        announcement = _high_hand_words.get(key)
        if announcement is None:
            text = _board_words(self.up_cards_for_ranking(s), razz)
            if len(_high_hand_words) >= _BOARD_MEMO_SIZE:
                _high_hand_words.clear()
            announcement = _high_hand_words[key] = _announcement("high_hand", f"Seat {s.seat}: {text}", (s.seat,))
        self.announcements.append(announcement)
        # RRoP stud 12: "the dealer announces ... all pairs": every pair as it appears on a board,
        # a second pair at a seat too; razz 5: each pair the first time it occurs, never face cards.
        announced = self.paired_announced
        for i in paired:
            other = self.seats[i]
            ranks = [c.rank for c, face_up in other.cards if face_up and c.known]
            pairs = {r for r in ranks if ranks.count(r) >= 2 and (i, r) not in announced}
            if self.config.variant is Variant.RAZZ:
                pairs -= {"J", "Q", "K"}
            if pairs:
                announced.update((i, r) for r in pairs)
                names = " and ".join(RANK_PLURALS[r] for r in sorted(pairs, key="23456789TJQKA".index))
                self.announcements.append(
                    _announcement("pair", f"Seat {other.seat} pairs {names}", (other.seat,))
                )
        if rnd.big_option:
            cfg = self.config
            self.announcements.append(
                Announcement(
                    "open_pair",
                    f"Open pair: any player may bet {cfg.small_bet} or {cfg.big_bet}",
                    (s.seat,),
                )
            )
