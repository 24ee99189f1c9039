"""Plan versions: renaming steps for a new version, and retiring what a new version replaced.

A replan, a checkpoint and a follow-up all make a new version whose new steps take fresh
ids; :func:`renumber` renames a step and every reference to another step inside it
(``depends_on``, ``{{sN...}}`` arguments, conditions). :func:`retire` ends, as skipped,
the old version's pending steps that the new version did not carry over.
"""

from __future__ import annotations

import re
from typing import Any

from core.plan.model import REFERENCE, STEP_NAME, Plan, Step

__all__ = ["renumber", "retire"]

def renumber(step: Step, mapping: dict[str, str]) -> Step:
    """A copy of ``step`` with its id and every step it names renamed through ``mapping``."""

    def rename(match: re.Match[str]) -> str:
        return mapping.get(match.group(1), match.group(1))

    def in_args(value: Any) -> Any:
        if isinstance(value, str):
            return REFERENCE.sub(lambda m: m.group(0).replace(m.group(1), rename(m), 1), value)
        if isinstance(value, dict):
            return {k: in_args(v) for k, v in value.items()}
        if isinstance(value, list):
            return [in_args(v) for v in value]
        return value

    return step.model_copy(update={
        "id": mapping.get(step.id, step.id),
        "depends_on": list(dict.fromkeys(mapping.get(d, d) for d in step.depends_on)),
        "args": in_args(step.args),
        "condition": STEP_NAME.sub(rename, step.condition) if step.condition else None,
    }, deep=True)


def retire(old: Plan, new: Plan) -> None:
    """End, as skipped, the old version's pending steps that the new version replaced."""
    carried = {id(s) for s in new.steps}
    for step in old.steps:
        if step.status == "pending" and id(step) not in carried:
            step.advance("skipped")
            step.error = f"replaced by plan version {new.version}"
