"""The same call: when two tool steps do one and the same thing, so that one may stand for both.

A tool step's call is its tool and its literal arguments, references included: two steps
reading ``{{s1.code}}`` read one value. A step whose arguments are still to be worked
out when it runs (no ``args`` at all, a required argument missing, or an argument left
``null``) calls nothing determinate yet: the executor infers its arguments from the step's
own description and inputs, so it is never the same call as another step, however alike the
two look ("compute part 1" and "compute part 2", both ``calculate`` with no arguments).

Whether the condition belongs to the call is the caller's to say: folding repeated reads
keeps steps apart whose conditions differ, while a side effect repeated under a new
condition is still the same side effect. Approval compares another notion (what a person
approved, core.plan.approval), and matching a model's step to a rule draft's compares the
tool and the identifiers only.
"""

from __future__ import annotations

import json

from core.plan.model import Step
from core.tools.registry import ToolRegistry

__all__ = ["call_key", "determinate", "same_call"]


def determinate(step: Step, registry: ToolRegistry) -> bool:
    """True when ``step`` is a tool step whose arguments are all written in the plan (as
    values or references), so that running it needs no model to fill them in."""
    if step.tool is None or step.args is None:
        return False
    given = {name for name, value in step.args.items() if value is not None}
    if len(given) != len(step.args):
        return False
    required = registry.get(step.tool).required if step.tool in registry else []
    return set(required) <= given


def call_key(step: Step, registry: ToolRegistry, *, condition: bool = False) -> str | None:
    """What ``step`` calls, as a key equal for the same call and only for it (with its
    condition when ``condition``); None when the step calls nothing determinate yet."""
    if not determinate(step, registry):
        return None
    parts = [step.tool, step.args, step.condition if condition else None]
    return json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)


def same_call(first: Step, second: Step, registry: ToolRegistry, *,
              condition: bool = False) -> bool:
    """True when both steps make the same determinate call (see :func:`call_key`)."""
    key = call_key(first, registry, condition=condition)
    return key is not None and key == call_key(second, registry, condition=condition)
