"""Every irregularity in Robert's Rules that applies to a stud table, as data.

Each entry names a clause of the seeds (``../shared/seeds``: 001 stud rules
1-20, 000 stud rules, 002 sections 3.2-3.6 and 8), says how the engine can
know of it (which sensor disagreement, or which dealer report when no sensor
can see it), the sentence the dealer reads, the options the rule leaves
open, and what each option does to the hand, expressed as ordinary hand
events.  ``engine/floor/`` detects them and applies them (``engine.floor.rulings.EFFECTS``); ``docs/rules.md`` is
generated from this table (``python -m engine.irregularities``) so the two
can never drift apart.

``handling`` says how far the engine goes:

- ``detected``: the engine notices it from its inputs and raises the prompt;
- ``reported``: no sensor can see it; the dealer reports it on the console
  and the engine raises the same prompt;
- ``enforced``: the engine's own inputs make it impossible (e.g. amounts
  come from the engine's options, so no wager can be undersized);
- ``advisory``: a judgement the rules leave to the floor; the engine shows
  the rule and records the decision but changes nothing by itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final


@dataclass(frozen=True)
class RuleOption:
    id: str
    label: str
    effect: str  # what it does, in words; the code is engine.floor.rulings.EFFECTS[rule id]


@dataclass(frozen=True)
class Rule:
    id: str
    clause: str
    title: str
    handling: str  # detected | reported | enforced | advisory
    detection: str
    ruling: str
    options: tuple[RuleOption, ...] = ()
    blocks: tuple[str, ...] = ("deal", "action")  # inputs refused while the prompt is open
    # False where acknowledging the ruling is the whole effect (the card plays, nothing is undone).
    changes_hand: bool = True
    tests: tuple[str, ...] = field(default=())


def _o(id: str, label: str, effect: str) -> RuleOption:
    return RuleOption(id, label, effect)


CONFIRM = _o("confirm", "Confirm", "apply the ruling as stated")
# The camera sees a hole card face up, not whose hand turned it: the dealer says (offered only on
# the camera's prompt; engine.floor.state withholds it on a dealer's report of the dealer's error).
PLAYER_TURNED = _o("player", "Player turned it up", "a card a player flashes or turns up plays (RRoP 3.4): nothing changes")

RULES: Final[tuple[Rule, ...]] = (
    # ---- seven-card stud (001 rules 1-20; 000; 002 section 8) ------------------------------
    Rule(
        "stud.exposed-holecard",
        "001 stud 5; 002 8.1; 000 stud 1",
        "First or second hole card dealt face up",
        "detected",
        "the camera sees a card face up at a seat where the deal called for a down card (one more up card and one "
        "fewer down than the shoe dealt it: a view with the shoe's own counts that names a hole card is the camera "
        "misreading an up card), or the dealer reports it",
        "Seat {seat}'s hole card was dealt face up. Deal seat {seat}'s third card face down. If the exposed card is "
        "the low card, the player to the left acts first and may fold, bring in or complete.",
        (CONFIRM, PLAYER_TURNED),
        blocks=("deal",),
    ),
    Rule(
        "stud.both-holecards-exposed",
        "001 stud 5; 002 8.1",
        "Both hole cards dealt face up",
        "detected",
        "the camera sees both of a seat's first two cards face up (or the dealer reports it)",
        "Both of seat {seat}'s hole cards were dealt face up: the hand is dead and the ante is returned.",
        (CONFIRM, PLAYER_TURNED),
        blocks=("deal", "action"),
    ),
    Rule(
        "stud.exposed-holecard-tournament",
        "001 stud 5 (tournament); 002 3.2(a)",
        "Down card dealt face up in tournament play",
        "detected",
        "as stud.exposed-holecard, under a house profile with exposed_downcard_misdeal",
        "In tournament play a down card dealt face up is a misdeal: all antes are returned and the hand is redealt.",
        (_o("misdeal", "Misdeal", "void the hand, return every chip, redeal"), PLAYER_TURNED),
    ),
    Rule(
        "stud.bring-in-all-in-for-ante",
        "001 stud 8; 000 stud 4",
        "Low card all in for the ante",
        "enforced",
        "the engine sees the low card's stack after the ante",
        "The low card is all in for the ante; the player to the left acts first and may fold, bring in or complete.",
    ),
    Rule(
        "stud.short-bring-in",
        "000 stud 4",
        "Bring-in short of the forced bet",
        "enforced",
        "the engine sees the low card's stack",
        "The low card brings it in for what it has; everyone else enters for at least the normal bring-in.",
    ),
    Rule(
        "stud.wrong-bring-in",
        "001 stud 9; 000 stud 5",
        "Wrong player designated as low",
        "reported",
        "the dealer reports a misread up card after the bring-in (report wrong-bring-in with the seat and its true "
        "card); the engine works out who is truly low and refuses the report if the low card does not change",
        "Seat {seat} is the true low card. If the next player has not acted, the wrong bring-in is taken back and "
        "seat {seat} must bring it in; otherwise the wager stands and seat {seat} has no obligation.",
        (CONFIRM,),
    ),
    Rule(
        "stud.absent-player",
        "001 stud 6; 000 stud 8",
        "Player not present",
        "reported",
        "the dealer marks the seat absent; the hand is killed when betting reaches it",
        "Seat {seat} is not at the table: the ante and any forced bet are forfeited, and the hand is killed when "
        "the betting reaches the seat.",
        (CONFIRM, _o("returned", "Player returned", "the player is back in time; nothing changes")),
        blocks=(),
    ),
    Rule(
        "stud.fold-without-wager",
        "001 stud 7; 000 stud 9",
        "Fold with no wager",
        "reported",
        "a fold entered when the player owes nothing",
        "Seat {seat} folded with nothing to call. The seat keeps receiving cards until the hand is killed by a bet.",
        (CONFIRM, _o("withdraw", "Player did not fold", "discard the report")),
        blocks=(),
    ),
    Rule(
        "stud.upcards-picked-up",
        "001 stud 10; 000 stud 10; 002 3.3(c)",
        "Up cards picked up facing a wager",
        "reported",
        "the dealer reports it (the camera sees a seat's up cards disappear while it faces a bet)",
        "Seat {seat} picked up the up cards while facing a wager: this is a fold and the hand is dead.",
        (CONFIRM, _o("not-facing", "Betting is over", "at showdown this has no significance; nothing changes")),
    ),
    Rule(
        "stud.card-off-table",
        "001 stud 11; 000 stud 11; 002 3.4",
        "Card dealt off the table",
        "detected",
        "the camera sees a card off the felt, or the dealer reports it",
        "A card dealt to seat {seat} went off the table. It must play and is treated as an exposed card.",
        (CONFIRM,),
        blocks=("deal",),
    ),
    Rule(
        "stud.announcements",
        "001 stud 12; 000 stud 12; razz 5",
        "Dealer announcements",
        "enforced",
        "the engine produces the low card, high hand, raises and pairs as output events",
        "Announce the low card, the high hand, all raises and all pairs (razz: pairs the first time, never face cards).",
    ),
    Rule(
        "stud.burn-error",
        "001 stud 13; 000 stud 13",
        "Two burns or no burn",
        "detected",
        "the camera sees a seat's up card one draw before (no burn) or after (two burns) the card the shoe's "
        "order gives it, and the neighbouring seat whose card that is shows another (one seat alone is taken for a "
        "misreading; the burn card is never compared); on seventh street (down cards) the dealer reports it with "
        "burns = 0 or 2",
        "The burn for {street} was {problem}. Correct the cards to their proper positions if possible.",
        (
            _o("corrected", "Corrected", "the cards were put in the shoe's order (burn first, then each seat in turn); "
               "the hand already records them so"),
            _o("cannot-correct", "Cannot correct", "the cards play where they lie: deal_corrected re-reads the street's "
               "draws with the burns really made"),
        ),
    ),
    Rule(
        "stud.final-downcard-kept",
        "001 stud 13-14",
        "Final down card looked at or mixed in",
        "reported",
        "the dealer reports the seat: during sixth-street betting the card is the premature draw due to that seat "
        "(or the card given in the report); on seventh street after a burn error (burns = 0 or 2) the card as it lies",
        "Seat {seat} looked at (or mixed in) the last down card: the player must keep it{extra}.",
        (CONFIRM,),
    ),
    Rule(
        "stud.premature-card",
        "001 stud 14; 000 stud 14; 002 3.4",
        "Card dealt before the betting round was complete",
        "detected",
        "the shoe reports a draw while betting is open",
        "A card was drawn while betting is open on {street}. It will not play: set it aside. After the betting, one "
        "more card for each active player is also set aside, then burn and deal.",
        (CONFIRM,),
        blocks=("deal",),
    ),
    Rule(
        "stud.out-of-cards",
        "001 stud 15; 000 stud 15",
        "Not enough cards for everyone",
        "detected",
        "the stub cannot serve every player their last card",
        "Out of cards: {stub} card left for {waiting} players. Take out the last card and mix it with the "
        "{burns} burn cards{removed}, scramble and cut; then {then}.",
        (
            _o("reshuffle", "Reshuffle the burns", "deck_reshuffled: burns go back into the stub"),
            _o("common", "Common card", "without a reshuffle: the next card is dealt face up to the centre"),
        ),
        blocks=("deal",),
    ),
    Rule(
        "stud.allin-last-card-up",
        "001 stud 16",
        "All-in player's last card dealt up",
        "detected",
        "the camera or the dealer's entry shows the all-in player's seventh card face up",
        "Seat {seat} is all in and its last card was dealt face up: the card is kept; the others receive theirs normally.",
        (CONFIRM,),
        blocks=("deal",),
    ),
    Rule(
        "stud.last-card-up",
        "001 stud 17-18; 002 8.1(a),(b)",
        "Last card dealt face up",
        "detected",
        "the camera shows a seventh card face up at a seat that is not all in",
        "Seat {seat}'s last card was dealt face up. {rest} The high board using all up cards starts the action; "
        "seat {seat} may declare all in before the betting.",
        (CONFIRM, _o("all-in", "Player declares all in", "the seat is all in for the last round"), PLAYER_TURNED),
        blocks=("deal",),
    ),
    Rule(
        "stud.seven-card-limit",
        "001 stud 19; 002 3.3(d), 8.1",
        "Wrong number of cards",
        "detected",
        "a seat holds more than seven cards, or fewer than seven at showdown",
        "Seat {seat} has {count} cards{counted}. More than seven is a dead hand; fewer at showdown is dead, except a "
        "missing seventh card may be ruled live.",
        (
            _o("dead", "Dead hand", "the hand is killed"),
            _o("live", "Ruled live", "only for a missing seventh card: the hand plays"),
            _o("seven", "Seven cards", "only where the camera counted: the dealer counts seven, nothing changes"),
        ),
    ),
    Rule(
        "stud.no-refund-beaten-on-board",
        "001 stud 20",
        "Called a bet beaten on board",
        "advisory",
        "a player asks for a refund after calling a hand beaten by the up cards",
        "A player who calls a bet while beaten on board is not entitled to a refund.",
        (CONFIRM,),
        blocks=(),
        changes_hand=False,
    ),
    # ---- razz and stud high-low (001 razz 1-5, stud high-low 1-7) ----------------------------
    Rule(
        "razz.differences",
        "001 razz 1-5",
        "Razz: high card brings in, low board acts, no face-card pairs announced",
        "enforced",
        "the variant decides the bring-in (highest card by suit, ace low), who acts first (lowest board) and the "
        "pairs announced",
        "The highest card brings it in; the low board acts first; the open pair does not change the limit; pairs "
        "are announced the first time, never pairs of face cards.",
    ),
    Rule(
        "stud8.differences",
        "001 stud high-low 1, 4, 7",
        "Stud high-low: ace high for the bring-in, no big bet on an open pair",
        "enforced",
        "the variant decides the bring-in (lowest card by suit, ace high) and leaves the limit alone on an open pair",
        "The lowest card brings it in, an ace counting high; the high board acts first; an open pair on fourth "
        "street does not allow the big bet.",
    ),
    # ---- misdeals (002 3.2) -------------------------------------------------------------------
    Rule(
        "misdeal.exposed-first-cards",
        "002 3.2(a),(b)",
        "Misdeal: first cards exposed, or two exposed cards",
        "reported",
        "the dealer calls a misdeal (stud applies its own exposed-card rule, stud.exposed-holecard, by default)",
        "Misdeal: all antes and bets are returned and the hand is redealt.",
        (_o("misdeal", "Misdeal", "void the hand, return every chip, redeal"), _o("play-on", "Play on", "no misdeal")),
    ),
    Rule(
        "misdeal.boxed-cards",
        "002 3.2(c)",
        "Misdeal: two or more boxed cards",
        "reported",
        "the dealer reports two boxed cards",
        "Two boxed cards: misdeal. All antes and bets are returned and the hand is redealt.",
        (_o("misdeal", "Misdeal", "void the hand, return every chip, redeal"),),
    ),
    Rule(
        "misdeal.extra-cards",
        "002 3.2(d),(e)",
        "Misdeal: wrong number of starting cards",
        "detected",
        "a second extra card drawn on third street before anyone acts (002 3.2(d)), or the dealer reports it",
        "Seat {seat} received the wrong number of cards: misdeal, unless two players have acted after the bring-in.",
        (_o("misdeal", "Misdeal", "void the hand, return every chip, redeal"), _o("play-on", "Play on", "no misdeal")),
    ),
    Rule(
        "misdeal.out-of-sequence",
        "002 3.2(f),(h)",
        "Misdeal: card out of sequence or first card to the wrong seat",
        "detected",
        "the camera shows a card at a seat other than the one the deal order called for",
        "A card went to seat {seat} out of the dealing order: misdeal, unless two players have acted after the bring-in.",
        (
            _o("misdeal", "Misdeal", "void the hand, return every chip, redeal"),
            _o("play-on", "Play on", "the card plays where it lies"),
        ),
    ),
    Rule(
        "misdeal.empty-seat",
        "002 3.2(i),(j)",
        "Misdeal: cards to an empty seat, or a player dealt out",
        "detected",
        "the camera sees cards at a seat not in the hand, or no cards at a seat that is",
        "Seat {seat} was dealt wrongly (an empty seat dealt in, or a player dealt out): misdeal.",
        (_o("misdeal", "Misdeal", "void the hand, return every chip, redeal"), _o("play-on", "Play on", "no misdeal")),
    ),
    Rule(
        "misdeal.button",
        "002 3.2(g)",
        "Misdeal: button out of position",
        "enforced",
        "stud has no button: the bring-in and the board decide who acts",
        "Not applicable to stud.",
    ),
    Rule(
        "misdeal.too-late",
        "002 3.2 (last paragraph)",
        "Action occurred: no misdeal",
        "enforced",
        "the engine counts the players who acted after the forced bet",
        "Two players have acted after the bring-in: the hand is played to its conclusion and no money is returned.",
    ),
    # ---- dead hands (002 3.3) --------------------------------------------------------------
    Rule(
        "dead.fold",
        "002 3.3(a),(b)",
        "Fold when facing a bet; hand thrown forward",
        "enforced",
        "a fold is an action entered on the console",
        "The hand is dead.",
    ),
    Rule(
        "dead.joker",
        "002 3.3; 3.4 (joker)",
        "Acting on a hand with a joker",
        "reported",
        "the dealer reports a joker in a hand after the player acted",
        "Seat {seat} acted on a hand holding a joker: the hand is dead.",
        (CONFIRM,),
    ),
    Rule(
        "dead.clock",
        "002 3.3 (clock)",
        "Time limit exceeded facing a bet",
        "reported",
        "the dealer reports the clock ran out",
        "Seat {seat} exceeded the time limit facing a bet: the hand is dead.",
        (CONFIRM,),
    ),
    Rule(
        "dead.showdown-kill",
        "002 3.3(d); 3.6",
        "Hand killed at the showdown",
        "reported",
        "the dealer kills the hand of the seat to show (showdown.kill on the console): it does not hold the "
        "proper number of cards (3.3(d)), or the floor rules it dead; only at the showdown, and the dealer "
        "confirms before it changes anything",
        "Seat {seat}'s hand is killed at the showdown: it is dead and cannot win any part of the pot. The "
        "showdown goes on without it.",
        (_o("confirm", "Kill the hand", "the hand is dead (a HandKilled event); the next seat shows"),
         _o("keep", "Keep it live", "nothing changes: the seat shows or mucks")),
        blocks=("deal", "action"),
    ),
    Rule(
        "dead.retrieve-mucked",
        "002 3.3 (muck)",
        "Hand thrown into the muck",
        "advisory",
        "management may retrieve a clearly identifiable hand",
        "A mucked hand is dead unless management rules it retrievable.",
        (CONFIRM,),
        blocks=(),
        changes_hand=False,
    ),
    # ---- irregularities (002 3.4) ----------------------------------------------------------
    Rule(
        "deck.foreign-card",
        "002 3.4 (different back)",
        "Card with a different back",
        "detected",
        "the shoe reads a tag enrolled in another deck, or the dealer reports a different back",
        "A card from another deck appeared during the hand: all action is void and all chips go back to who "
        "wagered them.",
        (CONFIRM, _o("in-stub", "Found in the stub", "discovered in the stub: all action stands")),
    ),
    Rule(
        "deck.duplicate-card",
        "002 3.4 (two cards of the same rank and suit)",
        "Two identical cards",
        "detected",
        "the shoe or the camera reports a card already in play",
        "The {card} appeared twice: all action is void and all chips go back to who wagered them.",
        (CONFIRM,),
    ),
    Rule(
        "deck.unknown-tag",
        "002 3.4; DESIGN (unknown tag)",
        "Shoe read a tag it does not know",
        "detected",
        "the shoe reports a tag that is in no enrolled deck",
        "The shoe read a tag it does not know. Key in the card, or deal it as an unknown card.",
        (
            _o("unknown", "Deal as unknown", "the card is dealt as ?? and identified when seen"),
            _o("foreign", "It is a foreign card", "as deck.foreign-card"),
        ),
        blocks=("deal",),
    ),
    Rule(
        "deck.boxed-card",
        "002 3.4 (boxed card)",
        "Card face up in the deck",
        "reported",
        "the dealer reports a boxed card (with a shoe, naming the card it just delivered)",
        "A card found face up in the deck is a scrap of paper: it is replaced by the next card.",
        (CONFIRM,),
        blocks=("deal",),
    ),
    Rule(
        "deck.joker",
        "002 3.4 (joker)",
        "Joker in the deck",
        "reported",
        "the dealer reports a joker before the player acted",
        "A joker is a scrap of paper: it is replaced as a boxed card. No misdeal.",
        (CONFIRM,),
        blocks=("deal",),
    ),
    Rule(
        "deck.missing-cards",
        "002 3.4 (missing cards)",
        "Cards missing from the deck",
        "enforced",
        "the engine keeps dealing from what the stub holds",
        "One or more cards missing from the deck does not invalidate the results of a hand.",
    ),
    Rule(
        "deal.extra-card-before-betting",
        "002 3.4 (extra card)",
        "One extra card dealt before the first betting round",
        "detected",
        "the shoe reports a draw on third street after every seat has its three cards and before anyone acts "
        "(a second one is misdeal.extra-cards)",
        "An extra card was dealt before the first betting round: it goes back on the deck and is used as the burn card.",
        (CONFIRM,),
        blocks=("deal", "action"),
    ),
    Rule(
        "deal.flashed-card",
        "002 3.4 (flashed card)",
        "Card flashed by the dealer",
        "reported",
        "the dealer reports a flashed card",
        "A card flashed by the dealer is treated as an exposed card (stud: see stud.exposed-holecard).",
        (CONFIRM,),
        blocks=("deal",),
    ),
    Rule(
        "deal.player-dropped-card",
        "002 3.4 (dropped card)",
        "Player dropped a card",
        "advisory",
        "a card dropped on the floor by its player",
        "A card dropped on the floor by a player must still be played.",
        (CONFIRM,),
        blocks=(),
        changes_hand=False,
    ),
    # ---- betting and raising (002 3.5) -----------------------------------------------------
    Rule(
        "betting.out-of-turn",
        "002 3.5 (acting out of turn)",
        "Action out of turn",
        "detected",
        "an action entered for a seat that is not to act",
        "Seat {seat} acted out of turn ({action}). It binds if no one in between bets or raises; a check out of turn "
        "cannot then bet or raise.",
        (
            _o("hold", "Binding", "held and applied on the seat's turn if nothing changes before"),
            _o("void", "Not binding", "the action is discarded"),
        ),
        blocks=(),
    ),
    Rule(
        "betting.lost-right-to-act",
        "002 3.5 (time)",
        "Three players acted behind a player who did not act",
        "advisory",
        "a seat skipped by the dealer while three or more players acted behind it",
        "Seat {seat} did not stop the action before three players acted behind: it may lose the right to act.",
        (CONFIRM,),
        blocks=(),
        changes_hand=False,
    ),
    Rule(
        "betting.unaware-of-raise",
        "002 3.5 (withdraw a call)",
        "Call made unaware of a raise",
        "reported",
        "the dealer reports the player did not see the raise, before anyone acted after",
        "Seat {seat} did not know of the raise: the chips may be withdrawn and the action reconsidered.",
        (CONFIRM,),
    ),
    Rule(
        "betting.undersized",
        "002 3.5 (improperly low wagers)",
        "Undersized wager or lower-limit bet on an upper-limit round",
        "enforced",
        "every amount comes from the engine's legal options; a different amount is refused with the right one",
        "The wager is brought up to its proper size.",
    ),
    Rule(
        "betting.oversized-chip",
        "002 3.5 (single chip)",
        "Single oversized chip",
        "enforced",
        "the dealer enters the action as a call",
        "A single chip larger than the bet, without a raise announced, is a call.",
    ),
    Rule(
        "betting.string-raise",
        "002 3.5 (string raises)",
        "String raise",
        "enforced",
        "the dealer enters what the rule makes the action (a call, or a raise with a full bet plus half)",
        "String raises are not allowed; a full bet plus half a bet or more in chips is a raise.",
    ),
    Rule(
        "betting.cap",
        "002 3.5(a)",
        "A bet and three raises",
        "enforced",
        "options() stops offering raises at the cap (unlimited heads-up under rrop)",
        "The betting is capped.",
    ),
    # ---- showdown (002 3.6) ----------------------------------------------------------------
    Rule(
        "showdown.show-all-cards",
        "002 3.6",
        "All cards shown to win",
        "enforced",
        "the pot is awarded only once every contender's cards are identified",
        "A player must show all cards face up to win any part of the pot.",
    ),
    Rule(
        "showdown.order",
        "002 3.6",
        "Showing order",
        "enforced",
        "the engine names who shows first",
        "The last bettor or raiser shows first; if all checked, the first to act; side-pot players before the "
        "all-in player.",
    ),
    Rule(
        "showdown.kill-losers",
        "002 3.6",
        "Losing hands killed before the pot is pushed",
        "enforced",
        "hands that can win nothing are killed before the award",
        "All losing hands are killed before the pot is awarded.",
    ),
    Rule(
        "showdown.request-to-see",
        "002 3.6 (asking to see a hand)",
        "Request to see a called hand",
        "advisory",
        "a player asks to see a folded or called hand",
        "Any player dealt in may ask to see a called hand; a folded hand asked for by a non-winner is dead.",
        (CONFIRM,),
        blocks=(),
        changes_hand=False,
    ),
    # ---- the system's own inputs -----------------------------------------------------------
    Rule(
        "source.offline",
        "DESIGN (sensors may fail mid-game)",
        "A sensor went offline",
        "detected",
        "the device's availability turns offline (its Last Will)",
        "{device} went offline. Continue with the other sensors or key in cards by hand.",
        (CONFIRM,),
        blocks=(),
        changes_hand=False,
    ),
    Rule(
        "source.gap",
        "DESIGN (sequence numbers)",
        "Messages missing from a sensor",
        "detected",
        "a skipped sequence number from a device",
        "{device} skipped {missing} message(s). Check the cards on the table against the screen.",
        (CONFIRM,),
        blocks=(),
        changes_hand=False,
    ),
    Rule(
        "source.restart",
        "DESIGN (sequence numbers)",
        "A sensor restarted and may have lost messages",
        "detected",
        "the shoe reports a reset or lost events, or a device's new session does not start at its first message",
        "{device} restarted: {missing} card(s) may be missing. Count the cards at each seat against the screen "
        "before the next card is dealt.",
        (CONFIRM,),
        # the next card must not silently take a lost card's slot: the shoe's cards wait for the ruling
        blocks=("deal",),
        changes_hand=False,
    ),
    Rule(
        "source.lost",
        "DESIGN (sequence numbers)",
        "Cards from the shoe never arrived",
        "detected",
        "the shoe's messages skip a sequence number or an event counter (a broker that lost an acknowledged "
        "message, a bridge that lost one)",
        "{missing} message(s) from {device} never arrived: cards may be missing. Count the cards at each seat "
        "against the screen before the next card is dealt.",
        (CONFIRM,),
        blocks=("deal",),
        changes_hand=False,
    ),
    Rule(
        "source.forged",
        "DESIGN (trust boundaries)",
        "A message claimed another device's name",
        "detected",
        "a message's source does not belong to the role allowed to publish on its channel",
        "A message on {channel} claimed to come from {device}, which may not send there: it was refused. "
        "Check which devices are connected to this table.",
        (CONFIRM,),
        blocks=(),
        changes_hand=False,
    ),
    Rule(
        "source.store",
        "DESIGN (an input is acknowledged only once it is durable)",
        "The event store cannot write",
        "detected",
        "an append to the event store fails (a full disk, a read-only or missing store)",
        "The event store cannot write: {problem}. Inputs are held, not lost, and are taken in order once it "
        "can write again: free disk space or fix the store.",
        (),
        blocks=(),
        changes_hand=False,
    ),
    # ---- the table between hands (002 3.1, 2.2) ----------------------------------------------
    Rule(
        "table.seat-change",
        "002 3.1; 2.2 (return within the hour)",
        "A seat change keeps the stack",
        "enforced",
        "the table op move (between hands); a player who left and sits down again",
        "A player who changes seats keeps the same stack, short or not: it is not a buy-in. A player back in "
        "the same game brings back the amount taken out when leaving.",
    ),
    Rule(
        "table.config-seats",
        "002 3.1 (seats are taken at the table)",
        "The table file's seats were not applied",
        "detected",
        "the engine starts again with hands in its store, and the seats in its config differ from those it "
        "seated at the table's first start",
        "The table file's seats changed since the table first started ({problem}); they were not applied: "
        "the seats and stacks are the table's own, from its log. Seat players, add chips or take them off "
        "on the console's Seats page.",
        (CONFIRM,),
        blocks=(),
        changes_hand=False,
    ),
)

BY_ID: Final[dict[str, Rule]] = {r.id: r for r in RULES}


def rule(rule_id: str) -> Rule:
    try:
        return BY_ID[rule_id]
    except KeyError:
        raise KeyError(f"no irregularity rule {rule_id!r}") from None
