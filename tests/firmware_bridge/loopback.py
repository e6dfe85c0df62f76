"""Host and device sessions wired back to back through lossy byte channels,
on a virtual clock: the protocol proofs without a port or a wall clock."""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field

from firmware_bridge import messages as m
from firmware_bridge.lossy import LossyChannel
from firmware_bridge.session import DeviceSession, HostEvent, HostSession, LinkConfig, Received

IDENT = m.Ident(m.PROTOCOL_VERSION, (1, 2, 3), bytes.fromhex("5eed00000000c0de"), 0x01, 0, 7, 0, 0)


def make_uids(n: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    uids: set[bytes] = set()
    while len(uids) < n:
        uids.add(bytes([0x04]) + rng.randbytes(6))
    return sorted(uids)


@dataclass
class Loopback:
    """Both ends plus the two directions of a cable, advanced in fixed steps."""

    host_to_dev: LossyChannel = field(default_factory=LossyChannel)
    dev_to_host: LossyChannel = field(default_factory=LossyChannel)
    config: LinkConfig = field(default_factory=LinkConfig)
    step: float = 0.002
    baud: int = 115200
    now: float = 0.0
    events: list[HostEvent] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.host = HostSession(self.config, nonce_seed=99)
        self.device = DeviceSession(IDENT, self.now, self.config)
        self.host.open(self.now)
        # Bytes in flight: (arrival time, data); a serial line keeps order.
        self._to_dev: deque[tuple[float, bytes]] = deque()
        self._to_host: deque[tuple[float, bytes]] = deque()
        self._busy = [0.0, 0.0]

    def _wire(self, q: deque[tuple[float, bytes]], i: int, data: bytes) -> None:
        if data:
            start = max(self.now, self._busy[i])
            self._busy[i] = start + len(data) * 10 / self.baud
            q.append((self._busy[i], data))

    def advance(self) -> None:
        """One fixed step of ``step`` seconds (for tests that poke at the state between steps)."""
        self._process(self.now + self.step)

    def run_until(self, t: float) -> None:
        """Jump from one thing that happens to the next (a deadline or a byte arrival) up to ``t``."""
        while True:
            times = [self.device.next_deadline()]
            hd = self.host.next_deadline()
            if hd is not None:
                times.append(hd)
            if self._to_dev:
                times.append(self._to_dev[0][0])
            if self._to_host:
                times.append(self._to_host[0][0])
            nxt = max(min(times), self.now + 1e-4)
            if nxt > t:
                self._process(t)
                return
            self._process(nxt)

    def _process(self, now: float) -> None:
        self.now = now
        while self._to_dev and self._to_dev[0][0] <= now:
            self.device.receive_bytes(self._to_dev.popleft()[1], now)
        while self._to_host and self._to_host[0][0] <= now:
            self.host.receive_bytes(self._to_host.popleft()[1], now)
        self.device.poll(now)
        self.host.poll(now)
        self._wire(self._to_host, 0, self.dev_to_host.apply(self.device.bytes_to_send()))
        self._wire(self._to_dev, 1, self.host_to_dev.apply(self.host.bytes_to_send()))
        self.events.extend(self.host.events())

    def draw(self, uid: bytes, quality: int = 200) -> int:
        counter = self.device.next_counter()
        self.device.emit(m.CardDrawn(counter, uid, quality), self.now)
        return counter

    def received_cards(self) -> list[m.CardDrawn]:
        return [e.message for e in self.events if isinstance(e, Received) and isinstance(e.message, m.CardDrawn)]
