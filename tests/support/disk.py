"""A real, tiny filesystem to fill up: a tmpfs mounted for one test (needs root)."""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def small_tmpfs(size: str = "400k") -> Iterator[Path]:
    """Mount a tmpfs of ``size`` on a new folder (the test is skipped where that cannot be done)."""
    where = Path(tempfile.mkdtemp(prefix="studtable-full-"))
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {done.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)
        with contextlib.suppress(OSError):
            where.rmdir()


def fill_to_the_last_byte(disk: Path, name: str = "filler") -> Path:
    """Fill the filesystem; returns the filler (delete it to free the space)."""
    filler = disk / name
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (65536, 4096, 1):  # big steps, then to the last byte
            while True:
                try:
                    if os.write(fd, b"\0" * size) < size:
                        break
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
                    break
    finally:
        os.close(fd)
    return filler
