"""Clarifying questions: ask for what a plan cannot do without, instead of guessing.

Offline, the packs ask what their rules cannot do without (the demo asks for an order
number when an order action names none, and for a budget when a recommendation says the
price matters but gives no figure). With an LLM, the planner may answer
``{"questions": [...]}`` instead of a plan
(:data:`core.prompts.adaptive.CLARIFY_INSTRUCTION`), read by :func:`parse_questions`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from core.base.language import Language
from core.base.messages import joined
from core.errors import PlanParseError
from core.planning.packs import packs
from core.prompts.adaptive import decision_json
from core.tools.registry import ToolRegistry

__all__ = [
    "MAX_QUESTIONS",
    "merge_answers",
    "needs_clarification_offline",
    "parse_questions",
]

logger = logging.getLogger(__name__)

MAX_QUESTIONS = 3


def needs_clarification_offline(request: str, registry: ToolRegistry) -> list[str]:
    """Questions the request must answer before the packs' rules can plan it (usually
    none): each pack asks about the requests of its domain."""
    asked = [question for pack in packs(registry) if pack.questions is not None
             for question in pack.questions(request or "", registry)]
    return list(dict.fromkeys(asked))[:MAX_QUESTIONS]


def parse_questions(text: str) -> list[str] | None:
    """The questions of a ``{"questions": [...]}`` reply, or None when it is not one.

    A reply that holds a plan (``"steps"``) is never read as questions.
    """
    try:
        data = decision_json(text or "", ["questions", "steps"], what="planner")
    except PlanParseError:
        return None
    if "steps" in data:
        return None
    raw = data.get("questions")
    if not isinstance(raw, list):
        return None
    questions = [str(q).strip() for q in raw if isinstance(q, (str, int, float)) and str(q).strip()]
    return questions[:MAX_QUESTIONS] or None


def merge_answers(request: str, questions: Sequence[str], answers: Sequence[str],
                  language: Language) -> str:
    """The request with the person's answers added inline (unanswered questions left out).

    Inline and without the questions' own wording (which may hold examples such as an
    order number), so that the offline planner reads the answers as part of the request.
    """
    given = [a.strip() for _, a in zip(questions, answers, strict=False) if a and a.strip()]
    if not given:
        return request
    base = request.rstrip().rstrip("。.")
    return base + joined(given, language, aside=True)
