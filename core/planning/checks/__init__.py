"""Plan checks and repairs: one shape (core.planning.checks.shape), one ordered list, one
pipeline.

Every check is a module of this package with one ``CHECK``; :data:`CHECKS` wires them, in
the order they run (a repair may need what an earlier one did: a synthesis step before a
drafted side effect is inserted ahead of it). Adding or removing a check is its module and
its line here. The packs' own checks (core.planning.packs.Pack.checks) run after these.

Every stage (a draft, a replan, a refinement, a checkpoint's decision, a follow-up) runs
them through one :class:`Pipeline`, built on the stage's :class:`CheckContext`
(:func:`check_context`): each reply of the model gets the repairs, then validation
(:meth:`Pipeline.accept`), then the problem checks (:meth:`Pipeline.review`: sent back
once, then warnings); the plan the exchange settles on gets the final repairs
(:meth:`Pipeline.settle`). Every check is accountable: whatever one changes in a plan, and
every warning it leaves or reply it sends back, is a :class:`core.plan.model.CheckNote`
on the plan that names it and says what it did.

Checks marked ``weak_models_only`` make up for what small models get wrong (a tool named in
words, a clause dropped, code where arithmetic is due, the rules' reading of conditions
and actions); a provider profile says whether its models need them
(``ProviderProfile.weak_model_checks``: on for local servers, off for hosted models, which
get the same plan right without them and would only pay for a corrective round when a
heuristic misfires). Checks that protect the approval boundary or honest answers
(invented ids, conditions only in words, repeated, twice planned or dropped side
effects) always run. Every check says which it is: ``weak_models_only`` has no default.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from core.base.copies import json_copy
from core.base.language import Language
from core.base.messages import Message
from core.base.text import preview
from core.errors import PlanValidationError
from core.llm.providers import weak_model_checks
from core.plan.diff import DEFINITION_FIELDS
from core.plan.model import CheckNote, Plan
from core.planning.checks import (
    clear_invented,
    code_arguments,
    coverage,
    drop_guard,
    grounding,
    guards,
    id_sources,
    implied_dependencies,
    loose_arguments,
    missing_actions,
    period_filter,
    repeated_calls,
    repeated_effects,
    repeated_failures,
    repeated_reads,
    rule_actions,
    synthesis,
    text_fields,
    tool_hints,
    tool_misfit,
    twin_effects,
)
from core.planning.checks.shape import Check, CheckContext, Kind, Problem, Stage, worded
from core.planning.packs import packs
from core.tools.registry import ToolRegistry

__all__ = [
    "CHECKS",
    "Check",
    "CheckContext",
    "Pipeline",
    "Problem",
    "all_checks",
    "check_context",
    "run_checks",
    "worded",
]

CHECKS: tuple[Check, ...] = (
    # repairs, each reply before it is judged (what a step reads first: the others see the
    # plan's real order)
    implied_dependencies.CHECK,
    repeated_reads.CHECK,
    repeated_effects.CHECK,
    twin_effects.CHECK,
    synthesis.CHECK,
    rule_actions.CHECK,
    loose_arguments.CHECK,
    code_arguments.CHECK,
    text_fields.CHECK,
    # problems: sent back once, then warnings (at a checkpoint: the decision is refused)
    tool_hints.CHECK,
    tool_misfit.CHECK,
    coverage.CHECK,
    missing_actions.CHECK,
    repeated_calls.CHECK,
    repeated_failures.CHECK,
    period_filter.CHECK,
    grounding.CHECK,
    guards.CHECK,
    drop_guard.CHECK,
    # final repairs, on the plan the exchange settled on
    clear_invented.CHECK,
    id_sources.CHECK,
)


def check_context(request: str, registry: ToolRegistry, stage: Stage, *, language: Language,
                  known: Iterable[Any] = (), before: Plan | None = None,
                  model: Any = None) -> CheckContext:
    """The one context of a stage's checks, in the request's ``language``; the checks for
    weak models run when ``model``'s profile wants them (core.llm.providers)."""
    return CheckContext(request=request, language=language, registry=registry,
                        stage=stage, known=tuple(known), before=before,
                        weak_models=weak_model_checks(model))


def all_checks(registry: ToolRegistry) -> list[Check]:
    """The engine's checks, then the packs' own, in order."""
    own = [check for pack in packs(registry) for check in pack.checks
           if isinstance(check, Check)]
    return [*CHECKS, *own]


def run_checks(plan: Plan, context: CheckContext, kind: Kind) -> list[Problem]:
    """Run every check of ``kind`` for the context's stage on ``plan`` (repairs change it);
    what they found or did, in order. Unrecorded: a stage runs them through a
    :class:`Pipeline`."""
    return [problem for check in all_checks(context.registry) if check.applies(context, kind)
            for problem in check.run(plan, context)]


Found = list[tuple[Check, Problem]]


class Pipeline:
    """The checks of one stage in their one order, each accountable (the module's docstring).

    ``validate`` adds what else makes a reply unusable at this stage (a replan's new steps
    reading a step it dropped), beside :meth:`Plan.validate`.
    """

    def __init__(self, context: CheckContext, *,
                 validate: Callable[[Plan], list[Message]] | None = None) -> None:
        self.context = context
        self._validate = validate
        self._reviews: list[tuple[Plan, Found]] = []

    def accept(self, plan: Plan) -> Plan:
        """``plan`` after the stage's repairs (in place); PlanValidationError naming every
        problem validation then finds (the reply goes back to the model)."""
        self._run(plan, "repair")
        problems = plan.validate(self.context.registry)
        if self._validate is not None:
            problems += self._validate(plan)
        if problems:
            raise PlanValidationError(problems)
        return plan

    def review(self, plan: Plan) -> list[str]:
        """What the stage's problem checks find in ``plan``, worded in the request's
        language: sent back to the model once, then the plan's warnings (:meth:`settle`)."""
        found = self._run(plan, "problem")
        self._reviews.append((plan, found))
        return worded([problem for _, problem in found], self.context.language)

    def settle(self, plan: Plan) -> Plan:
        """The plan the exchange settled on: the problems its reply still has become its
        warnings, what earlier replies were sent back for is noted, then the final repairs
        run. The notes of a check whose warning a final repair took back are dropped."""
        for reviewed, found in self._reviews:
            kept = reviewed is plan
            for check, problem in found:
                line = problem.worded(self.context.language)
                if kept and line not in plan.warnings:
                    plan.warnings.append(line)
                self._note(plan, check, "warned" if kept else "sent_back", line, problem.step)
        self._reviews.clear()
        self._run(plan, "final")
        plan.check_notes = [note for note in plan.check_notes
                            if note.action != "warned" or note.detail in plan.warnings]
        return plan

    def check(self, plan: Plan) -> Plan:
        """Every check of the stage at once, for a stage without an exchange (a follow-up's
        new version): :meth:`accept`, :meth:`review` and :meth:`settle`."""
        self.accept(plan)
        self.review(plan)
        return self.settle(plan)

    def _run(self, plan: Plan, kind: Kind) -> Found:
        """Run the checks of ``kind`` on ``plan``, noting each that changed it, and the notes
        a repair leaves as warnings."""
        found: Found = []
        language = self.context.language
        for check in all_checks(self.context.registry):
            if not check.applies(self.context, kind):
                continue
            before = _definition(plan)
            problems = check.run(plan, self.context)
            changes = _changes(before, _definition(plan))
            if kind == "problem":
                found.extend((check, problem) for problem in problems)
                if changes:  # a problem check only finds: this is a bug, and it shows
                    self._note(plan, check, "changed", changes, None)
                continue
            lines = worded(problems, language)
            plan.warnings.extend(lines)
            if changes or lines:
                self._note(plan, check, "changed" if changes else "warned",
                           "; ".join(lines) or changes, problems[0].step if problems else None)
        return found

    def _note(self, plan: Plan, check: Check, action: str, detail: str, step: str | None
              ) -> None:
        plan.check_notes.append(CheckNote(check=check.name, stage=self.context.stage,
                                          action=action, detail=detail, step=step,
                                          version=plan.version))


Definition = list[tuple[Any, ...]]


def _definition(plan: Plan) -> Definition:
    """What a check may change in a plan, cheap to take and compare: each step's
    definition fields, in plan order, then the plan's own."""
    steps = [(step.id, *(json_copy(value) if name == "args" else
                         tuple(value) if name == "depends_on" else value
                         for name in DEFINITION_FIELDS
                         for value in [getattr(step, name)]))
             for step in plan.steps]
    return [*steps, ("plan", plan.definition_of_done, tuple(plan.constraints))]


def _changes(before: Definition, after: Definition) -> str:
    """What changed from ``before`` to ``after``: steps added and removed, and each changed
    field of a step with its values ("s4 depends_on: s1 → s1, s3"); "" when nothing did."""
    if before == after:
        return ""
    old = {entry[0]: entry for entry in before}
    new = {entry[0]: entry for entry in after}
    parts = [f"added {step_id}" for step_id in new if step_id not in old]
    parts += [f"removed {step_id}" for step_id in old if step_id not in new]
    for step_id, entry in new.items():
        if step_id == "plan" or step_id not in old or old[step_id] == entry:
            continue
        for name, was, now in zip(DEFINITION_FIELDS, old[step_id][1:], entry[1:], strict=True):
            if was != now:
                parts.append(f"{step_id} {name}: {_shown(was)} → {_shown(now)}")
    if old.get("plan") != new.get("plan"):
        parts.append("definition of done or constraints")
    return "; ".join(parts) or "steps reordered"


def _shown(value: Any) -> str:
    if value is None or value == ():
        return "—"
    if isinstance(value, tuple):
        return ", ".join(map(str, value))
    return preview(value, 80)
