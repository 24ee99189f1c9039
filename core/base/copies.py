"""Deep copies of plans, steps and JSON values, for a fraction of ``copy.deepcopy``'s CPU.

A plan holds pydantic models, dicts, lists and atoms (strings, numbers, datetimes).
``copy.deepcopy`` (which ``model_copy(deep=True)`` calls) memoises and dispatches on every
object it meets; recursing into exactly those three kinds makes the same independent copy
about three times faster, and a copy with replaced fields does not copy what it replaces.
Anything else found inside is still copied with ``copy.deepcopy``.
"""

from __future__ import annotations

import copy
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any, TypeVar

from pydantic import BaseModel

__all__ = ["copied", "json_copy"]

Model = TypeVar("Model", bound=BaseModel)

_ATOMS = frozenset({str, int, float, bool, type(None), bytes, Decimal, datetime, date, time,
                    timedelta})


def json_copy(value: Any) -> Any:
    """A copy of ``value`` that shares no dict, list or model with it (atoms are kept, as
    ``copy.deepcopy`` keeps them)."""
    kind = type(value)
    if kind in _ATOMS:
        return value
    if kind is dict:
        return {key: json_copy(item) for key, item in value.items()}
    if kind is list:
        return [json_copy(item) for item in value]
    if isinstance(value, BaseModel):
        return copied(value)
    return copy.deepcopy(value)


def copied(model: Model, **update: Any) -> Model:
    """What ``model.model_copy(deep=True, update=update)`` returns: every field copied with
    :func:`json_copy`, but the replaced ones, which take the update's values as they are."""
    clone = copy.copy(model)  # pydantic's own shallow copy: a new __dict__ and fields-set
    fields = clone.__dict__
    for name, value in fields.items():
        if name not in update:
            fields[name] = json_copy(value)
    if update:
        fields.update(update)
        clone.__pydantic_fields_set__.update(update)
    return clone
