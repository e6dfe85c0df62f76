"""Game configuration and house-rule profiles.

Robert's Rules of Poker (``rrop``) is the default.  Where a cardroom or a
tournament plays differently, the difference is a named flag of a named
profile, never a silent deviation.  ``wsop2023`` is what PokerKit 0.7.7
implements (2023 WSOP rules), which lets the engine be diffed against it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from enum import StrEnum
from typing import Any


class Variant(StrEnum):
    """The three games; values are the PHH variant codes."""

    STUD = "F7S"
    STUD8 = "F7S/8"
    RAZZ = "FR"

    @property
    def long_name(self) -> str:
        return {"F7S": "Seven-card stud", "F7S/8": "Seven-card stud high-low 8-or-better", "FR": "Razz"}[
            self.value
        ]


class ConfigError(ValueError):
    """A game configuration that cannot be played; the message names the field."""


@dataclass(frozen=True)
class HouseRules:
    """Every point on which the supported rule books differ.

    Each flag names the clause it departs from; ``docs/rules.md`` maps them.
    """

    name: str
    # RRoP stud 4 (001): open pair on 4th street lets any player bet the big bet (stud high only).
    open_pair_big_bet: bool = True
    # RRoP 3.5: unlimited raising heads-up, unless the round was capped first.
    unlimited_heads_up: bool = True
    # RRoP 3.5: an all-in of half a bet or more is a full bet and reopens; under half may be completed.
    half_bet_all_in_reopens: bool = True
    # RRoP 3.7(b),(c), stud-8 9-10: odd chips by card and suit; False: to the first winner by position.
    odd_chip_by_suit: bool = True
    # RRoP stud 4 (000): after a short bring-in, the others enter for at least the normal bring-in.
    short_bring_in_calls_full: bool = True
    # RRoP stud 8 (001): low card all in for the ante: the next player may fold, bring in, or complete.
    bring_in_passes_with_fold: bool = True
    # RRoP 3.7(d): every side pot split on its own; False merges pots with the same contenders.
    separate_pots: bool = True
    # False: antes are dead money in the main pot, open to every live hand (PokerKit, no ante trimming).
    antes_in_side_pots: bool = True
    # RRoP stud-8 2: a low half is paid only if a contender in that pot has a qualifying low.
    low_half_needs_contender: bool = True
    # RRoP stud 15 reshuffles the burns (and removed cards) only; PokerKit also reuses folded hands.
    reshuffle_includes_muck: bool = False
    # Tournament rule (RRoP stud 5): a down card dealt face up on the deal is a misdeal.
    exposed_downcard_misdeal: bool = False
    # RRoP stud 15: "The player who is now high using the common card initiates the action";
    # False: the up cards alone decide who opens the last round (PokerKit 0.7.7).
    common_card_opens: bool = True

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


RROP = HouseRules(name="rrop")
WSOP2023 = HouseRules(
    name="wsop2023",
    open_pair_big_bet=False,
    unlimited_heads_up=False,
    half_bet_all_in_reopens=False,
    odd_chip_by_suit=False,
    short_bring_in_calls_full=False,
    bring_in_passes_with_fold=False,
    separate_pots=False,
    antes_in_side_pots=False,
    low_half_needs_contender=False,
    exposed_downcard_misdeal=True,
    reshuffle_includes_muck=True,
    common_card_opens=False,
)
PROFILES: dict[str, HouseRules] = {"rrop": RROP, "wsop2023": WSOP2023}


def house_rules(name: str | HouseRules) -> HouseRules:
    if isinstance(name, HouseRules):
        return name
    try:
        return PROFILES[name]
    except KeyError:
        raise ConfigError(f"unknown house-rule profile {name!r}; known: {', '.join(PROFILES)}") from None


@dataclass(frozen=True)
class GameConfig:
    """The stakes and rules of one table (RRoP 3.5 for the raise cap)."""

    variant: Variant
    ante: int
    bring_in: int
    small_bet: int
    big_bet: int
    # RRoP 3.5(a): a bet and three raises in a game of three or more betting rounds.
    max_raises: int = 3
    rules: HouseRules = field(default=RROP)
    # RRoP 3.1: a full buy-in is at least ten times the maximum bet unless designated otherwise.
    min_buy_in: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.variant, Variant):
            object.__setattr__(self, "variant", _variant(self.variant))
        if isinstance(self.rules, str):
            object.__setattr__(self, "rules", house_rules(self.rules))
        for name in ("ante", "bring_in", "small_bet", "big_bet", "max_raises"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ConfigError(f"{name} must be a whole number of chips, 0 or more; got {value!r}")
        if self.small_bet <= 0:
            raise ConfigError("small_bet must be more than 0")
        if self.big_bet < self.small_bet:
            raise ConfigError(f"big_bet ({self.big_bet}) must be at least small_bet ({self.small_bet})")
        if self.bring_in > self.small_bet:
            raise ConfigError(f"bring_in ({self.bring_in}) cannot exceed small_bet ({self.small_bet})")
        if self.bring_in <= 0:
            raise ConfigError("bring_in must be more than 0 (stud is played with a forced bring-in)")
        if self.min_buy_in is not None and self.min_buy_in <= 0:
            raise ConfigError("min_buy_in must be more than 0 when given")

    @property
    def bet_cap(self) -> int:
        """Wagers allowed in a round: the bet (or completion) plus the raises."""
        return self.max_raises + 1

    @property
    def full_buy_in(self) -> int:
        # RRoP 3.1: at least ten times the maximum bet.
        return self.min_buy_in if self.min_buy_in is not None else 10 * self.big_bet

    def to_json(self) -> dict[str, Any]:
        return {
            "variant": self.variant.value,
            "ante": self.ante,
            "bring_in": self.bring_in,
            "small_bet": self.small_bet,
            "big_bet": self.big_bet,
            "max_raises": self.max_raises,
            "rules": self.rules.to_json(),
            "min_buy_in": self.min_buy_in,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GameConfig:
        if not isinstance(data, dict):
            raise ConfigError("a game configuration is a JSON object")
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ConfigError(f"unknown game configuration field(s): {', '.join(sorted(unknown))}")
        missing = {"variant", "ante", "bring_in", "small_bet", "big_bet"} - set(data)
        if missing:
            raise ConfigError(f"game configuration is missing: {', '.join(sorted(missing))}")
        rules = data.get("rules", "rrop")
        if isinstance(rules, dict):
            base = house_rules(rules.get("name", "rrop"))
            try:
                rules = replace(
                    base, **{k: v for k, v in rules.items() if k != "name"}, name=rules.get("name", base.name)
                )
            except TypeError as exc:
                raise ConfigError(f"bad house rules: {exc}") from None
        else:
            rules = house_rules(rules)
        return cls(
            variant=_variant(data["variant"]),
            ante=data["ante"],
            bring_in=data["bring_in"],
            small_bet=data["small_bet"],
            big_bet=data["big_bet"],
            max_raises=data.get("max_raises", 3),
            rules=rules,
            min_buy_in=data.get("min_buy_in"),
        )


def _variant(value: object) -> Variant:
    if isinstance(value, Variant):
        return value
    aliases = {"stud": Variant.STUD, "razz": Variant.RAZZ, "stud8": Variant.STUD8, "stud-8": Variant.STUD8}
    if isinstance(value, str):
        if value in aliases:
            return aliases[value]
        try:
            return Variant(value)
        except ValueError:
            pass
    raise ConfigError(f"unknown variant {value!r}; use F7S (stud), F7S/8 (stud high-low) or FR (razz)")
