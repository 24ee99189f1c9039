"""Repair: a step given code where its tool takes arithmetic becomes a reasoning step.

A small model plans a calculator call on code (``if(order['x'] == 'y', 1, 0)``,
``COUNT(*)``) to check a result, and asked to fix it, writes the same plan again. What the
step means is plain from its description, so the step is kept and worked out by reasoning
over the results it reads, with a note for the person approving. A tool's argument
validator says which values are not arithmetic (core.base.expressions.NotArithmeticError).
"""

from __future__ import annotations

import json

from pydantic import ValidationError

from core.base.expressions import NotArithmeticError
from core.plan.model import REFERENCE, Plan, Step
from core.planning.checks.shape import Check, CheckContext, Problem
from core.tools.registry import ToolRegistry

__all__ = ["CHECK", "reason_instead_of_code"]


def reason_instead_of_code(plan: Plan, context: CheckContext) -> list[Problem]:
    """Make each pending step whose literal arguments are code, not arithmetic, a
    reasoning step; one note per step changed."""
    changed = []
    for step in plan.steps:
        if step.status != "pending" or not _given_code(step, context.registry):
            continue
        changed.append(Problem("check.code_to_reasoning", {
            "step": step.id, "tool": step.tool, "args": _arguments(step)}, step.id))
        step.tool, step.args = None, {}
    return changed


def _given_code(step: Step, registry: ToolRegistry) -> bool:
    if step.tool not in registry or REFERENCE.search(_arguments(step)):
        return False  # a reference's value is only known when the step runs
    tool = registry.get(step.tool or "")
    if tool.side_effect or tool.arguments_model is None:
        return False  # an action is not the model's to imitate; a schema has no validators
    try:
        tool.arguments_model.model_validate(step.args)
    except ValidationError as exc:
        return any(isinstance((error.get("ctx") or {}).get("error"), NotArithmeticError)
                   for error in exc.errors())
    return False


def _arguments(step: Step) -> str:
    return json.dumps(step.args, ensure_ascii=False, default=str)


CHECK = Check(name="code_arguments", kind="repair", stages=frozenset({"draft", "replan"}),
              run=reason_instead_of_code, weak_models_only=True)
