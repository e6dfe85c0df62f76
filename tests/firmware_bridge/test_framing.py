"""The frame decoder under arbitrary input (hypothesis)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from firmware_bridge.framing import EOF, MAX_PAYLOAD, SOF, FrameDecoder, FramingError, crc16, encode_frame

frames = st.tuples(st.integers(0, 255), st.integers(0, 255), st.binary(max_size=MAX_PAYLOAD))


def crc_checks(frame_seq: int, kind: int, payload: bytes) -> bool:
    body = bytes((len(payload), frame_seq, kind)) + payload
    wire = encode_frame(frame_seq, kind, payload)
    return crc16(body) == int.from_bytes(wire[-3:-1], "big")


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=600), st.lists(st.integers(1, 64), max_size=20))
def test_arbitrary_bytes_never_crash_and_only_checked_frames_come_out(data: bytes, cuts: list[int]) -> None:
    dec = FrameDecoder()
    out = []
    i = 0
    for c in cuts:
        out += dec.feed(data[i : i + c])
        i += c
    out += dec.feed(data[i:])
    while dec.pending:
        out += dec.abandon_partial()
    for f in out:
        wire = encode_frame(f.seq, f.kind, f.payload)
        # The frame's exact bytes occur in the input, with the CRC that checked.
        assert wire in data
        assert wire[0] == SOF and wire[-1] == EOF
        assert crc_checks(f.seq, f.kind, f.payload)


@settings(max_examples=300, deadline=None)
@given(st.lists(frames, min_size=1, max_size=8), st.binary(max_size=40), st.binary(max_size=40))
def test_good_frames_survive_surrounding_garbage(fs: list, before: bytes, after: bytes) -> None:
    # Garbage without SOF before the frames cannot hide them; garbage after cannot remove them.
    noise = before.replace(bytes([SOF]), b"")
    wire = b"".join(encode_frame(*f) for f in fs)
    dec = FrameDecoder()
    got = dec.feed(noise + wire + after)
    assert [(f.seq, f.kind, f.payload) for f in got[: len(fs)]] == fs


@settings(max_examples=300, deadline=None)
@given(frames, st.integers(0, 10_000), st.integers(1, 255))
def test_single_corrupted_byte_is_always_rejected(f: tuple, pos: int, flip: int) -> None:
    wire = bytearray(encode_frame(*f))
    wire[pos % len(wire)] ^= flip
    dec = FrameDecoder()
    got = dec.feed(bytes(wire))
    while dec.pending:
        got += dec.abandon_partial()
    assert (f[0], f[1], f[2]) not in [(g.seq, g.kind, g.payload) for g in got]


@settings(max_examples=300, deadline=None)
@given(frames, st.integers(0, 10_000), frames)
def test_dropped_byte_is_rejected_and_next_frame_still_arrives(f: tuple, pos: int, nxt: tuple) -> None:
    wire = bytearray(encode_frame(*f))
    del wire[pos % len(wire)]
    dec = FrameDecoder()
    got = dec.feed(bytes(wire) + encode_frame(*nxt))
    while dec.pending:
        got += dec.abandon_partial()
    triples = [(g.seq, g.kind, g.payload) for g in got]
    assert triples[-1] == nxt
    assert (f[0], f[1], f[2]) not in triples[:-1] or f == nxt


def test_oversized_payload_is_refused_with_its_size() -> None:
    try:
        encode_frame(0, 0x20, bytes(MAX_PAYLOAD + 1))
    except FramingError as exc:
        assert "49 bytes" in str(exc)
    else:
        raise AssertionError("a 49-byte payload was framed")
