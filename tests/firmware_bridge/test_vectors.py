"""Both ends of the link against the same byte-exact vectors.

The Python framing code and the firmware's C framing code (compiled here with
the machine's gcc) read ``hardware/test_vectors.json``; if either drifts from
the file, one of these tests fails.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from firmware_bridge.framing import FrameDecoder, crc16, encode_frame

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "hardware" / "test_vectors.json"
FIRMWARE = ROOT / "hardware" / "firmware"


def load() -> list[dict]:
    return json.loads(VECTORS.read_text())


def hexes(frames: list) -> list[str]:
    return [encode_frame(f.seq, f.kind, f.payload).hex() for f in frames]


def test_vector_file_covers_every_section() -> None:
    types = [v["type"] for v in load()]
    assert types.count("crc") >= 3 and types.count("frame") >= 10 and types.count("stream") >= 5


def test_catalogue_check_value() -> None:
    # CRC-16/IBM-3740 (CCITT-FALSE) check value from the CRC catalogue; KERMIT would give 0x2189, XMODEM 0x31C3.
    assert crc16(b"123456789") == 0x29B1


@pytest.mark.parametrize("vector", [v for v in load() if v["type"] == "crc"], ids=lambda v: v["name"])
def test_python_crc(vector: dict) -> None:
    assert f"{crc16(bytes.fromhex(vector['data'])):04x}" == vector["crc"]


@pytest.mark.parametrize("vector", [v for v in load() if v["type"] == "frame"], ids=lambda v: v["name"])
def test_python_frames(vector: dict) -> None:
    frame = encode_frame(vector["seq"], vector["kind"], bytes.fromhex(vector["payload"]))
    assert frame.hex() == vector["frame"]
    decoded = FrameDecoder().feed(frame)
    assert hexes(decoded) == [vector["frame"]]


@pytest.mark.parametrize("vector", [v for v in load() if v["type"] == "stream"], ids=lambda v: v["name"])
def test_python_streams(vector: dict) -> None:
    dec = FrameDecoder()
    stream = bytes.fromhex(vector["stream"])
    # Byte by byte, as a UART delivers them, must give what one chunk gives.
    got = [f for i in range(len(stream)) for f in dec.feed(stream[i : i + 1])]
    assert hexes(got) == vector["frames"]
    idle = []
    while dec.pending:
        idle += dec.abandon_partial()
    assert hexes(idle) == vector["after_idle"]


def test_c_firmware_framing_matches_vectors(tmp_path: Path) -> None:
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc is not installed (apt-get install gcc)")
    exe = tmp_path / "host_test"
    build = subprocess.run(
        [gcc, "-std=c99", "-O1", "-Wall", "-Wextra", "-Werror", "-I", str(FIRMWARE),
         str(FIRMWARE / "shoe_proto.c"), str(FIRMWARE / "test" / "host_test.c"), "-o", str(exe)],
        capture_output=True, text=True,
    )
    assert build.returncode == 0, build.stderr
    run = subprocess.run([str(exe), str(VECTORS)], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert lines[-1] == f"checked {len(load())} vectors, 0 failures"
    assert not [line for line in lines if line.startswith("FAIL")]


def test_c_test_program_catches_a_wrong_vector(tmp_path: Path) -> None:
    """The C checker must fail on a vector that is wrong, or it proves nothing."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc is not installed")
    bad = VECTORS.read_text().replace('"crc": "29b1"', '"crc": "2189"', 1)
    path = tmp_path / "bad.json"
    path.write_text(bad)
    exe = tmp_path / "host_test"
    subprocess.run(
        [gcc, "-std=c99", "-I", str(FIRMWARE), str(FIRMWARE / "shoe_proto.c"),
         str(FIRMWARE / "test" / "host_test.c"), "-o", str(exe)],
        check=True,
    )
    run = subprocess.run([str(exe), str(path)], capture_output=True, text=True, timeout=30)
    assert run.returncode == 1
    assert "FAIL crc catalogue check 123456789: got 29b1 want 2189" in run.stdout


def test_c_device_session_compiles_warning_free(tmp_path: Path) -> None:
    """The firmware's portable session code builds on the host with every warning an error."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc is not installed")
    build = subprocess.run(
        [gcc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-c", str(FIRMWARE / "shoe_link.c"),
         "-I", str(FIRMWARE), "-o", str(tmp_path / "shoe_link.o")],
        capture_output=True, text=True,
    )
    assert build.returncode == 0, build.stderr
