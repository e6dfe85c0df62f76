"""A bad cable, on purpose: seeded byte loss, corruption and repetition.

One implementation of fault injection serves the pure-core tests (two
sessions wired back to back) and the shoe simulator (on a pty or a socket),
so the faults the proofs survive are the faults the simulator injects.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field


@dataclass(slots=True)
class FaultStats:
    bytes_in: int = 0
    dropped: int = 0
    corrupted: int = 0
    duplicated: int = 0


@dataclass(slots=True)
class LossyChannel:
    """Applies faults to each chunk of bytes written through it.

    ``drop_rate`` and ``corrupt_rate`` are per byte; ``duplicate_rate`` is per
    chunk (the sessions write one chunk per frame or per burst of frames), so
    whole frames arrive twice, as they do when a USB transfer is replayed.
    """

    drop_rate: float = 0.0
    corrupt_rate: float = 0.0
    duplicate_rate: float = 0.0
    seed: int = 0
    stats: FaultStats = field(default_factory=FaultStats)
    _rng: random.Random = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    @property
    def clean(self) -> bool:
        return not (self.drop_rate or self.corrupt_rate or self.duplicate_rate)

    def apply(self, data: bytes) -> bytes:
        """The bytes as the far end receives them."""
        if not data or self.clean:
            self.stats.bytes_in += len(data)
            return data
        rng = self._rng
        self.stats.bytes_in += len(data)
        out = bytearray()
        for b in data:
            r = rng.random()
            if r < self.drop_rate:
                self.stats.dropped += 1
                continue
            if r < self.drop_rate + self.corrupt_rate:
                self.stats.corrupted += 1
                b ^= rng.randrange(1, 256)
            out.append(b)
        if self.duplicate_rate and rng.random() < self.duplicate_rate:
            self.stats.duplicated += 1
            out += bytes(out)
        return bytes(out)
