"""What the request asks for by name that a result holds and the answer does not state.

A small model, asked for the one fact a lookup returned (an order's tracking number), told
the order's state and product and left that fact out, under ``completed``. A result field
is asked for when the request names it: every word of its name but the generic ones
("parcel" of ``parcel_no``) is a word of the request, as it is or in the plural (the
"check" of a request is not the ``checked`` of a result), or the request says it in Chinese
(core.base.field_words, or a label its tool declares: ``ToolHints.field_labels``). Only a
value that cannot be retold in other words is checked: a number, or a text holding digits
(an identifier, a date); a word ("delivered") may be translated or paraphrased, and what
the request itself gives (the order's own number) is no finding. A number is stated however
it is written (``1,299``, ``1299.00``, ``35.6`` as ``36``, ``0.078`` as ``7.8%``); a text with
digits by one of its own numbers ("25" of ``2026-06-25`` in "25 June").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from core.base.field_words import english_words, name_words
from core.base.language import terms
from core.plan.approval import has_side_effect
from core.plan.model import Plan, Step
from core.tools.registry import ToolRegistry

__all__ = ["states_a_value", "unstated_values"]

# words of a field name that say what kind of value it is, not which fact
_GENERIC = frozenset(("id", "no", "nr", "num", "number", "code", "name", "value", "at", "on",
                      "of", "the", "is", "pct", "percent", "ms", "s", "sec", "secs"))
_LONGEST_VALUE = 60  # characters: a longer text is prose, not a fact to quote
_NUMBER = re.compile(r"(?<![\d.])(\d[\d,]*(?:\.\d+)?)\s*(%|万|亿|thousand\b|million\b"
                     r"|billion\b|[kKM]\b)?")
# what a number written with a unit of size is multiplied by
_SCALES = {"万": 1e4, "亿": 1e8, "thousand": 1e3, "million": 1e6, "billion": 1e9, "k": 1e3,
           "K": 1e3, "M": 1e6, "%": 0.01}
_DIGITS = re.compile(r"\d+")
_DIGIT_GROUP = re.compile(r"\d+(?:[ -]\d+)+")


def unstated_values(answer: str, plan: Plan, registry: ToolRegistry
                    ) -> list[tuple[Step, list[tuple[str, Any]]]]:
    """Each completed read-only tool step the answer step stands on whose result holds
    fields the request asks for, none of whose values ``answer`` states: the step and
    those (field, value) pairs."""
    answer_step = plan.synthesis_step()
    if answer_step is None:
        return []
    asked = _asked_words(plan.goal)
    given, stated = _Written(plan.goal), _Written(answer)
    unstated = []
    for step in plan.steps:
        if (step.id not in answer_step.depends_on or step.status != "completed"
                or step.tool is None or not isinstance(step.result, Mapping)
                or has_side_effect(step, registry)):
            continue
        labels = registry.get(step.tool).hints.field_labels if step.tool in registry else {}
        labelled = {field for label, field in labels.items() if label in plan.goal}
        requested = [(field, value) for field, value in _fields(step.result)
                     if (field in labelled or _names(field, asked))
                     and _checkable(value) and not given.states(value, whole=True)]
        if requested and not any(stated.states(value) for _, value in requested):
            unstated.append((step, requested))
    return unstated


def states_a_value(answer: str, values: Iterable[Any], request: str) -> bool:
    """True when ``answer`` states one of ``values`` that holds digits and that
    ``request`` does not give, however it writes it (see the module docstring)."""
    given, stated = _Written(request), _Written(answer)
    return any(_checkable(value) and not given.states(value, whole=True)
               and stated.states(value) for value in values)


def _asked_words(request: str) -> set[str]:
    """The request's words as field names are matched: its English words, and those its
    Chinese nouns mean, each also without a plural's "s"."""
    words = {*terms(request), *english_words(request)}
    return words | {word[:-1] for word in words if word.endswith("s")}


def _names(field: str, asked: set[str]) -> bool:
    own = [word for word in name_words(field) if word not in _GENERIC]
    return bool(own) and all(word in asked or word.removesuffix("s") in asked
                             for word in own)


def _fields(result: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """The result's fields and those of the records it holds directly (``refund.status``
    by its own name)."""
    for key, value in result.items():
        if isinstance(value, Mapping):
            yield from ((str(inner), held) for inner, held in value.items())
        else:
            yield str(key), value


def _checkable(value: Any) -> bool:
    """A number, or a short text with digits in it."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return False
    text = str(value)
    return len(text) <= _LONGEST_VALUE and _DIGITS.search(text) is not None


class _Written:
    """The numbers a text writes, for telling whether it states a value."""

    def __init__(self, text: str) -> None:
        self._numbers: list[tuple[float, float]] = []  # (a value it may mean, how close)
        # its digits, each run and each group of runs written with spaces or dashes between
        # them ("978-0-14-044913-6" is 9780140449136)
        self._runs: set[str] = _significant(_DIGITS.findall(text)) | _significant(
            ["".join(_DIGITS.findall(group))
             for group in _DIGIT_GROUP.findall(text)])
        for match in _NUMBER.finditer(text):
            written, unit = match.group(1).replace(",", ""), match.group(2)
            self._numbers.append((float(written), _precision(written)))
            if unit:
                scale = _SCALES[unit]
                self._numbers.append((float(written) * scale, _precision(written) * scale))

    def states(self, value: Any, *, whole: bool = False) -> bool:
        """True when the text writes ``value``: a number however it is written, a text
        by one of its own numbers of two digits or more, or by all its digits (``whole``:
        by every one of its numbers)."""
        number = _as_number(value)
        if number is not None and any(abs(number - said) <= close
                                      for said, close in self._numbers):
            return True
        if not isinstance(value, str):
            return False
        runs = _DIGITS.findall(value)
        own = _significant(runs)
        if whole:
            return own <= self._runs
        return bool((own | _significant(["".join(runs)])) & self._runs)


def _precision(written: str) -> float:
    """How far the value a number stands for may be from it: half its last digit ("36" is
    35.6, "1.25" is 1.249), its trailing zeros read as rounding ("2,000" is 1,999)."""
    if "." in written:
        return 0.5 * 10 ** -len(written.split(".")[1]) + 1e-9
    zeros = len(written) - len(written.rstrip("0"))
    return 0.5 * 10 ** min(zeros, len(written) - 1) + 1e-9


def _as_number(value: Any) -> float | None:
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value).replace(",", "").strip())
    except ValueError:
        return None


def _significant(runs: list[str]) -> set[str]:
    """Runs of digits without their leading zeros, of two digits or more (the "7" of a
    date's "07" says nothing)."""
    return {plain for run in runs if len(plain := run.lstrip("0")) >= 2}
