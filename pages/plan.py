"""Plan page: a request, the scenario gallery, planning (LLM or offline), review and approval."""

from __future__ import annotations

import logging

import streamlit as st

from core.errors import PlanBoardError
from core.plan import Plan, Step
from ui import plan_editor, state
from ui.frame import page_header
from ui.i18n import current_language, t

logger = logging.getLogger(__name__)


def _pick_scenario(text: str) -> None:
    st.session_state["request"] = text
    st.session_state["request_text"] = text


def _render_gallery() -> None:
    from core.scenarios import SCENARIOS

    st.caption(t("gallery"))
    columns = st.columns(min(len(SCENARIOS), 4) or 1)
    zh = current_language() == "zh"
    for index, scenario in enumerate(SCENARIOS):
        columns[index % len(columns)].button(
            scenario.title_zh if zh else scenario.title_en,
            key=f"scenario_{scenario.id}",
            help=scenario.request_zh if zh else scenario.request_en,
            on_click=_pick_scenario,
            args=(scenario.request_zh if zh else scenario.request_en,),
            width="stretch",
        )


def _generate(request: str) -> None:
    if not request.strip():
        st.warning(t("request_empty"))
        return
    engine = state.engine()
    try:
        with st.spinner(t("planning_offline") if engine.offline else t("planning_llm")):
            if engine.offline:
                from core.offline import offline_plan

                plan = offline_plan(request, engine.registry)
            else:
                from core.planner import make_plan

                plan = make_plan(request, engine)
    except PlanBoardError as exc:
        st.error(str(exc))
        return
    st.session_state["plan_request"] = request
    plan_editor.set_plan(plan)


def _blank(request: str) -> None:
    goal = request.strip() or t("blank_goal")
    st.session_state["plan_request"] = goal
    plan_editor.set_plan(Plan(goal=goal, steps=[Step(id="s1", description="")]))


def _approve(plan: Plan) -> None:
    request = st.session_state.get("plan_request") or plan.goal
    try:
        run_id = state.runner().start(
            request, plan, engine=state.engine(), options=state.run_options(),
            settings_public=state.settings_public(),
        )
    except PlanBoardError as exc:
        st.error(str(exc))
        return
    st.session_state["last_run_id"] = run_id
    st.switch_page("pages/run.py", query_params={"run": run_id})


def main() -> None:
    """Draw the plan page."""
    page_header("plan_title", "plan_caption")
    if "request" not in st.session_state:
        st.session_state["request"] = st.session_state.get("request_text", "")
    st.text_area(t("request"), key="request", height=100, placeholder=t("request_placeholder"))
    st.session_state["request_text"] = st.session_state["request"]  # survives other pages
    _render_gallery()
    generate, blank, _ = st.columns([1, 1, 3])
    mode = state.planner_mode()
    if generate.button(t("generate_plan"), key="generate_plan", type="primary",
                       help=t(mode.reason), width="stretch", icon=":material/auto_awesome:"):
        _generate(st.session_state.get("request", ""))
    if blank.button(t("blank_plan"), key="blank_plan", width="stretch"):
        _blank(st.session_state.get("request", ""))
    st.caption((t("planner_offline") if mode.offline else t("planner_llm_short"))
               + " — " + t(mode.reason))
    plan = st.session_state.get("plan")
    if plan is None:
        st.info(t("plan_empty"))
        return
    st.divider()
    st.markdown(f"**{t('goal')}:** {plan.goal}")
    edited, problems = plan_editor.render_plan_review(
        state.registry(), offline=mode.offline)
    if st.button(t("approve_run"), key="approve_run", type="primary", disabled=bool(problems),
                 icon=":material/play_arrow:",
                 help=t("approve_blocked") if problems else t("approve_help")):
        _approve(edited)


main()
