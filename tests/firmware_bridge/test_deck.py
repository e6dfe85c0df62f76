"""Deck registry, enrollment and the play-time resolver."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cards import DECK, Card
from firmware_bridge.deck import Deck, DeckError, DeckRegistry, Enrollment, Resolver, Status, read_import
from tests.firmware_bridge.loopback import make_uids


def deck(name: str, seed: int) -> Deck:
    return Deck.build(name, zip(make_uids(52, seed), DECK, strict=True))


def test_a_whole_deck_is_accepted_and_round_trips(tmp_path: Path) -> None:
    reg = DeckRegistry(tmp_path)
    d = deck("red", 1)
    reg.save(d)
    assert reg.names() == ["red"]
    assert reg.load("red") == d
    assert len(set(d.tags.values())) == 52


def test_duplicate_card_is_refused_naming_both_tags() -> None:
    uids = make_uids(52, 2)
    cards = list(DECK)
    cards[51] = Card.parse("Ah")  # As replaced by a second Ah
    with pytest.raises(DeckError) as err:
        Deck.build("bad", zip(uids, cards, strict=True))
    text = str(err.value)
    assert f"card Ah appears twice (tags {uids[cards.index(Card.parse('Ah'))].hex()} and {uids[51].hex()})" in text
    assert "1 card(s) have no tag: As" in text


def test_duplicate_tag_is_refused_naming_the_tag() -> None:
    uids = make_uids(52, 3)
    uids[10] = uids[9]
    with pytest.raises(DeckError, match=f"tag {uids[9].hex()} appears twice"):
        Deck.build("bad", zip(uids, DECK, strict=True))


def test_short_deck_lists_missing_cards() -> None:
    with pytest.raises(DeckError, match=r"2 card\(s\) have no tag: Ah As"):
        Deck.build("short", zip(make_uids(50, 4), DECK[:50], strict=True))


def test_a_tag_cannot_belong_to_two_decks(tmp_path: Path) -> None:
    reg = DeckRegistry(tmp_path)
    a = deck("blue", 5)
    reg.save(a)
    uids = make_uids(52, 6)
    uids[0] = next(iter(a.tags))
    with pytest.raises(DeckError, match="shares 1 tag"):
        reg.save(Deck.build("green", zip(uids, DECK, strict=True)))


def test_import_csv_and_json(tmp_path: Path) -> None:
    uids = make_uids(52, 7)
    csv_path = tmp_path / "deck.csv"
    csv_path.write_text("uid,card\n" + "".join(f"{u.hex(':')},{c}\n" for u, c in zip(uids, DECK, strict=True)))
    assert read_import(csv_path, "c").tags == dict(zip(uids, DECK, strict=True))
    json_path = tmp_path / "deck.json"
    json_path.write_text(json.dumps({u.hex(): str(c) for u, c in zip(uids, DECK, strict=True)}))
    assert read_import(json_path, "j").tags == dict(zip(uids, DECK, strict=True))
    bad = tmp_path / "bad.csv"
    bad.write_text("04a1b2c3,Xx\n")
    with pytest.raises(DeckError, match=r"row 1: unknown rank 'X'"):
        read_import(bad, "b")


def test_enrollment_refuses_mistakes_as_they_happen() -> None:
    uids = make_uids(53, 8)
    other = {uids[52]: ("blue", Card.parse("2c"))}
    e = Enrollment("red", other)
    e.add(uids[0], Card.parse("Ah"))
    with pytest.raises(DeckError, match="already enrolled as Ah"):
        e.add(uids[0], Card.parse("Kd"))
    with pytest.raises(DeckError, match=r"Ah \(ace of hearts\) was already enrolled"):
        e.add(uids[1], Card.parse("Ah"))
    with pytest.raises(DeckError, match="belongs to deck 'blue'"):
        e.add(uids[52], Card.parse("Kd"))
    assert len(e.missing()) == 51 and not e.complete


def test_resolver_statuses_and_new_hand() -> None:
    red, blue = deck("red", 9), deck("blue", 10)
    r = Resolver([red, blue], "red")
    red_uid, red_card = next(iter(red.tags.items()))
    blue_uid, blue_card = next(iter(blue.tags.items()))
    assert (r.resolve(red_uid).card, r.resolve(red_uid).status) == (red_card, Status.DUPLICATE)
    r.new_hand()
    assert r.resolve(red_uid).status is Status.OK
    assert r.resolve(bytes.fromhex("deadbeef")) == r.resolve(bytes.fromhex("deadbeef"))
    unknown = r.resolve(bytes.fromhex("deadbeef"))
    assert (unknown.card, unknown.deck, unknown.status) == (None, None, Status.UNKNOWN_TAG)
    foreign = r.resolve(blue_uid)
    assert (foreign.card, foreign.deck, foreign.status) == (blue_card, "blue", Status.FOREIGN_DECK)
    with pytest.raises(DeckError, match="deck 'green' is not enrolled"):
        Resolver([red], "green")


def test_a_refused_name_keeps_its_tag_waiting_so_nothing_shifts() -> None:
    """#23 item 7: the next name pairs with the same tag, not with the next card drawn."""
    uids = make_uids(4, 11)
    truth = dict(zip(uids, (Card.parse(c) for c in ("Ah", "Kd", "7c", "2s")), strict=True))
    e = Enrollment("red")
    for uid in uids[:3]:
        e.drawn(uid)  # three cards drawn before the dealer types anything
    with pytest.raises(DeckError, match=f"not a card.*tag {uids[0].hex()}"):
        e.name_current("Zz")
    assert e.current == uids[0]
    assert e.name_current("Ah") == truth[uids[0]]
    with pytest.raises(DeckError, match=f"already enrolled.*tag {uids[1].hex()} still waits"):
        e.name_current("Ah")  # a card already enrolled: the tag still waits
    assert e.name_current("Kd") == truth[uids[1]]
    with pytest.raises(DeckError, match="no checked suggestion"):
        e.name_current("")  # Enter with nothing checked against the tag accepts nothing
    assert e.name_current("7c") == truth[uids[2]]
    e.drawn(uids[3])
    assert e.name_current("2s") == truth[uids[3]]
    assert e.pairs == truth and e.waiting == []
    with pytest.raises(DeckError, match="already drawn"):
        e.drawn(uids[0])


def test_enter_accepts_only_a_suggestion_checked_against_the_tag() -> None:
    uids = make_uids(2, 12)
    old = {uids[0]: Card.parse("Qs"), uids[1]: Card.parse("3h")}
    e = Enrollment("red", known_here=old)  # re-enrolling: the tags' old cards are checked suggestions
    e.drawn(uids[1])
    assert e.suggestion() == Card.parse("3h")
    assert e.name_current("") == Card.parse("3h")
    e.drawn(uids[0])
    assert e.name_current("Qs") == Card.parse("Qs")
