"""Message kinds and their payloads, as ``hardware/PROTOCOL.md`` defines them.

Every multi-byte integer is big-endian.  A payload that does not parse is a
``MessageError`` naming the kind and what was wrong, so a firmware author
reading the bridge's log sees which field of which message is off.

Device -> host events that matter to the game (card drawn, seat tag, shoe
state, device error) carry the device's event counter: it restarts at 1 on
every boot and the boot count (in IDENT) tells boots apart, so the host can
de-duplicate events replayed after a reconnect by (boot, counter).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum
from typing import Final

PROTOCOL_VERSION: Final = 1
_IDENT_FMT: Final = ">BBBB8sBBHBI"


class Kind(IntEnum):
    """The KIND byte of a frame."""

    HELLO = 0x01  # host -> device, unsequenced: start a session
    IDENT = 0x02  # device -> host, unsequenced: who I am (also the boot/reset notice)
    HEARTBEAT = 0x03  # both, unsequenced
    ACK = 0x04  # both, SEQ = last in-order sequence number received
    NAK = 0x05  # both, SEQ = the sequence number the receiver is waiting for
    CARD_DRAWN = 0x20  # device -> host, sequenced
    SEAT_TAG = 0x21  # device -> host, sequenced
    SHOE_STATE = 0x22  # device -> host, sequenced
    DEVICE_ERROR = 0x23  # device -> host, sequenced
    RESET = 0x30  # host -> device, sequenced: reboot the shoe


SEQUENCED: Final = frozenset({Kind.CARD_DRAWN, Kind.SEAT_TAG, Kind.SHOE_STATE, Kind.DEVICE_ERROR, Kind.RESET})


class ResetReason(IntEnum):
    POWER_ON = 0
    WATCHDOG = 1
    BROWNOUT = 2
    HOST_REQUEST = 3
    SOFTWARE = 4
    UNKNOWN = 255


class Capability(IntEnum):
    """Bits of IDENT's capability byte."""

    SHOE_SENSOR = 0x01  # a switch that says whether cards are loaded
    SEAT_ANTENNAS = 0x02  # seat antennas fitted; their count is in IDENT
    PERSISTENT_BOOT_COUNT = 0x04  # boot count survives power loss


class ErrorCode(IntEnum):
    READER_NOT_FOUND = 1
    READER_TIMEOUT = 2
    ANTENNA_FAULT = 3
    QUEUE_OVERFLOW = 4  # events were lost on the device: the host must be told
    MULTIPLE_TAGS = 5  # two tags in the field at once
    OTHER = 255


class MessageError(ValueError):
    """A payload that does not match its kind's layout."""


@dataclass(frozen=True, slots=True)
class Hello:
    protocol_version: int
    nonce: int

    def encode(self) -> bytes:
        return struct.pack(">BI", self.protocol_version, self.nonce)


@dataclass(frozen=True, slots=True)
class Ident:
    """The device's identity; ``nonce`` 0 means an unsolicited boot notice."""

    protocol_version: int
    firmware: tuple[int, int, int]
    device_id: bytes  # 8 bytes, e.g. the MCU's MAC or flash id
    capabilities: int
    seat_antennas: int
    boot_count: int
    reset_reason: int
    nonce: int

    def encode(self) -> bytes:
        return struct.pack(
            _IDENT_FMT,
            self.protocol_version,
            *self.firmware,
            self.device_id,
            self.capabilities,
            self.seat_antennas,
            self.boot_count,
            self.reset_reason,
            self.nonce,
        )

    @property
    def firmware_version(self) -> str:
        return ".".join(str(v) for v in self.firmware)

    @property
    def device_hex(self) -> str:
        return self.device_id.hex()


@dataclass(frozen=True, slots=True)
class Heartbeat:
    uptime_ms: int

    def encode(self) -> bytes:
        return struct.pack(">I", self.uptime_ms & 0xFFFFFFFF)


def _uid_ok(uid: bytes, kind: str) -> None:
    if len(uid) not in (4, 7, 10):
        raise MessageError(f"{kind}: a tag UID is 4, 7 or 10 bytes (ISO 14443A); got {len(uid)}")


@dataclass(frozen=True, slots=True)
class CardDrawn:
    counter: int
    uid: bytes
    quality: int  # 0..255: the reader's signal quality for this read

    def encode(self) -> bytes:
        _uid_ok(self.uid, "card drawn")
        return struct.pack(">IBB", self.counter, self.quality, len(self.uid)) + self.uid


@dataclass(frozen=True, slots=True)
class SeatTag:
    counter: int
    antenna: int
    uid: bytes
    quality: int

    def encode(self) -> bytes:
        _uid_ok(self.uid, "seat tag")
        return struct.pack(">IBBB", self.counter, self.antenna, self.quality, len(self.uid)) + self.uid


@dataclass(frozen=True, slots=True)
class ShoeState:
    counter: int
    loaded: bool

    def encode(self) -> bytes:
        return struct.pack(">IB", self.counter, 1 if self.loaded else 0)


@dataclass(frozen=True, slots=True)
class DeviceError:
    counter: int
    code: int
    detail: str

    def encode(self) -> bytes:
        text = self.detail.encode("ascii", "replace")[:32]
        return struct.pack(">IB", self.counter, self.code) + text


@dataclass(frozen=True, slots=True)
class ResetCommand:
    reason: int = ResetReason.HOST_REQUEST

    def encode(self) -> bytes:
        return bytes((self.reason,))


Message = Hello | Ident | Heartbeat | CardDrawn | SeatTag | ShoeState | DeviceError | ResetCommand

KIND_OF: Final[dict[type, Kind]] = {
    Hello: Kind.HELLO,
    Ident: Kind.IDENT,
    Heartbeat: Kind.HEARTBEAT,
    CardDrawn: Kind.CARD_DRAWN,
    SeatTag: Kind.SEAT_TAG,
    ShoeState: Kind.SHOE_STATE,
    DeviceError: Kind.DEVICE_ERROR,
    ResetCommand: Kind.RESET,
}


def kind_of(msg: Message) -> Kind:
    return KIND_OF[type(msg)]


def _need(payload: bytes, n: int, what: str, exact: bool = True) -> None:
    if (len(payload) != n) if exact else (len(payload) < n):
        rel = "exactly" if exact else "at least"
        raise MessageError(f"{what}: payload must be {rel} {n} bytes, got {len(payload)}")


def decode_message(kind: int, payload: bytes) -> Message:
    """Parse the payload of a frame of ``kind``; ACK and NAK carry none and are not messages."""
    try:
        k = Kind(kind)
    except ValueError:
        raise MessageError(f"unknown message kind 0x{kind:02x}") from None
    if k is Kind.HELLO:
        _need(payload, 5, "hello")
        v, nonce = struct.unpack(">BI", payload)
        return Hello(v, nonce)
    if k is Kind.IDENT:
        _need(payload, struct.calcsize(_IDENT_FMT), "ident")
        v, a, b, c, dev, caps, seats, boot, reason, nonce = struct.unpack(_IDENT_FMT, payload)
        return Ident(v, (a, b, c), dev, caps, seats, boot, reason, nonce)
    if k is Kind.HEARTBEAT:
        _need(payload, 4, "heartbeat")
        return Heartbeat(struct.unpack(">I", payload)[0])
    if k is Kind.CARD_DRAWN:
        _need(payload, 6, "card drawn", exact=False)
        counter, quality, n = struct.unpack(">IBB", payload[:6])
        uid = payload[6:]
        if len(uid) != n:
            raise MessageError(f"card drawn: UID length byte says {n}, {len(uid)} UID bytes follow")
        _uid_ok(uid, "card drawn")
        return CardDrawn(counter, uid, quality)
    if k is Kind.SEAT_TAG:
        _need(payload, 7, "seat tag", exact=False)
        counter, antenna, quality, n = struct.unpack(">IBBB", payload[:7])
        uid = payload[7:]
        if len(uid) != n:
            raise MessageError(f"seat tag: UID length byte says {n}, {len(uid)} UID bytes follow")
        _uid_ok(uid, "seat tag")
        return SeatTag(counter, antenna, uid, quality)
    if k is Kind.SHOE_STATE:
        _need(payload, 5, "shoe state")
        counter, state = struct.unpack(">IB", payload)
        if state > 1:
            raise MessageError(f"shoe state: state byte must be 0 (empty) or 1 (loaded), got {state}")
        return ShoeState(counter, bool(state))
    if k is Kind.DEVICE_ERROR:
        _need(payload, 5, "device error", exact=False)
        counter, code = struct.unpack(">IB", payload[:5])
        return DeviceError(counter, code, payload[5:].decode("ascii", "replace"))
    if k is Kind.RESET:
        _need(payload, 1, "reset")
        return ResetCommand(payload[0])
    raise MessageError(f"{k.name.lower()} frames carry no message payload")
