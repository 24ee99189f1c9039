"""Plan variants: up to three alternative plans for one request, with the figures that
compare them (steps, critical path, expected model calls, side effects, problems).

Each variant is drafted by the planner's own draft path (core.planning.planner.plan_request)
from its own angle, so it is repaired, checked and validated exactly like a single plan.
The angles differ in the prompt, and a provider's ``n`` samples one prompt several times,
so the variants are asked in parallel threads instead (the OpenAI-compatible client is
thread-safe: the executor shares it between parallel steps too). Two variants that come
out the same are one variant planned from both angles. Offline the rule planner knows one
plan for a request: the result then holds that one plan and says so.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.base.language import Language
from core.base.messages import Message, msg, render
from core.base.usage import Usage
from core.errors import ConfigError
from core.execution.executor import predict_llm_calls
from core.llm.engine import Engine
from core.plan.approval import has_side_effect
from core.plan.model import Plan
from core.prompts.variants import ANGLES, Angle

if TYPE_CHECKING:
    from core.store.run_store import RunStore

__all__ = ["MAX_VARIANTS", "Figures", "Variant", "Variants", "draft_variants", "figures",
           "variant_count"]

MAX_VARIANTS = len(ANGLES)


@dataclass
class Figures:
    """What sets a plan apart from its alternatives, as ``plan --json`` prints it."""

    steps: int
    critical_path: int
    llm_calls: int
    side_effects: list[str]
    problems: list[str]

    def as_json(self) -> dict[str, Any]:
        """The figures as a JSON object (the ``variant`` key of ``plan --variants --json``)."""
        return {"steps": self.steps, "critical_path": self.critical_path,
                "llm_calls": self.llm_calls, "side_effects": self.side_effects,
                "problems": self.problems}


@dataclass
class Variant:
    """One alternative plan, the angles it was planned from (several when variants came out
    the same; none offline) and its figures."""

    plan: Plan
    angles: list[Angle]
    figures: Figures


@dataclass
class Variants:
    """The distinct variants of a request, what drafting them cost, and the notes to show
    with them (variants that came out the same; variants needing a model)."""

    variants: list[Variant]
    usage: Usage = field(default_factory=Usage)
    lessons: list[str] = field(default_factory=list)
    notes: list[Message] = field(default_factory=list)


def variant_count(text: str) -> int:
    """The number of variants ``text`` asks for; ConfigError unless a whole number 1-3."""
    try:
        count = int(text)
    except ValueError:
        raise ConfigError(msg("variants.bad_count", given=text, most=MAX_VARIANTS)) from None
    _require_count(count)
    return count


def _require_count(count: int) -> None:
    if not 1 <= count <= MAX_VARIANTS:
        raise ConfigError(msg("variants.bad_count", given=count, most=MAX_VARIANTS))


def draft_variants(request: str, engine: Engine, *, count: int, language: Language,
                   store: RunStore | None = None) -> Variants:
    """Up to ``count`` distinct plans for ``request``, each with its figures (problems
    worded in ``language``). The planner asks no clarifying questions here: each variant
    is planned from the request as written."""
    from core.runs.session import draft_plan

    _require_count(count)
    if engine.offline:
        draft = draft_plan(request, engine, allow_questions=False)
        assert draft.plan is not None  # without questions a draft always holds a plan
        notes = [msg("variants.offline")] if count > 1 else []
        return Variants([Variant(draft.plan, [], figures(draft.plan, engine, language))],
                        notes=notes)
    return _planned_variants(request, engine, list(ANGLES)[:count], language, store)


def _planned_variants(request: str, engine: Engine, angles: list[Angle], language: Language,
                      store: RunStore | None) -> Variants:
    from core.learning.after_run import lessons_for_request
    from core.planning.planner import plan_request
    from core.runs.session import request_language, require_request

    require_request(request)
    written_in = request_language(request)  # the plans' language; ``language`` is the reader's
    lessons = lessons_for_request(store, request, engine) if store is not None else []
    with ThreadPoolExecutor(max_workers=len(angles), thread_name_prefix="variant") as pool:
        futures = [pool.submit(plan_request, request, engine, language=written_in,
                               lessons=lessons, angle=angle)
                   for angle in angles]
        results = [future.result() for future in futures]
    drafted = Variants([], lessons=lessons)
    for angle, result in zip(angles, results, strict=True):
        drafted.usage += result.usage
        assert result.plan is not None  # without questions plan_request returns a plan
        same = next((kept for kept in drafted.variants
                     if kept.plan.canonical() == result.plan.canonical()), None)
        if same is None:
            drafted.variants.append(Variant(result.plan, [angle],
                                            figures(result.plan, engine, language)))
            continue
        same.angles.append(angle)
        drafted.notes.append(msg("variants.identical", angle=msg(f"variants.angle.{angle}"),
                                 same=msg(f"variants.angle.{same.angles[0]}")))
    return drafted


def figures(plan: Plan, engine: Engine, language: Language) -> Figures:
    """The figures of ``plan`` for ``engine``'s tools; its problems are what validation
    finds and what the planner's checks left as warnings, worded in ``language``."""
    registry = engine.registry
    return Figures(
        steps=len(plan.steps),
        critical_path=plan.critical_path_length(),
        llm_calls=predict_llm_calls(plan, registry, offline=engine.offline),
        side_effects=[step.id for step in plan.steps if has_side_effect(step, registry)],
        problems=[*(render(problem, language) for problem in plan.validate(registry)),
                  *plan.warnings],
    )
