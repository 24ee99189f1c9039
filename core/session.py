"""Assembling an engine from the settings, and planning a request online or offline."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from core.engine import Engine
from core.errors import ConfigError
from core.plan import Plan
from core.usage import Usage

__all__ = ["NO_KEY_MESSAGE", "build_engine", "plan_for_request", "public_settings"]

NO_KEY_MESSAGE = (
    "No LLM is configured: set OPENAI_API_KEY (and OPENAI_BASE_URL for another provider) "
    "in the environment or a .env file, or pass --offline to use the offline planner."
)


def build_engine(*, offline: bool, environ: Mapping[str, str] | None = None) -> Engine:
    """The tools plus, unless ``offline``, a chat model from the settings."""
    from core.llm import OpenAIChatModel
    from core.settings import LLMSettings
    from core.tools.catalog import default_registry

    registry = default_registry(environ)
    if offline:
        return Engine(registry=registry, model=None)
    settings = LLMSettings.from_env(environ)
    if not settings.configured:
        raise ConfigError(NO_KEY_MESSAGE)
    return Engine(registry=registry, model=OpenAIChatModel(settings))


def plan_for_request(request: str, engine: Engine) -> tuple[Plan, Usage]:
    """A plan and what planning cost: from the LLM planner, or the rule-based one offline.

    The LLM planner falls back to a minimal plan with its errors in ``plan.warnings``.
    """
    if not request.strip():
        raise ConfigError("The request is empty; say what you want done.")
    if engine.offline:
        from core.offline import offline_plan

        return offline_plan(request, engine.registry), Usage()
    from core.planner import plan_request

    result = plan_request(request, engine)
    assert result.plan is not None  # plan_request always returns a plan (maybe the fallback)
    return result.plan, result.usage


def public_settings(
    *, offline: bool, environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The settings a run records: models and endpoint, never the API key."""
    if offline:
        return {"offline": True}
    from core.settings import LLMSettings

    return {"offline": False, **LLMSettings.from_env(environ or os.environ).public_dict()}
