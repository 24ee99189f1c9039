"""Results an answer leaves out.

A small model, asked "what was the last commit's message in R, and what time is it in
Tokyo?" in Chinese, had both results before it and answered with the time alone, under
``completed``. A tool step whose result no other step reads is there for the answer (the
synthesis repair makes the answer step depend on each one); an answer that shares nothing
with such a result, not a word, a number or an id beyond what the request itself says (a
number however it is written: "12,500.50" and "1.25 万" are 12500.5), has left it out,
unless all it could share is words of the other language (a result retold in translation
keeps none of its words). The executor then asks once more, naming what was
left out, and quotes what is still left out under the answer.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

from core.base.language import Language, terms, written_in
from core.execution.asked_for import states_a_value
from core.plan.approval import has_side_effect
from core.plan.model import Plan, Step
from core.tools.registry import ToolRegistry

__all__ = ["left_out_results"]

# Fewer distinctive tokens than this ("ok", True, a count) cannot be told apart from what
# an answer says anyway.
_MIN_TOKENS = 3
_NUMBER = re.compile(r"\d{2,}")
_ANY_NUMBER = re.compile(r"\d+")
_DIGIT = re.compile(r"\d")
_STEM = 5


def left_out_results(answer: str, plan: Plan, answer_step: Step,
                     registry: ToolRegistry) -> list[Step]:
    """The completed read-only tool steps ``answer_step`` depends on, read by no other
    step, whose result shares none of its own tokens with ``answer``: its own being those
    neither the request nor another of these results has (the "12" of a commit's date is
    not evidence that an answer saying "10:12" used it). A side effect is left to the
    answer's required notes, which name what was done."""
    read = plan.depended_on(besides=answer_step)
    by_id = {step.id: step for step in plan.steps}
    tokens = {dep_id: _tokens(" ".join(_values(by_id[dep_id].result)))
              for dep_id in answer_step.depends_on
              if dep_id in by_id and by_id[dep_id].status == "completed"}
    seen_in = Counter(token for found in tokens.values() for token in found)
    asked, said = _tokens(plan.goal), _tokens(answer, every_number=True)
    left_out = []
    for dep_id, found in tokens.items():
        dep = by_id[dep_id]
        if dep.tool is None or dep_id in read or has_side_effect(dep, registry):
            continue
        own = {token for token in found if seen_in[token] == 1} - asked
        if (len(own) >= _MIN_TOKENS and not own & said
                and not _said_in_translation(own, plan.language)
                and not states_a_value(answer, _values(dep.result), plan.goal)):
            left_out.append(dep)
    return left_out


def _said_in_translation(own: set[str], language: Language) -> bool:
    """True when all that could show ``own`` in an answer in ``language`` is words of the
    other language (an English result retold in Chinese): with no number or identifier of
    its own, whether the answer used it cannot be told, and it is not called left out."""
    if any(_DIGIT.search(token) for token in own):
        return False
    return not any(written_in(token, language) for token in own)


def _values(result: Any) -> Iterator[str]:
    """The values of a result, without its keys (a field's name is no finding)."""
    if isinstance(result, Mapping):
        for value in result.values():
            yield from _values(value)
    elif isinstance(result, list | tuple):
        for item in result:
            yield from _values(item)
    elif result is not None:
        yield str(result)


def _tokens(text: str, *, every_number: bool = False) -> set[str]:
    """Words (and Chinese bigrams) as :func:`core.base.language.terms` reads them, a long
    word by its first letters ("refunding" is "refunded"), and every number of two digits
    or more on its own (the "10" and "12" of "10:12"), without its leading zeros (the "07"
    of a date is the "7" of "7 December"); with ``every_number``, one-digit numbers too
    (what an answer says)."""
    numbers = (_ANY_NUMBER if every_number else _NUMBER).findall(text)
    return ({term[:_STEM] if term.isalpha() else term for term in terms(text)}
            | {number.lstrip("0") or "0" for number in numbers})
