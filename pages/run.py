"""Run page: one run (``?run=<id>``) followed live — progress, graph, steps, follow-ups."""

from __future__ import annotations

import streamlit as st

from core.errors import PlanBoardError
from core.plan.graph import plan_to_dot, side_effect_tool_names
from core.runs.view import RunView, load_run_view
from ui import run_view, state
from ui.frame import page_header
from ui.i18n import t
from ui.safe_text import literal

POLL_SECONDS = 1.0


def _decide(run_id: str, step_id: str, confirm: bool) -> None:
    try:
        if confirm:
            state.runner().confirm(run_id, step_id)
        else:
            state.runner().reject(run_id, step_id)
    except PlanBoardError as exc:
        st.session_state["run_error"] = str(exc)
        return
    st.session_state.setdefault("decided", set()).add((run_id, step_id))


def _decide_version(run_id: str, version: int, approve: bool) -> None:
    try:
        state.runner().decide_version(run_id, version, approve)
    except PlanBoardError as exc:
        st.session_state["run_error"] = str(exc)
        return
    st.session_state.setdefault("decided_versions", set()).add((run_id, version))


def _control(run_id: str, action: str) -> None:
    runner = state.runner()
    try:
        if action == "pause":
            runner.pause(run_id)
        elif action == "resume":
            runner.resume(run_id, engine=state.engine())
        else:
            runner.cancel(run_id, timeout=1.0)  # recorded at once; the poll shows the end
    except PlanBoardError as exc:
        st.session_state["run_error"] = str(exc)


def _render_controls(view: RunView) -> None:
    icons = {"pause": ":material/pause:", "resume": ":material/play_arrow:",
             "cancel": ":material/stop:"}
    for column, action in zip(st.columns(3), ("pause", "resume", "cancel"), strict=True):
        column.button(t(f"run_{action}"), key=f"run_{action}", icon=icons[action],
                      on_click=_control, args=(view.record.run_id, action),
                      disabled=action not in view.controls, width="stretch")


def _render_live(run_id: str, polling: bool) -> None:
    view = load_run_view(state.runner().store, run_id)
    record, plan = view.record, view.plan
    if error := st.session_state.pop("run_error", None):
        st.error(literal(error))
    status = t(f"run_status_{record.status}")
    st.markdown(f"**{t('run_status')}:** {status}")
    st.progress(plan.progress() if plan else 0.0,
                text=t("run_progress", done=view.done_steps, total=view.total_steps))
    _render_controls(view)
    wait = view.version_wait
    if wait is not None and (run_id, wait.version) not in st.session_state.get(
            "decided_versions", set()):
        run_view.render_version_wait(
            wait, lambda approve: _decide_version(run_id, wait.version, approve))
    run_view.render_answer(record.answer, view.finished)
    if plan is not None:
        risky = side_effect_tool_names(state.registry())
        decided = {s for r, s in st.session_state.get("decided", set()) if r == run_id}
        waiting = set(view.waiting) - decided
        cards, graph = st.columns([3, 2], gap="medium")
        with graph:
            st.subheader(t("plan_graph"))
            st.graphviz_chart(plan_to_dot(plan, side_effect_tools=risky), width="stretch")
        with cards:
            st.subheader(t("steps"))
            for step in plan.steps:
                run_view.render_step_card(
                    step, side_effect=step.tool in risky, waiting=step.id in waiting,
                    on_decide=lambda step_id, ok: _decide(run_id, step_id, ok),
                    check=view.checks.get(step.id),
                )
            run_view.render_reflections(view.reflections)
        run_view.render_usage(view.usage, record.wall_s)
        run_view.render_replans(view.versions)
        run_view.render_events(view.events)
    if polling == view.settled:
        st.rerun()  # settled (stop the timer) or started again, e.g. resumed (start it)


def main() -> None:
    """Draw the run named in the address, or say how to open one."""
    page_header("run_title", "run_caption", show_mode=False)
    run_id = st.query_params.get("run")
    if not run_id:
        st.info(t("run_none"))
        st.page_link("pages/history.py", label=t("go_history"), icon=":material/history:")
        return
    try:
        view = load_run_view(state.runner().store, run_id)
    except PlanBoardError:
        st.error(t("run_unknown", run_id=literal(run_id)))
        st.page_link("pages/history.py", label=t("go_history"), icon=":material/history:")
        return
    record = view.record
    st.markdown(f"**{t('run_request')}:** {literal(record.request)}")
    st.caption(t("run_meta", run_id=run_id, created=record.created_at.strftime("%Y-%m-%d %H:%M:%S"),
                 mode=_mode(record.settings)))
    if notice := st.session_state.pop("followup_notice", None):
        st.success(notice, icon=":material/playlist_add:")
    polling = not view.settled
    st.fragment(run_every=POLL_SECONDS if polling else None)(_render_live)(run_id, polling)
    if "follow_up" in view.controls:
        _render_follow_up(run_id)


def _render_follow_up(run_id: str) -> None:
    """A finished run can be extended: new steps are appended and run, old results kept."""
    st.subheader(t("followup_title"))
    st.text_area(t("followup_text"), key="followup_text", height=80,
                 placeholder=t("followup_placeholder"))
    st.button(t("followup_submit"), key="followup_submit", type="primary",
              icon=":material/playlist_add:", help=t("followup_help"),
              on_click=_follow_up, args=(run_id,))
    if error := st.session_state.pop("followup_error", None):
        st.error(literal(error))


def _follow_up(run_id: str) -> None:
    text = str(st.session_state.get("followup_text") or "").strip()
    if not text:
        st.session_state["followup_error"] = t("followup_empty")
        return
    try:
        plan = state.runner().follow_up(run_id, text, engine=state.engine())
    except PlanBoardError as exc:
        st.session_state["followup_error"] = str(exc)
        return
    st.session_state["followup_text"] = ""
    st.session_state["followup_notice"] = t("followup_started", version=plan.version)


def _mode(settings: dict) -> str:
    if settings.get("offline", True):
        return t("badge_offline")
    return t("run_model", model=literal(settings.get("executor_model", "?")))


main()
