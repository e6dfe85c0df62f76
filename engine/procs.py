"""Starting and stopping child processes and their scratch folders, so that nothing outlives its parent.

One helper for every place that runs a ``studtable`` service, a broker or a camera as a child:

* ``start(argv, log_path)`` starts it with its output in a log file, and (Linux) asks the kernel to
  send it SIGKILL if the parent dies (``PR_SET_PDEATHSIG``): a parent killed by SIGKILL or aborted
  by Qt leaves no engine or broker behind.  SIGKILL, not SIGTERM: with its parent gone nobody waits
  for a clean shutdown, and a child's SIGTERM handler can hang on what died with the parent (the
  embedded broker); every service is built to survive SIGKILL (inputs are durable before acked).
* ``stop(proc)`` asks with SIGTERM, waits, then SIGKILLs; ``kill(proc)`` is the SIGKILL alone.
* ``die_with_parent()`` is the same PDEATHSIG for a child started another way (multiprocessing).
* ``on_sigterm()`` is the event a service's SIGTERM sets, ``wait_for(stop)`` its main thread waiting for it.
* ``scratch_dir(prefix)`` makes a private temporary folder with the owner's pid in it, and removes
  the folders of earlier owners that died without cleaning up (an abort, a SIGKILL).

An edge module (processes, files); no core imports it.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

PR_SET_PDEATHSIG = 1
OWNER_FILE = ".owner-pid"


def die_with_parent(sig: int = signal.SIGKILL) -> None:
    """Ask Linux to send ``sig`` to this process when its parent exits (no-op elsewhere)."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)


def start(argv: Sequence[str], log_path: Path | None = None, *, cwd: Path | None = None,
          env: dict[str, str] | None = None, new_group: bool = False) -> subprocess.Popen[bytes]:
    """Start ``argv`` (output to ``log_path``, else discarded) as a child that dies with this process."""
    out = open(log_path, "ab") if log_path is not None else subprocess.DEVNULL  # noqa: SIM115
    try:
        return subprocess.Popen(list(argv), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                cwd=cwd, env=env, preexec_fn=die_with_parent, start_new_session=new_group)
    finally:
        if log_path is not None and not isinstance(out, int):
            out.close()


def studtable(args: Sequence[str], log_path: Path | None = None, **kw: object) -> subprocess.Popen[bytes]:
    """``studtable ARGS`` with this interpreter (the same environment as the parent)."""
    return start([sys.executable, "-m", "engine.cli", *args], log_path, **kw)  # type: ignore[arg-type]


def stop(proc: subprocess.Popen[bytes] | None, timeout: float = 10.0) -> None:
    """SIGTERM, wait up to ``timeout`` seconds, then SIGKILL; always reaps the child."""
    if proc is None:
        return
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            kill(proc)
    else:
        proc.wait()


def kill(proc: subprocess.Popen[bytes] | None) -> None:
    """SIGKILL (no clean shutdown) and reap."""
    if proc is None:
        return
    with contextlib.suppress(ProcessLookupError):
        proc.kill()
    proc.wait()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep(prefix: str, root: Path | None = None) -> list[Path]:
    """Remove ``prefix*`` scratch folders whose owner process is gone; returns what was removed."""
    base = Path(root or tempfile.gettempdir())
    removed: list[Path] = []
    for d in base.glob(f"{prefix}*"):
        owner = d / OWNER_FILE
        try:
            pid = int(owner.read_text().strip())
        except (OSError, ValueError):
            continue  # not one of ours (or not yet written): leave it
        if pid != os.getpid() and not _alive(pid):
            shutil.rmtree(d, ignore_errors=True)
            removed.append(d)
    return removed


def scratch_dir(prefix: str, root: Path | None = None) -> Path:
    """A new private temporary folder owned by this process; stale ones of dead owners are swept first."""
    sweep(prefix, root)
    d = Path(tempfile.mkdtemp(prefix=prefix, dir=root))
    (d / OWNER_FILE).write_text(f"{os.getpid()}\n")
    return d


def on_sigterm() -> threading.Event:
    """An event that SIGTERM sets (the handler installed now, in the main thread): a service stops cleanly."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    return stop


def wait_for(stop: threading.Event) -> None:
    """Block until ``stop`` is set (by a SIGTERM handler), waking twice a second.

    Why: the kernel may hand a process's SIGTERM to any of its threads (paho's, the serial
    reader's); that only marks the signal pending, and its Python handler runs when the main
    thread next runs bytecode.  A main thread blocked in an untimed ``Event.wait`` never does: a
    shoe bridge told to stop kept running for good (CI, tests/e2e/test_bridge_publish.py).
    """
    while not stop.wait(0.5):
        pass
