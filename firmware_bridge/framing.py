"""What the bytes on the shoe's serial line mean: frames, CRC, resync.

This module is the byte layer only (Klipper keeps ``msgproto`` apart from
``serialhdl`` for the same reason): it turns a stream of bytes that may have
been dropped, corrupted or padded with noise into whole frames whose CRC
checked, and turns frames back into bytes.  It knows nothing about
acknowledgements, sessions or cards; ``session.py`` does.  It reads no clock
and owns no port.

Frame layout (``hardware/PROTOCOL.md`` is the normative text)::

    +------+-----+-----+------+-----------------+--------+--------+------+
    | 0xA5 | LEN | SEQ | KIND | PAYLOAD (LEN)   | CRC hi | CRC lo | 0x7E |
    +------+-----+-----+------+-----------------+--------+--------+------+

* ``LEN`` counts payload bytes only, 0..MAX_PAYLOAD.
* The CRC is CRC-16/CCITT-FALSE (catalogue name CRC-16/IBM-3740: poly 0x1021,
  init 0xFFFF, no reflection, no final xor; check value 0x29B1 for the ASCII
  bytes ``123456789``) over LEN, SEQ, KIND and PAYLOAD, sent big-endian.
* The trailing 0x7E differs from the leading 0xA5 on purpose: when a byte of a
  frame is lost, the decoder's candidate frame ends on the next frame's 0xA5,
  so a dropped byte is rejected deterministically instead of leaving it to the
  1-in-65536 chance of the CRC.

Resync: the decoder looks for 0xA5; a candidate that fails (length out of
range, bad trailer, bad CRC) costs exactly one byte, and scanning resumes at
the byte after the rejected 0xA5, so a real frame hidden behind a corrupt one
is never skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

SOF: Final = 0xA5
EOF: Final = 0x7E
HEADER_LEN: Final = 4  # SOF LEN SEQ KIND
TRAILER_LEN: Final = 3  # CRC hi, CRC lo, EOF
OVERHEAD: Final = HEADER_LEN + TRAILER_LEN
# Small on purpose: a corrupted LEN makes the decoder wait for that many bytes
# before it can reject the candidate, so the bound caps the stall.
MAX_PAYLOAD: Final = 48


def _make_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
        table.append(crc)
    return tuple(table)


_TABLE: Final = _make_table()


def crc16(data: bytes | bytearray | memoryview, crc: int = 0xFFFF) -> int:
    """CRC-16/CCITT-FALSE of ``data`` (check value 0x29B1 for b"123456789").

    Table-driven so the Python side costs little per byte; the firmware uses the
    bitwise form of the same polynomial (``hardware/firmware/shoe_proto.c``).
    """
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ _TABLE[((crc >> 8) ^ b) & 0xFF]
    return crc


class FramingError(ValueError):
    """A frame that cannot be encoded (payload too long, field out of range)."""


@dataclass(frozen=True, slots=True)
class Frame:
    """One frame whose CRC checked: the sequence byte, the kind and the payload."""

    seq: int
    kind: int
    payload: bytes = b""


def encode_frame(seq: int, kind: int, payload: bytes = b"") -> bytes:
    """The bytes of one frame, ready for the wire."""
    if not 0 <= seq <= 0xFF:
        raise FramingError(f"sequence number {seq} does not fit in one byte")
    if not 0 <= kind <= 0xFF:
        raise FramingError(f"message kind {kind} does not fit in one byte")
    if len(payload) > MAX_PAYLOAD:
        raise FramingError(f"payload of {len(payload)} bytes exceeds the {MAX_PAYLOAD}-byte maximum")
    body = bytes((len(payload), seq, kind)) + payload
    crc = crc16(body)
    return bytes((SOF,)) + body + bytes((crc >> 8, crc & 0xFF, EOF))


@dataclass(slots=True)
class DecoderStats:
    """Counters a technician reads to judge the cable (all monotonic)."""

    frames: int = 0
    bytes_discarded: int = 0
    bad_length: int = 0
    bad_trailer: int = 0
    bad_crc: int = 0

    @property
    def rejected(self) -> int:
        return self.bad_length + self.bad_trailer + self.bad_crc


@dataclass(slots=True)
class FrameDecoder:
    """Streaming decoder: feed bytes, get whole CRC-checked frames.

    ``feed`` never raises on input: garbage is counted in ``stats`` and skipped.
    """

    _buf: bytearray = field(default_factory=bytearray)
    stats: DecoderStats = field(default_factory=DecoderStats)

    def feed(self, data: bytes | bytearray | memoryview) -> list[Frame]:
        """Add received bytes; return every frame completed by them, in order."""
        buf = self._buf
        buf += data
        out: list[Frame] = []
        while True:
            start = buf.find(SOF)
            if start < 0:
                self.stats.bytes_discarded += len(buf)
                buf.clear()
                break
            if start:
                self.stats.bytes_discarded += start
                del buf[:start]
            if len(buf) < 2:
                break
            length = buf[1]
            if length > MAX_PAYLOAD:
                self.stats.bad_length += 1
                self._skip_one()
                continue
            total = length + OVERHEAD
            if len(buf) < total:
                break
            if buf[total - 1] != EOF:
                self.stats.bad_trailer += 1
                self._skip_one()
                continue
            crc = (buf[total - 3] << 8) | buf[total - 2]
            if crc16(memoryview(buf)[1 : total - 3]) != crc:
                self.stats.bad_crc += 1
                self._skip_one()
                continue
            out.append(Frame(seq=buf[2], kind=buf[3], payload=bytes(buf[HEADER_LEN : HEADER_LEN + length])))
            self.stats.frames += 1
            del buf[:total]
        return out

    def _skip_one(self) -> None:
        del self._buf[:1]
        self.stats.bytes_discarded += 1

    @property
    def pending(self) -> int:
        """Bytes held while waiting for the rest of a candidate frame."""
        return len(self._buf)

    def abandon_partial(self) -> list[Frame]:
        """Give up on the candidate at the head of the buffer and rescan.

        A corrupted LEN can make the decoder wait for bytes that belong to
        later frames; when the line has been idle for a while the session
        calls this so the frames behind the bogus candidate are not held back.
        """
        if not self._buf:
            return []
        self.stats.bad_length += 1
        self._skip_one()
        return self.feed(b"")
