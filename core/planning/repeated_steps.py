"""Steps that repeat an earlier one: the same call (core.plan.calls) under the same condition.

A small model sometimes falls into a loop while writing a plan and emits the same lookup
again and again ("s3" to "s12" all ``query_order`` 88231), and the corrective retry loops
the same way. A repeated read adds nothing but a call, so :func:`fold_repeated_reads`
folds it into the first (steps that read it read the first instead) and says so on the
plan; not a read that comes after a side effect (looking the order up again after the
refund sees a changed order). A repeated side effect is not the planner's to drop:
:func:`repeated_effect_problems` names it so that the corrective retry, or else the person
approving, decides.
"""

from __future__ import annotations

from core.base.language import detect_language, pick
from core.plan.approval import has_side_effect
from core.plan.calls import call_key
from core.plan.dag import ancestors
from core.plan.model import Plan
from core.plan.versions import renumber
from core.tools.registry import ToolRegistry

__all__ = ["fold_repeated_reads", "repeated_effect_problems"]


def fold_repeated_reads(plan: Plan, registry: ToolRegistry) -> dict[str, list[str]]:
    """Remove each pending read-only tool step that repeats an earlier step's call.

    Returns the steps folded into each kept one (empty: nothing repeated).
    """
    graph = {step.id: step.depends_on for step in plan.steps}
    effects = {step.id for step in plan.steps if has_side_effect(step, registry)}
    first: dict[str, str] = {}
    mapping: dict[str, str] = {}
    for step in plan.steps:
        key = call_key(renumber(step, mapping), registry, condition=True)
        if key is None or step.tool not in registry:
            continue  # arguments still to be inferred: not the same call as any other
        original = first.setdefault(key, step.id)
        if (original != step.id and step.status == "pending" and step.id not in effects
                and not effects & set(ancestors(graph, step.depends_on))):
            mapping[step.id] = original
    if not mapping:
        return {}
    plan.steps = [renumber(s, mapping) if s.status == "pending" else s
                  for s in plan.steps if s.id not in mapping]
    folded: dict[str, list[str]] = {}
    for repeat, original in mapping.items():
        folded.setdefault(original, []).append(repeat)
    lang = detect_language(plan.goal)
    # the repeats' ids are gone from the plan, and a later step may take one of them
    plan.warnings.extend(
        pick(lang, f"回复把 {original} 的调用又重复了 {len(ids)} 次，重复的已去掉。",
             f"The reply repeated {original}'s call {len(ids)} more time"
             f"{'s' if len(ids) > 1 else ''}; the repeats were removed.")
        for original, ids in folded.items())
    return folded


def repeated_effect_problems(plan: Plan, registry: ToolRegistry) -> list[str]:
    """One problem per side-effecting step that repeats an earlier step's call."""
    first: dict[str, str] = {}
    repeats: dict[str, list[str]] = {}
    for step in plan.steps:
        key = call_key(step, registry, condition=True)
        if key is None or not has_side_effect(step, registry):
            continue
        original = first.setdefault(key, step.id)
        if original != step.id:
            repeats.setdefault(original, []).append(step.id)
    lang = detect_language(plan.goal)
    return [pick(lang,
                 f"{'、'.join(ids)} 重复了 {original}（同样的工具和参数）：删掉它们，"
                 "或改成请求中还没有步骤去做的事。",
                 f"{', '.join(ids)} repeat {original} (the same tool and arguments): remove "
                 "them, or make them do a part of the request no step does yet.")
            for original, ids in repeats.items()]

