"""A plan executed by hand, the way the executor does offline (no LLM, no engine)."""

from __future__ import annotations

import re
from typing import Any

from core.base.expressions import evaluate_condition
from core.errors import ToolError
from core.plan.model import REFERENCE, Plan
from core.tools.registry import ToolRegistry
from demo.offline import compose_answer


def _resolve(value: Any, results: dict[str, Any]) -> Any:
    if isinstance(value, str):
        match = REFERENCE.fullmatch(value.strip())
        if not match:
            return value
        found = results[match.group(1)]
        for name, index in re.findall(r"\.([\w\-]+)|\[(\d+)\]", match.group(2)):
            found = found[name] if name else found[int(index)]
        return found
    if isinstance(value, dict):
        return {k: _resolve(v, results) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, results) for v in value]
    return value


def execute_by_hand(plan: Plan, registry: ToolRegistry, run_id: str = "run") -> str:
    """Run a plan the way the executor does offline; return the synthesis answer."""
    synthesis = plan.synthesis_step()
    for step in plan.topological_order():
        failed_dep = any(plan.step(dep).status == "failed" for dep in step.depends_on)
        if failed_dep and step is not synthesis:  # the answer still reports the failures
            step.advance("skipped")
            continue
        if step.condition and not evaluate_condition(step.condition, plan.results()):
            step.error = f"condition {step.condition} is false"
            step.advance("skipped")
            continue
        step.advance("running")
        if step is synthesis:
            step.result = compose_answer(plan)
            step.advance("completed")
        elif step.tool is None:
            step.error = "a reasoning step needs an LLM"
            step.advance("failed")
        else:
            try:
                step.result = registry.call(
                    step.tool, _resolve(step.args or {}, plan.results()),
                    idempotency_key=f"{run_id}:{step.id}:v{plan.version}",
                )
                step.advance("completed")
            except ToolError as exc:
                step.error = str(exc)
                step.advance("failed")
    assert synthesis is not None and isinstance(synthesis.result, str)
    return synthesis.result
