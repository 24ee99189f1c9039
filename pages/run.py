"""Run page: one run (``?run=<id>``) followed live — progress, graph, steps, follow-ups.

Without ``?run=`` it shows the latest run this session opened (st.navigation drops the
query when the sidebar's link is used); ``&present=1`` is the presentation view: no
sidebar (app.py), no editors, the graph large, the current step and the answer in large type.
"""

from __future__ import annotations

import time

import streamlit as st

from core.base.text import preview
from core.errors import PlanBoardError
from core.plan.graph import plan_to_dot, side_effect_tool_names
from core.plan.model import Step
from core.runs.timeline import run_timeline
from core.runs.view import RunView
from ui import run_view, state
from ui.frame import ensure_entrypoint, page_header
from ui.graph_view import plan_graph
from ui.i18n import t
from ui.live_ticker import hold, live_ticker
from ui.messages import said
from ui.safe_text import literal
from ui.timeline_view import render_timeline

# A followed run's page holds a tick (ui.live_ticker) until the run changed, looking at
# the process-wide run views (core.runs.live_views), which touch the store only when the
# run was written; then it redraws the live part, only the tab that is open. So a change
# reaches the screen in about one draw, and five viewers cost the store one refresh.
TICK_AFTER_S = 0.02  # from a drawing to the next tick
GATHER_S = 0.03  # after a change, how long to gather the changes that follow it
HOLD_S = 5.0  # a tick held this long without a change redraws the ticker alone
DRAWN = "run_drawn"  # session key: by run, the view (its marker) the live part shows
TICKS = "run_ticks"  # session key: how many times the ticker was drawn
LATEST_RUN = "latest_run"  # session key: the run the sidebar's Run link returns to
# the presentation view's large type (st.html with only a style block takes no space)
_PRESENT_CSS = """<style>
.st-key-present_now p, .st-key-present_now li { font-size: 1.6rem; line-height: 1.4; }
.st-key-run_answer p, .st-key-run_answer li, .st-key-run_answer td,
.st-key-run_answer th { font-size: 1.5rem; line-height: 1.45; }
</style>"""


def _view(run_id: str) -> RunView:
    """The run's current view, shared with every session that follows it (read only)."""
    return state.run_views().current(state.runner().store, run_id)


def _decide(run_id: str, step_id: str, confirm: bool) -> None:
    try:
        if confirm:
            state.runner().confirm(run_id, step_id)
        else:
            state.runner().reject(run_id, step_id)
    except PlanBoardError as exc:
        st.session_state["run_error"] = said(exc)
        return
    st.session_state.setdefault("decided", set()).add((run_id, step_id))


def _decide_version(run_id: str, version: int, approve: bool) -> None:
    try:
        state.runner().decide_version(run_id, version, approve)
    except PlanBoardError as exc:
        st.session_state["run_error"] = said(exc)
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
        st.session_state["run_error"] = said(exc)


def _render_controls(view: RunView) -> None:
    icons = {"pause": ":material/pause:", "resume": ":material/play_arrow:",
             "cancel": ":material/stop:"}
    for column, action in zip(st.columns(3), ("pause", "resume", "cancel"), strict=True):
        column.button(t(f"run_{action}"), key=f"run_{action}", icon=icons[action],
                      on_click=_control, args=(view.record.run_id, action),
                      disabled=action not in view.controls, width="stretch")


def _marker(view: RunView) -> tuple[int, str, str]:
    """What changes whenever the run is written: its events, its last write, its status."""
    return len(view.events), view.record.updated_at.isoformat(), view.record.status


@st.fragment(key="run_live")
def _render_live(run_id: str, polling: bool, present: bool) -> None:
    """The live part of the page: redrawn when the run changed (see :func:`_on_tick`)
    or the person acted in it."""
    view = _view(run_id)
    if error := st.session_state.pop("run_error", None):
        st.error(literal(error))
    st.markdown(f"**{t('run_status')}:** {t(f'run_status_{view.record.status}')}")
    run_view.render_progress(view.progress)
    _render_version_wait(view)
    waiting = _waiting(view)
    _render_decisions(view, waiting)
    if present:
        _render_present(view, waiting)
    else:
        _render_controls(view)
        _render_details(view, waiting)
    st.session_state.setdefault(DRAWN, {})[run_id] = _marker(view)
    if not polling and not view.settled:
        st.rerun()  # started again (resumed, a follow-up): the page follows it again


@st.fragment(key="run_watch")
def _render_watch(run_id: str) -> None:
    """The ticker of a run that a process holds (nothing to see)."""
    drawing = st.session_state[TICKS] = st.session_state.get(TICKS, 0) + 1
    live_ticker("run_ticker", TICK_AFTER_S, on_tick=lambda: _on_tick(run_id),
                drawing=drawing)


def _on_tick(run_id: str) -> None:
    """Hold the tick until the run changed since the live part was drawn, then redraw it;
    once a settled run's end is on the screen, rerun the page, which then has no ticker."""
    def changed() -> bool:
        return st.session_state.get(DRAWN, {}).get(run_id) != _marker(_view(run_id))

    if not changed() and _view(run_id).settled:
        st.rerun()
    if hold(changed, timeout_s=HOLD_S):
        time.sleep(GATHER_S)  # steps that end together are drawn together, once
        st.rerun(["run_live", "run_watch"])


def _render_version_wait(view: RunView) -> None:
    run_id = view.record.run_id
    wait = view.version_wait
    if wait is not None and (run_id, wait.version) not in st.session_state.get(
            "decided_versions", set()):
        run_view.render_version_wait(
            wait, lambda approve: _decide_version(run_id, wait.version, approve))


def _waiting(view: RunView) -> set[str]:
    """Steps waiting for a person, less those this session has just decided."""
    run_id = view.record.run_id
    decided = {s for r, s in st.session_state.get("decided", set()) if r == run_id}
    return set(view.waiting) - decided


def _render_card(view: RunView, step: Step, risky: set[str], waiting: set[str]) -> None:
    run_view.render_step_card(
        step, side_effect=step.tool in risky, waiting=step.id in waiting,
        check=view.checks.get(step.id), skip=view.skip_reasons.get(step.id),
        server=state.tool_server(step.tool), in_doubt=step.id in view.in_doubt,
    )


def _render_decisions(view: RunView, waiting: set[str]) -> None:
    """The steps waiting for a person, at the top of the live area: in view on arrival,
    with Confirm (Y) and Reject (N) on the keyboard as well."""
    plan = view.plan
    if plan is None or not waiting:
        return
    run_id = view.record.run_id
    steps = [s for s in plan.steps if s.id in waiting]
    risky = side_effect_tool_names(state.registry())
    for index, step in enumerate(steps):
        run_view.render_decision(
            step, side_effect=step.tool in risky, shortcuts=index == 0,
            on_decide=lambda step_id, ok: _decide(run_id, step_id, ok),
            server=state.tool_server(step.tool), in_doubt=step.id in view.in_doubt)


def _render_details(view: RunView, waiting: set[str]) -> None:
    """The working view: answer; step cards, graph and timeline in stateful tabs, each
    drawn only while it is open; usage, replans, events."""
    record, plan = view.record, view.plan
    run_view.render_answer(record.answer, view.finished)
    if plan is None:
        return
    risky = side_effect_tool_names(state.registry())
    # the graph gets the page's width in a tab of its own; the cards stay the first tab.
    # Stateful tabs keep the chosen tab in session state, not in the tab bar's place on
    # the page, which a version-wait box or an error above it shifts between polls, and
    # say which one is open, so a tick draws that one alone.
    cards, graph, timeline = st.tabs([t("steps"), t("plan_graph"), t("run_timeline_tab")],
                                     key="run_tabs", on_change="rerun")
    if cards.open is not False:
        with cards:
            for step in plan.steps:
                _render_card(view, step, risky, waiting)
            run_view.render_reflections(view.reflections)
    if graph.open:
        with graph:
            plan_graph(plan_to_dot(plan, side_effect_tools=risky), key="run_graph")
    if timeline.open:
        with timeline:
            render_timeline(run_timeline(record, view.events))
    run_view.render_usage(view.usage, record.wall_s)
    run_view.render_replans(view.versions)
    run_view.render_events(view.events)


def _render_present(view: RunView, waiting: set[str]) -> None:
    """For a projector: the current step and the answer in large type, the graph large.

    A step waiting for a person is shown above (confirm or reject), so a demo can go on.
    """
    plan = view.plan
    st.html(_PRESENT_CSS)
    risky = side_effect_tool_names(state.registry())
    with st.container(key="present_now"):
        running = [s for s in plan.steps if s.status == "running"] if plan else []
        lines = [f"▶ **{literal(s.id)}** · {literal(s.description)}" for s in running]
        if lines:
            st.markdown(f"**{t('present_now')}:**  \n" + "  \n".join(lines))
        elif not view.finished and not waiting:
            st.caption(t("present_idle"))
    run_view.render_answer(view.record.answer, view.finished)
    if plan is not None:
        with st.container(key="present_graph"):
            plan_graph(plan_to_dot(plan, side_effect_tools=risky), key="present_run_graph",
                       height=720)


def _chosen_run() -> str | None:
    """The run in the address, else the latest this session opened (put back in the address)."""
    run_id = st.query_params.get("run") or st.session_state.get(LATEST_RUN)
    if run_id and not st.query_params.get("run"):
        st.query_params["run"] = run_id
    return run_id


def main() -> None:
    """Draw the run named in the address (or the session's latest), or say how to open one."""
    present = st.query_params.get("present") == "1"
    if present:
        ensure_entrypoint()
        state.init_session()
    else:
        page_header("run_title", "run_caption", show_mode=False)
    run_id = _chosen_run()
    if not run_id:
        st.info(t("run_none"))
        st.page_link("pages/history.py", label=t("go_history"), icon=":material/history:")
        return
    try:
        view = _view(run_id)
    except PlanBoardError:
        st.error(t("run_unknown", run_id=literal(run_id)))
        st.page_link("pages/history.py", label=t("go_history"), icon=":material/history:")
        return
    st.session_state[LATEST_RUN] = run_id
    record = view.record
    if present:
        st.title(literal(preview(record.request, 200)))
        if st.button(t("present_leave"), key="present_leave",
                     icon=":material/close_fullscreen:"):
            st.switch_page("pages/run.py", query_params={"run": run_id})
    else:
        st.markdown(f"**{t('run_request')}:** {literal(record.request)}")
        st.caption(t("run_meta", run_id=run_id, mode=_mode(record.settings),
                     created=record.created_at.strftime("%Y-%m-%d %H:%M:%S")))
        # a page switch with the address it names: a page link to the page it is on
        # leaves the address as it was, and the run's end (a full rerun) reads it there
        if st.button(t("present_open"), key="present_open", icon=":material/slideshow:",
                     help=t("present_open_help")):
            st.switch_page("pages/run.py", query_params={"run": run_id, "present": "1"})
    if notice := st.session_state.pop("followup_notice", None):
        st.success(notice, icon=":material/playlist_add:")
    polling = not view.settled
    with st.container(key="present_view" if present else "run_view"):
        _render_live(run_id, polling, present)
    if polling:
        _render_watch(run_id)
    if "follow_up" in view.controls and not present:
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
        st.session_state["followup_error"] = said(exc)
        return
    st.session_state["followup_text"] = ""
    st.session_state["followup_notice"] = t("followup_started", version=plan.version)


def _mode(settings: dict) -> str:
    if settings.get("offline", True):
        return t("badge_offline")
    return t("run_model", model=literal(settings.get("executor_model", "?")))


main()
