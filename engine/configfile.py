"""Configuration files for every service: one reader, one writer, one error, one HOST:PORT and login parser.

A technician reads these errors, not a Python programmer, so a broken configuration is always one
line that names the file, the key, what is wrong and what to do::

    /etc/studtable/table.toml: broker.port: 'abc' is not a port number; write a number from 1 to 65535

``studtable`` (``engine.cli``) prints a ``ConfigFileError`` as that one line and exits with status 2;
nothing else is printed, no traceback.  It is a ``ValueError``, so older ``except ValueError`` paths
keep reporting it too.

This is an edge module (it reads files); the parsing helpers in it are pure.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.broker.config import BrokerFiles

EXIT_CONFIG = 2  # the exit status of a service refused by its configuration


class ConfigFileError(ValueError):
    """A configuration a service cannot run with: where, what is wrong, what to do."""

    def __init__(self, file: str | Path | None, key: str | None, problem: str, fix: str) -> None:
        self.file = str(file) if file is not None else None
        self.key = key
        self.problem = problem
        self.fix = fix
        super().__init__(self.line())

    def line(self) -> str:
        where = ": ".join(p for p in (self.file, self.key) if p)
        text = f"{self.problem}; {self.fix}" if self.fix else self.problem
        return f"{where}: {text}" if where else text


# ----------------------------------------------------------------------------- reading


def read_config(path: str | Path, what: str = "config file") -> dict[str, Any]:
    """A TOML (or, for ``.json``, JSON) file as a dict; a missing or broken file is a ``ConfigFileError``."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigFileError(p, None, f"the {what} does not exist",
                              "check the path, or write one with: studtable setup") from None
    except IsADirectoryError:
        raise ConfigFileError(p, None, f"is a directory, not a {what}", "give the file's path") from None
    except PermissionError:
        raise ConfigFileError(p, None, f"the {what} cannot be read (permission denied)",
                              "run as a user that may read it, or fix its owner and mode") from None
    except UnicodeDecodeError:
        raise ConfigFileError(p, None, f"the {what} is not UTF-8 text", "write it as UTF-8 TOML") from None
    try:
        data = json.loads(text) if p.suffix == ".json" else tomllib.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise ConfigFileError(p, None, f"does not parse ({exc})", "fix the syntax at that line") from None
    if not isinstance(data, dict):
        raise ConfigFileError(p, None, "is not a table of settings", "write key = value lines")
    return data


# ----------------------------------------------------------------------------- writing


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(k: str) -> str:
    return k if _BARE_KEY.match(k) else json.dumps(k)


def toml_value(value: Any) -> str:
    """One TOML value: strings, booleans, integers, floats, lists and inline tables."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"TOML has no value for {value!r} here")
        return repr(value)
    if isinstance(value, str | Path):
        return json.dumps(str(value), ensure_ascii=False)  # JSON string escapes are valid TOML basic strings
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_key(str(k))} = {toml_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, Sequence):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def _is_table_array(value: Any) -> bool:
    return isinstance(value, list | tuple) and bool(value) and all(isinstance(v, Mapping) for v in value)


def dumps_toml(data: Mapping[str, Any], comments: Mapping[str, str] | None = None) -> str:
    """A TOML document: scalars first, then ``[tables]`` and ``[[arrays of tables]]``, nested as given.

    ``comments`` maps a dotted key (``broker.port``, or a table name ``shoe``) to a comment written
    after the value (or above the table).  ``tomllib.loads(dumps_toml(d)) == d`` for what it writes.
    """
    notes = dict(comments or {})
    out: list[str] = []

    def emit(table: Mapping[str, Any], prefix: str) -> None:
        for k, v in table.items():
            if v is None or isinstance(v, Mapping) or _is_table_array(v):
                continue
            dotted = f"{prefix}{k}"
            note = f"  # {notes[dotted]}" if dotted in notes else ""
            out.append(f"{_key(str(k))} = {toml_value(v)}{note}")
        for k, v in table.items():
            dotted = f"{prefix}{k}"
            if isinstance(v, Mapping):
                out.append("")
                if dotted in notes:
                    out.append(f"# {notes[dotted]}")
                out.append(f"[{'.'.join(_key(p) for p in dotted.split('.'))}]")
                emit(v, dotted + ".")
            elif _is_table_array(v):
                if dotted in notes:
                    out.append("")
                    out.append(f"# {notes[dotted]}")
                for item in v:
                    out.append("")
                    out.append(f"[[{'.'.join(_key(p) for p in dotted.split('.'))}]]")
                    emit(item, dotted + ".")

    emit(data, "")
    return "\n".join(out).lstrip("\n") + "\n"


# ----------------------------------------------------------------------------- broker address and login


def parse_host_port(text: object, file: str | Path | None = None, key: str = "broker",
                    default_port: int | None = None) -> tuple[str, int]:
    """``HOST:PORT`` (or ``[v6]:PORT``; ``HOST`` alone with ``default_port``) as ``(host, port)``."""
    if not isinstance(text, str) or not text.strip():
        raise ConfigFileError(file, key, f"{text!r} is not HOST:PORT", "write e.g. \"127.0.0.1:1883\"")
    s = text.strip()
    if s.startswith("["):
        host, sep, port = s[1:].partition("]")
        port = port[1:] if port.startswith(":") else ("" if not port else "?")
    else:
        host, sep, port = s.rpartition(":")
        if not sep:
            host, port = s, ""
    if not port and default_port is not None:
        return host, default_port
    if not host:
        raise ConfigFileError(file, key, f"{text!r} has no host", "write HOST:PORT, e.g. \"127.0.0.1:1883\"")
    return host, parse_port(port, file, key, shown=text)


def parse_port(value: object, file: str | Path | None = None, key: str = "port", shown: object = None) -> int:
    """A TCP port number (1..65535) from an int or a string of digits."""
    shown = value if shown is None else shown
    if isinstance(value, bool):
        value = "?"
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if not isinstance(value, int):
        raise ConfigFileError(file, key, f"{shown!r} is not a port number", "write a number from 1 to 65535")
    if not 1 <= value <= 65535:
        raise ConfigFileError(file, key, f"port {value} is out of range", "write a number from 1 to 65535")
    return value


def broker_login(role: str, *, broker_dir: str | Path | None = None, user: str = "", password: str = "",
                 file: str | Path | None = None, key: str = "broker_dir") -> tuple[str, str]:
    """``(username, password)`` of ``role``: given explicitly, or from the credentials folder that
    ``studtable broker config`` / ``studtable setup`` wrote."""
    if user:
        return user, password
    if not broker_dir:
        raise ConfigFileError(file, key, f"no broker login for the {role} role",
                              "set it to the credentials folder that `studtable setup` wrote "
                              "(or give user and password)")
    return load_broker_files(broker_dir, file, key, role).login(role)


def load_broker_files(broker_dir: str | Path, file: str | Path | None = None, key: str = "broker_dir",
                      role: str = "") -> BrokerFiles:
    """``engine.broker.config.load_files`` with every failure as one ``ConfigFileError``."""
    from engine.broker.config import load_files

    directory = Path(broker_dir)
    regenerate = f"regenerate it: studtable broker config --out {directory}"
    if not directory.is_dir():
        raise ConfigFileError(file, key, f"the credentials folder {directory} does not exist",
                              f"write it with: studtable setup (or studtable broker config --out {directory})")
    try:
        files = load_files(directory)
        if role:
            files.login(role)
        return files
    except FileNotFoundError:
        raise ConfigFileError(file, key, f"{directory} holds no generated broker config",
                              f"write it with: studtable broker config --out {directory}") from None
    except PermissionError as exc:
        raise ConfigFileError(file, key, f"cannot read {exc.filename or directory} (permission denied)",
                              "run as a user that may read it" + (f" (the {role} service's user)" if role else "")
                              ) from None
    except KeyError:
        raise ConfigFileError(file, key, f"{directory}/credentials.json has no login for the {role} role",
                              regenerate) from None
    except (ValueError, TypeError):
        raise ConfigFileError(file, key, f"the broker files in {directory} (credentials.json or "
                              "studtable-broker.json) are corrupt",
                              f"move credentials.json away and run: studtable broker config --out {directory} "
                              "(new passwords; restart the broker and the services)") from None
