"""A tool's declared result shape read as JSON schema: a field's schema by path, the values a
field may take, and a sample result built from the declaration.

An object schema that lists ``properties`` declares its fields: a field it does not list
is missing, unless ``additionalProperties`` says more may come. An object schema without
``properties``, a schema without a ``type``, or a ``$ref`` that leads nowhere is open: any
field may be there, so nothing read from it is judged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "FieldFound",
    "FieldMissing",
    "FieldOpen",
    "field_schema",
    "possible_values",
    "sample_value",
]

_SAMPLES_BY_TYPE: dict[str, Any] = {
    "string": "example", "integer": 1, "number": 1.0, "boolean": True, "null": None,
}
_MAX_SAMPLE_DEPTH = 8  # a recursive schema ($ref to itself) stops here


@dataclass(frozen=True)
class FieldFound:
    """The field exists; ``schema`` is its own declaration."""

    schema: dict[str, Any]


@dataclass(frozen=True)
class FieldMissing:
    """``walked`` (a path such as ``s1.order``) declares fields, and ``field`` is none of
    them; ``known`` lists those it declares."""

    walked: str
    field: str | int
    known: tuple[str, ...]


@dataclass(frozen=True)
class FieldOpen:
    """The declaration stops saying what is there before the path ends."""


def field_schema(schema: dict[str, Any], path: Sequence[str | int], *, root: str
                 ) -> FieldFound | FieldMissing | FieldOpen:
    """What ``schema`` declares at ``path`` (field names and list positions) below ``root``."""
    current = _resolved(schema, schema)
    walked = root
    for part in path:
        if current is None:
            return FieldOpen()
        if isinstance(part, int):
            items = current.get("items") if _kind(current) == "array" else None
            if not isinstance(items, dict):
                return FieldOpen()
            current, walked = _resolved(items, schema), f"{walked}[{part}]"
            continue
        if _kind(current) not in (None, "object"):
            return FieldMissing(walked, part, ())  # a text, number or list has no fields
        properties = current.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        if part not in properties:
            if not properties or _open_to_more(current):
                return FieldOpen()
            return FieldMissing(walked, part, tuple(properties))
        current, walked = _resolved(properties[part], schema), f"{walked}.{part}"
    return FieldFound(current) if current is not None else FieldOpen()


def possible_values(schema: dict[str, Any]) -> list[Any] | None:
    """Every value a field may take when its declaration lists them (``enum``, ``const``,
    a boolean); None when the values are not listed."""
    if "const" in schema:
        return [schema["const"]]
    if isinstance(schema.get("enum"), list):
        return list(schema["enum"])
    if schema.get("type") == "boolean":
        return [True, False]
    return None


def sample_value(schema: dict[str, Any], *, root: dict[str, Any] | None = None,
                 depth: int = 0) -> Any:
    """A value the declaration allows, the same every time: its first example, else its
    first listed value, else one per type (an object's listed fields, one list item)."""
    top = root if root is not None else schema
    current = _resolved(schema, top) or {}
    examples = current.get("examples")
    if isinstance(examples, list) and examples:
        return examples[0]
    listed = possible_values(current)
    if listed:
        return listed[0]
    if "default" in current:
        return current["default"]
    kind = _kind(current)
    if depth >= _MAX_SAMPLE_DEPTH:
        return None
    if kind == "object" or (kind is None and "properties" in current):
        return {name: sample_value(field, root=top, depth=depth + 1)
                for name, field in (current.get("properties") or {}).items()}
    if kind == "array":
        items = current.get("items")
        return [sample_value(items, root=top, depth=depth + 1)] if isinstance(items, dict) else []
    for option in ("anyOf", "oneOf"):
        if isinstance(current.get(option), list) and current[option]:
            return sample_value(current[option][0], root=top, depth=depth + 1)
    return _SAMPLES_BY_TYPE.get(kind or "null")


def _kind(schema: dict[str, Any]) -> str | None:
    """The schema's type; of a list of types (``["object", "null"]``), the one not null."""
    kind = schema.get("type")
    if isinstance(kind, list):
        return next((k for k in kind if k != "null"), None)
    return kind if isinstance(kind, str) else None


def _open_to_more(schema: dict[str, Any]) -> bool:
    """True when an object says fields beyond its listed ones may come."""
    more = schema.get("additionalProperties", False)
    return more is True or isinstance(more, dict) or bool(schema.get("patternProperties"))


def _resolved(schema: Any, root: dict[str, Any]) -> dict[str, Any] | None:
    """``schema`` with a local ``$ref`` (``#/$defs/Name``) followed, and a single-choice
    ``anyOf`` or a nullable ``anyOf`` (what pydantic writes for ``X | None``) unwrapped;
    None when it cannot be read."""
    for _ in range(_MAX_SAMPLE_DEPTH):
        if not isinstance(schema, dict):
            return None
        reference = schema.get("$ref")
        if isinstance(reference, str):
            schema = _follow(reference, root)
            continue
        choices = schema.get("anyOf")
        if isinstance(choices, list):
            real = [c for c in choices if not (isinstance(c, dict) and c.get("type") == "null")]
            if len(real) == 1:
                schema = real[0]
                continue
        return schema
    return None


def _follow(reference: str, root: dict[str, Any]) -> Any:
    if not reference.startswith("#/"):
        return None
    target: Any = root
    for key in reference[2:].split("/"):
        target = target.get(key) if isinstance(target, dict) else None
    return target
