"""PHH: the 36 real WSOP hands, export round trips through PokerKit, and the CLI contract."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import warnings
from pathlib import Path

import pokerkit as pk
import pytest

from engine import phh
from engine.events import DeckReshuffled, Event, PlayerAction
from engine.floor import FloorError
from engine.hand import Hand, Phase
from engine.rules import Variant
from engine.scenario import build_floor, load, step_inputs
from engine.simulate import SimulatedDealer, new_hand
from tests.engine.pokerkit_oracle import pokerkit_random_hand, random_config, random_stacks

HERE = Path(__file__).parent
REAL_HANDS = sorted((HERE / "phh").glob("*.phh"))


def pokerkit_finishing_stacks(text: str) -> list[int]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        states = list(pk.HandHistory.loads(text))
    return list(states[-1].stacks)


def test_all_36_real_hands_are_there() -> None:
    assert len(REAL_HANDS) == 36
    variants = {phh.loads(p.read_text(), "wsop2023").config.variant for p in REAL_HANDS}
    assert variants == set(Variant)


@pytest.mark.parametrize("path", REAL_HANDS, ids=lambda p: p.stem)
@pytest.mark.parametrize("rules", ["wsop2023", "rrop"])
def test_real_hand_replays_to_pokerkit_stacks(path: Path, rules: str) -> None:
    text = path.read_text()
    imported = phh.loads(text, rules)
    assert imported.hand.is_over
    assert imported.hand.finishing_stacks() == pokerkit_finishing_stacks(text)


@pytest.mark.parametrize("path", REAL_HANDS[::6], ids=lambda p: p.stem)
def test_real_hand_export_loads_back(path: Path) -> None:
    imported = phh.loads(path.read_text(), "wsop2023")
    exported = phh.dumps(imported.hand)
    assert pokerkit_finishing_stacks(exported) == imported.hand.finishing_stacks()
    again = phh.loads(exported, "wsop2023")
    assert again.hand.finishing_stacks() == imported.hand.finishing_stacks()


@pytest.mark.parametrize("variant", list(Variant), ids=lambda v: v.value)
def test_engine_hands_export_to_pokerkit(variant: Variant) -> None:
    for k in range(40):
        rng = random.Random(f"export-{variant.value}-{k}")
        n = rng.randint(2, 8)
        config = random_config(rng, variant)
        hand = new_hand(
            variant.value, n, rng, "wsop2023", config=config, stacks=random_stacks(rng, n, config)
        )
        dealer = SimulatedDealer(hand, rng)
        while (event := dealer.next_event()) is not None:
            dealer.apply(event)
        assert hand.is_over
        text = phh.dumps(hand)
        assert pokerkit_finishing_stacks(text) == hand.finishing_stacks(), text


def test_cli_replay_contract(tmp_path: Path) -> None:
    broken = tmp_path / "broken.phh"
    broken.write_text("variant = 'NT'\nantes = [0, 0]\n")
    files = [str(REAL_HANDS[0]), str(broken), str(REAL_HANDS[-1])]
    proc = subprocess.run(
        [sys.executable, "-m", "engine.cli", "history", "replay", "--rules", "wsop2023", *files],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(lines) == 3
    assert lines[1]["error"] and "variant" in lines[1]["error"]
    for line, path in ((lines[0], REAL_HANDS[0]), (lines[2], REAL_HANDS[-1])):
        assert "error" not in line
        assert line["finishing_stacks"] == pokerkit_finishing_stacks(path.read_text())
        assert all(isinstance(x, int) for x in line["finishing_stacks"])
        assert line["variant"] in ("F7S", "F7S/8", "FR")


def test_cli_replay_all_good_exits_zero() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "engine.cli", "history", "replay", *map(str, REAL_HANDS[:3])],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.splitlines()) == 3


def test_phh_errors_name_the_problem() -> None:
    with pytest.raises(phh.PHHError, match="starting_stacks"):
        phh.loads("variant = 'F7S'\nantes = [1, 1]\nbring_in = 1\nsmall_bet = 2\nbig_bet = 4\nactions = []\n")
    text = REAL_HANDS[0].read_text().replace("'p2 pb'", "'p2 cbr 7'")
    with pytest.raises(phh.PHHError, match="action 6"):
        phh.loads(text, "wsop2023")


def _deep_hand_rarely_folding(rng: random.Random, variant: Variant, rules: str) -> Hand:
    """Seven or eight players with deep stacks who fold one time in twenty: the deck often runs out."""
    n = rng.randint(7, 8)
    config = random_config(rng, variant, rules)
    hand = new_hand(variant.value, n, rng, rules, config=config, stacks=[config.big_bet * 30] * n)

    def choose(h: Hand) -> Event:
        opts = h.options()
        assert opts is not None and h.to_act is not None
        pool = [o for o in opts.options if o.action != "fold"] if rng.random() >= 0.05 else []
        pick = rng.choice(pool or list(opts.options))
        return PlayerAction(h.to_act, pick.action, pick.amount)

    dealer = SimulatedDealer(hand, rng)
    while (event := dealer.next_event(choose)) is not None:
        dealer.apply(event)
    return hand


@pytest.mark.parametrize("rules", ["rrop", "wsop2023"])
@pytest.mark.parametrize("variant", list(Variant), ids=lambda v: v.value)
def test_exported_hand_that_ran_out_of_cards_says_so_and_replays(variant: Variant, rules: str) -> None:
    # RRoP stud 15: the deck ran out on seventh street and the burns (under wsop2023 the folded
    # hands too) were reshuffled; the file says where, and replays to the same stacks.
    found = 0
    for k in range(400):
        hand = _deep_hand_rarely_folding(random.Random(f"out-{rules}-{variant.value}-{k}"), variant, rules)
        if not any(isinstance(e, DeckReshuffled) for e in hand.events):
            continue
        found += 1
        text = phh.dumps(hand)
        assert "_studtable_reshuffled = true" in text
        assert "# studtable: reshuffle" in text
        again = phh.loads(text, rules)
        assert again.hand.finishing_stacks() == hand.finishing_stacks(), text
        assert sum(isinstance(e, DeckReshuffled) for e in again.events) == 1
        if rules == "wsop2023":
            assert pokerkit_finishing_stacks(text) == hand.finishing_stacks(), text
        if found == 6:
            break
    assert found == 6, f"only {found} of the hands ran out of cards"


@pytest.mark.parametrize("variant", list(Variant), ids=lambda v: v.value)
def test_pokerkit_random_hands_replay_to_pokerkit_stacks(variant: Variant) -> None:
    # Hands PokerKit played and dealt itself, 2 to 8 players, written by PokerKit: when its deck
    # ran out it dealt burns and folded cards again (no reshuffle action in the file); under
    # wsop2023 the replay reshuffles them the same way and ends on PokerKit's stacks.
    reshuffled = 0
    players = set()
    for k in range(200):
        pk_hand = pokerkit_random_hand(random.Random(f"pk-{variant.value}-{k}"), variant)
        players.add(pk_hand.players)
        reshuffled += pk_hand.reshuffled
        imported = phh.loads(pk_hand.text, "wsop2023")
        assert imported.hand.is_over
        assert imported.hand.finishing_stacks() == pk_hand.finishing_stacks, pk_hand.text
    assert players == set(range(2, 9))
    assert reshuffled >= 2, reshuffled  # some of them ran out of cards (3 of the 200 F7S hands)


@pytest.mark.parametrize("name", ["stud-out-of-cards-seven-players", "stud-out-of-cards-burns-again"])
def test_floor_hand_that_ran_out_of_cards_exports_and_replays(name: str) -> None:
    # RRoP stud 15 at a table with a shoe (rrop): burn, all but the last card, the last card mixed
    # with the burns, (burn again,) the rest.  The export says where; the import replays it.
    data = load(HERE.parent / "scenarios" / f"{name}.toml")
    floor, _ = build_floor(data["table"])
    for step in data["steps"]:
        try:
            for inp in step_inputs(step, floor):
                floor.handle(inp)
        except FloorError:
            pass  # the scenario's expected refusals
    hand = floor.table.hand
    assert hand is not None
    while hand.phase is Phase.BETTING:
        floor.handle({"kind": "action", "seat": hand.to_act, "action": "check"})
    while hand.phase is Phase.SHOWDOWN:
        s = hand.seat(hand.to_act or 0)
        floor.handle({"kind": "show", "seat": s.seat, "cards": [str(c) for c in s.down]})
    assert hand.is_over
    text = phh.dumps(hand)
    assert "_studtable_reshuffled = true" in text and "# studtable: reshuffle" in text
    again = phh.loads(text, "rrop")
    assert again.hand.finishing_stacks() == hand.finishing_stacks()
    assert [s.all_cards for s in again.hand.seats] == [s.all_cards for s in hand.seats]
