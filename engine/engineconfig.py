"""The engine's settings: the table, its game and seats, the store, the broker, the floor's PIN.

Read from an engine config file or the engine's part of the table file (``engine.tableconfig``);
a broken one is a ``ConfigFileError`` naming the file and the key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.rules import ConfigError, GameConfig


class ServiceConfigError(ValueError):
    """A broken engine configuration; the message names the field."""


@dataclass
class EngineConfig:
    table: str
    game: GameConfig
    seats: list[dict[str, Any]]
    store: str
    broker_host: str = "127.0.0.1"
    broker_port: int = 1883
    broker_config_dir: str | None = None
    username: str = "engine"
    password: str = ""
    device: str = "engine"
    #: False (the default): the result stays on both screens until the dealer taps Next hand
    #: (issue 21, 5); True: the next hand starts by itself, ``hold_s`` seconds after the award
    auto_start: bool = False
    hold_s: float = 0.0
    seat_count: int = 8
    #: the floor's PIN (issue 21, 4): undoing an input older than the dealer's last needs it; checked
    #: by the service in constant time, never stored, never on public/state (None: the table has none)
    floor_pin: str | None = field(default=None, repr=False)
    #: False: the table has no card shoe (camera only, or every card keyed): the camera's new cards
    #: are the deal from the first hand on, with no "shoe offline" prompt (issue 21, 12)
    shoe: bool = True
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, path: str | Path) -> EngineConfig:
        """An engine config file, or the engine's part of the table file (``engine.tableconfig``).
        A broken one is a ``ConfigFileError`` naming the file and the key."""
        from engine.configfile import read_config
        from engine.tableconfig import part

        p = Path(path)
        data = read_config(p, "engine config")
        return cls.from_dict(part(p, data, "engine") or data, base=p.parent, file=p)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], base: Path | None = None,
                  file: Path | None = None) -> EngineConfig:
        from engine.configfile import ConfigFileError, parse_port
        from engine.tableconfig import check_game, check_seat_count, check_seats, check_table_id

        if "table" not in data:
            raise ConfigFileError(file, "table", "the table id is missing", "add table = \"t1\"")
        table = check_table_id(data["table"], file)
        seat_count = check_seat_count(data.get("seat_count", 8), file)
        try:
            game = GameConfig.from_json(dict(check_game(data.get("game"), file)))
        except ConfigError as exc:  # pragma: no cover - check_game has tried it
            raise ServiceConfigError(f"engine config [game]: {exc}") from None
        seats = check_seats(list(data.get("seats", [])), seat_count, file)
        broker = dict(data.get("broker", {}))
        store = dict(data.get("store", {}))
        url = str(store.get("url", "studtable.db"))
        if base is not None and "://" not in url and not Path(url).is_absolute():
            url = str(base / url)
        config_dir = broker.get("config_dir")
        if config_dir and base is not None and not Path(config_dir).is_absolute():
            config_dir = str(base / config_dir)
        engine = dict(data.get("engine", {}))
        floor_pin = engine.get("floor_pin")
        if engine.get("floor_pin_file"):
            floor_pin = read_floor_pin(engine["floor_pin_file"], base, file)
        if floor_pin in (None, ""):
            floor_pin = None
        elif not isinstance(floor_pin, str | int) or not re.fullmatch(r"[0-9]{4,12}", str(floor_pin)):
            where = "engine.floor_pin_file" if engine.get("floor_pin_file") else "engine.floor_pin"
            raise ConfigFileError(file, where, "the floor PIN must be 4 to 12 digits",
                                  'write it as a quoted string, e.g. floor_pin = "4821"')
        return cls(
            table=table,
            game=game,
            seats=seats,
            store=url,
            broker_host=str(broker.get("host", "127.0.0.1")),
            broker_port=parse_port(broker.get("port", 1883), file, "broker.port"),
            broker_config_dir=config_dir,
            username=str(broker.get("username", "engine")),
            password=str(broker.get("password", "")),
            device=str(engine.get("device", "engine")),
            auto_start=bool(engine.get("auto_start", False)),
            hold_s=_hold(engine.get("hold_s", 0.0), file),
            seat_count=seat_count,
            floor_pin=None if floor_pin is None else str(floor_pin),
            shoe=_flag(engine.get("shoe", True), file, "engine.shoe"),
        )


def _flag(value: Any, file: Path | None, key: str) -> bool:
    from engine.configfile import ConfigFileError

    if not isinstance(value, bool):
        raise ConfigFileError(file, key, f"must be true or false, got {value!r}", f"{key.rsplit('.', 1)[-1]} = false")
    return value


def _hold(value: Any, file: Path | None) -> float:
    from engine.configfile import ConfigFileError

    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 3600:
        raise ConfigFileError(file, "engine.hold_s", f"must be seconds from 0 to 3600, got {value!r}",
                              "hold_s = 10")
    return float(value)


def read_floor_pin(value: object, base: Path | None, file: Path | None) -> str:
    """The floor PIN from its own file (``engine.floor_pin_file``), which only the engine's account
    may read: the table file is readable by every service on the machine, the console's too."""
    from engine.configfile import ConfigFileError

    key = "engine.floor_pin_file"
    path = Path(str(value))
    if base is not None and not path.is_absolute():
        path = base / path
    try:
        mode = path.stat().st_mode
        text = path.read_text("utf-8").strip()
    except OSError as exc:
        raise ConfigFileError(file, key, f"cannot read {path} ({exc.strerror})",
                              "write the PIN (4 to 12 digits) into it, readable by the engine's account only") from None
    if mode & 0o077:
        raise ConfigFileError(file, key, f"{path} may be read by other accounts (mode {mode & 0o777:o})",
                              f"chmod 600 {path} (the console's account must not read the floor PIN)")
    return text
