"""Step ids of a parsed reply: numbering them sN and resolving references, never silently.

A model may write ids as 1, "2", "step_3" or "lookup", repeat them or reference steps
that do not exist. Ids are renumbered ``sN``; every renaming that changes the number a step
is known by (or gives one to a step that had none) is reported as a warning, while "step_3"
written as "s3" is the same step (seed 003's plans number their steps so), and a reference
resolves only when it names exactly one step; otherwise it is kept as written for
validation to report.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

__all__ = ["assign_ids", "rename_arg_refs", "rename_condition_refs", "step_number"]

# "s3", "3", "step_3", "Step 3", "task-3", "#3"; not "s-3" (that is no step number)
_NUMBERED_ID = re.compile(r"(?:s|(?:step|task)[ _\-#]?|#)?(\d{1,9})", re.I)
_MAX_ID_CHARS = 40
_ARG_REFERENCE = re.compile(r"(\{\{\s*)([^\s.\[}]+)")
_CONDITION_NAME = re.compile(r"(?<![\w.'\"])([A-Za-z_]\w*)")


def step_number(raw: Any) -> int | None:
    """The step number an id names (1, "2", "s3", "step_4"), or None."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float) and raw.is_integer() and abs(raw) < 1e9:
        return int(raw)
    if isinstance(raw, str) and len(raw) <= _MAX_ID_CHARS:
        match = _NUMBERED_ID.fullmatch(raw.strip())
        return int(match.group(1)) if match else None
    return None


def _key(raw: Any) -> str:
    return str(raw).strip().lower()


def _label(raw: Any) -> str:
    text = str(raw)
    return repr(text if len(text) <= _MAX_ID_CHARS else text[:_MAX_ID_CHARS] + "…")


def _plainly(number: int | None, new_id: str) -> bool:
    """True when ``new_id`` keeps the number the raw id gave its step (3, "3", "s3",
    "step_3")."""
    return number is not None and f"s{number}" == new_id


def assign_ids(raw_ids: list[Any]) -> tuple[list[str], Callable[[Any], str], list[str]]:
    """New ids s1.., a function mapping a raw reference to a new id, and warnings.

    Numbered ids (1, "2", "step_3", "s4") keep their number when they are all distinct and
    positive; otherwise steps are numbered by position. A reference resolves only when it
    names exactly one step; otherwise it is kept as written, for validation to report.
    """
    numbers = [step_number(raw) for raw in raw_ids]
    distinct = (all(n is not None and n > 0 for n in numbers)
                and len(set(numbers)) == len(numbers))
    ids = ([f"s{n}" for n in numbers] if distinct
           else [f"s{position + 1}" for position in range(len(raw_ids))])
    # "sN" means step N when every numbered id is kept (or equals its position anyway)
    kept_numbers = distinct or all(
        raw is None or n == position + 1
        for position, (raw, n) in enumerate(zip(raw_ids, numbers, strict=True)))
    warnings: list[str] = []
    by_key: dict[str, list[str]] = {}
    by_number: dict[int, list[str]] = {}
    for raw, number, new_id in zip(raw_ids, numbers, ids, strict=True):
        if raw is None:
            continue
        by_key.setdefault(_key(raw), []).append(new_id)
        if number is not None:
            by_number.setdefault(number, []).append(new_id)
        if not _plainly(number, new_id):
            warnings.append(f"step id {_label(raw)} is now {new_id}")
    for key, named in by_key.items():
        if len(named) > 1:
            warnings.append(f"{', '.join(named)} all had the id {_label(key)}; references to "
                            "it are ambiguous and left as written")

    def resolve(reference: Any) -> str:
        named = by_key.get(_key(reference))
        if named is None and (number := step_number(reference)) is not None:
            named = by_number.get(number) or ([f"s{number}"] if kept_numbers else None)
        if named is not None and len(named) == 1:
            return named[0]
        written = str(reference).strip()
        if written in ids:  # renumbering gave that name to another step: keep it dangling
            note = (f"a reference to {_label(reference)} names no single step of the reply; "
                    f"it is kept as {written}? for you to fix")
            if note not in warnings:
                warnings.append(note)
            return f"{written}?"
        return written

    return ids, resolve, warnings


def rename_arg_refs(value: Any, resolve: Callable[[Any], str]) -> Any:
    """``value`` with each ``{{ref...}}`` renamed through ``resolve``."""
    if isinstance(value, str):
        return _ARG_REFERENCE.sub(lambda m: m.group(1) + resolve(m.group(2)), value)
    if isinstance(value, dict):
        return {k: rename_arg_refs(v, resolve) for k, v in value.items()}
    if isinstance(value, list):
        return [rename_arg_refs(v, resolve) for v in value]
    return value


def rename_condition_refs(condition: str | None, resolve: Callable[[Any], str]) -> str | None:
    """``condition`` with each step name (s2, step_2) renamed through ``resolve``."""
    if not condition:
        return condition

    def rename(match: re.Match[str]) -> str:
        name = match.group(1)
        if step_number(name) is not None and not name.isdigit():
            return resolve(name)
        return name

    return _CONDITION_NAME.sub(rename, condition)
