"""The demo's camera process on a fresh machine: its first start enrolls the demo deck, which takes
longer than a silent child is given, and the demo must wait for it rather than play without a camera.

Session 13 found the demo (and bench_table.py) playing every hand with the shoe alone on a machine
with an empty cache: "the camera process did not start within 60 s" (the enrollment, ~20 s of CPU,
took 60-90 s beside the table), and as the child was terminated before it saved the model, every
later start enrolled again and failed again.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dealer_console.demo.camera import CameraProcess, CameraUnavailable
from tests.support.fixtures import MosquittoBroker

pytestmark = pytest.mark.slow  # a whole first enrollment: a minute or more on the 2-core machine


def test_a_first_start_that_enrolls_the_deck_is_waited_for_and_cached(
        mosquitto_broker: MosquittoBroker, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache = tmp_path / "cache"
    # 5 s for a silent child, far less than the enrollment takes: the child's word that it is enrolling
    # must buy it the time
    camera = CameraProcess(mosquitto_broker, "t1", 4, seed=1, cache=cache).start(timeout=5.0)
    try:
        camera.table_camera.deal(1, "Ah", True)
        assert camera.table_camera.truth()[1]["up"] == ["Ah"]  # it serves the dealer's side
    finally:
        camera.stop()
    assert "camera: enrolling the demo deck" in capsys.readouterr().err
    assert list(cache.glob("*.deck.npz")), "the enrolled deck was not cached for the next start"


def test_a_child_that_says_nothing_is_still_given_up(mosquitto_broker: MosquittoBroker, tmp_path: Path) -> None:
    """The longer wait is for a child at work, not for any child: one that says nothing within the
    silent limit is given up as before (half a second: too short even to import the vision stack)."""
    with pytest.raises(CameraUnavailable, match="did not start within"):
        CameraProcess(mosquitto_broker, "t1", 4, seed=1, cache=tmp_path / "cache").start(timeout=0.5)


@pytest.mark.skipif(not Path("/proc/self/autogroup").exists(), reason="no autogroup in this kernel")
def test_the_camera_group_runs_at_the_nice_value_asked_for(mosquitto_broker: MosquittoBroker) -> None:
    """The demo's camera group keeps nice 0; the table bench run as a real table gives it the vision
    service's own (``--processes``): what the kernel shares the CPU by (session 14)."""
    from dealer_console.demo.stack import _cache_dir
    from vision.service import NICENESS

    for nice in (0, NICENESS):
        camera = CameraProcess(mosquitto_broker, "t1", 4, seed=1, cache=_cache_dir(), group_nice=nice).start()
        try:
            group = Path(f"/proc/{camera.pid}/autogroup").read_text("ascii").split()
        finally:
            camera.stop()
        assert group[-2:] == ["nice", str(nice)], (nice, group)
