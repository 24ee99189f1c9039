"""Results an answer leaves out.

A small model, asked "what was the last commit's message in R, and what time is it in
Tokyo?" in Chinese, had both results before it and answered with the time alone, under
``completed``. A tool step whose result no other step reads is there for the answer (the
synthesis repair makes the answer step depend on each one); an answer that shares nothing
with such a result, not a word, a number or an id beyond what the request itself says, has
left it out. The executor then asks once more, naming what was left out.
"""

from __future__ import annotations

import re

from core.base.language import terms
from core.execution.context import render_value
from core.plan.model import Plan, Step

__all__ = ["left_out_results"]

# Fewer distinctive tokens than this ("ok", True, a count) cannot be told apart from what
# an answer says anyway.
_MIN_TOKENS = 3
_NUMBER = re.compile(r"\d{2,}")


def left_out_results(answer: str, plan: Plan, answer_step: Step) -> list[Step]:
    """The completed tool steps ``answer_step`` depends on, read by no other step, whose
    result shares none of its own tokens with ``answer``: its own being those neither the
    request nor another of these results has (the "12" of a commit's date is not evidence
    that an answer saying "10:12" used it)."""
    read = {dep for step in plan.steps if step is not answer_step for dep in step.depends_on}
    candidates = [plan.step(dep_id) for dep_id in answer_step.depends_on]
    tokens = {dep.id: _tokens(render_value(dep.result)) for dep in candidates
              if dep.status == "completed"}
    said = _tokens(answer)
    left_out = []
    for dep in candidates:
        if dep.tool is None or dep.id not in tokens or dep.id in read:
            continue
        others = set().union(*(found for dep_id, found in tokens.items() if dep_id != dep.id))
        own = tokens[dep.id] - _tokens(plan.goal) - others
        if len(own) >= _MIN_TOKENS and not own & said:
            left_out.append(dep)
    return left_out


def _tokens(text: str) -> set[str]:
    """Words (and Chinese bigrams) as :func:`core.base.language.terms` reads them, and
    every number of two digits or more on its own (the "10" and "12" of "10:12")."""
    return terms(text) | set(_NUMBER.findall(text))
