"""What a tool may return: any value becomes plain JSON data the run's record can store."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["json_safe"]

_SURROGATE = re.compile("[\ud800-\udfff]")
_MAX_DEPTH = 40
_MAX_NODES = 100_000
_MAX_BYTES_SHOWN = 4_096
_INT64 = 2**63
_CUT = "…"


def json_safe(value: Any) -> Any:
    """``value`` as plain JSON data that ``json.dumps(..., allow_nan=False)`` always accepts.

    Bytes become ``X'hex'`` text, integers outside 64 bits text (other stores and languages
    lose their digits; Python refuses to print past 4,300), NaN and infinities text,
    tuples and sets lists, dates ISO text, models and dataclasses dicts, other objects
    ``str()``; lone surrogates become U+FFFD. Nesting past 40 levels, cycles and more than
    100,000 values are cut with a marker. Never raises.
    """
    return _JsonSafe().convert(value, 0)


class _JsonSafe:
    """One conversion: the values left in its budget and the containers being walked."""

    def __init__(self) -> None:
        self.budget = _MAX_NODES
        self.walking: set[int] = set()

    def convert(self, value: Any, depth: int) -> Any:
        self.budget -= 1
        try:
            return self._convert(value, depth)
        except Exception:  # an odd object (a __getattr__ or model_dump that raises): as text
            return _text(_as_str(value))

    def _convert(self, value: Any, depth: int) -> Any:
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, enum.Enum):
            value = value.value
        if isinstance(value, int):
            plain = int.__int__(value)
            return plain if -_INT64 <= plain < _INT64 else _int_text(plain)
        if isinstance(value, float):
            plain = float.__float__(value)
            return plain if math.isfinite(plain) else str(plain)
        if isinstance(value, str):
            return _text(str.__str__(value))
        if isinstance(value, bytes | bytearray | memoryview):
            return _hex(bytes(value))
        if isinstance(value, dt.datetime | dt.date | dt.time):
            return value.isoformat()
        if isinstance(value, type):
            return _text(_as_str(value))
        if hasattr(value, "model_dump"):
            value = value.model_dump()
        elif dataclasses.is_dataclass(value):
            value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        if isinstance(value, Mapping | list | tuple | set | frozenset):
            return self._container(value, depth)
        return _text(_as_str(value))

    def _container(self, value: Any, depth: int) -> Any:
        if depth >= _MAX_DEPTH:
            return f"{_CUT} (nested more than {_MAX_DEPTH} levels)"
        if id(value) in self.walking:
            return f"{_CUT} (refers to itself)"
        self.walking.add(id(value))
        try:
            if isinstance(value, Mapping):
                return self._mapping(value, depth)
            items = []
            for item in value:
                if self.budget <= 0:
                    items.append(_CUT)
                    break
                items.append(self.convert(item, depth + 1))
            if isinstance(value, set | frozenset):  # a stable order for a stable record
                items.sort(key=lambda item: json.dumps(item, sort_keys=True))
            return items
        finally:
            self.walking.discard(id(value))

    def _mapping(self, value: Mapping, depth: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, item in value.items():
            if self.budget <= 0:
                result[_CUT] = _CUT
                break
            result[_key(key)] = self.convert(item, depth + 1)
        return result


def _key(key: Any) -> str:
    plain = json_safe(key)
    return plain if isinstance(plain, str) else json.dumps(plain)  # null, true, 1, [1, 2]


def _int_text(value: int) -> str:
    try:
        return str(value)
    except ValueError:  # past Python's int-to-str digit limit
        return f"<an integer of {value.bit_length():,} bits>"


def _hex(raw: bytes) -> str:
    if len(raw) <= _MAX_BYTES_SHOWN:
        return f"X'{raw.hex().upper()}'"
    return f"X'{raw[:_MAX_BYTES_SHOWN].hex().upper()}{_CUT}' ({len(raw):,} bytes)"


def _text(text: str) -> str:
    return _SURROGATE.sub("\ufffd", text)


def _as_str(value: Any) -> str:
    try:
        return str(value)
    except Exception:  # a __str__ that raises
        return f"<{type(value).__name__} object>"
