"""engine/procs.py: a service's main thread waiting for its SIGTERM handler."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

#: A service's main loop in small: SIGTERM sets an event (``on_sigterm``) the main thread waits on.  The
#: signal is sent to another thread (as the kernel may hand a process's SIGTERM to paho's or the
#: serial reader's): only its C handler runs there, and the Python handler waits for the main thread.
SERVICE = textwrap.dedent("""
    import signal, sys, threading
    from engine.procs import on_sigterm, wait_for

    stop = on_sigterm()

    def other_thread():
        threading.Event().wait(0.3)
        signal.pthread_kill(threading.get_ident(), signal.SIGTERM)

    threading.Thread(target=other_thread, daemon=True).start()
    if sys.argv[1] == "wait_for":
        wait_for(stop)
    else:
        stop.wait()  # what the services did before
    print("stopped", flush=True)
""")


def _run(how: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", SERVICE, how], capture_output=True, text=True, timeout=10)


def test_a_sigterm_taken_by_another_thread_still_stops_the_service() -> None:
    proc = _run("wait_for")
    assert proc.returncode == 0 and proc.stdout.strip() == "stopped", proc.stderr


def test_an_untimed_wait_misses_it() -> None:
    """Why ``wait_for`` exists: the same service waiting without a timeout never wakes."""
    with pytest.raises(subprocess.TimeoutExpired):
        subprocess.run([sys.executable, "-c", SERVICE, "stop.wait"], capture_output=True, text=True, timeout=3)
