"""Problem: an identifier argument that comes from nowhere, an id the request never names.

An identifier argument (core.plan.identifiers) written as a literal must appear in the
request or in what the planner was shown (a replan sees earlier results and the failure:
the context's ``known``); anything else is invented, such as the example value of a tool's
description, which names some other record. Such steps are sent back through the
corrective retry; what a lookup still invents afterwards is removed by the final repair
core.planning.checks.clear_invented, and a side effect keeps its value and the warning for
the person approving to see.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from core.plan.identifiers import plan_grounds
from core.plan.model import Plan, Step
from core.planning.checks.shape import Check, CheckContext, Problem

__all__ = ["CHECK", "invented_id", "invented_ids", "ungrounded_ids"]


def ungrounded_ids(plan: Plan, context: CheckContext) -> Iterator[tuple[Step, str, Any]]:
    """(step, parameter, value) for each literal identifier argument of a step still to
    run whose value is in neither the goal, ``known`` (e.g. results shown to a replanner)
    nor a completed step's result. References (``{{s1.code}}``) are grounded."""
    grounds = plan_grounds(plan, known=context.known)
    for step in plan.steps:
        if step.status != "pending" or step.tool not in context.registry or not step.args:
            continue
        for name, value in grounds.invented(step.args):
            yield step, name, value


def invented_id(step: Step, name: str, value: Any) -> Problem:
    """The problem of ``step`` passing the invented ``name``=``value``."""
    return Problem("check.invented_id", {"step": step.id, "name": name, "value": repr(value)},
                   step.id)


def invented_ids(plan: Plan, context: CheckContext) -> list[Problem]:
    """One problem per invented identifier, saying what to do instead."""
    return [invented_id(step, name, value) for step, name, value in ungrounded_ids(plan, context)]


CHECK = Check(name="grounding", kind="problem", stages=frozenset({"draft", "replan"}),
              run=invented_ids, weak_models_only=False)
