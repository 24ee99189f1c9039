"""Plan versions: renaming steps for a new version, retiring what a new version replaced,
and telling a phase's expansion from a change of the plan.

A replan, a checkpoint and a follow-up all make a new version whose new steps take fresh
ids; :func:`renumber` renames a step and every reference to another step inside it
(``depends_on``, ``{{sN...}}`` arguments, conditions). :func:`retire` ends, as skipped,
the old version's pending steps that the new version did not carry over. A version that
only expanded phases (the same phases, every step kept as defined, new steps only in
phases that had none) changed nothing a person planned: :func:`only_expanded` says so, and
:func:`without_expansions` folds such versions into the one they expanded.
"""

from __future__ import annotations

import re

from core.base.copies import copied
from core.plan.model import STEP_NAME, Plan, Step, substitute_references

__all__ = ["only_expanded", "renumber", "retire", "without_expansions"]


def renumber(step: Step, mapping: dict[str, str]) -> Step:
    """A copy of ``step`` with its id and every step it names renamed through ``mapping``."""

    def rename(match: re.Match[str]) -> str:
        return mapping.get(match.group(1), match.group(1))

    return copied(
        step,
        id=mapping.get(step.id, step.id),
        depends_on=list(dict.fromkeys(mapping.get(d, d) for d in step.depends_on)),
        args=substitute_references(
            step.args, lambda m: m.group(0).replace(m.group(1), rename(m), 1)),
        condition=STEP_NAME.sub(rename, step.condition) if step.condition else None,
    )


def retire(old: Plan, new: Plan) -> None:
    """End, as skipped, the old version's pending steps that the new version replaced."""
    carried = {id(s) for s in new.steps}
    for step in old.steps:
        if step.status == "pending" and id(step) not in carried:
            step.advance("skipped")
            step.error = f"replaced by plan version {new.version}"


_DEFINITION = ("description", "tool", "args", "depends_on", "condition", "phase")


def only_expanded(old: Plan, new: Plan) -> bool:
    """True when ``new`` only gave steps to phases of ``old`` that had none."""
    if not old.phases or old.phases != new.phases:
        return False
    kept = {s.id: s for s in new.steps}
    if any(s.id not in kept or any(getattr(s, f) != getattr(kept[s.id], f) for f in _DEFINITION)
           for s in old.steps):
        return False
    filled = {s.phase for s in old.steps}
    added = [s for s in new.steps if s.id not in {o.id for o in old.steps}]
    return bool(added) and all(s.phase not in filled for s in added)


def without_expansions(versions: list[Plan]) -> list[Plan]:
    """``versions`` with each version that only expanded phases of the one before folded
    into it (the later one stands for both)."""
    folded: list[Plan] = []
    for version in versions:
        if folded and only_expanded(folded[-1], version):
            folded[-1] = version
        else:
            folded.append(version)
    return folded
