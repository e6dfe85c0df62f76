"""One hand of seven-card stud, razz or stud high-low, as a state machine.

The hand is ``engine.hand.core.Hand`` (its theory of operation is there); this
package's modules are its parts.  The names below are the package's interface.
"""

from engine.hand.betting import BettingRound, Option, Options
from engine.hand.core import ACCEPTS, HANDLERS, TRANSITIONS, Hand
from engine.hand.dealing import DealSlot
from engine.hand.seats import CARDS_IN_DECK, DUE, HELD, STREET_DEAL, STREET_NAMES, SeatState, Street
from engine.hand.state import IllegalAction, Phase

__all__ = [
    "ACCEPTS",
    "CARDS_IN_DECK",
    "DUE",
    "HANDLERS",
    "HELD",
    "STREET_DEAL",
    "STREET_NAMES",
    "TRANSITIONS",
    "BettingRound",
    "DealSlot",
    "Hand",
    "IllegalAction",
    "Option",
    "Options",
    "Phase",
    "SeatState",
    "Street",
]
