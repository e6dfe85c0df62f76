"""The studtable deck / shoe-sim / bridge commands, run as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from engine.cards import DECK
from tests.firmware_bridge.loopback import make_uids

CLI = [sys.executable, "-m", "engine.cli"]


def run(*args: str, env: dict[str, str] | None = None, input: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=60, env=env, input=input)


def test_deck_import_list_show_and_refusal(tmp_path: Path) -> None:
    decks = tmp_path / "decks"
    good = tmp_path / "red.csv"
    good.write_text("".join(f"{u.hex()},{c}\n" for u, c in zip(make_uids(52, 31), DECK, strict=True)))
    r = run("deck", "enroll", "red", "--import", str(good), "--decks", str(decks))
    assert r.returncode == 0, r.stderr
    assert "deck red enrolled: 52 cards, 52 tags" in r.stdout
    assert run("deck", "list", "--decks", str(decks)).stdout.split() == ["red"]
    show = run("deck", "show", "red", "--decks", str(decks)).stdout
    assert "2c  " in show and "ace of spades" in show
    bad = tmp_path / "bad.csv"
    bad.write_text(good.read_text().replace(",As\n", ",Ah\n"))
    r = run("deck", "enroll", "bad", "--import", str(bad), "--decks", str(decks))
    assert r.returncode == 1
    assert "card Ah appears twice" in r.stderr and "have no tag: As" in r.stderr
    assert run("deck", "list", "--decks", str(decks)).stdout.split() == ["red"]


def test_shoe_sim_and_bridge_processes_talk_over_a_pty(tmp_path: Path) -> None:
    decks = tmp_path / "decks"
    src = tmp_path / "red.csv"
    uids = make_uids(52, 32)
    src.write_text("".join(f"{u.hex()},{c}\n" for u, c in zip(uids, DECK, strict=True)))
    assert run("deck", "enroll", "red", "--import", str(src), "--decks", str(decks)).returncode == 0
    link = tmp_path / "ttyShoe"
    sim = subprocess.Popen([*CLI, "shoe-sim", "--pty", str(link), "--deck", "red", "--decks", str(decks)],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    cfg = tmp_path / "bridge.toml"
    cfg.write_text(f'table = "t9"\nport = "{link}"\ndeck = "red"\ndecks_dir = "{decks}"\n')
    bridge = subprocess.Popen([*CLI, "bridge", "--config", str(cfg)], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert sim.stdout is not None and sim.stdin is not None and bridge.stdout is not None
        assert "shoe simulator on" in sim.stdout.readline()
        lines = [json.loads(bridge.stdout.readline()) for _ in range(2)]
        assert [x["payload"] for x in lines] == ["offline", "online"]
        assert lines[0]["topic"] == "studtable/v1/t9/avail/shoe"
        sim.stdin.write("load\ndraw 3\n")
        sim.stdin.flush()
        drawn = [sim.stdout.readline().split() for _ in range(3)]
        out = [json.loads(bridge.stdout.readline()) for _ in range(4)]
        assert all(x["topic"] == "studtable/v1/t9/sensor/shoe" for x in out)
        payloads = [json.loads(x["payload"]) for x in out]
        assert payloads[0]["kind"] == "shoe_loaded" and payloads[0]["deck"] == "red"
        assert [(p["card"], p["uid"], p["status"]) for p in payloads[1:]] == [(d[1], d[2], "ok") for d in drawn]
    finally:
        bridge.terminate()
        sim.terminate()
        bridge.wait(10)
        sim.wait(10)


def test_bridge_reports_a_missing_port_in_plain_words(tmp_path: Path) -> None:
    cfg = tmp_path / "b.json"
    cfg.write_text(json.dumps({"table": "t1", "port": "/dev/ttyUSB_nothing_here"}))
    p = subprocess.Popen([*CLI, "bridge", "--config", str(cfg)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    assert p.stderr is not None
    first = ""
    while "does not exist" not in first:  # the first report (however slow the start on a loaded machine)
        line = p.stderr.readline()
        assert line, "the bridge ended without saying what is wrong"
        first += line
    time.sleep(2.0)  # several retries later
    p.terminate()
    _, err = p.communicate(timeout=10)
    err = first + err
    assert "the serial path /dev/ttyUSB_nothing_here does not exist; check that the shoe is plugged in" in err
    assert err.count("does not exist") == 1  # said once, not once per retry


def test_enrollment_from_the_shoe_does_not_shift_after_a_refused_name(tmp_path: Path) -> None:
    """The real thing: the shoe simulator on a pty, `studtable deck enroll --port`, names typed with
    mistakes among them (a non-card, a card given twice, a bare Enter); every tag gets its own card."""
    shoe_decks, new_decks = tmp_path / "shoe", tmp_path / "new"
    src = tmp_path / "red.csv"
    uids = make_uids(52, 33)
    src.write_text("".join(f"{u.hex()},{c}\n" for u, c in zip(uids, DECK, strict=True)))
    assert run("deck", "enroll", "red", "--import", str(src), "--decks", str(shoe_decks)).returncode == 0
    link = tmp_path / "ttyShoe"
    sim = subprocess.Popen([*CLI, "shoe-sim", "--pty", str(link), "--deck", "red", "--decks", str(shoe_decks),
                            "--seed", "5"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    enrol = None
    try:
        assert sim.stdout is not None and sim.stdin is not None
        assert "shoe simulator on" in sim.stdout.readline()
        enrol = subprocess.Popen([*CLI, "deck", "enroll", "green", "--port", str(link), "--decks", str(new_decks)],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 env={**os.environ, "PYTHONUNBUFFERED": "1"})
        assert enrol.stdout is not None and enrol.stdin is not None
        assert "Enrolling deck 'green'" in enrol.stdout.readline()
        sim.stdin.write("load\ndraw 52\n")
        sim.stdin.flush()
        drawn = [sim.stdout.readline().split() for _ in range(52)]  # "drew Kd 04...."
        answers: list[str] = []
        for i, (_, card, _uid) in enumerate(drawn):
            if i == 0:
                answers += ["Zz"]  # not a card
            if i == 1:
                answers += [drawn[0][1]]  # the previous card's name again
            if i == 2:
                answers += [""]  # Enter: no checked suggestion, nothing accepted
            answers.append(card)
        out, err = enrol.communicate("\n".join(answers) + "\n", timeout=120)
        assert enrol.returncode == 0, err + out[-2000:]
        assert "deck green enrolled: 52 cards, 52 tags" in out
        assert out.count("not taken") == 3
        saved = json.loads((new_decks / "green.json").read_text())
        assert {t["uid"]: t["card"] for t in saved["tags"]} == {uid: card for _, card, uid in drawn}
    finally:
        if enrol is not None and enrol.poll() is None:
            enrol.kill()
        sim.terminate()
        sim.wait(10)
