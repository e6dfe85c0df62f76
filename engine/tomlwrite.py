"""The one TOML writer: configuration files (``studtable setup``, the demo's engine file) and PHH hand
histories.  Pure: values in, text out (``tomllib`` reads it back unchanged)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(k: str) -> str:
    return k if _BARE_KEY.match(k) else json.dumps(k)


def toml_value(value: Any, *, literal_strings: bool = False) -> str:
    """One TOML value: strings, booleans, integers, floats, lists and inline tables.

    ``literal_strings``: write strings as TOML literal strings (``'Ann'``) where they can be, as the
    PHH hand histories do (engine.phh); else as basic strings (``"Ann"``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"TOML has no value for {value!r} here")
        return repr(value)
    if isinstance(value, str | Path):
        text = str(value)
        if literal_strings and "'" not in text and "\n" not in text:
            return f"'{text}'"
        return json.dumps(text, ensure_ascii=False)  # JSON string escapes are valid TOML basic strings
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_key(str(k))} = {toml_value(v, literal_strings=literal_strings)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, Sequence):
        return "[" + ", ".join(toml_value(v, literal_strings=literal_strings) for v in value) + "]"
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
