"""The vision process's priority is lowered where the kernel shares the CPU out: by session first
(autogroup), then by nice inside one (docs/vision.md, session 11).  A real child process."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path
from typing import Any

import pytest

from vision.service import lower_priority

pytestmark = pytest.mark.skipif(not Path("/proc/self/autogroup").exists(), reason="no autogroup in this kernel")


def _child(conn: Any) -> None:
    parent_session = os.getsid(0)
    lower_priority(7, own_group=True)
    conn.send((parent_session, os.getsid(0), os.getpid(), os.nice(0),
               Path("/proc/self/autogroup").read_text("ascii").split()))


def test_a_camera_child_gets_a_session_of_its_own_with_its_group_lowered() -> None:
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_child, args=(child,))
    proc.start()
    try:
        assert parent.poll(60)
        parent_session, session, pid, nice, group = parent.recv()
    finally:
        proc.join(10)
    # Its own session (so its CPU is not charged to the table's group), lowered in both ways.
    assert session == pid != parent_session
    assert nice >= 7
    assert group[-2:] == ["nice", "7"], group
