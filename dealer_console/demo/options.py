"""The demo table's options, its names and its one error type."""


from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

DRILLS = ("shoe-cable", "broker-restart", "premature-card", "engine-kill", "exposed-holecard", "card-off-table",
          "camera-stall")
# Drills that need the camera: only it can see these.
CAMERA_DRILLS = ("exposed-holecard", "card-off-table", "camera-stall")
NAMES = ("Ann", "Bob", "Cy", "Dee", "Eve", "Fay", "Gus", "Hal")
VARIANTS = {"stud": "F7S", "F7S": "F7S", "stud8": "F7S/8", "F7S/8": "F7S/8", "razz": "FR", "FR": "FR"}
SHOE_DEVICE = "shoe-1"
CONSOLE_DEVICE = "console-sim"  # the people's eyes: a console-role client that reads the state
DEALER_CONSOLE = "console-1"  # the dealer's touch screen (the real ConsoleWindow)
RECORDER_DEVICE = "recorder-sim"
ENGINE_DEVICE = "engine"
# How often a simulated player picks each kind of action when it is legal (engine.simulate's weights).
ACTION_WEIGHTS = {"fold": 2, "check": 6, "call": 6, "bring_in": 6, "complete": 2, "bet": 3, "raise": 2}


class DemoError(RuntimeError):
    """Something in the demo table failed; the message says what and where to look."""


# ----------------------------------------------------------------------------- options


@dataclass
class DemoOptions:
    hands: int = 5
    seed: int = 1
    variant: str = "F7S"
    players: int = 6
    stack: int = 500
    table: str = "demo"
    drill: str | None = None
    pace: float = 0.0  # seconds between the dealer's and the players' moves
    autoplay: bool = True  # the simulated players act; False: a person presses the console's buttons
    step_timeout: float = 15.0  # longest wait for the engine to answer one input
    engine_process: bool = False  # run the engine as a `studtable engine` process (engine-kill needs it)
    workdir: Path | None = None  # keep the broker config, store and pty here (default: a temp dir)
    camera: bool = True  # the simulated overhead camera and the vision service reading it
    bridge_process: bool = False  # run the shoe bridge as a `studtable bridge` process (else a thread here)
    processes: bool = False  # engine and bridge as their own processes, as a real table runs them
    camera_fps: float = 12.0
    #: the camera process group's nice value: 0 in the demo, so that it keeps up beside other work on
    #: a small machine; the vision service's own (``vision.service.NICENESS``) as a real table runs it
    camera_nice: int = 0
    manual: bool = False  # no sensors at all: the dealer keys every card on the console's card picker
    #: a camera-only table: no card shoe; the dealer deals from a deck in hand, the camera reads the
    #: up cards and counts the down cards, which stay unknown until the player shows them
    no_shoe: bool = False
    floor_pin: str | None = None  # the engine's floor PIN (issue 21, 4: an undo older than the last entry)
    #: a dealer's shift (demo/shift.py): between hands the dealer seats and unseats players, is refused
    #: a short buy-in and changes the game once, all on the console's seating and game pages
    shift: bool = False
    #: how often each simulated player picks each legal action (None: ``ACTION_WEIGHTS``); a test that
    #: wants everyone at seventh street (RRoP stud 15, the cards run out) gives "fold" no weight
    action_weights: dict[str, int] | None = None

    def check(self) -> None:
        if self.variant not in VARIANTS:
            raise DemoError(f"unknown variant {self.variant!r}; use one of {', '.join(sorted(set(VARIANTS)))}")
        self.variant = VARIANTS[self.variant]
        if not 2 <= self.players <= 8:
            # Seven or eight players can run out of cards on seventh street (RRoP stud 15): the engine
            # prompts, the dealer reshuffles the burns or turns a common card (people.py follows it).
            # Also without a shoe: the engine counts the burns nobody reports (engine/floor/shoe.py
            # ``_burn_unseen``), the common card is seen by the camera or keyed on the console.
            raise DemoError("--players must be 2 to 8")
        if self.drill is not None and self.drill not in DRILLS:
            raise DemoError(f"unknown drill {self.drill!r}; drills: {', '.join(DRILLS)}")
        if self.drill == "engine-kill":
            self.engine_process = True
        if self.processes:
            self.engine_process = self.bridge_process = True
        if self.drill in CAMERA_DRILLS and not self.camera:
            raise DemoError(f"the {self.drill} drill needs the camera (leave out --no-camera)")
        if self.hands < 1:
            raise DemoError("--hands must be at least 1")
        if self.no_shoe:
            if self.manual:
                raise DemoError("--no-shoe is a camera-only table and --manual one without sensors: choose one")
            if not self.camera:
                raise DemoError("a table without a shoe (--no-shoe) needs the camera (leave out --no-camera)")
            if self.drill is not None and self.drill not in CAMERA_DRILLS:
                raise DemoError(f"the {self.drill} drill needs the shoe; a camera-only table (--no-shoe) runs "
                                f"only {', '.join(CAMERA_DRILLS)}")
            self.processes = self.bridge_process = False
        if self.manual:
            if self.drill is not None:
                raise DemoError("the drills need the shoe; a manual table (--manual) runs none")
            self.camera = False
            self.processes = self.bridge_process = False
        if self.shift:
            if self.camera:
                raise DemoError("a shift seats players the simulated camera's felt has no place for: "
                                "run it without the camera (camera=False, --no-camera) or on a manual table")
            if self.drill is not None:
                raise DemoError("a shift runs no drill")
            if self.players > 6:
                raise DemoError("a shift starts with 2 to 6 players (two newcomers sit down during it)")
            if self.hands < 2:
                raise DemoError("a shift is at least 2 hands (its seat changes are between hands)")


