"""One table, one file: the table configuration every service reads its part of.

``/etc/studtable/table.toml`` (written by ``studtable setup``, then edited by the technician)::

    table = "t1"                 # the table id on the bus
    seat_count = 8               # seats at the table, 2 to 8

    [game]                       # what is dealt (engine.rules.GameConfig)
    variant = "F7S"              # F7S stud, F7S/8 stud high-low, FR razz
    ante = 1
    bring_in = 2
    small_bet = 5
    big_bet = 10
    rules = "rrop"               # or wsop2023

    [[seats]]                    # the players present when the engine first starts (optional)
    seat = 1
    name = "Ann"
    stack = 200

    [broker]
    host = "127.0.0.1"
    port = 1883
    credentials = "/etc/studtable/broker"   # the folder `studtable setup` wrote (passwd, acl, logins)

    [store]
    url = "/var/lib/studtable/t1.sqlite"    # or postgresql://user@host/db for a cardroom

    [shoe]                        # the RFID shoe (leave out for a table without one)
    port = "/dev/serial/by-id/usb-studtable-shoe-if00"
    baud = 115200
    deck = "red-1"
    device = "shoe-1"

    [[cameras]]                   # one per overhead camera (leave out for none)
    device = "cam-1"
    source = "0"                  # camera index, video file or stream URL
    calibration = "/etc/studtable/cam-1.json"
    deck = "/etc/studtable/red-1.vision.json"

    [screens.console]             # the dealer's touch screen
    device = "console-1"
    display = ":0"
    fullscreen = true

    [screens.monitor]             # the players' monitor
    device = "monitor-1"
    display = ":0"
    screen = 1                    # a second screen of the same machine (optional)
    fullscreen = true

Each service takes ``--config /etc/studtable/table.toml`` and reads its part through
``part(file, service)``: the engine its game, seats, store and broker; the bridge the shoe; the vision
service one camera; the console and the monitor their screen.  The older per-service files
(``engine.toml``, ``bridge.toml``, ``console.toml``) still work; a file is a table file when it has
``[broker] credentials`` or any of ``[shoe]``, ``[[cameras]]``, ``[screens]``.

Every problem is a ``ConfigFileError`` naming the file and the key (``engine.configfile``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from engine.configfile import ConfigFileError, parse_port, read_config

SERVICES: Final = ("engine", "recorder", "bridge", "vision", "console", "monitor")
MAX_SEATS: Final = 8
TABLE_ID_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")  # engine.wire's id rule
BAUD_RATES: Final = (9600, 19200, 38400, 57600, 115200, 230400, 460800, 921600, 1000000, 2000000)
DEFAULT_STATE_DIR: Final = "/var/lib/studtable"

_TOP_KEYS: Final = frozenset({"table", "seat_count", "game", "seats", "broker", "store", "shoe", "cameras",
                              "screens", "engine", "recorder", "system"})


@dataclass(frozen=True)
class Shoe:
    port: str
    baud: int = 115200
    deck: str = ""
    decks_dir: str = ""
    device: str = "shoe-1"


@dataclass(frozen=True)
class Camera:
    device: str
    source: str
    calibration: str
    deck: str
    stable_frames: int = 5
    vanish_s: float = 2.0  # seconds a seat must look emptier before the camera believes it (a hand over it)


@dataclass(frozen=True)
class Screen:
    role: str  # "console" or "monitor"
    device: str
    display: str = ":0"
    fullscreen: bool = True
    screen: int | None = None
    deck_art: str = "anglo"


@dataclass(frozen=True)
class TableConfig:
    path: Path
    table: str
    seat_count: int
    game: dict[str, Any]
    seats: tuple[dict[str, Any], ...]
    broker_host: str
    broker_port: int
    credentials: str
    store: str
    shoe: Shoe | None = None
    cameras: tuple[Camera, ...] = ()
    screens: tuple[Screen, ...] = ()
    engine_device: str = "engine"
    auto_start: bool = False  # the result holds until the dealer taps Next hand (issue 21, 5)
    hold_s: float = 0.0  # with auto_start: seconds the result stays on the screens first
    floor_pin: str = field(default="", repr=False)  # issue 21, 4: the floor's authority for older undos
    floor_pin_file: str = ""  # the same in a file only the engine's account reads (preferred)
    recorder_device: str = "recorder-1"
    user: str = "studtable"
    #: the engine's own account: only it may open the event store, which holds every live card
    engine_user: str = "studtable-engine"
    state_dir: str = DEFAULT_STATE_DIR
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    # ------------------------------------------------------------------ each service's part

    @property
    def broker(self) -> str:
        host = f"[{self.broker_host}]" if ":" in self.broker_host else self.broker_host
        return f"{host}:{self.broker_port}"

    def engine_part(self) -> dict[str, Any]:
        """In the form of ``engine.service.EngineConfig.from_dict``."""
        check_store(self.store, self.path, "store.url")
        return {
            "table": self.table, "seat_count": self.seat_count, "game": dict(self.game),
            "seats": [dict(s) for s in self.seats], "store": {"url": self.store},
            "broker": {"host": self.broker_host, "port": self.broker_port, "config_dir": self.credentials},
            "engine": {"device": self.engine_device, "auto_start": self.auto_start, "hold_s": self.hold_s,
                       "floor_pin": self.floor_pin, "floor_pin_file": self.floor_pin_file,
                       "shoe": self.shoe is not None},
        }

    def bridge_part(self) -> dict[str, Any]:
        """In the form of ``firmware_bridge.bridge.BridgeConfig``."""
        if self.shoe is None:
            raise ConfigFileError(self.path, "shoe", "this table has no [shoe] section",
                                  "add [shoe] with the shoe's serial port, or do not run the bridge")
        part: dict[str, Any] = {
            "table": self.table, "port": self.shoe.port, "baud": self.shoe.baud, "deck": self.shoe.deck,
            "device": self.shoe.device, "broker": self.broker, "broker_dir": self.credentials,
            "state_file": str(Path(self.state_dir) / f"{self.shoe.device}.session"),
        }
        if self.shoe.decks_dir:
            part["decks_dir"] = self.shoe.decks_dir
        return part

    def screen_part(self, role: str) -> dict[str, Any]:
        """In the form of ``dealer_console.app.AppConfig``."""
        screen = next((s for s in self.screens if s.role == role), None)
        part: dict[str, Any] = {"table": self.table, "broker": self.broker, "broker_dir": self.credentials,
                                "engine_device": self.engine_device, "device": f"{role}-1"}
        if self.shoe is not None and role == "console":
            part["shoe_port"], part["shoe_baud"] = self.shoe.port, self.shoe.baud
        if self.shoe is not None and self.shoe.decks_dir:
            part["decks_dir"] = self.shoe.decks_dir
        if screen is not None:
            part["device"], part["fullscreen"], part["deck_art"] = screen.device, screen.fullscreen, screen.deck_art
            if screen.screen is not None:
                part["screen"] = screen.screen
        return part

    def camera(self, device: str | None = None) -> Camera:
        if not self.cameras:
            raise ConfigFileError(self.path, "cameras", "this table has no [[cameras]]",
                                  "add a [[cameras]] entry with device, source, calibration and deck")
        if device is None:
            if len(self.cameras) > 1:
                raise ConfigFileError(self.path, "cameras", f"{len(self.cameras)} cameras are configured",
                                      "say which with --device "
                                      + " or ".join(c.device for c in self.cameras))
            return self.cameras[0]
        for cam in self.cameras:
            if cam.device == device:
                return cam
        raise ConfigFileError(self.path, "cameras", f"no camera with device {device!r}",
                              "use one of " + ", ".join(c.device for c in self.cameras))

    def part(self, service: str) -> dict[str, Any]:
        if service == "engine":
            return self.engine_part()
        if service == "bridge":
            return self.bridge_part()
        if service in ("console", "monitor"):
            return self.screen_part(service)
        if service == "recorder":
            check_store(self.store, self.path, "store.url")
            return {"broker": self.broker, "config_dir": self.credentials, "store": self.store,
                    "device": self.recorder_device}
        raise ValueError(f"no service {service!r}; one of {', '.join(SERVICES)}")


# ----------------------------------------------------------------------------- loading


def is_table_file(data: Mapping[str, Any]) -> bool:
    broker = data.get("broker")
    return (isinstance(broker, Mapping) and "credentials" in broker) or any(
        k in data for k in ("shoe", "cameras", "screens"))


def part(path: str | Path, data: Mapping[str, Any], service: str) -> dict[str, Any] | None:
    """``service``'s settings if ``data`` (read from ``path``) is a table file, else None."""
    if not is_table_file(data):
        return None
    return from_dict(data, Path(path)).part(service)


def load(path: str | Path) -> TableConfig:
    p = Path(path)
    return from_dict(read_config(p, "table file"), p)


class _Reader:
    """Typed access to one section, every error naming the file and the dotted key."""

    def __init__(self, path: Path, data: Mapping[str, Any], prefix: str = "") -> None:
        self.path, self.data, self.prefix = path, data, prefix

    def key(self, name: str) -> str:
        return f"{self.prefix}{name}"

    def fail(self, name: str, problem: str, fix: str) -> ConfigFileError:
        return ConfigFileError(self.path, self.key(name), problem, fix)

    def text(self, name: str, default: str | None = None, *, example: str = "") -> str:
        value = self.data.get(name, default)
        if value is None:
            raise self.fail(name, "is missing", f"add {name} = \"{example or '...'}\"")
        if not isinstance(value, str) or not value.strip():
            raise self.fail(name, f"{value!r} is not a text value", f"write {name} = \"{example or '...'}\"")
        return value

    def whole(self, name: str, default: int | None = None, *, lo: int, hi: int, what: str = "") -> int:
        value = self.data.get(name, default)
        if value is None:
            raise self.fail(name, "is missing", f"add {name} = a number from {lo} to {hi}")
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(name, f"{value!r} is not a whole number", f"write a number from {lo} to {hi}"
                            + (f" ({what})" if what else ""))
        if not lo <= value <= hi:
            raise self.fail(name, f"{value} is out of range" + (f" ({what})" if what else ""),
                            f"write a number from {lo} to {hi}")
        return value

    def seconds(self, name: str, default: float, *, lo: float, hi: float, what: str = "") -> float:
        value = self.data.get(name, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            raise self.fail(name, f"{value!r} is not a number of seconds", f"write a number from {lo:g} to {hi:g}"
                            + (f" ({what})" if what else ""))
        if not lo <= value <= hi:
            raise self.fail(name, f"{value:g} s is out of range" + (f" ({what})" if what else ""),
                            f"write a number from {lo:g} to {hi:g}")
        return float(value)

    def flag(self, name: str, default: bool) -> bool:
        value = self.data.get(name, default)
        if not isinstance(value, bool):
            raise self.fail(name, f"{value!r} is not true or false", f"write {name} = true or {name} = false")
        return value

    def section(self, name: str, *, required: bool = False) -> _Reader | None:
        value = self.data.get(name)
        if value is None:
            if required:
                raise self.fail(name, "the section is missing", f"add a [{self.key(name)}] section")
            return None
        if not isinstance(value, Mapping):
            raise self.fail(name, "is not a section", f"write it as [{self.key(name)}] with key = value lines")
        return _Reader(self.path, value, f"{self.key(name)}.")

    def unknown(self, known: set[str] | frozenset[str]) -> None:
        extra = sorted(set(self.data) - set(known))
        if extra:
            raise self.fail(extra[0], "is not a known setting",
                            f"remove it or fix its spelling; known here: {', '.join(sorted(known))}")


def check_table_id(value: object, path: Path | str | None, key: str = "table") -> str:
    if not isinstance(value, str) or not TABLE_ID_RE.fullmatch(value):
        raise ConfigFileError(path, key, f"{value!r} is not a valid table id",
                              "use 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit "
                              "(no '/', '+', '#' or spaces), e.g. table = \"t1\"")
    return value


def check_seat_count(value: object, path: Path | str | None, key: str = "seat_count") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 2 <= value <= MAX_SEATS:
        raise ConfigFileError(path, key, f"{value!r} seats: a stud table has 2 to {MAX_SEATS} seats",
                              f"write {key.rpartition('.')[2]} = a number from 2 to {MAX_SEATS}")
    return value


def check_seats(seats: object, seat_count: int, path: Path | str | None, key: str = "seats") -> list[dict[str, Any]]:
    """The players present at the start: each ``seat`` 1..seat_count once, a name, a positive stack."""
    if not isinstance(seats, list):
        raise ConfigFileError(path, key, "is not a list of [[seats]]", "write one [[seats]] per player")
    out: list[dict[str, Any]] = []
    taken: set[int] = set()
    for i, s in enumerate(seats):
        at = f"{key}[{i}]"
        if not isinstance(s, Mapping):
            raise ConfigFileError(path, at, "is not a [[seats]] entry", "write seat, name and stack under [[seats]]")
        missing = [k for k in ("seat", "name", "stack") if k not in s]
        if missing:
            raise ConfigFileError(path, at, f"has no {', '.join(missing)}",
                                  "each [[seats]] needs seat, name and stack")
        seat, name, stack = s["seat"], s["name"], s["stack"]
        if isinstance(seat, bool) or not isinstance(seat, int) or not 1 <= seat <= seat_count:
            raise ConfigFileError(path, f"{at}.seat", f"seat {seat!r} does not exist at this {seat_count}-seat table",
                                  f"number the seats 1 to {seat_count} (or raise seat_count)")
        if seat in taken:
            raise ConfigFileError(path, f"{at}.seat", f"seat {seat} is given twice", "seat each player once")
        if not isinstance(name, str) or not name.strip():
            raise ConfigFileError(path, f"{at}.name", f"{name!r} is not a player's name", "write name = \"Ann\"")
        if isinstance(stack, bool) or not isinstance(stack, int) or stack <= 0:
            raise ConfigFileError(path, f"{at}.stack", f"{stack!r} is not a stack",
                                  "write the player's chips as a positive whole number, e.g. stack = 200")
        taken.add(seat)
        out.append({"seat": seat, "name": name, "stack": stack})
    return out


def check_game(value: object, path: Path | str | None, key: str = "game") -> dict[str, Any]:
    from engine.rules import ConfigError, GameConfig

    if not isinstance(value, Mapping):
        raise ConfigFileError(path, key, "the [game] section is missing",
                              "add [game] with variant, ante, bring_in, small_bet and big_bet")
    try:
        GameConfig.from_json(dict(value))
    except (ConfigError, TypeError, ValueError) as exc:
        raise ConfigFileError(path, key, str(exc), "fix the game's settings (docs/deploy.md lists them)") from None
    return dict(value)


def check_store(url: object, path: Path | str | None, key: str = "store.url") -> str:
    if not isinstance(url, str) or not url.strip():
        raise ConfigFileError(path, key, f"{url!r} is not a store", "write a SQLite file path or a postgresql:// URL")
    if "://" in url:
        if not url.startswith(("postgresql://", "postgres://")):
            raise ConfigFileError(path, key, f"{url!r} is not a store URL",
                                  "write a SQLite file path or a postgresql:// URL")
        return url
    folder = Path(url).expanduser().parent
    if not folder.is_dir():
        raise ConfigFileError(path, key, f"the store folder {folder} does not exist",
                              f"create it (mkdir -p {folder}, owned by the engine's user) or fix the path")
    return url


def check_baud(value: object, path: Path | str | None, key: str = "baud") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigFileError(path, key, f"{value!r} is not a baud rate",
                              "write the shoe's rate as a number, e.g. baud = 115200 (the firmware's default)")
    return value


def from_dict(data: Mapping[str, Any], path: Path) -> TableConfig:
    top = _Reader(path, data)
    top.unknown(_TOP_KEYS)
    table = check_table_id(data.get("table"), path)
    seat_count = check_seat_count(data.get("seat_count", MAX_SEATS), path)
    game = check_game(data.get("game"), path)
    seats = check_seats(data.get("seats", []), seat_count, path)

    broker = top.section("broker", required=True)
    assert broker is not None
    broker.unknown({"host", "port", "credentials"})
    host = broker.text("host", "127.0.0.1", example="127.0.0.1")
    port = parse_port(broker.data.get("port", 1883), path, broker.key("port"))
    credentials = broker.text("credentials", example="/etc/studtable/broker")
    credentials = str(_relative(path, credentials))

    store = top.section("store")
    url = "studtable.sqlite" if store is None else store.text("url", example="/var/lib/studtable/t1.sqlite")
    if store is not None:
        store.unknown({"url"})
    if "://" not in url:
        url = str(_relative(path, url))

    shoe: Shoe | None = None
    shoe_r = top.section("shoe")
    if shoe_r is not None:
        shoe_r.unknown({"port", "baud", "deck", "decks_dir", "device"})
        shoe = Shoe(
            port=shoe_r.text("port", example="/dev/serial/by-id/usb-studtable-shoe-if00"),
            baud=check_baud(shoe_r.data.get("baud", 115200), path, shoe_r.key("baud")),
            deck=shoe_r.text("deck", "", example="red-1") if shoe_r.data.get("deck") else "",
            decks_dir=shoe_r.text("decks_dir", example="/var/lib/studtable/decks") if "decks_dir" in shoe_r.data else "",
            device=_device(shoe_r, "device", "shoe-1"),
        )

    cameras: list[Camera] = []
    raw_cams = data.get("cameras", [])
    if not isinstance(raw_cams, list):
        raise top.fail("cameras", "is not a list of [[cameras]]", "write one [[cameras]] per camera")
    for i, cam in enumerate(raw_cams):
        if not isinstance(cam, Mapping):
            raise top.fail(f"cameras[{i}]", "is not a [[cameras]] entry", "write device, source, calibration, deck")
        r = _Reader(path, cam, f"cameras[{i}].")
        r.unknown({"device", "source", "calibration", "deck", "stable_frames", "vanish_s"})
        device = _device(r, "device", f"cam-{i + 1}")
        if not device.startswith(("cam", "vision")):
            raise r.fail("device", f"{device!r} does not start with 'cam'",
                         "name cameras cam-1, cam-2, ... (that is how the engine knows the source is a camera)")
        source = cam.get("source")
        if isinstance(source, int) and not isinstance(source, bool):
            source = str(source)
        cameras.append(Camera(
            device=device,
            source=_Reader(path, {"source": source}, r.prefix).text("source", example="0"),
            calibration=str(_relative(path, r.text("calibration", example=f"/etc/studtable/{device}.json"))),
            deck=str(_relative(path, r.text("deck", example="/etc/studtable/red-1.vision.json"))),
            stable_frames=r.whole("stable_frames", 5, lo=1, hi=100),
            vanish_s=r.seconds("vanish_s", 2.0, lo=0.0, hi=60.0,
                               what="how long a seat must look emptier before the camera believes it"),
        ))

    screens: list[Screen] = []
    screens_r = top.section("screens")
    if screens_r is not None:
        screens_r.unknown({"console", "monitor"})
        for role in ("console", "monitor"):
            sr = screens_r.section(role)
            if sr is None:
                continue
            sr.unknown({"device", "display", "fullscreen", "screen", "deck_art"})
            screens.append(Screen(
                role=role, device=_device(sr, "device", f"{role}-1"), display=sr.text("display", ":0", example=":0"),
                fullscreen=sr.flag("fullscreen", True),
                screen=sr.whole("screen", None, lo=0, hi=15) if "screen" in sr.data else None,
                deck_art=sr.text("deck_art", "anglo", example="anglo"),
            ))

    engine_r = top.section("engine")
    engine_device, auto_start, hold_s, floor_pin, floor_pin_file = "engine", False, 0.0, "", ""
    if engine_r is not None:
        engine_r.unknown({"device", "auto_start", "hold_s", "floor_pin", "floor_pin_file"})
        engine_device, auto_start = _device(engine_r, "device", "engine"), engine_r.flag("auto_start", False)
        hold_s = float(engine_r.whole("hold_s", 0, lo=0, hi=3600))
        floor_pin = engine_r.text("floor_pin", example="4821") if "floor_pin" in engine_r.data else ""
        if "floor_pin_file" in engine_r.data:
            floor_pin_file = str(_relative(path, engine_r.text("floor_pin_file", example="/etc/studtable/floor_pin")))
    recorder_r = top.section("recorder")
    recorder_device = "recorder-1"
    if recorder_r is not None:
        recorder_r.unknown({"device"})
        recorder_device = _device(recorder_r, "device", "recorder-1")
    system_r = top.section("system")
    user, engine_user, state_dir = "studtable", "studtable-engine", DEFAULT_STATE_DIR
    if system_r is not None:
        system_r.unknown({"user", "engine_user", "state_dir", "install"})
        user = system_r.text("user", "studtable", example="studtable")
        engine_user = system_r.text("engine_user", "studtable-engine", example="studtable-engine")
        if engine_user == user:
            raise system_r.fail("engine_user", f"is the services' account {user!r} too",
                                "give the engine an account of its own (the screens must not read its store)")
        state_dir = str(_relative(path, system_r.text("state_dir", DEFAULT_STATE_DIR, example=DEFAULT_STATE_DIR)))

    devices = [engine_device, recorder_device, *(c.device for c in cameras), *(s.device for s in screens)]
    if shoe is not None:
        devices.append(shoe.device)
    dup = next((d for d in devices if devices.count(d) > 1), None)
    if dup is not None:
        raise ConfigFileError(path, "device", f"device id {dup!r} is used twice",
                              "give every device (engine, shoe, cameras, screens) its own id")

    return TableConfig(
        path=path, table=table, seat_count=seat_count, game=game, seats=tuple(seats), broker_host=host,
        broker_port=port, credentials=credentials, store=url, shoe=shoe, cameras=tuple(cameras),
        screens=tuple(screens), engine_device=engine_device, auto_start=auto_start, hold_s=hold_s,
        floor_pin=floor_pin, floor_pin_file=floor_pin_file,
        recorder_device=recorder_device, user=user, engine_user=engine_user, state_dir=state_dir, raw=dict(data),
    )


def _device(r: _Reader, name: str, default: str) -> str:
    value = r.text(name, default, example=default)
    if not TABLE_ID_RE.fullmatch(value):
        raise r.fail(name, f"{value!r} is not a valid device id",
                     "use letters, digits, '_', '.' or '-', starting with a letter or digit")
    return value


def _relative(path: Path, value: str) -> Path:
    p = Path(value).expanduser()
    return p if p.is_absolute() else (path.parent / p).resolve()
