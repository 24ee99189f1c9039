"""Identifier arguments that come from nowhere: an id the request never names.

A small model copies the example call of a tool's description: asked when order 70412
arrives, it plans ``query_logistics {"tracking_no": "SF1234567890"}``, the example's
parcel, which belongs to another order. An identifier argument (a parameter named
``…_id``, ``…_no`` or ``…number``) written as a literal must appear in the request or in
what the planner was shown (a replan sees earlier results and the failure); anything else
is invented. :func:`grounding_problems` sends such steps back through the corrective retry;
:func:`clear_ungrounded` empties what a lookup still invents afterwards, so that the
executor fills the argument from the step's dependencies at run time instead of reading
another customer's order. A side-effecting step keeps its value and the warning: emptied,
its target would be chosen at run time, out of the sight of the person approving it, who
sees the id and the warning instead.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from core.base.language import Language, detect_language, pick
from core.plan.model import Plan, Step
from core.tools.registry import ToolRegistry

__all__ = ["clear_ungrounded", "grounding_problems", "ungrounded_ids"]

_ID_PARAMETER = re.compile(r"(?:^|_)(?:id|no|number)$", re.IGNORECASE)
_SPACES = re.compile(r"\s+")


def _normal(text: str) -> str:
    return _SPACES.sub("", text).casefold()


def _sources(plan: Plan, known: Iterable[Any]) -> str:
    parts = [plan.goal, *(json.dumps(item, ensure_ascii=False, default=str) for item in known)]
    parts += [json.dumps(step.result, ensure_ascii=False, default=str)
              for step in plan.steps if step.status == "completed"]
    return _normal(" ".join(parts))


def ungrounded_ids(plan: Plan, registry: ToolRegistry, *, known: Iterable[Any] = ()
                   ) -> Iterator[tuple[Step, str, Any]]:
    """(step, parameter, value) for each literal identifier argument of a step still to
    run whose value is in neither the goal, ``known`` (e.g. results shown to a replanner)
    nor a completed step's result. References (``{{s1.tracking_no}}``) are grounded."""
    sources = _sources(plan, known)
    for step in plan.steps:
        if step.status != "pending" or step.tool not in registry or not step.args:
            continue
        for name, value in step.args.items():
            if not _ID_PARAMETER.search(name) or value is None or isinstance(value, bool):
                continue
            text = _normal(str(value))
            if text and "{{" not in text and text not in sources:
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
    """Empty every invented identifier argument of a read-only step (the executor then
    infers it from the step's dependencies). The plan's warning about each, left by the
    review and worded for the model, becomes one saying it was cleared; those are returned.
    """
    lang = detect_language(plan.goal)
    cleared: list[str] = []
    stale: set[str] = set()
    for step, name, value in list(ungrounded_ids(plan, registry, known=known)):
        if registry.get(step.tool or "").side_effect:
            continue
        stale.add(_problem(lang, step, name, value))
        step.args = {**(step.args or {}), name: None}
        cleared.append(pick(
            lang,
            f"{step.id} 的参数 {name}={value!r} 来历不明，已清空：运行时将根据前面步骤的结果填写。",
            f"{step.id}'s {name}={value!r} came from nowhere and was cleared: it will be "
            "filled from earlier results when the step runs."))
    plan.warnings = [w for w in plan.warnings if w not in stale] + cleared
    return cleared
