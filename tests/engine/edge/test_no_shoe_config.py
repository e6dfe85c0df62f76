"""A table without a shoe says so in its configuration (issue 21, 12): the engine starts with the
camera's cards as the deal, no "shoe offline" prompt; the table file's missing [shoe] says it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from engine.configfile import ConfigFileError
from engine.service import EngineConfig, EngineService
from engine.tableconfig import load

BASE = {"table": "t1", "game": {"variant": "F7S", "ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10},
        "seats": [{"seat": 1, "name": "Ann", "stack": 200}, {"seat": 2, "name": "Bob", "stack": 200}]}


def test_shoe_false_starts_the_floor_without_a_shoe_and_without_a_prompt(tmp_path: Path) -> None:
    config = EngineConfig.from_dict({**BASE, "store": {"url": str(tmp_path / "e.db")}, "engine": {"shoe": False}})
    assert config.shoe is False
    service = EngineService(config)
    inputs = service.core.setup_inputs()
    assert {"kind": "source", "device": "shoe", "status": "absent"} in inputs
    for inp in inputs:
        service.core.apply("engine", inp)
    assert service.core.floor.shoe_active is False and service.core.floor.prompts == {}
    # The default: a shoe, as before.
    assert EngineConfig.from_dict({**BASE, "store": {"url": str(tmp_path / "f.db")}}).shoe is True


def test_a_bad_shoe_flag_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigFileError, match=r"engine\.shoe.*true or false"):
        EngineConfig.from_dict({**BASE, "store": {"url": str(tmp_path / "e.db")}, "engine": {"shoe": "no"}})


def test_a_table_file_without_a_shoe_section_gives_the_engine_shoe_false(tmp_path: Path) -> None:
    etc = tmp_path / "etc"
    done = subprocess.run([sys.executable, "-m", "engine.cli", "setup", "--out", str(etc), "--state-dir",
                           str(tmp_path / "var"), "--camera", "0", "--units-dir", str(tmp_path / "u")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert load(etc / "table.toml").engine_part()["engine"]["shoe"] is False
    done = subprocess.run([sys.executable, "-m", "engine.cli", "setup", "--out", str(tmp_path / "etc2"),
                           "--state-dir", str(tmp_path / "var2"), "--shoe-port", "/dev/ttyS9",
                           "--units-dir", str(tmp_path / "u2")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert load(tmp_path / "etc2" / "table.toml").engine_part()["engine"]["shoe"] is True


def test_shoe_false_on_a_store_that_played_with_a_shoe_takes_the_camera_from_then_on(tmp_path: Path) -> None:
    """Review F6: the setup input is stored only at a table's first start, so a table that had a
    shoe and is configured without one later kept waiting for shoe cards, silently."""
    store = {"url": str(tmp_path / "e.db")}
    first = EngineService(EngineConfig.from_dict({**BASE, "store": store}))
    first.replay()
    assert first.core.floor.shoe_active is True
    first.store.close()
    later = EngineService(EngineConfig.from_dict({**BASE, "store": store, "engine": {"shoe": False}}))
    later.replay()
    assert later.core.floor.shoe_active is False and later.core.floor.prompts == {}
    later.store.close()


def test_the_camera_unit_yields_the_cpu_to_the_engine(tmp_path: Path) -> None:
    """Nice= alone orders the processes of one session or cgroup; systemd gives each unit its own,
    so the vision unit also carries a low CPUWeight= and the engine's path keeps the default."""
    units = tmp_path / "u"
    done = subprocess.run([sys.executable, "-m", "engine.cli", "setup", "--out", str(tmp_path / "etc"),
                           "--state-dir", str(tmp_path / "var"), "--camera", "0", "--units-dir", str(units)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    vision = [p for p in units.iterdir() if "-vision-" in p.name]
    assert len(vision) == 1
    lines = vision[0].read_text().splitlines()
    assert "Nice=10" in lines and "CPUWeight=10" in lines
    engine = next(p for p in units.iterdir() if p.name.endswith("-engine.service"))
    assert not any(line.startswith(("CPUWeight=", "Nice=")) for line in engine.read_text().splitlines())
