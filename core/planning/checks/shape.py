"""The one shape of a plan check: where it runs, what it does, what it works on and returns.

A :class:`Check` names the stages it runs at (a new plan, a replan, a checkpoint's decision,
a follow-up), its kind, and whether it only makes sense for weak models; it works on the
plan and one :class:`CheckContext`, built once per stage, and returns :class:`Problem`
values: a message code, its parameters and the step concerned, worded only where they are
shown (a plan's warnings, the corrective prompt) in the request's language.

Kinds: a ``repair`` changes each reply before it is judged and returns notes on what it
changed; a ``problem`` check only finds what is wrong (sent back to the model once, then
kept as warnings; at a checkpoint, a reason to refuse the decision); a ``final`` repair
changes the plan the exchange settled on, after the model had its chance to fix it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

from core.base.language import Language
from core.base.messages import Message, msg, render
from core.plan.model import Plan
from core.planning.offline import rule_drafts
from core.planning.packs import Reading, reading
from core.tools.registry import ToolRegistry

__all__ = ["STAGES", "Check", "CheckContext", "Kind", "Problem", "Stage", "worded"]

Stage = Literal["draft", "replan", "checkpoint", "follow_up"]
Kind = Literal["repair", "problem", "final"]
STAGES: tuple[Stage, ...] = ("draft", "replan", "checkpoint", "follow_up")


@dataclass(frozen=True)
class Problem:
    """What a check found or did: a message code with its parameters, about ``step``."""

    code: str
    params: dict[str, Any] = field(default_factory=dict)
    step: str | None = None

    @property
    def message(self) -> Message:
        """The problem as a message of the catalogue."""
        return msg(self.code, **self.params)

    def worded(self, language: Language | str) -> str:
        """The problem in ``language``."""
        return render(self.message, language)


def worded(problems: Iterable[Problem], language: Language | str) -> list[str]:
    """Each problem in ``language``, in order, each once."""
    return list(dict.fromkeys(problem.worded(language) for problem in problems))


@dataclass
class CheckContext:
    """What every check works on, built once per stage: the request and its language, the
    tools (and through them the packs), what else the planner was shown (``known``: a
    failure, a replan's earlier results), the plan before a checkpoint's decision or a
    replan (``before``), and whether checks meant for weak models run (``weak_models``). The
    packs' rule drafts and readings are worked out once, when a check first asks."""

    request: str
    language: Language
    registry: ToolRegistry
    stage: Stage
    known: tuple[Any, ...] = ()
    before: Plan | None = None
    weak_models: bool = True
    _readings: dict[str, Reading] = field(default_factory=dict, repr=False)

    @cached_property
    def drafts(self) -> tuple[Plan, ...]:
        """The packs' rule drafts for the request (none without a pack that drafts)."""
        return tuple(rule_drafts(self.request, self.registry))

    @property
    def draft(self) -> Plan | None:
        """The first pack's rule draft, the reference the rule-reading repairs compare with."""
        return self.drafts[0] if self.drafts else None

    def reading(self, text: str) -> Reading:
        """What the packs read in ``text`` (see core.planning.packs.Reading)."""
        if text not in self._readings:
            self._readings[text] = reading(text, self.registry)
        return self._readings[text]


@dataclass(frozen=True, kw_only=True)
class Check:
    """One plan check or repair (see the module's docstring for the kinds). Each says whom
    it is for (``weak_models_only``, no default): a workaround for what small models get
    wrong, or a protection every model's plans get."""

    name: str
    kind: Kind
    stages: frozenset[Stage]
    run: Callable[[Plan, CheckContext], list[Problem]]
    weak_models_only: bool

    def applies(self, context: CheckContext, kind: Kind) -> bool:
        """True when this check runs for ``kind`` in ``context``'s stage."""
        return (self.kind == kind and context.stage in self.stages
                and (context.weak_models or not self.weak_models_only))
