"""Identifier arguments that come from nowhere: an id the request never names.

An identifier argument (core.plan.identifiers) written as a literal must appear in the
request or in what the planner was shown (a replan sees earlier results and the failure);
anything else is invented, such as the example value of a tool's description, which names
some other record. :func:`grounding_problems` sends such steps back through the corrective
retry; :func:`clear_ungrounded` removes what a lookup still invents afterwards, so that the
argument is missing and the executor infers it from the step's inputs at run time, where an
inferred identifier seen nowhere still does not run (core.execution.executor). A
side-effecting step keeps its value and the warning: removed, its target would be chosen
at run time, out of the sight of the person approving it, who sees the id and the warning
instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from core.base.language import Language, detect_language, pick
from core.plan.identifiers import plan_grounds
from core.plan.model import Plan, Step
from core.tools.registry import ToolRegistry

__all__ = ["clear_ungrounded", "grounding_problems", "ungrounded_ids"]


def ungrounded_ids(plan: Plan, registry: ToolRegistry, *, known: Iterable[Any] = ()
                   ) -> Iterator[tuple[Step, str, Any]]:
    """(step, parameter, value) for each literal identifier argument of a step still to
    run whose value is in neither the goal, ``known`` (e.g. results shown to a replanner)
    nor a completed step's result. References (``{{s1.code}}``) are grounded."""
    grounds = plan_grounds(plan, known=known)
    for step in plan.steps:
        if step.status != "pending" or step.tool not in registry or not step.args:
            continue
        for name, value in grounds.invented(step.args):
            yield step, name, value


def grounding_problems(plan: Plan, registry: ToolRegistry, *, known: Iterable[Any] = ()
                       ) -> list[str]:
    """One problem per invented identifier, in the goal's language, saying what to do."""
    lang = detect_language(plan.goal)
    return [_problem(lang, step, name, value)
            for step, name, value in ungrounded_ids(plan, registry, known=known)]


def _problem(lang: Language, step: Step, name: str, value: Any) -> str:
    return pick(lang,
                f"{step.id} 的参数 {name}={value!r} 既不在请求中，也不在已有结果中（像是照抄了"
                f"示例）：请从查到它的步骤引用，例如 {{{{sN.{name}}}}}，或先加一个查它的步骤。",
                f"{step.id} passes {name}={value!r}, which is neither in the request nor in "
                f"an earlier result (copied from an example?): reference the step that looks "
                f"it up, e.g. {{{{sN.{name}}}}}, or add a step that does.")


def clear_ungrounded(plan: Plan, registry: ToolRegistry, *, known: Iterable[Any] = ()
                     ) -> list[str]:
    """Remove every invented identifier argument of a read-only step: the argument is then
    missing, as if the plan had never written it, and the executor infers it from the
    step's inputs when it runs (never ``null``, which no schema of an identifier takes).
    The plan's warning about each, left by the review and worded for the model, becomes
    one saying it was cleared; those are returned.
    """
    lang = detect_language(plan.goal)
    cleared: list[str] = []
    stale: set[str] = set()
    for step, name, value in list(ungrounded_ids(plan, registry, known=known)):
        if registry.get(step.tool or "").side_effect:
            continue
        stale.add(_problem(lang, step, name, value))
        step.args = {key: kept for key, kept in (step.args or {}).items() if key != name}
        cleared.append(pick(
            lang,
            f"{step.id} 的参数 {name}={value!r} 来历不明，已清空：运行时将根据前面步骤的结果填写。",
            f"{step.id}'s {name}={value!r} came from nowhere and was cleared: it will be "
            "filled from earlier results when the step runs."))
    plan.warnings = [w for w in plan.warnings if w not in stale] + cleared
    return cleared
