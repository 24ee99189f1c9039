"""Running one plan check the way the engine does: on one context, worded in its language."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from core.plan.model import Plan
from core.planning.checks import CheckContext, Problem, check_context, worded
from core.planning.checks.shape import Stage
from core.runs.session import request_language
from core.tools.registry import ToolRegistry

__all__ = ["context", "found"]


def context(request: str, registry: ToolRegistry, stage: Stage = "draft", *,
            known: Iterable[Any] = (), before: Plan | None = None) -> CheckContext:
    """The context a stage's checks share, for ``request``."""
    return check_context(request, registry, stage, known=known, before=before,
                         language=request_language(request))


def found(check: Callable[[Plan, CheckContext], list[Problem]], plan: Plan,
          registry: ToolRegistry, request: str | None = None, *, stage: Stage = "draft",
          known: Iterable[Any] = (), before: Plan | None = None) -> list[str]:
    """What ``check`` finds in (or does to) ``plan``, worded in the request's language (the
    plan's goal unless ``request`` is given)."""
    shared = context(request if request is not None else plan.goal, registry, stage,
                     known=known, before=before)
    return worded(check(plan, shared), shared.language)
