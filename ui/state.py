"""Session state and process-wide resources of the dashboard (registry, runner, store).

Everything a user types lives in ``st.session_state`` (one per browser tab); what every
user shares (the tool registry, the background runner) comes from ``st.cache_resource``
and is never mutated here. The API key exists only in the session state.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import streamlit as st

from core.errors import ConfigError
from core.llm.engine import Engine
from core.llm.settings import LLMSettings
from core.tools.registry import ToolRegistry

__all__ = [
    "CHECKPOINT_POLICIES",
    "PLAN_MODES",
    "PlannerMode",
    "checkpoint_policy",
    "current_settings",
    "engine",
    "entered_page",
    "env_settings",
    "init_session",
    "note_page",
    "plan_mode_choice",
    "planner_mode",
    "registry",
    "run_options",
    "runner",
    "settings_public",
]

logger = logging.getLogger(__name__)

CHECKPOINT_POLICIES: tuple[str, ...] = ("on_failure", "rigid", "adaptive", "every_step")
PLAN_MODES: tuple[str, ...] = ("auto", "plan", "knowledge", "direct")


@st.cache_resource(show_spinner=False)
def registry() -> ToolRegistry:
    """The tools every session uses (built once per process; never mutate it)."""
    from core.tools.catalog import default_registry

    return default_registry()


def runner() -> Any:
    """The process-wide background runner."""
    from core.runs.runner import get_runner

    return get_runner()


def env_settings() -> LLMSettings:
    """Settings from the environment (and .env); invalid values fall back to the defaults."""
    try:
        return LLMSettings.from_env()
    except ConfigError as exc:
        logger.warning("ignoring environment settings: %s", exc)
        return LLMSettings()


def note_page(page: str) -> None:
    """Remember which page is drawn now, and which one was drawn before it."""
    st.session_state["previous_page"] = st.session_state.get("current_page")
    st.session_state["current_page"] = page


def entered_page() -> bool:
    """True on the first draw of a page after another page (or after a fresh start)."""
    return st.session_state.get("previous_page") != st.session_state.get("current_page")


def init_session() -> None:
    """Give every session-wide setting its default before any widget is drawn."""
    env = env_settings()
    defaults: dict[str, Any] = {
        "language": "en",
        "base_url": env.base_url,
        "planner_model": env.planner_model,
        "executor_model": env.executor_model,
        "api_key": "",
        "offline_mode": not env.configured,
        "max_parallel": 4,
        "max_replans": 2,
        "confirm_side_effects": True,
        "checkpoint_policy": "on_failure",
        "plan_mode": "auto",
        "plan": None,
        "plan_revision": 0,
        "request_text": "",
    }
    for key, value in defaults.items():
        st.session_state.setdefault(key, value)


def current_settings() -> LLMSettings:
    """LLM settings from the sidebar; a blank key field means the environment's key."""
    state = st.session_state
    env = env_settings()
    key = state.get("api_key") or (env.api_key.get_secret_value() if env.api_key else None)
    try:
        return LLMSettings(
            api_key=key,
            base_url=state.get("base_url") or env.base_url,
            planner_model=state.get("planner_model") or env.planner_model,
            executor_model=state.get("executor_model") or env.executor_model,
            timeout_s=env.timeout_s,
            max_retries=env.max_retries,
            provider=env.provider,
        )
    except (ConfigError, ValueError) as exc:
        logger.warning("sidebar settings are invalid: %s", exc)
        return env


@dataclass(frozen=True)
class PlannerMode:
    """Whether plans and steps use the LLM, and the translation key of the reason."""

    offline: bool
    reason: str


def planner_mode() -> PlannerMode:
    """Offline or LLM, and why (the sidebar and the plan page show the reason)."""
    settings = current_settings()
    if st.session_state.get("offline_mode", True):
        return PlannerMode(True, "reason_offline_on" if settings.configured else "reason_no_key")
    if not settings.configured:
        return PlannerMode(True, "reason_no_key_forced")
    return PlannerMode(False, "reason_llm")


def engine() -> Engine:
    """The tools plus the chat model of this session (None offline)."""
    if planner_mode().offline:
        return Engine(registry=registry(), model=None)
    from core.llm.client import OpenAIChatModel

    return Engine(registry=registry(), model=OpenAIChatModel(current_settings()))


def settings_public() -> dict[str, Any]:
    """What a run records about the settings: never the API key."""
    mode = planner_mode()
    if mode.offline:
        return {"offline": True}
    public = current_settings().public_dict()
    public.pop("has_key", None)  # the store drops names that look like secrets; say nothing
    return {"offline": False, **public}


def run_options() -> Any:
    """RunOptions from the sidebar."""
    from core.execution.scheduler import RunOptions

    state = st.session_state
    return RunOptions(
        max_parallel=int(state.get("max_parallel", 4)),
        max_replans=int(state.get("max_replans", 2)),
        confirm_side_effects=bool(state.get("confirm_side_effects", True)),
        checkpoint=checkpoint_policy(),
    )


def plan_mode_choice() -> str:
    """The request mode chosen on the plan page (``auto`` unless changed)."""
    mode = st.session_state.get("plan_mode", "auto")
    return mode if mode in PLAN_MODES else "auto"


def checkpoint_policy() -> str:
    """The checkpoint policy chosen in the sidebar (``on_failure`` unless changed)."""
    policy = st.session_state.get("checkpoint_policy", "on_failure")
    return policy if policy in CHECKPOINT_POLICIES else "on_failure"
