"""Operating the console by its controls' accessible names, as a finger does.

``ConsoleDriver`` finds a visible, enabled control by its ``accessibleName`` and taps it
with real mouse events (``QTest``), so the tap goes through everything a dealer's does:
the double-tap guard, a disabled (locked) button, the panel that is not shown.  It is what
the pytest-qt tests and the demo's simulated dealer and players use; neither ever sends a
command behind the console's back (DESIGN: simulation that tests the real path).

``ThreadedDriver`` is the same from another thread (the demo's people run on one while the
Qt event loop runs the console): each look and each tap is run on the GUI thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from PySide6.QtCore import QObject, QPoint, Qt, Signal
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractButton, QComboBox, QLabel, QWidget

T = TypeVar("T")


class DriverError(RuntimeError):
    """A control the simulated dealer needs is not there (or never became usable)."""


class ConsoleDriver:
    """Find and tap a window's controls by accessible name (on the GUI thread)."""

    def __init__(self, window: QWidget) -> None:
        self.window = window
        self.taps = 0

    def find(self, name: str) -> QWidget | None:
        """The visible control with this accessible name, if any."""
        for w in self.window.findChildren(QWidget):
            if w.accessibleName() == name and w.isVisible():
                return w
        return None

    def names(self, prefix: str = "") -> list[str]:
        """The accessible names of the visible controls (that start with ``prefix``)."""
        return sorted({w.accessibleName() for w in self.window.findChildren(QWidget)
                       if w.isVisible() and w.accessibleName().startswith(prefix)})

    def usable(self, name: str) -> bool:
        w = self.find(name)
        return w is not None and w.isEnabled()

    def text(self, name: str) -> str:
        w = self.find(name)
        if isinstance(w, QAbstractButton | QLabel):
            return str(w.text())
        return ""

    def guard_wait(self, name: str) -> float:
        """Seconds the console's double-tap guard wants before a tap on this control."""
        w = self.find(name)
        guard = getattr(self.window, "tap_guard", None)
        if w is None or guard is None:
            return 0.0
        centre = w.mapToGlobal(w.rect().center())
        return float(guard.wait_needed(centre.toPointF()))

    def tap(self, name: str) -> None:
        """One tap (press and release) in the middle of the control."""
        w = self.find(name)
        if w is None:
            raise DriverError(f"no control named {name!r} is on the screen; visible: {', '.join(self.names())}")
        if not w.isEnabled():
            raise DriverError(f"the control {name!r} is locked (disabled)")
        QTest.mouseClick(w, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, w.rect().center())
        self.taps += 1

    def choose(self, name: str, data: Any) -> None:
        """Choose the entry whose data is ``data`` in the picker (a combo box) with this name."""
        w = self.find(name)
        if not isinstance(w, QComboBox):
            raise DriverError(f"no picker named {name!r} is on the screen")
        i = w.findData(data)
        if i < 0:
            raise DriverError(f"the picker {name!r} has no entry {data!r}")
        w.setCurrentIndex(i)

    def double_tap(self, name: str) -> None:
        """Two taps on the same spot at once (a nervous finger)."""
        w = self.find(name)
        if w is None:
            raise DriverError(f"no control named {name!r} is on the screen")
        at: QPoint = w.rect().center()
        QTest.mouseClick(w, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, at)
        QTest.mouseClick(w, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, at)


class _Invoker(QObject):
    call = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.call.connect(self._run, Qt.ConnectionType.QueuedConnection)

    def _run(self, job: tuple[Callable[[], Any], Future[Any]]) -> None:
        fn, fut = job
        try:
            fut.set_result(fn())
        except BaseException as exc:  # handed to the waiting thread
            fut.set_exception(exc)


class ThreadedDriver:
    """A ``ConsoleDriver`` used from another thread: each call runs on the GUI thread."""

    def __init__(self, window: QWidget, stopping: threading.Event | None = None) -> None:
        self.driver = ConsoleDriver(window)
        self._invoker = _Invoker()  # made on the GUI thread, so its slot runs there
        self.stopping = stopping or threading.Event()

    def run(self, fn: Callable[[], T], timeout: float = 10.0) -> T:
        fut: Future[T] = Future()
        self._invoker.call.emit((fn, fut))
        return fut.result(timeout)

    def wait_for(self, ready: Callable[[], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not self.run(ready):
            if self.stopping.is_set():
                raise DriverError("stopped")
            if time.monotonic() > deadline:
                raise DriverError(f"timed out after {timeout:.0f} s waiting for {what}")
            time.sleep(0.01)

    def press(self, name: str, *, ready: Callable[[], bool] | None = None, timeout: float = 15.0) -> None:
        """Wait until the control is on the screen and usable (and ``ready()``, on the GUI thread),
        let the double-tap guard's interval pass as a finger would, then tap it."""
        d = self.driver
        self.wait_for(lambda: d.usable(name) and (ready is None or ready()), timeout,
                      f"the console to offer {name!r}")
        wait = self.run(lambda: d.guard_wait(name))
        if wait > 0:
            time.sleep(wait + 0.005)
        self.run(lambda: d.tap(name))

    def text(self, name: str) -> str:
        return self.run(lambda: self.driver.text(name))

    def names(self, prefix: str = "") -> list[str]:
        return self.run(lambda: self.driver.names(prefix))
