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
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.tomlwrite import dumps_toml, toml_value

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

# The one TOML writer is pure (engine.tomlwrite, a core module); it is re-exported here for the edges.
__all__ = ["EXIT_CONFIG", "ConfigFileError", "broker_login", "dumps_toml", "load_broker_files", "parse_host_port",
           "parse_port", "read_config", "toml_value"]


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


#: The name of the login file systemd hands a service (``LoadCredential=`` in the units
#: ``studtable setup`` writes): the service's own login and nobody else's.
LOGIN_CREDENTIAL = "studtable-login"


def broker_login(role: str, *, broker_dir: str | Path | None = None, user: str = "", password: str = "",
                 file: str | Path | None = None, key: str = "broker_dir", device: str | None = None
                 ) -> tuple[str, str]:
    """``(username, password)`` of ``device`` (of ``role``): given explicitly; else the login file
    systemd handed this service (``$CREDENTIALS_DIRECTORY/studtable-login``); else from the
    credentials folder that ``studtable broker config`` / ``studtable setup`` wrote (its
    ``logins/DEVICE.json``, or ``credentials.json`` for whoever may read it)."""
    import os

    if user:
        return user, password
    handed = os.environ.get("CREDENTIALS_DIRECTORY")
    if handed and (Path(handed) / LOGIN_CREDENTIAL).is_file():
        return _read_login(Path(handed) / LOGIN_CREDENTIAL, file, key)
    if not broker_dir:
        raise ConfigFileError(file, key, f"no broker login for the {role} role",
                              "set it to the credentials folder that `studtable setup` wrote "
                              "(or give user and password)")
    own = Path(broker_dir) / "logins" / f"{device}.json"
    if device and own.is_file() and os.access(own, os.R_OK):
        return _read_login(own, file, key)
    return load_broker_files(broker_dir, file, key, role).login(role, device)


def _read_login(path: Path, file: str | Path | None, key: str) -> tuple[str, str]:
    from engine.broker.config import read_login

    try:
        return read_login(path)
    except PermissionError:
        raise ConfigFileError(file, key, f"cannot read the login file {path} (permission denied)",
                              "run the service as the account `studtable setup` gave it") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigFileError(file, key, f"the login file {path} is not a studtable login ({exc})",
                              "run studtable setup again to rewrite it") from None


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
