"""Plan review: the editable step table, step controls, the live diagram, problems and metrics.

One canonical plan lives in ``st.session_state["plan"]``. The table is built from
``plan_base`` (the plan as it was when the current revision started) and keyed
``plan_editor_<revision>``; its edited rows are merged back into ``plan_base`` on every
rerun and the result becomes the canonical plan. Any other change to the canonical plan
(generate, blank, move, delete, add, or a test setting it) bumps the revision, so the
editor is rebuilt from the new plan instead of replaying old edits onto new rows. So does
anything that changes the table's identity (a language switch relabels its columns, and
leaving the page drops its state): the new table starts from the canonical plan.
"""

from __future__ import annotations

import logging

import pandas as pd
import streamlit as st

from core.errors import PlanValidationError
from core.plan.edit import (
    COLUMNS,
    add_step,
    apply_table_changes,
    delete_step,
    move_step,
    plan_to_rows,
    rows_to_plan,
)
from core.plan.graph import plan_to_dot
from core.plan.model import Plan
from core.tools.registry import ToolRegistry
from ui import state as ui_state
from ui.i18n import current_language, t
from ui.safe_text import literal

__all__ = ["current_editor_key", "plan_problems", "render_plan_review", "set_plan"]

logger = logging.getLogger(__name__)


def set_plan(plan: Plan | None) -> None:
    """Replace the canonical plan (the editor is rebuilt from it on the next draw)."""
    st.session_state["plan"] = plan


def current_editor_key() -> str:
    """The key of the table for the current revision, e.g. ``plan_editor_3``."""
    return f"plan_editor_{st.session_state.get('plan_revision', 0)}"


def plan_problems(plan: Plan, registry: ToolRegistry, row_errors: list[str]) -> list[str]:
    """Cell errors plus the plan's own validation problems (each names its step)."""
    return [*row_errors, *plan.validate(registry, language=current_language())]


def render_plan_review(registry: ToolRegistry, *, offline: bool) -> tuple[Plan, list[str]]:
    """Draw the review of the canonical plan; return the edited plan and its problems.

    ``offline`` runs make no LLM calls, so the expected number of calls is then 0.
    """
    base = _sync_revision()
    table, diagram = st.columns([3, 2], gap="medium")
    with table:
        st.subheader(t("plan_table"))
        edited, row_errors = _render_table(base, registry)
        _commit(edited)
        _render_step_controls(edited)
    problems = plan_problems(edited, registry, row_errors)
    with diagram:
        st.subheader(t("plan_graph"))
        st.graphviz_chart(plan_to_dot(edited, registry=registry), width="stretch")
        st.caption(t("graph_legend"))
    _render_metrics(edited, registry, offline)
    _render_problems(edited, problems)
    return edited, problems


def _fingerprint(plan: Plan) -> str:
    return plan.model_dump_json()


def _sync_revision() -> Plan:
    state = st.session_state
    plan: Plan = state["plan"]
    fingerprint = _fingerprint(plan)
    changed = state.get("plan_synced") != fingerprint
    # column labels are part of the table's identity: a language switch starts a new table
    relabelled = state.get("plan_editor_language") != current_language()
    # coming back from another page: an edit left half-typed there must not come back
    # in the table's old state while the plan already holds it
    returned = ui_state.entered_page()
    if (changed or relabelled or returned or "plan_base" not in state
            or current_editor_key() not in state):
        logger.debug("new plan table (changed=%s, relabelled=%s, table state=%s)", changed,
                     relabelled, current_editor_key() in state)
        state["plan_revision"] = state.get("plan_revision", 0) + 1
        state["plan_base"] = plan
        state["plan_synced"] = fingerprint
        state["plan_editor_language"] = current_language()
    return state["plan_base"]


def _commit(edited: Plan) -> None:
    fingerprint = _fingerprint(edited)
    if fingerprint != st.session_state.get("plan_synced"):
        st.session_state["plan"] = edited
        st.session_state["plan_synced"] = fingerprint


def _render_table(base: Plan, registry: ToolRegistry) -> tuple[Plan, list[str]]:
    names = registry.names()
    unknown = sorted({s.tool for s in base.steps if s.tool and s.tool not in registry})
    frame = pd.DataFrame(plan_to_rows(base), columns=list(COLUMNS)).astype("string")
    column = st.column_config
    edited = st.data_editor(
        frame,
        key=current_editor_key(),
        num_rows="dynamic",
        hide_index=True,
        width="stretch",
        placeholder="—",  # empty cells, e.g. the tool of a reasoning step
        column_order=list(COLUMNS),
        column_config={
            "id": column.TextColumn(t("col_id"), disabled=True, width="small"),
            "description": column.TextColumn(t("col_description"), width="large"),
            "tool": column.SelectboxColumn(
                t("col_tool"), options=["", *names, *unknown],
                format_func=lambda name: name or t("no_tool"), width="medium",
            ),
            "args": column.TextColumn(t("col_args"), help=t("col_args_help")),
            "depends_on": column.TextColumn(t("col_depends"), help=t("col_depends_help")),
            "condition": column.TextColumn(t("col_condition"), help=t("col_condition_help")),
            "success_criteria": column.TextColumn(t("col_success")),
        },
    )
    rows = edited.astype(object).where(edited.notna(), None).to_dict("records")
    return rows_to_plan(base, rows, language=current_language())


_STEP_CONTROLS = (
    ("up", "step_up", "move_up", ":material/arrow_upward:"),
    ("down", "step_down", "move_down", ":material/arrow_downward:"),
    ("delete", "step_delete", "delete_step", ":material/delete:"),
    ("add", "step_add", "add_step", ":material/add:"),
)


def _render_step_controls(plan: Plan) -> None:
    ids = plan.ids()
    if not ids:
        st.button(t("add_step"), key="step_add", icon=":material/add:", on_click=_change,
                  args=("add",))
        return
    if st.session_state.get("step_pick") not in ids:
        st.session_state["step_pick"] = ids[0]
    pick, *buttons = st.columns([1.2, 1, 1, 1, 1], vertical_alignment="bottom")
    pick.selectbox(t("step_pick"), ids, key="step_pick")
    for column, (action, key, label, icon) in zip(buttons, _STEP_CONTROLS, strict=True):
        column.button(t(label), key=key, icon=icon, on_click=_change, args=(action,),
                      width="stretch")


def _change(action: str) -> None:
    """Apply a step control to the canonical plan (runs before the next draw).

    A cell typed into just before the click is still pending in the table's state: it is
    merged first, so that the control never loses it.
    """
    plan: Plan | None = st.session_state.get("plan")
    if plan is None:
        return
    base = st.session_state.get("plan_base")
    if base is not None:
        plan = apply_table_changes(base, st.session_state.get(current_editor_key()))
    step_id = st.session_state.get("step_pick")
    if action == "add":
        changed = add_step(plan, after=step_id if step_id in plan.ids() else None)
        st.session_state["step_pick"] = _added_id(plan, changed)
    elif step_id not in plan.ids():
        return
    elif action == "delete":
        changed = delete_step(plan, step_id)
    else:
        changed = move_step(plan, step_id, -1 if action == "up" else +1)
    set_plan(changed)


def _added_id(before: Plan, after: Plan) -> str:
    return next(s for s in after.ids() if s not in set(before.ids()))


def _render_metrics(plan: Plan, registry: ToolRegistry, offline: bool) -> None:
    steps, path, calls = st.columns(3)
    steps.metric(t("metric_steps"), len(plan.steps))
    try:
        length: int | str = plan.critical_path_length()
    except PlanValidationError:
        length = "—"
    path.metric(t("metric_critical_path"), length, help=t("metric_critical_path_help"))
    if offline:
        calls.metric(t("metric_llm_calls"), 0, help=t("metric_llm_calls_offline"))
    else:
        calls.metric(t("metric_llm_calls"), _expected_calls(plan, registry),
                     help=t("metric_llm_calls_help"))


def _expected_calls(plan: Plan, registry: ToolRegistry) -> int | str:
    try:
        from core.execution.executor import predict_llm_calls

        return predict_llm_calls(plan, registry)
    except Exception:  # an invalid plan has no meaningful prediction
        logger.debug("no LLM call prediction for this plan", exc_info=True)
        return "—"


def _render_problems(plan: Plan, problems: list[str]) -> None:
    for warning in plan.warnings:
        st.warning(t("planner_warning", warning=literal(warning)), icon=":material/warning:")
    if problems:
        st.error(
            t("problems_title", count=len(problems)) + "\n\n"
            + "\n".join(f"- {literal(problem)}" for problem in problems)
        )
    else:
        st.success(t("plan_valid"))
