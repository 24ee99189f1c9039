"""Identifier arguments, and where their values may come from.

An identifier argument (a parameter named ``…_id``, ``…_no`` or ``…number``) names one
record: an order, a parcel, a ticket. Its value is a fact only when it was seen: in the
request, in a result, or where a person saw it before approving. A value seen nowhere is
invented (a tool description's example, a number from a model's memory), and a lookup made
with it answers about some other record, or none. :class:`Grounds` holds the texts a value
may come from and names the identifier arguments they do not hold. A person may spell a
prefixed number in words ("P followed by 12345678", "starts with 'US', numbered
9148817941"): the prefix, as a word of its own, and then the number, nearby, are that value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from core.plan.model import Plan

__all__ = ["Grounds", "is_identifier", "plan_grounds", "value_named_in"]

_ID_PARAMETER = re.compile(r"(?:^|_)(?:id|no|number)$", re.IGNORECASE)
_SPACES = re.compile(r"\s+")
# a value made of a short letter prefix and a number ("P12345678", "US-9148817941")
_PREFIXED = re.compile(r"([a-z]{1,3})[-\s]?(\d{4,})", re.IGNORECASE)
_SPELLED_GAP = 40  # characters between a prefix spelled as a word and its number


def is_identifier(parameter: str) -> bool:
    """True when ``parameter`` names an identifier (``user_id``, ``invoice_no``)."""
    return bool(_ID_PARAMETER.search(parameter))


def value_named_in(text: str, parameter: str) -> str | None:
    """The value ``text`` gives right after the name of the identifier ``parameter``
    ("customer 4711", "shipment #P-7" for ``customer_no``, ``shipment_id``): a token holding
    a digit; None when it names none."""
    stem = _ID_PARAMETER.sub("", parameter)
    if not stem:
        return None
    words = r"[\s_-]*".join(re.escape(word) for word in stem.split("_") if word)
    found = re.search(rf"\b{words}s?(?:[\s_-]*(?:id|no\.?|number))?\s*[:#]?\s*"
                      r"([A-Za-z0-9][\w-]*\d[\w-]*)", text, re.IGNORECASE)
    return found.group(1) if found else None


def _normal(text: str) -> str:
    return _SPACES.sub("", text).casefold()


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False,
                                                           default=str)


class Grounds:
    """The texts an identifier may come from; a value is grounded when one of them holds it
    (spaces and case aside). References (``{{s1.code}}``) are grounded by what they
    read, so they are never invented."""

    def __init__(self, sources: Iterable[Any] = ()) -> None:
        self._text = ""
        self._spelled = ""  # the sources as written (lower case), for spelled-out values
        for source in sources:
            self.add(source)

    def add(self, source: Any) -> None:
        """Count ``source`` (a text or any JSON-able value) among the grounds."""
        written = _text(source)
        self._text += " " + _normal(written)
        self._spelled += "\n" + written.casefold()

    def holds(self, value: Any) -> bool:
        """True when ``value`` is seen in the grounds (or says nothing: empty, a flag)."""
        if value is None or isinstance(value, bool):
            return True
        text = _normal(str(value))
        return not text or "{{" in text or text in self._text or self._spelled_out(text)

    def _spelled_out(self, value: str) -> bool:
        """True when a prefixed number is written as its prefix, a word of its own, followed
        within a sentence by its number (the number alone is no ground: "P12345678" is not
        order 12345678)."""
        parts = _PREFIXED.fullmatch(value)
        if parts is None:
            return False
        prefix, number = parts.groups()
        spelled = (rf"(?<![a-z0-9]){re.escape(prefix)}(?![a-z0-9])"
                   rf"[^\n.;]{{0,{_SPELLED_GAP}}}?(?<!\d){number}(?!\d)")
        return re.search(spelled, self._spelled) is not None

    def invented(self, args: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
        """(parameter, value) for each identifier argument in ``args`` the grounds lack."""
        for name, value in args.items():
            if is_identifier(name) and not self.holds(value):
                yield name, value


def plan_grounds(plan: Plan, *, known: Iterable[Any] = (), literals: bool = False) -> Grounds:
    """What grounds an identifier in ``plan``: its goal, ``known`` (what else the planner
    was shown: a failure, a replan's earlier results), every completed step's result, and,
    with ``literals``, every argument value the plan writes (once a person approved it, a
    value it shows is theirs)."""
    sources: list[Any] = [plan.goal, *known]
    sources += [step.result for step in plan.steps if step.status == "completed"]
    if literals:
        sources += [step.args for step in plan.steps if step.args]
    return Grounds(sources)
