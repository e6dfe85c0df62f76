"""The wire contract: topics, schemas, round trips, and errors that name the field."""

from __future__ import annotations

import contextlib
import copy
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import wire
from engine.publicstate import PublicState, idle_state
from engine.wire import Channel, Role, WireError

ROOT = Path(__file__).resolve().parents[2]

T = "t1"


def card_drawn(**over: Any) -> dict[str, Any]:
    body = {"counter": 7, "uid": "04a1b2c3d4e5f6", "card": "Ah", "deck": "red-1", "quality": 200, "status": "ok"}
    body.update(over)
    return body


def payload(kind: str, source: str = "shoe-1", **body: Any) -> bytes:
    doc = {"v": 1, "source": source, "session": 3, "seq": 41, "kind": kind}
    doc.update(body)
    return json.dumps(doc).encode()


SAMPLES: list[tuple[Channel, str, dict[str, Any]]] = [
    (Channel.BIRTH, "birth", {"role": "bridge", "version": "0.1.0", "capabilities": ["seat_antennas"],
                              "last_seq": 0}),
    (Channel.SHOE, "card_drawn", card_drawn()),
    (Channel.SHOE, "card_drawn", card_drawn(card=None, deck=None, status="unknown_tag")),
    (Channel.SHOE, "tag_seen", {"counter": 1, "antenna": 3, "uid": "04a1b2c3", "card": None, "deck": None,
                                "quality": 10}),
    (Channel.SHOE, "shoe_loaded", {"deck": "red-1"}),
    (Channel.SHOE, "shoe_empty", {}),
    (Channel.SHOE, "device_error", {"code": "E12", "text": "reader not responding"}),
    (Channel.SHOE, "reset", {}),
    (Channel.VISION, "observation", {"frame": 900, "seats": {"1": {"up": ["Ah", "Kd"], "down": 2},
                                                              "5": {"up": [], "down": 0}},
                                     "changed": [1], "irregular": [{"kind": "off_felt", "seat": None,
                                                                    "card": None}], "fps": 29.7}),
    (Channel.COMMAND, "action", {"seat": 3, "action": "raise", "amount": 20}),
    (Channel.COMMAND, "report", {"report": "card_off_table", "seat": 2, "note": "under the rail"}),
    (Channel.COMMAND, "ruling", {"prompt": "p-17", "option": "replace"}),
    (Channel.COMMAND, "manual_card", {"seat": 4, "card": "??", "face_up": False}),
    (Channel.COMMAND, "table", {"op": "buy_in", "seat": 6, "amount": 400}),
    (Channel.STATE, "state", {"state": idle_state("t1").to_json()}),
    (Channel.PROMPT, "prompts", {"open": [{"prompt": "p-1", "text": "Hole card exposed at seat 3",
                                           "options": ["upcard", "misdeal"], "rule": "stud 5"}]}),
    (Channel.HISTORY, "hand", {"hand": "t1-000012", "variant": "F7S", "events": [{"a": 1}], "phh": "x = 1"}),
]


@pytest.mark.parametrize(("channel", "kind", "body"), SAMPLES, ids=[f"{c}-{k}" for c, k, _ in SAMPLES])
def test_every_kind_round_trips(channel: Channel, kind: str, body: dict[str, Any]) -> None:
    source = "shoe-1"
    msg = wire.make(T, channel, kind, source=source, session=3, seq=41, **body)
    data = wire.encode(msg)
    doc = json.loads(data)
    assert doc["v"] == 1 and doc["source"] == source and doc["session"] == 3 and doc["seq"] == 41
    assert doc["kind"] == kind
    back = wire.decode(msg.topic, data)
    assert back == msg
    assert back.key == (source, 3, 41)


def test_topics_follow_the_versioned_scheme() -> None:
    assert wire.topic(T, Channel.SHOE) == "studtable/v1/t1/sensor/shoe"
    assert wire.topic(T, Channel.AVAIL, "cam-2") == "studtable/v1/t1/avail/cam-2"
    assert wire.topic_filter("+", Channel.BIRTH) == "studtable/v1/+/birth/+"
    info = wire.parse_topic("studtable/v1/t1/history/hand")
    assert (info.table, info.channel, info.device) == ("t1", Channel.HISTORY, None)
    info = wire.parse_topic("studtable/v1/t9/birth/shoe-1")
    assert (info.table, info.channel, info.device) == ("t9", Channel.BIRTH, "shoe-1")


@pytest.mark.parametrize(("name", "reason"), [
    ("studtable/v2/t1/public/state", "not under"),
    ("studtable/v1/t1/public", "unknown channel"),
    ("studtable/v1/t1/public/state/extra", "unexpected levels"),
    ("studtable/v1/t1/avail", "needs exactly one device id"),
    ("studtable/v1/t+/public/state", "table id"),
    ("studtable/v1/t1/avail/a/b", "needs exactly one device id"),
])
def test_bad_topics_are_refused_with_a_reason(name: str, reason: str) -> None:
    with pytest.raises(WireError, match=reason):
        wire.parse_topic(name)


def test_ids_with_wildcards_cannot_build_a_topic() -> None:
    with pytest.raises(WireError, match="device id"):
        wire.topic(T, Channel.AVAIL, "#")


def test_availability_is_plain_text() -> None:
    msg = wire.availability(T, "shoe-1", online=False)
    assert wire.encode(msg) == b"offline"
    back = wire.decode("studtable/v1/t1/avail/shoe-1", b"online")
    assert (back.kind, back.source, back.session, back.seq) == ("online", "shoe-1", None, None)
    with pytest.raises(WireError, match="'online' or 'offline'"):
        wire.decode("studtable/v1/t1/avail/shoe-1", b"maybe")
    with pytest.raises(WireError, match="no sequence key"):
        _ = back.key


SHOE = "studtable/v1/t1/sensor/shoe"


@pytest.mark.parametrize(("data", "needle"), [
    (payload("card_drawn", **card_drawn(uid="XYZ")), "field 'uid' must be a tag UID"),
    (payload("card_drawn", **card_drawn(card="1h")), "field 'card' must be a card code"),
    (payload("card_drawn", **card_drawn(quality=True)), "field 'quality' must be an integer"),
    (payload("card_drawn", **card_drawn(quality=256)), "field 'quality' must be an integer from 0 to 255"),
    (payload("card_drawn", **card_drawn(status="maybe")), "field 'status' must be one of"),
    (payload("card_drawn", **card_drawn(card=None)), "status 'ok' needs both 'card' and 'deck'"),
    (payload("card_drawn", **card_drawn(extra=1)), "field 'extra' is not part of this message"),
    (payload("card_drawn", counter=1), "field 'uid' is missing"),
    (payload("card_dealt"), "unknown kind 'card_dealt'"),
    (b'{"v":2,"source":"s","session":1,"seq":1,"kind":"reset"}', "field 'v' must be 1"),
    (b'{"v":1,"source":"s","session":-1,"seq":1,"kind":"reset"}', "field 'session' must be an integer"),
    (b'{"v":1,"source":"s","session":1,"seq":1.5,"kind":"reset"}', "field 'seq' must be an integer"),
    (b'{"v":1,"session":1,"seq":1,"kind":"reset"}', "field 'source' is missing"),
    (b'{"v":1,"source":"a/b","session":1,"seq":1,"kind":"reset"}', "source 'a/b' is not a valid id"),
    (b'[1,2]', "must be a JSON object"),
    (b'{"v":1,', "not JSON"),
    (b'\xff\xfe', "not UTF-8"),
    (b'{"v":1,"source":"s","session":1,"seq":NaN,"kind":"reset"}', "NaN is not valid JSON"),
])
def test_shoe_errors_name_the_field(data: bytes, needle: str) -> None:
    with pytest.raises(WireError) as info:
        wire.decode(SHOE, data)
    assert needle in str(info.value)
    assert SHOE in str(info.value)


def test_nested_field_paths_are_named() -> None:
    obs = dict(SAMPLES[8][2])
    obs["seats"] = {"3": {"up": ["Ah", "Zz"], "down": 1}}
    with pytest.raises(WireError, match=r"field 'seats\.3\.up\[1\]' must be a card code"):
        wire.decode("studtable/v1/t1/sensor/vision", payload("observation", source="cam-1", **obs))
    obs["seats"] = {"11": {"up": [], "down": 1}}
    with pytest.raises(WireError, match=r"seats\.11"):
        wire.decode("studtable/v1/t1/sensor/vision", payload("observation", source="cam-1", **obs))
    obs["seats"] = {}
    obs["irregular"] = [{"kind": "off_felt", "seat": 12, "card": None}]
    with pytest.raises(WireError, match=r"field 'irregular\[0\]\.seat' must be an integer from 1 to 10"):
        wire.decode("studtable/v1/t1/sensor/vision", payload("observation", source="cam-1", **obs))


def test_birth_source_must_match_topic_device() -> None:
    data = payload("birth", source="shoe-2", role="bridge", version="1", capabilities=[], last_seq=0)
    with pytest.raises(WireError, match="does not match the topic's device 'shoe-1'"):
        wire.decode("studtable/v1/t1/birth/shoe-1", data)


def test_make_refuses_bad_messages_at_the_sender() -> None:
    with pytest.raises(WireError, match="field 'seat' must be an integer from 1 to 10"):
        wire.make(T, Channel.COMMAND, "action", source="console-1", session=1, seq=1, seat=0, action="fold",
                  amount=None)
    with pytest.raises(WireError, match="header field"):
        wire.validate(wire.Message(T, Channel.COMMAND, "ruling", "c", 1, 1, {"prompt": "p", "option": "o", "v": 1}))


def test_engine_can_register_its_own_command_kinds() -> None:
    wire.register_schema(Channel.COMMAND, "test_undo", wire.Schema((wire.F("steps", wire.integer(1, 5)),)))
    try:
        msg = wire.make(T, Channel.COMMAND, "test_undo", source="c1", session=1, seq=2, steps=2)
        assert wire.decode(msg.topic, wire.encode(msg)).body == {"steps": 2}
        with pytest.raises(WireError, match="'steps'"):
            wire.decode(msg.topic, payload("test_undo", source="c1", steps=9))
    finally:
        wire._REGISTRY.pop((Channel.COMMAND, "test_undo"))


def test_channel_table_keeps_secrets_to_engine_and_recorder() -> None:
    for spec in wire.CHANNELS.values():
        if spec.secrecy is wire.Secrecy.SECRET:
            assert spec.readers <= {Role.ENGINE, Role.RECORDER}, spec.channel
        assert spec.qos == 1  # nothing on the table may be lost
    assert wire.CHANNELS[Channel.STATE].retained and not wire.CHANNELS[Channel.SHOE].retained


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=6,
)
header_like = st.fixed_dictionaries(
    {"v": st.sampled_from([1, 1, 2, "1", True]),
     "source": st.sampled_from(["shoe-1", "cam-1", "", "a/b", 5]),
     "session": st.one_of(st.integers(-2, 2**60), st.just(True)),
     "seq": st.integers(-2, 2**60),
     "kind": st.sampled_from([k for _, k, _ in SAMPLES] + ["nope", 3])},
    optional={name: json_values for name in ("counter", "uid", "card", "deck", "quality", "status", "seats",
                                              "frame", "changed", "irregular", "fps", "seat", "action", "amount",
                                              "state", "open", "prompt", "option", "role", "version",
                                              "capabilities", "last_seq", "hand", "events", "phh")},
)
topics = st.sampled_from(
    [wire.topic(T, c) for c in Channel if not wire.CHANNELS[c].per_device]
    + ["studtable/v1/t1/avail/shoe-1", "studtable/v1/t1/birth/shoe-1", "bogus/topic", "studtable/v1//x"]
)


@settings(max_examples=400, deadline=None)
@given(topics, st.binary(max_size=200))
def test_decode_survives_arbitrary_bytes(name: str, data: bytes) -> None:
    with contextlib.suppress(WireError):
        wire.decode(name, data)


@settings(max_examples=300, deadline=None)
@given(topics, header_like)
def test_decode_survives_arbitrary_json(name: str, doc: dict[str, Any]) -> None:
    data = json.dumps(doc).encode()
    try:
        msg = wire.decode(name, data)
    except WireError:
        return
    # Whatever is accepted re-encodes to something that decodes to the same message.
    assert wire.decode(name, wire.encode(msg)) == msg


def test_deep_nesting_and_huge_numbers_are_wire_errors() -> None:
    with pytest.raises(WireError):
        wire.decode(SHOE, b"[" * 100_000 + b"]" * 100_000)
    with pytest.raises(WireError):
        wire.decode(SHOE, b'{"v":1,"source":"s","session":' + b"9" * 5000 + b',"seq":1,"kind":"reset"}')
    with pytest.raises(WireError):
        wire.decode("studtable/v1/t1/public/state",
                    b'{"v":1,"source":"e","session":1,"seq":1,"kind":"state","state":{"x":1e999}}')
    with pytest.raises(WireError, match="exceeds"):
        wire.decode(SHOE, b" " * (wire.MAX_PAYLOAD_BYTES + 1))


# ---------------------------------------------------------------------------- public/state schema


def _real_states() -> list[dict[str, Any]]:
    from engine.scenario import load, public_states

    service = {"devices": {"shoe-1": {"online": True}},
               "last_error": {"source": "console-1", "input": "show", "reason": "no"},
               "input": None, "shoe_active": True, "camera_active": False}
    return [state for name in ("showdown", "stud-out-of-cards-common", "deck-duplicate-card")
            for state in public_states(load(ROOT / "tests" / "scenarios" / f"{name}.toml"), service)]


def test_every_state_the_engine_builds_is_a_public_state_and_round_trips() -> None:
    states = _real_states()
    assert len(states) > 30
    for state in states:
        tree = PublicState.from_json(state)
        assert tree.to_json() == state
        wire.make("t1", Channel.STATE, "state", source="engine", session=1, seq=1, state=state)


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda s: s["seats"][0]["cards"][0].update(up="yes"), "seats[0].cards[0].up"),
        (lambda s: s["seats"][0].pop("down_count"), "seats[0].down_count"),
        (lambda s: s.update(hole_cards={"1": ["As", "Kd"]}), "hole_cards"),
        (lambda s: s["seats"][0].update(down=["As"]), "seats[0].down"),
        (lambda s: s.update(pot="lots"), "pot"),
        (lambda s: s.update(v=2), "v"),
        (lambda s: s["seats"][0].update(colour="red"), "seats[0].colour"),
        (lambda s: s["seats"][0]["cards"].__setitem__(0, 5), "seats[0].cards[0]"),
        (lambda s: s.update(devices={"shoe-1": {"online": "yes"}}), "devices.shoe-1.online"),
        (lambda s: s.update(devices=[]), "devices"),
    ],
)
def test_a_state_off_the_schema_is_a_wire_error_naming_the_field(change: Any, path: str) -> None:
    state = copy.deepcopy(next(s for s in _real_states() if s["seats"] and s["seats"][0]["cards"]))
    change(state)
    with pytest.raises(WireError, match=re.escape(repr(path))):
        wire.make("t1", Channel.STATE, "state", source="engine", session=1, seq=1, state=state)


def test_extension_fields_pass_unchecked() -> None:
    state = dict(idle_state("t1").to_json(), x_sent_at=12.5)
    msg = wire.decode(wire.topic("t1", Channel.STATE), wire.encode(
        wire.make("t1", Channel.STATE, "state", source="engine", session=1, seq=1, state=state)))
    assert msg.body["state"]["x_sent_at"] == 12.5


def test_the_public_state_example_in_the_docs_is_generated_from_the_code() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "docs" / "gen_wire.py"), "--check"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout
