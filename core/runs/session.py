"""Assembling an engine from the settings, routing a request, and drafting its plan.

The command line and the dashboard both start a request here, so that they plan, route,
ask clarifying questions and use lessons the same way. A request's language is decided
here, when it enters (:func:`request_language`), and carried on its draft and plan.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.base.language import Language, detect_language
from core.base.messages import msg
from core.base.text import refuse_long_request
from core.base.usage import Usage
from core.errors import ConfigError
from core.llm.engine import Engine
from core.plan.model import Plan
from core.planning.choices import REQUEST_MODES, RequestMode

if TYPE_CHECKING:
    from core.planning.exchange import StepListener
    from core.planning.routes import Route
    from core.store.run_store import RunStore

__all__ = [
    "NO_KEY_MESSAGE",
    "Draft",
    "approved_draft",
    "build_engine",
    "choose_route",
    "draft_plan",
    "public_settings",
    "request_language",
    "require_request",
]

NO_KEY_MESSAGE = str(msg("config.no_llm"))


@dataclass
class Draft:
    """A drafted plan and what drafting cost, or the questions to answer first."""

    plan: Plan | None
    language: Language
    usage: Usage = field(default_factory=Usage)
    questions: list[str] = field(default_factory=list)
    lessons: list[str] = field(default_factory=list)


def build_engine(*, offline: bool, environ: Mapping[str, str] | None = None) -> Engine:
    """The tools plus, unless ``offline``, a chat model from the settings."""
    from core.llm.client import OpenAIChatModel
    from core.llm.settings import LLMSettings
    from core.tools.toolsets import default_registry

    registry = default_registry(environ)
    if offline:
        return Engine(registry=registry, model=None)
    settings = LLMSettings.from_env(environ)
    if not settings.configured:
        raise ConfigError(msg("config.no_llm"))
    return Engine(registry=registry, model=OpenAIChatModel(settings))


def request_language(request: str) -> Language:
    """The language a request is written in, decided as it enters: its route, questions,
    plan and answer are in it."""
    return detect_language(request)


def choose_route(request: str, engine: Engine, mode: RequestMode | str) -> tuple[Route, Usage]:
    """The route of a request: decided by the model or rules for "auto", else the person's."""
    from core.planning.router import decide_route, person_route

    require_request(request)
    if mode == "auto":
        return decide_route(request, engine, language=request_language(request))
    if mode not in REQUEST_MODES:
        raise ConfigError(msg("config.unknown_mode", mode=repr(mode),
                              modes=", ".join(REQUEST_MODES)))
    return person_route(mode, request), Usage()


def draft_plan(
    request: str, engine: Engine, *, store: RunStore | None = None,
    allow_questions: bool = True, language: Language | None = None,
    hierarchical: bool = False, on_steps: StepListener | None = None,
) -> Draft:
    """A plan for ``request`` (LLM planner, or the rule-based one offline) or questions,
    in ``language`` (given when a request enriched by answers to questions is drafted
    again; else the request's, decided here).

    Relevant lessons from the store go into the planner prompt. The LLM planner falls back
    to a minimal plan with its errors in ``plan.warnings``. Offline, a request no rule maps
    to a tool raises UnservableRequestError, so that no run is ever recorded for it.
    ``on_steps`` hears the LLM planner's steps while its reply is written (a preview).
    ``hierarchical`` plans in two levels (core.planning.phasing): with a model, the phases
    only (each is expanded into steps when the run reaches it); offline, the rules' phased
    plan, steps and all.
    """
    require_request(request)
    language = language or request_language(request)
    if engine.offline:
        from core.planning.clarify import needs_clarification_offline
        from core.planning.offline import offline_plan
        from core.planning.phasing import offline_phased_plan

        questions = needs_clarification_offline(request, engine.registry) if (
            allow_questions) else []
        if questions:
            return Draft(plan=None, language=language, questions=questions)
        drafting = offline_phased_plan if hierarchical else offline_plan
        plan = drafting(request, engine.registry, strict=True)
        return Draft(plan=plan.model_copy(update={"language": language}), language=language)
    from core.learning.after_run import lessons_for_request
    from core.planning.planner import plan_request

    lessons = lessons_for_request(store, request, engine) if store is not None else []
    if hierarchical:
        from core.planning.phasing import plan_phases

        phased = plan_phases(request, engine, language=language, lessons=lessons)
        return Draft(plan=phased.plan, language=language, usage=phased.usage, lessons=lessons)
    result = plan_request(request, engine, language=language, lessons=lessons,
                          allow_questions=allow_questions, on_steps=on_steps)
    return Draft(plan=result.plan, language=language, usage=result.usage,
                 questions=result.questions, lessons=lessons)


def approved_draft(request: str, engine: Engine, store: RunStore) -> tuple[Plan, Usage]:
    """The plan a request submitted with ``--yes`` runs, and what drafting it cost: drafted
    as :func:`draft_plan` drafts (lessons, the planner or the offline rules) and valid for
    ``engine``'s tools. Nobody can be asked: a request the planner has questions about
    raises ConfigError naming them; an invalid plan, PlanValidationError."""
    draft = draft_plan(request, engine, store=store)
    if draft.questions or draft.plan is None:
        raise ConfigError(msg("config.needs_detail", questions=draft.questions))
    draft.plan.raise_if_invalid(engine.registry)
    return draft.plan, draft.usage


def public_settings(
    *, offline: bool, environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The settings a run records: models and endpoint, never the API key."""
    if offline:
        return {"offline": True}
    from core.llm.settings import LLMSettings

    return {"offline": False, **LLMSettings.from_env(environ or os.environ).public_dict()}


def require_request(request: str) -> None:
    """ConfigError when ``request`` is empty (there is nothing to plan or answer) or longer
    than core.base.text.REQUEST_CHARS (saying the limit)."""
    if not request.strip():
        raise ConfigError(msg("config.empty_request"))
    refuse_long_request(request)
