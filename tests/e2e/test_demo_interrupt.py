"""Ctrl-C stops the whole demo: windows, child processes and temporary folders, also mid-drill and
after an abort.  Real processes: the demo is started as a user starts it (its own session, as a
terminal's foreground job), interrupted with SIGINT to its whole process group (what Ctrl-C does),
and then nothing of it may be left: no descendant process and nothing in its TMPDIR.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

CLI = [sys.executable, "-m", "engine.cli"]
pytestmark = pytest.mark.slow


def _children() -> dict[int, int]:
    """pid -> parent pid of every process on the machine."""
    out: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        out[int(entry)] = int(fields[1])
    return out


def descendants(pid: int) -> set[int]:
    parents = _children()
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        nxt = {p for p, pp in parents.items() if pp in frontier and p not in found}
        found |= nxt
        frontier = nxt
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _wait(cond: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def _start(tmp: Path, *args: str, gui: bool = False) -> tuple[subprocess.Popen[str], dict[str, str]]:
    scratch = tmp / "tmp"
    scratch.mkdir(exist_ok=True)
    env = {**os.environ, "TMPDIR": str(scratch), "PYTHONUNBUFFERED": "1"}
    env.pop("DISPLAY", None)
    if gui:
        env["QT_QPA_PLATFORM"] = "offscreen"  # real Qt windows, drawn offscreen
    else:
        env.pop("QT_QPA_PLATFORM", None)
    proc = subprocess.Popen([*CLI, "demo", *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True, start_new_session=True)
    return proc, env


def _ready(proc: subprocess.Popen[str], tmp: Path, want_children: int) -> set[int]:
    """Wait until the demo plays: its children are up and its store has taken inputs."""
    def playing() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"the demo ended early ({proc.returncode}): {proc.stderr.read() if proc.stderr else ''}")
        stores = list((tmp / "tmp").glob("studtable-demo-*/table.sqlite*"))
        return len(descendants(proc.pid)) >= want_children and bool(stores) and stores[0].stat().st_size > 0
    _wait(playing, 120, "the demo to start playing")
    time.sleep(3.0)  # mid-hand
    return descendants(proc.pid)


def _interrupt_and_check(proc: subprocess.Popen[str], tmp: Path, kids: set[int]) -> str:
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the terminal signals the whole foreground group
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError("the demo did not stop within 60 s of Ctrl-C") from None
    _wait(lambda: not any(_alive(p) for p in kids), 15, f"the demo's children {sorted(kids)} to end")
    left = sorted(p.name for p in (tmp / "tmp").iterdir())
    assert left == [], f"left behind in TMPDIR: {left}"
    if "Traceback" in err:
        pytest.fail(f"a traceback on stderr:\n{err[-4000:]}")
    return err


def test_ctrl_c_stops_the_headless_demo_with_its_processes(tmp_path: Path) -> None:
    proc, _ = _start(tmp_path, "--headless", "--hands", "500", "--processes")
    kids = _ready(proc, tmp_path, 2)  # the engine process and the camera process (and their helpers)
    assert len(kids) >= 2, kids
    _interrupt_and_check(proc, tmp_path, kids)
    assert proc.returncode in (130, -signal.SIGINT, 0), proc.returncode


def test_ctrl_c_stops_the_windows(tmp_path: Path) -> None:
    pytest.importorskip("PySide6")
    proc, _ = _start(tmp_path, "--autoplay", "--pace", "0.2", "--hands", "500")
    kids = _ready(proc, tmp_path, 1)  # the camera process
    _interrupt_and_check(proc, tmp_path, kids)


def test_ctrl_c_during_a_drill(tmp_path: Path) -> None:
    proc, _ = _start(tmp_path, "--headless", "--hands", "500", "--processes", "--drill", "engine-kill")
    kids = _ready(proc, tmp_path, 2)
    _interrupt_and_check(proc, tmp_path, kids)


def test_after_an_abort_nothing_outlives_the_demo(tmp_path: Path) -> None:
    """SIGKILL (like Qt's abort, which nothing can catch): the children die with it, and the next demo
    removes the folder the dead one left."""
    proc, env = _start(tmp_path, "--headless", "--hands", "500", "--processes")
    kids = _ready(proc, tmp_path, 2)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    _wait(lambda: not any(_alive(p) for p in kids), 30, f"the dead demo's children {sorted(kids)} to end")
    stale = list((tmp_path / "tmp").glob("studtable-demo-*"))
    assert stale, "the aborted demo left no folder: nothing to check"
    again = subprocess.run([*CLI, "demo", "--headless", "--hands", "1", "--no-camera"], env=env,
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    assert not any(p.exists() for p in stale), f"the dead demo's folder is still there: {stale}"
