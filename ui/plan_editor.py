"""Plan review: the editable step table, step controls, the live diagram, problems and metrics.

One canonical plan lives in ``st.session_state["plan"]``. The table is built from
``plan_base`` (the plan as it was when the current revision started) and keyed
``plan_editor_<revision>``; its edited rows are merged back into ``plan_base`` on every
rerun and the result becomes the canonical plan. Any other change to the canonical plan
(generate, blank, move, delete, add, undo, or a test setting it) bumps the revision, so
the editor is rebuilt from the new plan instead of replaying old edits onto new rows. So
does anything that changes the table's identity (a language switch relabels its columns,
and leaving the page drops its state): the new table starts from the canonical plan.

A plan with phases shows one table per phase, each in a collapsible section titled with the
phase's status, id and title (a plan over 20 steps opens only its current phase, as the
graph does); the tables are read back together (core.plan.edit.grouped_rows_to_plan), and a
step's phase cell moves it to another phase.

Steps are added, moved and deleted by the step controls only (the table can delete rows
but not add them: one add-step control). A deletion detaches the step from the others
(core.plan.edit.delete_step) and says what else it changed. Every edit keeps the plan it
replaced in a small history (ui.state), so that Undo goes back one edit; a new plan
(generate, blank) starts a new history.

Above the table, the graph (ui.graph_view) and the step panel (ui.step_panel) share a
row: a click on a node picks that step (``step_pick``, the same key as the table's step
picker) and the panel shows it as a form. The panel's edits go through
:func:`apply_edit`, like the step controls, so the graph and the table show them on the
same rerun.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial

import pandas as pd
import streamlit as st

from core.base.messages import Message
from core.plan.edit import (
    COLUMNS,
    NO_TOOL,
    add_step,
    apply_grouped_changes,
    apply_table_changes,
    delete_step,
    grouped_rows_to_plan,
    grouped_table_edits,
    move_step,
    phase_groups,
    plan_to_rows,
    rows_to_plan,
    table_edits,
    undoes_table_first,
)
from core.plan.graph import default_folded, plan_to_dot
from core.plan.model import STATUS_ICONS, Plan, Step
from core.plan.size import size_problem
from core.tools.registry import ToolRegistry
from ui import state as ui_state
from ui.graph_view import folded_phases, plan_graph, toggle_phase
from ui.i18n import current_language, t
from ui.messages import said
from ui.safe_text import literal
from ui.step_panel import Change, render_step_panel

__all__ = ["apply_edit", "current_editor_key", "plan_problems", "render_plan_review",
           "set_plan"]

logger = logging.getLogger(__name__)


def set_plan(plan: Plan | None) -> None:
    """Replace the canonical plan with a new one (the editor is rebuilt from it, no undo)."""
    st.session_state["plan"] = plan
    st.session_state.pop("plan_edit_notes", None)
    st.session_state.pop("plan_refine_diff", None)  # what refining the old plan changed
    ui_state.forget_plan_history()


def current_editor_key() -> str:
    """The key of the table for the current revision, e.g. ``plan_editor_3``."""
    return f"plan_editor_{st.session_state.get('plan_revision', 0)}"


Declared = Callable[[Plan], list[Message]]
"""The problems of a plan an agent sent, against the tools it declared
(:func:`core.review.reviews.review_problems` of its review)."""


def plan_problems(plan: Plan, registry: ToolRegistry, row_errors: list[Message], *,
                  offline: bool = False, declared: Declared | None = None) -> list[str]:
    """Cell errors, a plan too large for a run, and the plan's own validation problems
    (each names its step), worded; offline, a required argument left to the model is one
    too. ``declared``: the plan is an agent's, checked as it was when it was sent."""
    too_large = size_problem(plan)
    checked = (declared(plan) if declared is not None
               else plan.validate(registry, can_infer=not offline))
    return [said(problem) for problem in [*row_errors, *([too_large] if too_large else []),
                                          *checked]]


def render_plan_review(registry: ToolRegistry, *, offline: bool,
                       declared: Declared | None = None) -> tuple[Plan, list[str]]:
    """Draw the review of the canonical plan; return the edited plan and its problems.

    ``offline`` runs make no LLM calls, so the expected number of calls is then 0.
    ``declared`` (a plan an agent sent, which the agent runs): its problems against the
    agent's tools, and no count of PlanBoard's model calls.
    """
    offline = offline and declared is None  # the agent fills what a step leaves out
    base = _sync_revision()
    top = st.container()  # the graph and the step panel, drawn once the table is read
    _render_edit_notes()
    st.subheader(t("plan_table"))
    _render_step_controls(base)
    edited, row_errors = _render_table(base, registry)
    _commit(edited)
    problems = plan_problems(edited, registry, row_errors, offline=offline, declared=declared)
    with top:
        graph, panel = st.columns([3, 2], gap="medium")
        with graph:
            st.subheader(t("plan_graph"))
            folded = folded_phases("plan_graph", edited)
            plan_graph(plan_to_dot(edited, registry=registry, folded=folded), key="plan_graph",
                       selected=st.session_state.get("step_pick"), on_select=_pick_step,
                       on_phase=partial(toggle_phase, "plan_graph", edited, folded))
            cycle_note = " · " + t("graph_legend_cycle") if edited.cycles() else ""
            st.caption(t("graph_legend") + cycle_note)
        with panel:
            render_step_panel(edited, registry, apply_edit, offline=offline)
    _render_metrics(edited, registry, offline, calls=declared is None)
    _render_problems(edited, problems)
    return edited, problems


def apply_edit(change: Change, *, typing: str | None = None) -> None:
    """Apply ``change`` to the canonical plan, as a widget callback (one undo step).

    It acts on the plan with any cell typed but not yet committed, so nothing typed is lost.
    ``typing`` names a field that commits as it is typed (``s3.condition``): its commits
    one after another, with no other change between, are one undo step.
    """
    pending = _pending()
    if pending is None:
        return
    changed, notes = change(pending)
    if _fingerprint(changed) == _fingerprint(pending) and not notes:
        return
    state = st.session_state
    if typing is not None and state.get(_TYPING) == (typing, _fingerprint(pending)):
        state["plan"] = changed  # the same typing goes on: Undo goes back to before it
        state["plan_edit_notes"] = notes
    else:
        _edit(changed, pending, notes)
    state[_TYPING] = (typing, _fingerprint(changed)) if typing is not None else None


_TYPING = "plan_typing"
"""Session key: the field typed into at the last edit and the plan that edit made."""


def _pick_step(step_id: str) -> None:
    """A node clicked in the graph: that step opens in the panel (and the step picker)."""
    plan: Plan | None = st.session_state.get("plan")
    if plan is not None and step_id in plan.ids():
        st.session_state["step_pick"] = step_id


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
    """Make a table edit the canonical plan (the plan it replaces can be undone to)."""
    fingerprint = _fingerprint(edited)
    if fingerprint != st.session_state.get("plan_synced"):
        if (previous := st.session_state.get("plan")) is not None:
            ui_state.remember_plan(previous)
        st.session_state["plan"] = edited
        st.session_state["plan_synced"] = fingerprint


_TABLE_ORDER = ("id", "description", "tool", "depends_on", "args", "condition")
"""What a reviewer reads first comes first; the success criteria are the step panel's."""
_PHASE_TABLE_ORDER = (*_TABLE_ORDER, "phase")
TABLE_WIDTHS = {"id": 48, "description": 180, "tool": 136, "depends_on": 104, "args": 213,
                "condition": 104, "phase": 70}
"""Pixels: the columns of the table, whole and side by side in the ~785 px a 1280 px window
leaves beside the sidebar and the row marker (a phase's table, in its section, is narrower:
its description and arguments give up the phase column's width)."""
_PHASE_NARROWER = {"description": -36, "args": -50}
ROW_HEIGHT = 66
"""Pixels: three lines of text (Streamlit wraps a cell's text in a row over 64 px)."""


def _render_table(base: Plan, registry: ToolRegistry) -> tuple[Plan, list[Message]]:
    if base.phases:
        return _render_phase_tables(base, registry)
    edited = _editor(base, base.steps, registry, current_editor_key(), _TABLE_ORDER)
    rows = edited.astype(object).where(edited.notna(), None).to_dict("records")
    return rows_to_plan(base, rows)


def _render_phase_tables(base: Plan, registry: ToolRegistry) -> tuple[Plan, list[Message]]:
    """One collapsible table per phase, read back together."""
    folded = default_folded(base)
    statuses = base.phase_statuses()
    rows_by_group: dict[str, list[dict]] = {}
    for group, steps in phase_groups(base):
        with st.expander(_group_label(base, group, steps, statuses), expanded=(
                group not in folded), key=f"phase_table_{group or 'none'}"):
            if group:
                _phase_notes(base, group)
            if not steps:
                st.caption(t("phase_no_steps"))
                rows_by_group[group] = []
                continue
            edited = _editor(base, steps, registry, _group_key(group), _PHASE_TABLE_ORDER,
                             group=group)
            rows_by_group[group] = edited.astype(object).where(
                edited.notna(), None).to_dict("records")
    return grouped_rows_to_plan(base, rows_by_group)


def _group_label(plan: Plan, group: str, steps: list[Step], statuses: dict[str, str]) -> str:
    if not group:
        return t("phase_group_none")
    phase = plan.phase(group)
    icon = STATUS_ICONS.get(statuses.get(group, "pending"), "")
    key = "phase_group" if steps else "phase_group_pending"
    return t(key, icon=icon, phase=group, title=literal(phase.title), count=len(steps))


def _phase_notes(plan: Plan, group: str) -> None:
    phase = plan.phase(group)
    notes = [literal(phase.goal)] if phase.goal and phase.goal != phase.title else []
    if phase.depends_on:
        notes.append(t("phase_after", phases=", ".join(phase.depends_on)))
    if phase.done_when:
        notes.append(t("phase_done_when", text=literal(phase.done_when)))
    if notes:
        st.caption("  \n".join(notes))


def _group_key(group: str) -> str:
    """The table of one phase: ``plan_editor_<revision>_<phase>``."""
    return f"{current_editor_key()}_{group or 'none'}"


def _editor(base: Plan, steps: list[Step], registry: ToolRegistry, key: str,
            order: tuple[str, ...], *, group: str | None = None) -> pd.DataFrame:
    """One data editor over ``steps`` of ``base``."""
    names = registry.names()
    unknown = sorted({s.tool for s in base.steps if s.tool and s.tool not in registry})
    shown = base.model_copy(update={"steps": steps})
    frame = pd.DataFrame(plan_to_rows(shown), columns=list(COLUMNS)).astype("string")
    column = st.column_config
    phases = [p.id for p in base.phases]
    widths = {name: width + (_PHASE_NARROWER.get(name, 0) if group is not None else 0)
              for name, width in TABLE_WIDTHS.items()}
    return st.data_editor(
        frame,
        key=key,
        num_rows="delete",  # steps are added by the Add control only
        on_change=_rows_deleted,
        args=(group,),
        hide_index=True,
        width="stretch",
        placeholder="—",  # empty cells, e.g. the tool of a reasoning step
        column_order=order,
        row_height=ROW_HEIGHT,
        column_config={
            "phase": column.SelectboxColumn(t("col_phase"), options=phases,
                                            help=t("col_phase_help"), width=widths["phase"]),
            "id": column.TextColumn(t("col_id"), disabled=True, width=widths["id"]),
            "description": column.TextColumn(t("col_description"),
                                             width=widths["description"]),
            "tool": column.SelectboxColumn(
                t("col_tool"), options=[NO_TOOL, *names, *unknown], required=True,
                format_func=_tool_label, width=widths["tool"],
            ),
            "depends_on": column.TextColumn(t("col_depends"), help=t("col_depends_help"),
                                            width=widths["depends_on"]),
            "args": column.TextColumn(t("col_args"), help=t("col_args_help"),
                                      width=widths["args"]),
            "condition": column.TextColumn(t("col_condition"), help=t("col_condition_help"),
                                           width=widths["condition"]),
            "success_criteria": column.TextColumn(t("col_success")),  # in the frame, unshown
        },
    )


def _tool_label(name: str) -> str:
    return t("tool_none_reasoning") if name == NO_TOOL else name


_STEP_CONTROLS = (
    ("up", "step_up", "move_up", ":material/arrow_upward:"),
    ("down", "step_down", "move_down", ":material/arrow_downward:"),
    ("delete", "step_delete", "delete_step", ":material/delete:"),
    ("add", "step_add", "add_step", ":material/add:"),
)


def _render_step_controls(plan: Plan) -> None:
    ids = plan.ids()
    # content-wide buttons that wrap onto a second line instead of shrinking to "D…"
    with st.container(horizontal=True, vertical_alignment="bottom", key="step_controls"):
        if ids:
            if st.session_state.get("step_pick") not in ids:
                st.session_state["step_pick"] = ids[0]
            st.selectbox(t("step_pick"), ids, key="step_pick", width=120)
        for action, key, label, icon in _STEP_CONTROLS:
            if ids or action == "add":
                st.button(t(label), key=key, icon=icon, on_click=_change, args=(action,))
        st.button(t("undo_edit"), key="undo_edit", icon=":material/undo:", on_click=_undo,
                  disabled=not ui_state.has_plan_history(), help=t("undo_edit_help"))


def _pending() -> Plan | None:
    """The canonical plan with any cell typed but not yet committed (the table's state).

    A cell typed into just before a click is still pending in the table's state: it is
    merged first, so that a control never loses it.
    """
    edits = _table_edits()
    return None if edits is None else edits[0]


def _table_edits() -> tuple[Plan, list[Message]] | None:
    """What the table holds: the plan with its pending cells, and the cells it refused."""
    plan: Plan | None = st.session_state.get("plan")
    base: Plan | None = st.session_state.get("plan_base")
    if plan is None or base is None:
        return None if plan is None else (plan, [])
    if base.phases:
        return grouped_table_edits(base, _group_changes(base))
    return table_edits(base, st.session_state.get(current_editor_key()))


def _group_changes(base: Plan) -> dict[str, dict | None]:
    """Each phase table's state, by phase."""
    return {group: st.session_state.get(_group_key(group)) for group, _ in phase_groups(base)}


def _edit(changed: Plan, pending: Plan, notes: list[Message]) -> None:
    """Make ``changed`` the canonical plan; the plans before it can be undone to."""
    current: Plan | None = st.session_state.get("plan")
    if current is not None:
        ui_state.remember_plan(current)
    ui_state.remember_plan(pending)  # a cell typed just before the click: its own undo step
    st.session_state["plan"] = changed
    st.session_state["plan_edit_notes"] = notes


def _change(action: str) -> None:
    """Apply a step control to the canonical plan (runs before the next draw)."""
    step_id = st.session_state.get("step_pick")

    def change(pending: Plan) -> tuple[Plan, list[Message]]:
        if action == "add":
            changed = add_step(pending, after=step_id if step_id in pending.ids() else None)
            st.session_state["step_pick"] = _added_id(pending, changed)
            return changed, []
        if step_id not in pending.ids():
            return pending, []
        if action == "delete":
            return delete_step(pending, step_id)
        return move_step(pending, step_id, -1 if action == "up" else +1), []

    apply_edit(change)


def _rows_deleted(group: str | None = None) -> None:
    """Rows deleted in the table (of phase ``group``): detach their steps like the Delete
    control does."""
    base: Plan | None = st.session_state.get("plan_base")
    if base is None:
        return
    key = current_editor_key() if group is None else _group_key(group)
    changes = dict(st.session_state.get(key) or {})
    deleted = changes.pop("deleted_rows", None)
    if not deleted:
        return  # a cell edit: merged on the next draw
    steps = base.steps if group is None else dict(phase_groups(base)).get(group, [])
    ids = [steps[int(row)].id for row in deleted if 0 <= int(row) < len(steps)]
    if group is None:
        pending = apply_table_changes(base, changes)
    else:
        pending = apply_grouped_changes(base, {**_group_changes(base), group: changes})
    changed, notes = delete_step(pending, *ids)
    _edit(changed, pending, notes)


def _undo() -> None:
    """Go back one edit; a cell typed but not yet committed, or refused, is that edit."""
    plan: Plan | None = st.session_state.get("plan")
    edits = _table_edits()
    if plan is not None and edits is not None and undoes_table_first(plan, edits):
        st.session_state["plan_synced"] = None  # rebuild the table from the canonical plan
    elif (previous := ui_state.previous_plan()) is not None:
        st.session_state["plan"] = previous
    st.session_state["plan_edit_notes"] = []


def _render_edit_notes() -> None:
    notes = st.session_state.get("plan_edit_notes") or []
    if notes:
        st.info(t("edit_notes") + "\n\n" + "\n".join(f"- {literal(said(note))}" for note in notes),
                icon=":material/info:")


def _added_id(before: Plan, after: Plan) -> str:
    return next(s for s in after.ids() if s not in set(before.ids()))


def _render_metrics(plan: Plan, registry: ToolRegistry, offline: bool, *, calls: bool
                    ) -> None:
    """Steps, the critical path and (``calls``) the model calls the run is expected to make."""
    steps, path, llm = st.columns(3)
    steps.metric(t("metric_steps"), len(plan.steps))
    if cycles := plan.cycles():  # a cycle has no longest chain: say which steps form it
        ids = "; ".join(", ".join(cycle) for cycle in cycles)
        path.metric(t("metric_critical_path"), t("critical_path_cycle", ids=ids),
                    help=t("critical_path_cycle_help"))
    else:
        path.metric(t("metric_critical_path"), plan.critical_path_length(),
                    help=t("metric_critical_path_help"))
    if not calls:
        return
    if offline:
        llm.metric(t("metric_llm_calls"), 0, help=t("metric_llm_calls_offline"))
    else:
        llm.metric(t("metric_llm_calls"), _expected_calls(plan, registry),
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
