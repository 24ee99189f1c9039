"""Problem: a clause of a multi-part request that no step covers.

A model (a small one especially) may plan the order lookup and the refund and drop the
"recommend a robot vacuum" before them. The request is split into clauses as the offline
engine splits it (:func:`core.planning.clauses.split_clauses`); a clause is covered by a
step (the synthesis step aside) that shares a content term with it (English words, Chinese
bigrams, ids, and numbers of two digits or more: the "17" and "23" of "what is 17*23 plus
5" are what a calculation of 17*23 is about), a thing or a topic the packs read in both (an
order number, the "refund" family: packs read both languages), or whose tool plainly
matches the clause
(its keywords, name and description). Matching across languages goes through the packs'
topics and the tools' bilingual keywords.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from core.base.language import terms
from core.plan.model import Plan, Step
from core.planning.checks.shape import Check, CheckContext, Problem
from core.planning.clauses import split_clauses
from core.planning.tool_match import score_tool

__all__ = ["CHECK", "coverage", "uncovered_clauses"]

_STOP = frozenset({
    "the", "and", "that", "this", "with", "for", "from", "have", "has", "had", "was", "were",
    "are", "what", "when", "which", "will", "would", "can", "could", "please", "tell",
    "whether", "into", "about", "then", "them", "they", "their", "our", "your", "its", "also",
    "one", "all", "any", "each", "some", "step", "steps", "result", "results", "user",
    "answer", "final", "above", "earlier", "combine", "summarise", "summarize", "look",
    "find", "get", "give", "use", "need", "make", "sure", "right", "now", "how", "not",
    "帮我", "一下", "看看", "我们", "的话", "如果", "然后", "用户", "结果", "以上", "综合",
    "回复", "最终", "给出", "一个", "这个", "那个",
})
# A keyword hit (3) or a name part plus a description word (2 + 1).
_TOOL_SCORE = 3
_NUMBER = re.compile(r"\d{2,}")


def uncovered_clauses(request: str, plan: Plan, context: CheckContext) -> list[str]:
    """The clauses of ``request`` that no step of ``plan`` covers, in request order.

    A one-clause request is the plan's whole goal, so only requests of two or more
    clauses are checked (the failure this catches is a clause dropped beside others).
    """
    clauses = split_clauses(request, questions=True)
    if len(clauses) < 2:
        return []
    synthesis = plan.synthesis_step()
    steps = [step for step in plan.steps if step is not synthesis] or list(plan.steps)
    return [clause for clause in clauses
            if not any(_covers(step, clause, context) for step in steps)]


def coverage(plan: Plan, context: CheckContext) -> list[Problem]:
    """One problem per clause of the request no step covers, naming it."""
    return [Problem("check.uncovered", {"clause": clause})
            for clause in uncovered_clauses(context.request, plan, context)]


def _covers(step: Step, clause: str, context: CheckContext) -> bool:
    registry = context.registry
    wanted = _terms(clause)
    asked = context.reading(clause)
    if not wanted and not asked.topics:
        return True  # nothing to cover: "thanks", "please"
    text = _step_text(step)
    if wanted & _terms(text):
        return True
    done = context.reading(text)
    if asked.topics & done.topics or _shared_things(asked.things, done.things):
        return True
    return step.tool in registry and score_tool(registry.get(step.tool), clause) >= _TOOL_SCORE


def _terms(text: str) -> set[str]:
    return (terms(text) | set(_NUMBER.findall(text))) - _STOP


def _step_text(step: Step) -> str:
    parts = [step.description, (step.tool or "").replace("_", " "), step.condition or ""]
    if step.args:
        parts.append(json.dumps(step.args, ensure_ascii=False, default=str))
    return " ".join(parts)


def _shared_things(mine: Mapping[str, tuple[str, ...]],
                   theirs: Mapping[str, tuple[str, ...]]) -> bool:
    return any(set(values) & set(theirs.get(kind, ())) for kind, values in mine.items())


CHECK = Check(name="coverage", kind="problem", stages=frozenset({"draft"}), run=coverage,
              weak_models_only=True)
