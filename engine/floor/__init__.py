"""The table as the engine service runs it: sensors, dealer, rulings.

The floor is ``engine.floor.core.Floor`` (its theory of operation is there);
this package's modules are its parts.  The names below are its interface.
"""

from engine.floor.core import INPUTS, SENSOR_KINDS, Floor
from engine.floor.prompts import BURN_PROBLEMS, FloorError, FloorOutputs, Prompt
from engine.floor.reports import REPORT_ALIASES
from engine.floor.rulings import EFFECTS

__all__ = [
    "BURN_PROBLEMS",
    "EFFECTS",
    "INPUTS",
    "REPORT_ALIASES",
    "SENSOR_KINDS",
    "Floor",
    "FloorError",
    "FloorOutputs",
    "Prompt",
]
