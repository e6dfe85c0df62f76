"""Decks of tagged cards: enrollment, the registry on disk, and the play-time resolver.

A deck is 52 tag UIDs mapped to 52 distinct cards.  A deck is accepted only
whole and consistent (52 distinct tags, 52 distinct cards), because at the
table a tag the registry maps wrongly is a wrong card shown to the engine,
which is the one thing the shoe must never cause.

At play time ``Resolver`` turns a UID into a card *and a status*; the status
says whether the card can be trusted (``ok``) or is an irregularity the
engine must put to the dealer (``unknown_tag``, ``foreign_deck``,
``duplicate``).  It never guesses: an unknown tag has no card.

The core here is pure (``Deck``, ``Enrollment``, ``Resolver``); the
``DeckRegistry`` is the thin file edge (one JSON file per deck).
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Final

from engine.cards import DECK, Card, CardError

FORMAT: Final = "studtable-deck/1"


class DeckError(ValueError):
    """A deck, a deck file or an enrollment step that cannot be accepted."""


def parse_uid(text: str) -> bytes:
    """``04:A2:...``, ``04a2...`` or ``04 a2 ...`` -> bytes; 4, 7 or 10 bytes."""
    clean = text.strip().replace(":", "").replace(" ", "").replace("-", "")
    try:
        uid = bytes.fromhex(clean)
    except ValueError:
        raise DeckError(f"tag UID {text!r} is not hexadecimal") from None
    if len(uid) not in (4, 7, 10):
        raise DeckError(f"tag UID {text!r} is {len(uid)} bytes; ISO 14443A UIDs are 4, 7 or 10 bytes")
    return uid


@dataclass(frozen=True)
class Deck:
    """A validated deck: every card of the 52 exactly once, each with its own tag."""

    name: str
    tags: dict[bytes, Card]

    @classmethod
    def build(cls, name: str, pairs: Iterable[tuple[bytes, Card]]) -> Deck:
        """Check a list of (tag, card) pairs; the error lists every problem, naming tags and cards."""
        if not name or "/" in name or name.startswith("."):
            raise DeckError(f"deck name {name!r} must be non-empty, without '/' and not start with '.'")
        problems: list[str] = []
        by_tag: dict[bytes, Card] = {}
        by_card: dict[Card, bytes] = {}
        for uid, card in pairs:
            if not card.known:
                problems.append(f"tag {uid.hex()} is mapped to the unknown card ??")
                continue
            if uid in by_tag:
                problems.append(f"tag {uid.hex()} appears twice (as {by_tag[uid]} and as {card})")
                continue
            if card in by_card:
                problems.append(f"card {card} appears twice (tags {by_card[card].hex()} and {uid.hex()})")
                continue
            by_tag[uid] = card
            by_card[card] = uid
        missing = [str(c) for c in DECK if c not in by_card]
        if missing:
            problems.append(f"{len(missing)} card(s) have no tag: {' '.join(missing)}")
        if problems:
            raise DeckError(f"deck {name!r} is not accepted: " + "; ".join(problems))
        ordered = dict(sorted(by_tag.items(), key=lambda kv: kv[1].index))
        return cls(name, ordered)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "name": self.name,
            "tags": [{"card": str(c), "uid": uid.hex()} for uid, c in self.tags.items()],
        }

    @classmethod
    def from_json(cls, data: Any, source: str = "deck file") -> Deck:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise DeckError(f"{source} is not a studtable deck (expected \"format\": \"{FORMAT}\")")
        return cls.build(str(data.get("name", "")), _pairs(data.get("tags"), source))


def _pairs(items: Any, source: str) -> list[tuple[bytes, Card]]:
    """(uid, card) pairs from a list of {"uid", "card"} objects or a {uid: card} mapping."""
    if isinstance(items, dict):
        items = [{"uid": k, "card": v} for k, v in items.items()]
    if not isinstance(items, list):
        raise DeckError(f"{source}: expected a list of {{\"uid\": ..., \"card\": ...}} entries")
    out = []
    for n, item in enumerate(items, 1):
        try:
            out.append((parse_uid(str(item["uid"])), Card.parse(str(item["card"]))))
        except (KeyError, TypeError):
            raise DeckError(f"{source}: entry {n} needs a \"uid\" and a \"card\"") from None
        except (DeckError, CardError) as exc:
            raise DeckError(f"{source}: entry {n}: {exc}") from None
    return out


def read_import(path: Path, name: str) -> Deck:
    """A deck from a file to import: a deck JSON, a {uid: card} JSON object, or CSV lines ``uid,card``."""
    text = path.read_text()
    source = str(path)
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DeckError(f"{source} is not valid JSON: {exc}") from None
        if isinstance(data, dict) and data.get("format") == FORMAT:
            return Deck.build(name or str(data.get("name", "")), _pairs(data.get("tags"), source))
        return Deck.build(name, _pairs(data, source))
    rows = [r for r in csv.reader(io.StringIO(text)) if r and not r[0].lstrip().startswith("#")]
    if rows and rows[0][0].strip().lower() == "uid":
        rows = rows[1:]
    pairs = []
    for n, row in enumerate(rows, 1):
        if len(row) < 2:
            raise DeckError(f"{source}: row {n} should be 'uid,card', got {','.join(row)!r}")
        try:
            pairs.append((parse_uid(row[0]), Card.parse(row[1].strip())))
        except CardError as exc:
            raise DeckError(f"{source}: row {n}: {exc}") from None
    return Deck.build(name, pairs)


# ----------------------------------------------------------------- enrollment


class Enrollment:
    """Building a deck one tag at a time, refusing a mistake the moment it is made.

    From the shoe the dealer draws cards and types their names, and the two must never slip out of
    step: every drawn tag waits in ``waiting`` (in the order drawn) until a name is accepted for it.
    A name that is refused (not a card, a card already enrolled) leaves that tag at the head of the
    queue, waiting for the right name; only a tag that cannot belong to this deck at all (drawn twice,
    another deck's) is dropped, with the error saying so.  A suggestion for Enter is offered only when
    it was checked against the tag: the card the same tag had in the deck being re-enrolled
    (``known_here``); otherwise the dealer must type the name.
    """

    def __init__(self, name: str, known_elsewhere: dict[bytes, tuple[str, Card]] | None = None,
                 known_here: dict[bytes, Card] | None = None) -> None:
        self.name = name
        self.pairs: dict[bytes, Card] = {}
        self._elsewhere = known_elsewhere or {}
        self._known_here = dict(known_here or {})
        self.waiting: list[bytes] = []

    def drawn(self, uid: bytes) -> None:
        """A tag came out of the shoe: it waits for its name (a tag that cannot be enrolled is refused now)."""
        if uid in self.pairs or uid in self.waiting:
            raise DeckError(f"tag {uid.hex()} was already drawn"
                            + (f" and enrolled as {self.pairs[uid]}" if uid in self.pairs else "")
                            + "; it is not counted again: draw the next card")
        if uid in self._elsewhere:
            deck, other = self._elsewhere[uid]
            raise DeckError(f"tag {uid.hex()} belongs to deck {deck!r} (as {other}); keep that card out of this "
                            "deck and draw the next one")
        self.waiting.append(uid)

    @property
    def current(self) -> bytes | None:
        """The tag whose name is asked for now (the oldest drawn and not yet named)."""
        return self.waiting[0] if self.waiting else None

    def suggestion(self) -> Card | None:
        """What Enter accepts for the current tag: only a card checked against that tag, else None."""
        uid = self.current
        card = self._known_here.get(uid) if uid is not None else None
        if card is None or card in self.pairs.values():
            return None
        return card

    def name_current(self, answer: str) -> Card:
        """Name the current tag (``''``: the checked suggestion).  A refused name keeps the tag waiting."""
        uid = self.current
        if uid is None:
            raise DeckError("no card is waiting for a name: draw the next card")
        text = answer.strip()
        if not text:
            card = self.suggestion()
            if card is None:
                raise DeckError(f"type the name of the card with tag {uid.hex()} (e.g. Ah, Td); "
                                "there is no checked suggestion for it")
        else:
            try:
                card = Card.parse(text)
            except ValueError as exc:
                raise DeckError(f"{text!r} is not a card ({exc}); type it again for tag {uid.hex()}") from None
        try:
            self.add(uid, card)
        except DeckError as exc:
            raise DeckError(f"{exc}; tag {uid.hex()} still waits for its name") from None
        self.waiting.pop(0)
        return card

    def add(self, uid: bytes, card: Card) -> None:
        if not card.known:
            raise DeckError("name the card (e.g. 'Ah'); '??' cannot be enrolled")
        if uid in self.pairs:
            raise DeckError(f"tag {uid.hex()} was already enrolled as {self.pairs[uid]}; draw the next card")
        if uid in self._elsewhere:
            deck, other = self._elsewhere[uid]
            raise DeckError(f"tag {uid.hex()} belongs to deck {deck!r} (as {other}); keep that card out of this deck")
        for u, c in self.pairs.items():
            if c == card:
                raise DeckError(f"{card} ({card.name}) was already enrolled with tag {u.hex()}")
        self.pairs[uid] = card

    def missing(self) -> list[Card]:
        have = set(self.pairs.values())
        return [c for c in DECK if c not in have]

    @property
    def complete(self) -> bool:
        return len(self.pairs) == 52

    def finish(self) -> Deck:
        return Deck.build(self.name, self.pairs.items())


# ------------------------------------------------------------------- registry


def default_decks_dir() -> Path:
    env = os.environ.get("STUDTABLE_DECKS")
    if env:
        return Path(env)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "studtable" / "decks"


@dataclass
class DeckRegistry:
    """The enrolled decks: one ``<name>.json`` per deck in a directory."""

    directory: Path

    def names(self) -> list[str]:
        if not self.directory.is_dir():
            return []
        return sorted(p.stem for p in self.directory.glob("*.json"))

    def path(self, name: str) -> Path:
        return self.directory / f"{name}.json"

    def load(self, name: str) -> Deck:
        path = self.path(name)
        if not path.exists():
            have = ", ".join(self.names()) or "none"
            raise DeckError(f"no deck named {name!r} in {self.directory} (enrolled decks: {have})")
        try:
            data = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise DeckError(f"{path} is not valid JSON: {exc}") from None
        deck = Deck.from_json(data, str(path))
        if deck.name != name:
            raise DeckError(f"{path} holds deck {deck.name!r}, not {name!r}; rename the file or the deck")
        return deck

    def load_all(self) -> list[Deck]:
        return [self.load(n) for n in self.names()]

    def save(self, deck: Deck, replace: bool = False) -> Path:
        """Write a deck; refuses to overwrite one, or to reuse a tag of another deck."""
        path = self.path(deck.name)
        if path.exists() and not replace:
            raise DeckError(f"deck {deck.name!r} already exists ({path}); choose another name or pass --replace")
        for other in self.load_all():
            if other.name == deck.name:
                continue
            shared = [uid for uid in deck.tags if uid in other.tags]
            if shared:
                raise DeckError(
                    f"deck {deck.name!r} shares {len(shared)} tag(s) with deck {other.name!r} "
                    f"(first: {shared[0].hex()} = {other.tags[shared[0]]} there); a tag belongs to one deck"
                )
        self.directory.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(deck.to_json(), indent=1) + "\n")
        os.replace(tmp, path)  # atomic: a crash never leaves half a deck
        return path

    def tag_index(self) -> dict[bytes, tuple[str, Card]]:
        return {uid: (d.name, c) for d in self.load_all() for uid, c in d.tags.items()}


# ------------------------------------------------------------------- resolver


class Status(StrEnum):
    OK = "ok"
    UNKNOWN_TAG = "unknown_tag"
    FOREIGN_DECK = "foreign_deck"
    DUPLICATE = "duplicate"


@dataclass(frozen=True, slots=True)
class Resolution:
    card: Card | None
    deck: str | None
    status: Status


@dataclass
class Resolver:
    """UID -> (card, status) for the deck in play; pure, one instance per table.

    ``foreign_deck`` still names the card and its deck (the dealer may want to
    know which card strayed in), but it is never ``ok``.  ``duplicate`` means
    the same card was already drawn since the last ``new_hand()``.
    """

    decks: list[Deck]
    active: str
    _index: dict[bytes, tuple[str, Card]] = field(init=False)
    _drawn: set[Card] = field(init=False, default_factory=set)

    def __post_init__(self) -> None:
        names = [d.name for d in self.decks]
        if self.active not in names:
            raise DeckError(f"deck {self.active!r} is not enrolled (enrolled: {', '.join(names) or 'none'})")
        self._index = {uid: (d.name, c) for d in self.decks for uid, c in d.tags.items()}

    def new_hand(self) -> None:
        """A shuffle or a new hand: every card may be drawn once again."""
        self._drawn.clear()

    def undo(self, resolution: Resolution) -> None:
        """A draw the bridge could not keep (its outbox could not write it): the shoe sends the same
        tag again, which must then resolve as it did, not as a duplicate."""
        if resolution.status is Status.OK and resolution.card is not None:
            self._drawn.discard(resolution.card)

    def lookup(self, uid: bytes) -> tuple[str, Card] | None:
        """(deck, card) for a tag, without counting it as drawn."""
        return self._index.get(uid)

    def resolve(self, uid: bytes) -> Resolution:
        hit = self._index.get(uid)
        if hit is None:
            return Resolution(None, None, Status.UNKNOWN_TAG)
        deck, card = hit
        if deck != self.active:
            return Resolution(card, deck, Status.FOREIGN_DECK)
        if card in self._drawn:
            return Resolution(card, deck, Status.DUPLICATE)
        self._drawn.add(card)
        return Resolution(card, deck, Status.OK)
