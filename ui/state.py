"""Session state and process-wide resources of the dashboard (registry, runner).

Everything a user types lives in ``st.session_state`` (one per browser tab); what every
user shares (the tool registry, the background runner) comes from ``st.cache_resource``
and is never mutated here. The API key exists only in the session state. How the
sidebar's values and the environment make the settings in force is decided in core
(:func:`core.llm.settings.choose_settings`); this module only reads the widgets.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from core.access.audit import Act
from core.access.audit import acts as audit_acts
from core.access.identity import Actor
from core.access.policy import grant_role as grant_by
from core.access.policy import revoke_role as revoke_by
from core.access.roles import Grant, RoleBook
from core.execution.scheduler import RunOptions
from core.learning.lessons import LessonBook
from core.learning.templates import TemplateLibrary
from core.llm.engine import Engine, engine_for
from core.llm.settings import ChosenSettings, SettingsChoice, choose_settings, env_settings
from core.plan.edit import remember
from core.plan.model import Plan
from core.planning.choices import CHECKPOINT_POLICIES as POLICIES
from core.planning.choices import REQUEST_MODES as MODES
from core.runs import Runner, open_runner
from core.runs.live_views import RunChanges, RunViews, process_changes, process_views
from core.runs.tool_trials import ToolTrial
from core.runs.tool_trials import try_tool as record_tool_trial
from core.tools.registry import ToolRegistry
from core.tools.sources import ToolSource, server_of, sources_stamp
from core.tools.sources import tool_sources as list_sources
from ui.language import initial_language

__all__ = [
    "CHECKPOINT_POLICIES",
    "PLAN_MODES",
    "acts",
    "checkpoint_policy",
    "engine",
    "entered_page",
    "forget_plan_history",
    "grant_role",
    "has_plan_history",
    "init_session",
    "lesson_book",
    "note_page",
    "plan_mode_choice",
    "previous_plan",
    "registry",
    "remember_plan",
    "revoke_role",
    "role_grants",
    "run_options",
    "run_views",
    "runner",
    "settings",
    "settings_public",
    "tool_server",
    "tool_sources",
    "try_tool",
]

CHECKPOINT_POLICIES: tuple[str, ...] = POLICIES
PLAN_MODES: tuple[str, ...] = MODES


def registry() -> ToolRegistry:
    """The tools every session uses: built once per process, and again only when where
    they come from changed (the toolsets, the MCP configuration, a server of this process
    that started, died or changed its tools); never mutate it. The MCP servers are the
    process's own (core.tools.mcp.pool): a rebuild or a rerun restarts none of them."""
    return _registry(sources_stamp())


@st.cache_resource(show_spinner=False, max_entries=2)
def _registry(stamp: str) -> ToolRegistry:
    from core.tools.toolsets import default_registry

    return default_registry()


def tool_sources() -> list[ToolSource]:
    """Each toolset and MCP server with its state (running, failed and why)."""
    return list_sources(registry())


def tool_server(name: str | None) -> str | None:
    """The MCP server of tool ``name`` (None for a toolset's tool)."""
    return server_of(registry(), name)


@st.cache_resource(show_spinner=False, on_release=Runner.close)
def runner() -> Runner:
    """The background runner every session shares (crashed runs recorded when it starts).

    Clearing the resource cache closes it, pausing its runs; so does the process's exit.
    """
    return open_runner()


def run_views() -> RunViews:
    """The views of the runs people follow, kept current once for every session watching
    and for the server's stream of step marks (process-wide and thread-safe; see
    core.runs.live_views)."""
    return process_views()


def run_changes() -> RunChanges:
    """The readers of the runs people follow: one per run for the whole process, which
    wakes every session waiting for the run's next change (see core.runs.live_views)."""
    return process_changes()


def lesson_book() -> LessonBook:
    """The lessons kept in the runner's store."""
    return LessonBook(runner().store)


def template_library() -> TemplateLibrary:
    """The plan templates kept in the runner's store."""
    return TemplateLibrary(runner().store)


def try_tool(name: str, args: dict[str, Any], actor: Actor | None = None) -> ToolTrial:
    """Call a tool by hand as ``actor``, recorded as a run of the shared store (see
    core.runs.tool_trials)."""
    return record_tool_trial(name, args, registry=registry(), store=runner().store,
                             actor=actor)


def role_grants() -> list[Grant]:
    """The roles an admin gave in the store."""
    return RoleBook(runner().store).grants()


def grant_role(person: str, role: str, actor: Actor) -> None:
    """Give ``person`` ``role`` as ``actor`` (an admin; recorded in the audit log)."""
    grant_by(runner().store, person, role, actor)


def revoke_role(person: str, actor: Actor) -> None:
    """Take back ``person``'s role as ``actor`` (an admin; recorded in the audit log)."""
    revoke_by(runner().store, person, actor)


def acts(**filters: Any) -> list[Act]:
    """Entries of the audit log (core.access.audit.acts: person, action, run_id, since)."""
    return audit_acts(runner().store, **filters)


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
    options = RunOptions()
    defaults: dict[str, object] = {
        "language": initial_language(),
        "base_url": env.base_url,
        "planner_model": env.planner_model,
        "executor_model": env.executor_model,
        "api_key": "",
        "offline_mode": not env.configured,
        "max_parallel": options.max_parallel,
        "max_replans": options.max_replans,
        "confirm_side_effects": options.confirm_side_effects,
        "read_ahead": False,
        "checkpoint_policy": options.checkpoint,
        "demo_pace": float(options.step_delay_s),
        "plan_mode": "auto",
        "plan": None,
        "plan_revision": 0,
        "request_text": "",
    }
    for key, value in defaults.items():
        st.session_state.setdefault(key, value)


def settings() -> ChosenSettings:
    """The settings in force: the sidebar's values over the environment's, and the mode."""
    state = st.session_state
    choice = SettingsChoice(
        api_key=str(state.get("api_key") or ""),
        base_url=str(state.get("base_url") or ""),
        planner_model=str(state.get("planner_model") or ""),
        executor_model=str(state.get("executor_model") or ""),
        offline=bool(state.get("offline_mode", True)),
    )
    return choose_settings(choice, env_settings())


def engine() -> Engine:
    """The tools plus the chat model of this session (no model offline)."""
    return engine_for(registry(), settings().model_settings)


def settings_public() -> dict[str, Any]:
    """What a run records about the settings: never the API key."""
    return settings().for_run()


def run_options() -> RunOptions:
    """RunOptions from the sidebar."""
    state = st.session_state
    defaults = RunOptions()
    return RunOptions(
        max_parallel=int(state.get("max_parallel", defaults.max_parallel)),
        max_replans=int(state.get("max_replans", defaults.max_replans)),
        confirm_side_effects=bool(state.get("confirm_side_effects",
                                            defaults.confirm_side_effects)),
        checkpoint=checkpoint_policy(),  # type: ignore[arg-type]  # one of POLICIES
        step_delay_s=float(state.get("demo_pace", defaults.step_delay_s)),
    )


def plan_mode_choice() -> str:
    """The request mode chosen on the plan page (``auto`` unless changed)."""
    mode = st.session_state.get("plan_mode", "auto")
    return mode if mode in PLAN_MODES else "auto"


def checkpoint_policy() -> str:
    """The checkpoint policy chosen in the sidebar (the run options' default unless changed)."""
    default = RunOptions().checkpoint
    policy = st.session_state.get("checkpoint_policy", default)
    return policy if policy in CHECKPOINT_POLICIES else default


_PLAN_HISTORY = "plan_history"


def remember_plan(plan: Plan) -> None:
    """Keep ``plan`` as the version the next undo goes back to (a bounded history)."""
    st.session_state[_PLAN_HISTORY] = remember(st.session_state.get(_PLAN_HISTORY, []), plan)


def previous_plan() -> Plan | None:
    """Take the newest remembered plan out of the history (None when there is none)."""
    history = st.session_state.get(_PLAN_HISTORY) or []
    if not history:
        return None
    st.session_state[_PLAN_HISTORY] = history[:-1]
    return history[-1]


def has_plan_history() -> bool:
    """True when an undo has a plan to go back to."""
    return bool(st.session_state.get(_PLAN_HISTORY))


def forget_plan_history() -> None:
    """Drop the undo history (a new plan starts its own)."""
    st.session_state.pop(_PLAN_HISTORY, None)
