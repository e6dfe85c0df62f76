"""Shoe bench: draw-to-publish latency through a real pty at 115200 baud.

    python bench/bench_shoe.py [--draws 2000] [--lossy-draws 10000]

1. Latency: the simulated shoe draws a card (time t0, taken in the simulator
   thread when the draw happens), its UART sends the frame at 115200 baud (the
   simulator holds the bytes until their last bit would have left), the bridge
   reads the pty, runs the session, resolves the card and hands a validated
   wire message to the publish sink (time t1).  Reported: p50/p99 of t1 - t0,
   beside the floor: the card frame's own wire time (bytes x 10 bits / baud).
2. Robustness: N draws through the pty with 1% of bytes corrupted and 1%
   dropped in both directions: wrong cards, lost, duplicated, out of order.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine import wire
from engine.cards import DECK
from firmware_bridge import messages as m
from firmware_bridge.bridge import BridgeCore, SerialBridge
from firmware_bridge.deck import Deck, Resolver
from firmware_bridge.framing import encode_frame
from firmware_bridge.simulator import Faults, ShoeSimulator


def make_deck(seed: int) -> Deck:
    import random

    rng = random.Random(seed)
    return Deck.build("bench", zip([bytes([4]) + rng.randbytes(6) for _ in range(52)], DECK, strict=True))


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def latency(draws: int, baud: int) -> None:
    deck = make_deck(1)
    tmp = Path(tempfile.mkdtemp())
    drawn_at: list[float] = []  # taken in the simulator thread at the moment of the draw
    published: list[float] = []  # taken when the bridge hands the validated message to the sink
    done = threading.Event()

    def sink(msg: wire.Message) -> None:
        if msg.kind == "card_drawn":
            published.append(time.monotonic())
            if len(published) >= draws:
                done.set()

    with ShoeSimulator(deck, pty_link=tmp / "ttyShoe", baud=baud, seed=1) as sim:
        core = BridgeCore("bench", "shoe", 1, Resolver([deck], "bench"), sink)
        bridge = SerialBridge(sim.url, core, baud=baud, nonce_seed=1).start()
        sim.on_draw = lambda uid, t: drawn_at.append(t)
        while core.online is not True:
            time.sleep(0.01)
        for i in range(draws):
            if i % 52 == 0:
                sim.load()
                core.new_hand()
            sim.draw()
            time.sleep(0.01)  # faster than a dealer (about 2 cards a second), one card in flight at a time
        done.wait(60)
        bridge.stop()
    # Cards are published in draw order, exactly once each, so the i-th publish is the i-th draw.
    lat = [(p - d) * 1000 for d, p in zip(drawn_at, published, strict=False)]
    frame = len(encode_frame(0, m.Kind.CARD_DRAWN, m.CardDrawn(1, bytes(7), 200).encode()))
    floor = frame * 10 / baud * 1000
    p50, p99 = statistics.median(lat), pct(lat, 99)
    print(f"draw-to-publish through a pty at {baud} baud, {len(lat)} of {draws} draws:")
    print(f"  p50 {p50:.2f} ms   p99 {p99:.2f} ms   max {max(lat):.2f} ms")
    print(f"  floor: one card frame ({frame} bytes x 10 bits / {baud} baud) = {floor:.2f} ms")
    print(f"  ratio to floor: p50 {p50 / floor:.2f}x   p99 {p99 / floor:.2f}x")


def lossy(draws: int, baud: int) -> None:
    deck = make_deck(2)
    tmp = Path(tempfile.mkdtemp())
    cards: list[dict[str, object]] = []

    def sink(msg: wire.Message) -> None:
        if msg.kind == "card_drawn":
            cards.append(dict(msg.body))

    faults = Faults(drop_rate=0.01, corrupt_rate=0.01, seed=3)
    t0 = time.monotonic()
    with ShoeSimulator(deck, pty_link=tmp / "ttyShoe", baud=baud, faults=faults, seed=2) as sim:
        core = BridgeCore("bench", "shoe", 1, Resolver([deck], "bench"), sink)
        bridge = SerialBridge(sim.url, core, baud=baud, nonce_seed=2).start()
        drawn: list[bytes] = []
        for i in range(draws):
            if i % 52 == 0:
                sim.load()
                core.new_hand()
            drawn.append(sim.draw())
            while len(drawn) - len(cards) > 64:  # keep the shoe's queue bounded, as the firmware's is
                time.sleep(0.002)
        end = time.monotonic() + 60
        while len(cards) < draws and time.monotonic() < end:
            time.sleep(0.01)
        time.sleep(0.5)
        bridge.stop()
        stats = sim.out_channel.stats
    wrong = sum(1 for c in cards if c["card"] != str(deck.tags.get(bytes.fromhex(str(c["uid"])), "")))
    uids = [bytes.fromhex(str(c["uid"])) for c in cards]
    print(f"{draws} draws through a pty with 1% bytes corrupted and 1% dropped (both ways), "
          f"{time.monotonic() - t0:.1f} s:")
    print(f"  delivered {len(cards)}, in order and exactly once: {uids == drawn}, wrong cards: {wrong}, "
          f"statuses: {sorted({str(c['status']) for c in cards})}")
    print(f"  shoe->host bytes {stats.bytes_in}: {stats.corrupted} corrupted, {stats.dropped} dropped; "
          f"retransmitted frames {sim.model.session.arq.stats.retransmitted}, "
          f"replays suppressed {bridge.session.arq.stats.duplicates}")


def main() -> None:
    import logging

    logging.basicConfig(level=logging.ERROR)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--draws", type=int, default=2000)
    ap.add_argument("--lossy-draws", type=int, default=10_000)
    ap.add_argument("--baud", type=int, default=115200)
    a = ap.parse_args()
    latency(a.draws, a.baud)
    if a.lossy_draws:
        lossy(a.lossy_draws, a.baud)


if __name__ == "__main__":
    main()
