"""Repair: arguments a tool does not take, and optional ones given as null, are left out.

A small model fills a call from what it knows of a tool's kind (``"limit"`` and
``"reverse"`` for a git log whose parameters are ``max_count`` and timestamps) or writes
``null`` for a value it does not know; sent back, it repeats them, and each corrective
round costs it the whole reply again. The rest of the step is sound: without those
arguments the call is valid and an optional one takes the tool's default. A required
argument given as null stays a problem: the model does not know the value, and filling it
when the step runs would have the model make one up (asked for the time in Tokyo, it chose
a converter and gave it "08:59"); the corrective turn says which tool fits without it. The
note says what was left out, for the person approving.
"""

from __future__ import annotations

import json

from core.plan.model import Plan
from core.planning.checks.shape import Check, CheckContext, Problem

__all__ = ["CHECK", "drop_loose_arguments"]


def drop_loose_arguments(plan: Plan, context: CheckContext) -> list[Problem]:
    """Leave out, from each pending tool step, the arguments its tool does not take and
    the optional ones whose value is null; one note per step changed."""
    notes = []
    for step in plan.steps:
        if step.status != "pending" or not step.args or step.tool not in context.registry:
            continue
        schema = context.registry.get(step.tool or "").parameters
        properties = schema.get("properties")
        if not isinstance(properties, dict) or schema.get("additionalProperties") is True:
            properties = None  # a schema without a closed list of parameters takes any
        required = set(context.registry.get(step.tool or "").required)
        loose = {key: value for key, value in step.args.items()
                 if (value is None and key not in required)
                 or (properties is not None and key not in properties)}
        if not loose:
            continue
        step.args = {key: value for key, value in step.args.items() if key not in loose}
        notes.append(Problem("check.loose_arguments", {
            "step": step.id, "tool": step.tool,
            "args": json.dumps(loose, ensure_ascii=False, default=str)}, step.id))
    return notes


CHECK = Check(name="loose_arguments", kind="repair", stages=frozenset({"draft", "replan"}),
              run=drop_loose_arguments, weak_models_only=True)
