"""Clause coverage: every clause of a multi-part request maps to at least one step.

A model (a small one especially) may plan the order lookup and the refund and drop the
"recommend a robot vacuum" before them. The request is split into clauses as the offline
rules split it (:func:`core.planning.offline.text.split_clauses`); a clause is covered by
a step (the synthesis step aside) that shares a content term with it (English words,
Chinese bigrams, ids and numbers), an entity (order, tracking number, service), a cue
family (both languages: "recommend" and 推荐 are one family), or whose tool's keywords
appear in the clause. Matching across languages goes through the cue families and the
tools' bilingual keywords.
"""

from __future__ import annotations

import json

from core.base.language import detect_language, pick, terms
from core.plan.model import Plan, Step
from core.planning.offline.match import score_tool
from core.planning.offline.text import cues, extract_entities, split_clauses
from core.tools.registry import ToolRegistry

__all__ = ["coverage_problems", "uncovered_clauses"]

# Families specific enough to say what a clause is about ("health" matches any "check").
_FAMILIES = frozenset({
    "refund", "policy", "logistics", "ops", "diagnose", "scale", "analytics", "churn",
    "schema", "recommend", "research", "time", "calc_words", "product",
})
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


def uncovered_clauses(request: str, plan: Plan, registry: ToolRegistry) -> list[str]:
    """The clauses of ``request`` that no step of ``plan`` covers, in request order.

    A one-clause request is the plan's whole goal, so only requests of two or more
    clauses are checked (the failure this catches is a clause dropped beside others).
    """
    clauses = split_clauses(request)
    if len(clauses) < 2:
        return []
    synthesis = plan.synthesis_step()
    steps = [step for step in plan.steps if step is not synthesis] or list(plan.steps)
    return [clause for clause in clauses
            if not any(_covers(step, clause, registry) for step in steps)]


def coverage_problems(request: str, plan: Plan, registry: ToolRegistry) -> list[str]:
    """One problem per uncovered clause, naming it, in the request's language."""
    lang = detect_language(request)
    return [pick(lang,
                 f"没有步骤覆盖请求中的这部分：“{clause}”。请为它加上步骤（有合适的工具就用工具）。",
                 f'No step covers this part of the request: "{clause}". Add a step for it '
                 "(with a tool when one fits).")
            for clause in uncovered_clauses(request, plan, registry)]


def _covers(step: Step, clause: str, registry: ToolRegistry) -> bool:
    wanted = terms(clause) - _STOP
    if not wanted and not cues(clause) & _FAMILIES:
        return True  # nothing to cover: "thanks", "please"
    text = _step_text(step)
    if wanted & (terms(text) - _STOP):
        return True
    if (cues(clause) & cues(text)) & _FAMILIES or _shared_entities(clause, text):
        return True
    return step.tool in registry and score_tool(registry.get(step.tool), clause) >= _TOOL_SCORE


def _step_text(step: Step) -> str:
    parts = [step.description, (step.tool or "").replace("_", " "), step.condition or ""]
    if step.args:
        parts.append(json.dumps(step.args, ensure_ascii=False, default=str))
    return " ".join(parts)


def _shared_entities(clause: str, text: str) -> bool:
    mine, theirs = extract_entities(clause), extract_entities(text)
    return any(set(getattr(mine, name)) & set(getattr(theirs, name))
               for name in ("orders", "tracking", "services"))
