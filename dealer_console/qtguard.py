"""A guard against a PySide6 reference-count bug that would crash the console after a few minutes.

What happens: the PySide6 6.12 wheels (built for the stable ABI) return ``None``
from every void Qt method (``setText``, ``setFont``, ``show``...) without
taking a reference to it.  From Python 3.12 ``None`` is immortal and that is
harmless; on Python 3.11, which this project supports, each such call lowers
``None``'s reference count by one, and after some thousands of calls the
interpreter aborts with "Fatal Python error: none_dealloc: deallocating
None".  A console redrawing the table a few times a second would die within
minutes, mid-hand.

What we do: at the first Qt import in this package, probe for the bug (a
hundred calls of a void method, and watch ``sys.getrefcount(None)``).  Only if
it is there and the interpreter is older than 3.12, give ``None`` 2**40 extra
references, which is what 3.12 does by design (an immortal ``None``).  Nothing
else is touched; with a fixed PySide6 or Python >= 3.12 the guard does nothing.
"""

from __future__ import annotations

import ctypes
import sys

_applied = False


def leaks_none() -> bool:
    """True if a void PySide6 call drops a reference to ``None`` (the bug above)."""
    from PySide6.QtGui import QFont

    font = QFont()
    before = sys.getrefcount(None)
    for _ in range(100):
        font.setBold(True)
    return sys.getrefcount(None) - before <= -50


def apply() -> bool:
    """Make ``None`` effectively immortal if this PySide6 needs it; returns whether it did."""
    global _applied
    if _applied or sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return _applied
    if leaks_none():
        ctypes.c_ssize_t.from_address(id(None)).value += 1 << 40
        _applied = True
    return _applied


apply()
