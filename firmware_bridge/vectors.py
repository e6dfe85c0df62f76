"""Writes ``hardware/test_vectors.json``: byte-exact cases both ends are tested against.

Run ``python -m firmware_bridge.vectors > hardware/test_vectors.json`` after a
deliberate change to the wire format, then fix whichever side's tests fail.
The CRC check values come from the CRC catalogue, not from this code, so a
wrong CRC here cannot certify itself.  One object per line so the C test
program can read the file without a JSON library.
"""

from __future__ import annotations

import json
import sys

from firmware_bridge import messages as m
from firmware_bridge.framing import FrameDecoder, encode_frame


def build() -> list[dict[str, object]]:
    v: list[dict[str, object]] = []
    # From the catalogue (reveng): CRC-16/IBM-3740 a.k.a. CCITT-FALSE.
    v.append({"type": "crc", "name": "catalogue check 123456789", "data": b"123456789".hex(), "crc": "29b1"})
    v.append({"type": "crc", "name": "empty input is the init value", "data": "", "crc": "ffff"})
    v.append({"type": "crc", "name": "one byte 0x00", "data": "00", "crc": "e1f0"})
    v.append({"type": "crc", "name": "ack header", "data": "000004", "crc": None})
    ident = m.Ident(1, (1, 0, 2), bytes.fromhex("24a160ffee010000"), 0x03, 6, 513, 2, 0xDEADBEEF)
    frames = [
        ("ack seq 5", 5, m.Kind.ACK, b""),
        ("nak seq 255", 255, m.Kind.NAK, b""),
        ("hello", 0, m.Kind.HELLO, m.Hello(1, 0x01020304).encode()),
        ("ident", 0, m.Kind.IDENT, ident.encode()),
        ("heartbeat", 0, m.Kind.HEARTBEAT, m.Heartbeat(123456).encode()),
        ("card drawn 7-byte uid", 3, m.Kind.CARD_DRAWN, m.CardDrawn(1, bytes.fromhex("04a5227e8a1c90"), 224).encode()),
        ("card drawn 4-byte uid", 200, m.Kind.CARD_DRAWN, m.CardDrawn(70000, bytes.fromhex("de7ea57e"), 31).encode()),
        ("seat tag antenna 4", 9, m.Kind.SEAT_TAG, m.SeatTag(12, 4, bytes.fromhex("04010203040506"), 180).encode()),
        ("shoe empty", 10, m.Kind.SHOE_STATE, m.ShoeState(13, False).encode()),
        ("shoe loaded", 11, m.Kind.SHOE_STATE, m.ShoeState(14, True).encode()),
        ("device error", 12, m.Kind.DEVICE_ERROR, m.DeviceError(15, 1, "MFRC522 not found").encode()),
        ("reset command", 0, m.Kind.RESET, m.ResetCommand(3).encode()),
        ("max payload", 7, 0x7F, bytes(range(48))),
    ]
    from firmware_bridge.framing import crc16

    v[3]["crc"] = f"{crc16(bytes.fromhex('000004')):04x}"
    encoded = {}
    for name, seq, kind, payload in frames:
        f = encode_frame(seq, int(kind), payload)
        encoded[name] = f
        v.append({"type": "frame", "name": name, "seq": seq, "kind": int(kind), "payload": payload.hex(), "frame": f.hex()})
    card = encoded["card drawn 7-byte uid"]
    ack = encoded["ack seq 5"]
    hb = encoded["heartbeat"]
    bad_crc = bytearray(card)
    bad_crc[8] ^= 0x40
    dropped = card[:9] + card[10:]
    bad_eof = card[:-1] + b"\x00"
    long_len = bytes([0xA5, 49]) + bytes(10)
    streams = [
        ("garbage then a frame", bytes.fromhex("00ff7e13a5a5") + card),
        ("two frames back to back", card + ack),
        ("corrupt frame then a good one", bytes(bad_crc) + ack),
        ("dropped byte then a good one", dropped + hb),
        ("bad eof then a good one", bad_eof + ack),
        ("length over the maximum", long_len + card),
        ("frame hidden inside a corrupt candidate", bytes([0xA5, 20, 0, 0x20]) + ack + bytes(30) + hb),
        ("truncated frame at the end", card + ack[:-2]),
        ("sof bytes only", bytes([0xA5] * 5)),
    ]
    for name, stream in streams:
        dec = FrameDecoder()
        got = dec.feed(stream)
        # Then the line goes idle: partial candidates are given up one by one.
        idle = []
        while dec.pending:
            idle += dec.abandon_partial()
        v.append(
            {
                "type": "stream",
                "name": name,
                "stream": stream.hex(),
                "frames": [encode_frame(f.seq, f.kind, f.payload).hex() for f in got],
                "after_idle": [encode_frame(f.seq, f.kind, f.payload).hex() for f in idle],
            }
        )
    return v


def main() -> None:
    vectors = build()
    sys.stdout.write("[\n" + ",\n".join(json.dumps(x) for x in vectors) + "\n]\n")


if __name__ == "__main__":
    main()
