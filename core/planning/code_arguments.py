"""Steps given code where a tool takes arithmetic: they become reasoning steps.

A 1.5B model planned ``calculate("if(order['left_earbud'] == 'silent', 1, 0)")`` to check
an order, and ``calculate("COUNT(*)")`` to count rows; asked to fix it, it wrote the same
plan again, and the fallback plan that followed lost the refund the request asked for.
What the step means is plain from its description ("check whether the left earbud is
silent"), so :func:`reason_instead_of_code` keeps the step and lets the model work it out
from the results it reads, with a warning for the person approving.
"""

from __future__ import annotations

import json

from pydantic import ValidationError

from core.base.expressions import NotArithmeticError
from core.base.language import detect_language, pick
from core.plan.model import REFERENCE, Plan, Step
from core.tools.registry import ToolRegistry

__all__ = ["reason_instead_of_code"]


def reason_instead_of_code(plan: Plan, registry: ToolRegistry) -> list[str]:
    """Make each pending step whose literal arguments are code, not arithmetic, a
    reasoning step; return their ids."""
    lang = detect_language(plan.goal)
    changed = []
    for step in plan.steps:
        if step.status != "pending" or not _given_code(step, registry):
            continue
        plan.warnings.append(pick(
            lang,
            f"{step.id} 给 {step.tool} 的不是算式（{_arguments(step)}），改为由模型推理完成。",
            f"{step.id} gave {step.tool} code, not arithmetic ({_arguments(step)}); it is "
            "worked out by reasoning instead."))
        step.tool, step.args = None, {}
        changed.append(step.id)
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
