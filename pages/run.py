"""Run page: one run (``?run=<id>``) followed live — progress, graph, steps, follow-ups,
re-runs from a step.

Without ``?run=`` it shows the latest run this session opened (st.navigation drops the
query when the sidebar's link is used); ``&present=1`` is the presentation view: no
sidebar (dashboard.py), no editors, the graph large, the current step and the answer in large type.
"""

from __future__ import annotations

import time
from functools import partial

import streamlit as st

from core.access.audit import act_text, owner_text
from core.base.text import preview
from core.errors import PlanBoardError
from core.execution.context import arguments_sent
from core.plan.graph import plan_to_dot
from core.plan.model import Step
from core.review.reviews import review_text
from core.runs.rerun import PreparedRerun, prepare_rerun
from core.runs.timeline import run_timeline
from core.runs.view import RunView
from ui import identity, rerun_form, run_view, state
from ui.frame import ensure_entrypoint, page_header
from ui.graph_view import folded_phases, plan_graph, toggle_phase
from ui.i18n import current_language, t
from ui.live_marks import graph_marks
from ui.live_ticker import live_ticker, page_switch_pending, request_pending
from ui.messages import said
from ui.review_decision import render_review_decision
from ui.run_exports import render_exports
from ui.safe_text import literal
from ui.safety_notes import render_run_note
from ui.timeline_view import render_timeline

# A followed run's page holds a tick (ui.live_ticker) asleep until the run's one reader in
# the process (core.runs.live_views.RunChanges) says it changed; then it redraws the parts
# that changed (a step's card, the head), in the tab that is open. The marks are pushed
# first (ui.live_marks); the redraw gathers the changes that follow within GATHER_S of
# each other, so that a burst of steps is one redraw per viewer, not one per step.
TICK_AFTER_S = 0.02  # from a drawing to the next tick
GATHER_S = 0.05  # after a change, how long the run must stay unchanged to be redrawn
GATHER_MAX_S = 0.3  # the longest a change waits for the ones that follow it
HOLD_S = 5.0  # a tick held this long without a change redraws the ticker alone
DRAWN = "run_drawn"  # session key: by run, by part of the page, the marker it shows
TICKS = "run_ticks"  # session key: how many times the ticker was drawn
LATEST_RUN = "latest_run"  # session key: the run the sidebar's Run link returns to
RERUN_STEP = "rerun_step"  # session key: the step a person chose to re-run from
DECIDE_ERROR = "decide_error"  # session key: why a Confirm or a version's approval failed
# the presentation view's large type (st.html with only a style block takes no space)
_PRESENT_CSS = """<style>
.st-key-present_now p, .st-key-present_now li { font-size: 1.6rem; line-height: 1.4; }
.st-key-run_answer p, .st-key-run_answer li, .st-key-run_answer td,
.st-key-run_answer th { font-size: 1.5rem; line-height: 1.45; }
</style>"""


def _view(run_id: str) -> RunView:
    """The run's current view, shared with every session that follows it (read only)."""
    return state.run_views().current(state.runner().store, run_id)


def _refused(view: RunView, action: str) -> str | None:
    """Why this person may not do ``action`` on the run (None: they may)."""
    try:
        identity.access().require(action, view.record)  # type: ignore[arg-type]
    except PlanBoardError as exc:
        return said(exc)
    return None


def _decide(run_id: str, step_id: str, confirm: bool) -> None:
    try:
        if confirm:
            state.runner().confirm(run_id, step_id, actor=identity.actor())
        else:
            state.runner().reject(run_id, step_id, actor=identity.actor())
    except PlanBoardError as exc:
        st.session_state[DECIDE_ERROR] = said(exc)
        return
    st.session_state.setdefault("decided", set()).add((run_id, step_id))


def _decide_version(run_id: str, version: int, approve: bool) -> None:
    try:
        state.runner().decide_version(run_id, version, approve, actor=identity.actor())
    except PlanBoardError as exc:
        st.session_state[DECIDE_ERROR] = said(exc)
        return
    st.session_state.setdefault("decided_versions", set()).add((run_id, version))


def _control(run_id: str, action: str) -> None:
    runner = state.runner()
    person = identity.actor()
    try:
        if action == "pause":
            runner.pause(run_id, actor=person)
        elif action == "resume":
            runner.resume(run_id, engine=state.engine(), actor=person)
        else:  # recorded at once; the poll shows the end
            runner.cancel(run_id, timeout=1.0, actor=person)
    except PlanBoardError as exc:
        st.session_state["run_error"] = said(exc)


def _render_controls(view: RunView) -> None:
    if not view.controls:
        return  # an agent's run: the agent carries it out, not PlanBoard
    icons = {"pause": ":material/pause:", "resume": ":material/play_arrow:",
             "cancel": ":material/stop:"}
    refused = _refused(view, "steer")
    # one row, not three columns: every element is rendered again at each script run, in
    # each viewer's browser
    with st.container(horizontal=True, key="run_controls"):
        for action in ("pause", "resume", "cancel"):
            st.button(t(f"run_{action}"), key=f"run_{action}", icon=icons[action],
                      on_click=_control, args=(view.record.run_id, action), help=refused,
                      disabled=action not in view.controls or refused is not None,
                      width="stretch")


def _marker(view: RunView) -> tuple[int, str, str]:
    """What changes whenever the run is written: its events, its last write, its status."""
    return len(view.events), view.record.updated_at.isoformat(), view.record.status


# ---- the live parts ---------------------------------------------------------------------
# The page is cut into keyed fragments, each drawn from the run's shared view and each
# noting what it drew (its part's marker, in DRAWN). A tick redraws only the parts whose
# marker changed: a step that ends redraws the head and its own card, not every card.


def _parts(view: RunView, waiting: set[str]) -> dict[str, object]:
    """Every part's marker: what it shows, so that a change of it means a redraw."""
    plan = view.plan
    steps = plan.steps if plan else []
    record = view.record
    running = tuple(s.id for s in steps if s.status == "running")
    parts: dict[str, object] = {
        "steps": tuple(s.id for s in steps),
        "status": (record.status, view.progress.model_dump_json(),
                   tuple(plan.phase_statuses().items()) if plan else ()),
        "now": (running, view.finished, bool(waiting)),
        "decide": (tuple(sorted(waiting)), tuple(view.in_doubt),
                   view.version_wait.model_dump_json() if view.version_wait else None),
        "head": (record.status, record.answer, tuple(sorted(view.controls))),
        "graph": (plan.version if plan else 0, tuple(s.status for s in steps)),
        "timeline": (len(view.events), record.updated_at.isoformat()),
        # the event log's rows count only while it is open: closed, it shows none
        "tail": (view.usage.model_dump_json(), record.wall_s, len(view.versions),
                 record.status,
                 len(view.events) if st.session_state.get(run_view.EVENTS_KEY) else None),
        "reflections": len(view.reflections),
    }
    for step in steps:
        check = view.checks.get(step.id)
        parts[f"card_{step.id}"] = (step.model_dump_json(), step.id in waiting,
                                    step.id in view.in_doubt,
                                    check.model_dump_json() if check else None)
    return parts


def _note(run_id: str, part: str, marker: object) -> None:
    """Remember that ``part`` of the page now shows ``marker``."""
    st.session_state.setdefault(DRAWN, {}).setdefault(run_id, {})[part] = marker


def _stale(run_id: str) -> list[str] | None:
    """The parts drawn from an older view (None when the steps themselves changed: the
    page is drawn again)."""
    drawn = st.session_state.get(DRAWN, {}).get(run_id, {})
    view = _view(run_id)
    if drawn.get("view") == _marker(view):
        return []
    parts = _parts(view, _waiting(view))
    if parts["steps"] != drawn.get("steps"):
        return None
    stale = [part for part, marker in drawn.items()
             if part not in ("view", "steps") and parts.get(part) != marker]
    if not stale:
        drawn["view"] = _marker(view)  # a write nothing on the page shows
    return stale


@st.fragment(key="run_status")
def _render_status(run_id: str) -> None:
    """Status, progress and the phase strip: what changes at every step, drawn apart from
    the rest of the head."""
    view = _view(run_id)
    st.markdown(f"**{t('run_status')}:** {t(f'run_status_{view.record.status}')}")
    run_view.render_progress(view.progress)
    run_view.render_phase_strip(view.plan)
    _note(run_id, "status", _parts(view, set())["status"])


@st.fragment(key="run_now")
def _render_now(run_id: str) -> None:
    """The presentation view's current step (redrawn when the running steps change)."""
    view = _view(run_id)
    waiting = _waiting(view)
    _render_present(view, waiting)
    _note(run_id, "now", _parts(view, waiting)["now"])


@st.fragment(key="run_decide")
def _render_decide(run_id: str) -> None:
    """What waits for a person (a new version, a step's Confirm), and a decision's error."""
    view = _view(run_id)
    if error := st.session_state.pop(DECIDE_ERROR, None):
        st.error(literal(error))
    _render_version_wait(view)
    waiting = _waiting(view)
    _render_decisions(view, waiting)
    _note(run_id, "decide", _parts(view, waiting)["decide"])


@st.fragment(key="run_head")
def _render_head(run_id: str, polling: bool, present: bool) -> None:
    """Controls (not when presenting), the answer."""
    view = _view(run_id)
    if error := st.session_state.pop("run_error", None):  # of a control
        st.error(literal(error))
    if not present:
        _render_controls(view)
    run_view.render_answer(view.record.answer, view.finished)
    _note(run_id, "head", _parts(view, set())["head"])
    if not polling and not view.settled:
        st.rerun()  # started again (resumed, a follow-up): the page follows it again


def _render_card_part(run_id: str, step_id: str) -> None:
    view = _view(run_id)
    if view.plan is None or step_id not in view.plan.ids():
        return  # gone with a new version: the page is drawn again
    step = view.plan.step(step_id)
    waiting = _waiting(view)
    chosen = run_view.render_step_card(
        step, view, side_effect=step.tool in view.side_effect_tools(state.registry()),
        waiting=step.id in waiting, check=view.checks.get(step.id),
        skip=view.skip_reasons.get(step.id), server=state.tool_server(step.tool),
        in_doubt=step.id in view.in_doubt, read_ahead=step.id in view.read_ahead,
        rerun="rerun" in view.controls and _refused(view, "steer") is None)
    _note(run_id, f"card_{step_id}", _parts(view, waiting)[f"card_{step_id}"])
    if chosen:
        st.session_state[RERUN_STEP] = step_id
        st.rerun()  # the whole page: the form is drawn below the cards


@st.fragment(key="run_reflections")
def _render_reflections(run_id: str) -> None:
    view = _view(run_id)
    run_view.render_reflections(view.reflections)
    _note(run_id, "reflections", len(view.reflections))


@st.fragment(key="run_graph")
def _render_graph(run_id: str, present: bool) -> None:
    view = _view(run_id)
    if view.plan is None:
        return
    key = "present_run_graph" if present else "run_graph"
    folded = folded_phases(key, view.plan)
    dot = plan_to_dot(view.plan, side_effect_tools=view.side_effect_tools(state.registry()),
                      folded=folded)
    on_phase = partial(toggle_phase, key, view.plan, folded)
    live = graph_marks(view)
    if present:
        with st.container(key="present_graph"):
            plan_graph(dot, key=key, height=720, on_phase=on_phase, live=live)
    else:
        plan_graph(dot, key=key, on_phase=on_phase, live=live)
    _note(run_id, "graph", _parts(view, set())["graph"])


@st.fragment(key="run_timeline")
def _render_timeline(run_id: str) -> None:
    view = _view(run_id)
    render_timeline(run_timeline(view.record, view.events))
    _note(run_id, "timeline", _parts(view, set())["timeline"])


@st.fragment(key="run_tail")
def _render_tail(run_id: str) -> None:
    """Usage, replans and the event log."""
    view = _view(run_id)
    run_view.render_usage(view.usage, view.record.wall_s)
    run_view.render_replans(view.versions)
    run_view.render_events(view.events)
    _note(run_id, "tail", _parts(view, set())["tail"])


def _render_live(run_id: str, view: RunView, polling: bool, present: bool) -> None:
    """The live parts, each a fragment of its own (in a full run: the whole page)."""
    drawn = st.session_state.setdefault(DRAWN, {})
    drawn[run_id] = {"view": _marker(view), "steps": _parts(view, set())["steps"]}
    # what waits for a person comes first, in view on arrival without scrolling; in the
    # presentation view it follows the current step, so that a demo can go on
    if not present:
        _render_decide(run_id)
    _render_status(run_id)
    if present:
        _render_now(run_id)
        _render_decide(run_id)
    _render_head(run_id, polling, present)
    if view.plan is None:
        return
    if present:
        _render_graph(run_id, True)
        return
    # the graph gets the page's width in a tab of its own; the cards stay the first tab.
    # Stateful tabs keep the chosen tab in session state, not in the tab bar's place on
    # the page, which a version-wait box or an error above it shifts, and say which one
    # is open, so that only the open one is drawn (choosing one redraws the page).
    cards, graph, timeline = st.tabs([t("steps"), t("plan_graph"), t("run_timeline_tab")],
                                     key="run_tabs", on_change="rerun")
    if cards.open is not False:
        with cards:
            for step in view.plan.steps:
                st.fragment(key=f"run_card_{step.id}")(_render_card_part)(run_id, step.id)
            _render_reflections(run_id)
    if graph.open:
        with graph:
            _render_graph(run_id, False)
    if timeline.open:
        with timeline:
            _render_timeline(run_id)
    _render_tail(run_id)


@st.fragment(key="run_watch")
def _render_watch(run_id: str) -> None:
    """The ticker of a run that a process holds (nothing to see)."""
    drawing = st.session_state[TICKS] = st.session_state.get(TICKS, 0) + 1
    live_ticker("run_ticker", TICK_AFTER_S, on_tick=lambda: _on_tick(run_id),
                drawing=drawing)


def _on_tick(run_id: str) -> None:
    """Hold the tick until a part of the page shows less than the run's view, then redraw
    those parts; a new version's steps, or a settled run's end once it is on the screen,
    rerun the page (which then has no ticker). Nothing is redrawn while the person's
    switch to another page waits: the redraw would take the switch back."""
    stale = _stale(run_id)
    if stale == [] and _view(run_id).settled and not page_switch_pending():
        st.rerun()
    if stale == [] and not _wait_for_change(run_id):
        return
    _gather(run_id)
    if page_switch_pending():
        return
    stale = _stale(run_id)
    if stale is None:
        st.rerun()
    st.session_state[DRAWN][run_id]["view"] = _marker(_view(run_id))
    st.rerun([f"run_{part}" for part in stale or []] + ["run_watch"])


def _wait_for_change(run_id: str) -> bool:
    """Sleep until the run changed in a way this page shows (True), or a person acted or
    HOLD_S passed (False)."""
    deadline = time.monotonic() + HOLD_S
    seen = _view(run_id)
    while (left := deadline - time.monotonic()) > 0:
        seen = state.run_changes().wait(state.runner().store, run_id, seen, timeout_s=left,
                                        interrupted=request_pending)
        if seen is None:
            return False
        if _stale(run_id) != []:
            return True
    return False


def _gather(run_id: str) -> None:
    """Wait until the run has not changed for GATHER_S (at most GATHER_MAX_S): steps that
    end one after another are drawn together, once."""
    deadline = time.monotonic() + GATHER_MAX_S
    seen = _view(run_id)
    while (left := deadline - time.monotonic()) > 0:
        seen = state.run_changes().wait(state.runner().store, run_id, seen,
                                        timeout_s=min(GATHER_S, left))
        if seen is None:
            return


def _render_version_wait(view: RunView) -> None:
    run_id = view.record.run_id
    wait = view.version_wait
    if wait is not None and (run_id, wait.version) not in st.session_state.get(
            "decided_versions", set()):
        run_view.render_version_wait(
            wait, lambda approve: _decide_version(run_id, wait.version, approve),
            refused=_refused(view, "approve"))


def _waiting(view: RunView) -> set[str]:
    """Steps waiting for a person, less those this session has just decided."""
    run_id = view.record.run_id
    decided = {s for r, s in st.session_state.get("decided", set()) if r == run_id}
    return set(view.waiting) - decided


def _render_decisions(view: RunView, waiting: set[str]) -> None:
    """The steps waiting for a person, at the top of the live area: in view on arrival,
    with Confirm (Y) and Reject (N) on the keyboard as well."""
    plan = view.plan
    if plan is None or not waiting:
        return
    run_id = view.record.run_id
    steps = [s for s in plan.steps if s.id in waiting]
    risky = view.side_effect_tools(state.registry())
    refused = _refused(view, "approve")
    for index, step in enumerate(steps):
        run_view.render_decision(
            step, arguments=arguments_sent(plan, step, state.registry()),
            side_effect=step.tool in risky, shortcuts=index == 0,
            on_decide=lambda step_id, ok: _decide(run_id, step_id, ok),
            server=state.tool_server(step.tool), in_doubt=step.id in view.in_doubt,
            refused=refused)


def _render_present(view: RunView, waiting: set[str]) -> None:
    """For a projector: the current step in large type (the answer and the graph, large
    too, follow it). A step waiting for a person is shown below it, so a demo can go on."""
    plan = view.plan
    st.html(_PRESENT_CSS)
    with st.container(key="present_now"):
        running = [s for s in plan.steps if s.status == "running"] if plan else []
        lines = [f"▶ **{literal(s.id)}** · {literal(s.description)}" for s in running]
        if lines:
            st.markdown(f"**{t('present_now')}:**  \n" + "  \n".join(lines))
        elif not view.finished and not waiting:
            st.caption(t("present_idle"))


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
        identity.access().require("read", view.record)
    except PlanBoardError:  # no such run, or one this person may not see: the same to them
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
        # one row for what is about the run, so that a step waiting below is in view
        about, action = st.columns([4, 1], vertical_alignment="center")
        about.caption(t("run_meta", run_id=run_id, mode=_mode(record.settings),
                        created=record.created_at.strftime("%Y-%m-%d %H:%M:%S")))
        if owner := owner_text(record, current_language()):  # type: ignore[arg-type]
            about.caption(literal(owner))
        if sent := review_text(record, current_language()):  # type: ignore[arg-type]
            about.caption(literal(sent))
        # a page switch with the address it names: a page link to the page it is on
        # leaves the address as it was, and the run's end (a full rerun) reads it there
        if action.button(t("present_open"), key="present_open", icon=":material/slideshow:",
                         help=t("present_open_help"), width="stretch"):
            st.switch_page("pages/run.py", query_params={"run": run_id, "present": "1"})
        if view.unasked is not None:
            render_run_note(view.unasked)
        render_review_decision(view)
    if notice := st.session_state.pop("followup_notice", None):
        st.success(notice, icon=":material/playlist_add:")
    if notice := st.session_state.pop("rerun_notice", None):
        st.success(notice, icon=":material/replay:")
    polling = not view.settled
    with st.container(key="present_view" if present else "run_view"):
        _render_live(run_id, view, polling, present)
    if polling:
        _render_watch(run_id)
    if view.settled and not present:
        render_exports(run_id)
    steers = _refused(view, "steer") is None
    if "follow_up" in view.controls and not present and steers:
        _render_follow_up(run_id)
    chosen = st.session_state.get(RERUN_STEP)
    if ("rerun" in view.controls and not present and steers and view.plan
            and chosen in view.plan.ids()):
        _render_rerun(view, view.plan.step(chosen))
    if not present:
        _render_acts(run_id)


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
        plan = state.runner().follow_up(run_id, text, engine=state.engine(),
                                        actor=identity.actor())
    except PlanBoardError as exc:
        st.session_state["followup_error"] = said(exc)
        return
    st.session_state["followup_text"] = ""
    st.session_state["followup_notice"] = t("followup_started", version=plan.version)


def _render_rerun(view: RunView, step: Step) -> None:
    """The chosen step's edit form, what the re-run will do, and its approval."""
    with st.container(border=True, key="rerun_form"):
        edit = rerun_form.render_rerun_form(step, state.registry().names())
        prepared = None
        if isinstance(edit, str):
            st.error(edit)
        else:
            try:
                prepared = prepare_rerun(view.record, step.id, edit, state.registry(),
                                         can_infer=state.engine().model is not None)
            except PlanBoardError as exc:
                st.error(literal(said(exc)))
        if prepared is not None:
            rerun_form.render_rerun_preview(prepared)
        submit, close = st.columns(2)
        if submit.button(t("rerun_submit"), key="rerun_submit", type="primary",
                         icon=":material/replay:", disabled=prepared is None) and prepared:
            _rerun(prepared)
        if close.button(t("rerun_close"), key="rerun_close", icon=":material/close:"):
            st.session_state.pop(RERUN_STEP, None)
            st.rerun()


def _rerun(prepared: PreparedRerun) -> None:
    try:
        state.runner().rerun(prepared, engine=state.engine(), actor=identity.actor())
    except PlanBoardError as exc:
        st.error(literal(said(exc)))
        return
    st.session_state.pop(RERUN_STEP, None)
    st.session_state["rerun_notice"] = t("rerun_started", step=prepared.step_id,
                                         version=prepared.plan.version)
    st.rerun()  # the page follows the run again


def _render_acts(run_id: str) -> None:
    """Who did what on this run: each approval, edit, confirmation, cancel, re-run."""
    done = state.acts(run_id=run_id)
    if done:
        with st.expander(t("run_acts"), expanded=False):
            st.markdown("\n".join(f"- {literal(act_text(act, current_language()))}"
                                   for act in done))


def _mode(settings: dict) -> str:
    if settings.get("offline", True):
        return t("badge_offline")
    return t("run_model", model=literal(settings.get("executor_model", "?")))


main()
