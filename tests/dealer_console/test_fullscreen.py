"""``--fullscreen`` on a bare X server (Xvfb, no window manager) fills the screen (issue 21, 10)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

SCRIPT = """
from PySide6.QtWidgets import QApplication
app = QApplication([])
from dealer_console.app import place
from dealer_console.console import ConsoleWindow
from dealer_console.edge import Commands, MemorySink
from dealer_console.model import TableModel
w = ConsoleWindow(TableModel(), Commands(MemorySink()))
place(w, fullscreen=True)
for _ in range(20):
    app.processEvents()
print(w.geometry().width(), w.geometry().height())
"""


@pytest.mark.skipif(shutil.which("xvfb-run") is None, reason="xvfb-run (Xvfb) is not installed")
@pytest.mark.parametrize("size", ["1024x600", "1280x800"])
def test_fullscreen_fills_a_bare_x_screen(size: str) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY")}
    done = subprocess.run(["xvfb-run", "-a", "-s", f"-screen 0 {size}x24", sys.executable, "-c", SCRIPT],
                          capture_output=True, text=True, timeout=60, env=env)
    if "Could not load the Qt platform plugin" in done.stderr:
        pytest.skip("Qt's xcb platform plugin cannot load here (its libxcb-* libraries are missing)")
    assert done.returncode == 0, done.stderr[-1500:]
    assert done.stdout.split()[-2:] == size.split("x"), done.stdout


TWO_SCREENS = """
from PySide6.QtWidgets import QApplication
app = QApplication([])
from dealer_console.app import show_on
from dealer_console.model import TableModel
from dealer_console.monitor import MonitorWindow
w = MonitorWindow(TableModel())
show_on(w, fullscreen=True, index=INDEX)
for _ in range(20):
    app.processEvents()
screens = app.screens()
print(len(screens), screens.index(w.screen()), w.geometry().width(), w.geometry().height())
"""


@pytest.mark.skipif(shutil.which("xvfb-run") is None, reason="xvfb-run (Xvfb) is not installed")
@pytest.mark.parametrize(("index", "expected"), [(1, "2 1 1920 1080"), (0, "2 0 1280 800"), (5, "2 0 1280 800")])
def test_the_monitor_goes_on_the_screen_it_is_given(index: int, expected: str) -> None:
    # Issue 23, 8: the monitor on a second screen of the console's machine (two X screens, no window
    # manager); a screen the display does not have falls back to the first, saying so.
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY")}
    screens = "-screen 0 1280x800x24 -screen 1 1920x1080x24"
    done = subprocess.run(["xvfb-run", "-a", "-s", screens, sys.executable, "-c",
                           TWO_SCREENS.replace("INDEX", str(index))],
                          capture_output=True, text=True, timeout=60, env=env)
    if "Could not load the Qt platform plugin" in done.stderr:
        pytest.skip("Qt's xcb platform plugin cannot load here (its libxcb-* libraries are missing)")
    assert done.returncode == 0, done.stderr[-1500:]
    assert done.stdout.strip().splitlines()[-1] == expected, done.stdout
    assert ("this display has 2 screen(s)" in done.stderr) == (index == 5), done.stderr[-800:]
