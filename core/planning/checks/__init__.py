"""Plan checks and repairs: one shape (core.planning.checks.shape), one ordered list.

Every check is a module of this package with one ``CHECK``; :data:`CHECKS` wires them, in
the order they run (a repair may need what an earlier one did: a synthesis step before a
drafted side effect is inserted ahead of it). Adding or removing a check is its module and
its line here. The packs' own checks (core.planning.packs.Pack.checks) run after these.
The planner, the follow-up and the checkpoint each build one :class:`CheckContext` per
stage with :func:`check_context` and call :func:`run_checks` for a kind.

Checks marked ``weak_models_only`` make up for what small models get wrong (a tool named in
words, a clause dropped, code where arithmetic is due, the rules' reading of conditions
and actions); a provider profile says whether its models need them
(``ProviderProfile.weak_model_checks``: on for local servers, off for hosted models, which
get the same plan right without them and would only pay for a corrective round when a
heuristic misfires). Checks that protect the approval boundary or honest answers
(invented ids, conditions only in words, repeated, twice planned or dropped side
effects) always run.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from core.base.language import Language
from core.plan.model import Plan
from core.planning.checks import (
    clear_invented,
    code_arguments,
    coverage,
    drop_guard,
    grounding,
    guards,
    id_sources,
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
    "Problem",
    "all_checks",
    "check_context",
    "note_checks",
    "run_checks",
    "weak_models",
    "worded",
]

CHECKS: tuple[Check, ...] = (
    # repairs, each reply before it is judged
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


def weak_models(model: Any) -> bool:
    """Whether the checks for weak models run for ``model``: its provider profile says so;
    a model without a profile (or no model at all) gets them."""
    profile = getattr(model, "profile", None)
    return True if profile is None else bool(profile.weak_model_checks)


def check_context(request: str, registry: ToolRegistry, stage: Stage, *, language: Language,
                  known: Iterable[Any] = (), before: Plan | None = None,
                  model: Any = None) -> CheckContext:
    """The one context of a stage's checks, in the request's ``language``."""
    return CheckContext(request=request, language=language, registry=registry,
                        stage=stage, known=tuple(known), before=before,
                        weak_models=weak_models(model))


def all_checks(registry: ToolRegistry) -> list[Check]:
    """The engine's checks, then the packs' own, in order."""
    own = [check for pack in packs(registry) for check in pack.checks
           if isinstance(check, Check)]
    return [*CHECKS, *own]


def run_checks(plan: Plan, context: CheckContext, kind: Kind) -> list[Problem]:
    """Run every check of ``kind`` for the context's stage on ``plan`` (repairs change it);
    what they found or did, in order."""
    return [problem for check in all_checks(context.registry) if check.applies(context, kind)
            for problem in check.run(plan, context)]


def note_checks(plan: Plan, context: CheckContext, kind: Kind) -> list[str]:
    """Run the checks of ``kind`` on ``plan`` and keep what they say as its warnings, worded
    in the request's language; return those lines."""
    lines = worded(run_checks(plan, context, kind), context.language)
    plan.warnings.extend(lines)  # read after the checks ran: a check may replace the list
    return lines
