"""Plan page: a request, scenarios, routing, clarifying questions, planning, review, approval."""

from __future__ import annotations

import logging

import streamlit as st

from core.access.policy import NEEDS, start_action
from core.base.text import preview
from core.base.usage import Usage
from core.errors import PlanBoardError, RunExistsError, UnservableRequestError
from core.execution.read_ahead import ReadAhead
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.planning.routes import Route, reason_text
from core.runs.admin import reset_data
from core.runs.drafting import Drafting
from core.runs.session import Draft
from core.runs.variants import Variant, Variants
from ui import (
    agent_review,
    identity,
    plan_editor,
    rehearsal_view,
    state,
    template_offer,
    variants_view,
)
from ui.frame import page_header
from ui.i18n import current_language, t
from ui.messages import error_text, said
from ui.plan_preview import render_plan_preview
from ui.safe_text import literal
from ui.safety_notes import render_approval_note, render_read_ahead_note

logger = logging.getLogger(__name__)

# characters of a long request shown as the goal (the rest is one click away); a comment,
# since Streamlit's magic draws a bare string on a page
_GOAL_PREVIEW = 300
# seconds between two looks at a plan being written: a step shows within this of its arrival
_DRAFTING_POLL_S = 0.25


def _pick_scenario(text: str) -> None:
    st.session_state["request"] = text
    st.session_state["request_text"] = text


def _render_gallery() -> None:
    from core.planning.packs import scenarios

    gallery = scenarios(state.registry())
    if not gallery:
        return
    st.caption(t("gallery"))
    columns = st.columns(min(len(gallery), 4) or 1)
    lang = current_language()
    for index, scenario in enumerate(gallery):
        title, request = scenario.title(lang), scenario.request(lang)
        columns[index % len(columns)].button(
            _short_title(title),  # a full title is cut off in a quarter of the page
            key=f"scenario_{scenario.id}",
            help=f"**{title}**\n\n{request}",
            on_click=_pick_scenario,
            args=(request,),
            width="stretch",
        )


def _short_title(title: str) -> str:
    """The part of a scenario's title before its colon ("Customer service")."""
    return title.replace("：", ":").split(":", 1)[0].strip() or title


def _generate(request: str) -> None:
    """Route the request; answer it directly, or draft a plan (which may ask questions)."""
    if not request.strip():
        st.warning(t("request_empty"))
        return
    from core.runs.session import choose_route

    engine = state.engine()
    st.session_state.pop("clarify", None)
    try:
        with st.spinner(t("routing")):
            route, usage = choose_route(request, engine, state.plan_mode_choice())
    except PlanBoardError as exc:
        st.error(error_text(exc))
        return
    st.session_state["route_info"] = {"mode": route.mode, "reason": route.reason,
                                      "code": route.code, "params": route.params}
    if route.mode in ("knowledge", "direct"):
        _answer(request, route, engine, usage)
    else:
        _draft(request, engine, usage, allow_questions=True,
               hierarchical=route.mode == "hierarchical")


def _answer(request: str, route: Route, engine: Engine, usage: Usage) -> None:
    """A knowledge or direct answer: a run like the others, followed on the run page."""
    try:
        run_id = state.runner().answer(request, route, engine=engine,
                                       settings_public=state.settings_public(),
                                       routing_usage=usage)
    except UnservableRequestError as exc:
        _refuse(exc)
        return
    except PlanBoardError as exc:
        st.error(error_text(exc))
        return
    st.session_state["last_run_id"] = run_id
    _forget_read_ahead()
    for key in ("plan_draft", "plan_lessons", "planning_usage", "plan_drafting"):  # earlier
        st.session_state.pop(key, None)
    plan_editor.set_plan(None)
    st.switch_page("pages/run.py", query_params={"run": run_id})


def _draft(request: str, engine: Engine, usage: Usage, *, allow_questions: bool,
           language: str | None = None, hierarchical: bool = False) -> None:
    """Draft a plan (with the relevant lessons; in phases when ``hierarchical``); keep the
    questions when it asks some.

    The planner model drafts in the background (its steps show while it writes them, and a
    rerun meanwhile does not stop it); the offline rules answer at once.
    """
    _forget_read_ahead()
    if not engine.offline:
        read_ahead = ReadAhead(engine.registry) if st.session_state.get("read_ahead") else None
        drafting = Drafting(request, allow_questions=allow_questions, language=language,
                            hierarchical=hierarchical, read_ahead=read_ahead)
        st.session_state["plan_drafting"] = (drafting.start(engine, state.runner().store),
                                             usage)
        return
    from core.runs.session import draft_plan

    try:
        with st.spinner(t("planning_offline")):
            draft = draft_plan(request, engine, store=state.runner().store,
                               allow_questions=allow_questions, language=language,
                               hierarchical=hierarchical)
    except UnservableRequestError as exc:
        _refuse(exc)
        return
    except PlanBoardError as exc:
        st.error(error_text(exc))
        return
    _keep_draft(request, draft, usage, hierarchical=hierarchical)


def _forget_read_ahead() -> None:
    """Close the reads made for the plan under review and for one still being written:
    none of them serves another plan (call before the plan or the data changes)."""
    started = st.session_state.get("plan_drafting")
    if started is not None and started[0].read_ahead is not None:
        started[0].read_ahead.close()
    read_ahead = st.session_state.pop("plan_read_ahead", None)
    if read_ahead is not None:
        read_ahead.close()


def _drafting() -> bool:
    """True while a plan is being written (its preview is drawn); a finished drafting is
    taken as the plan to review."""
    started = st.session_state.get("plan_drafting")
    if started is None:
        return False
    drafting, usage = started
    if not drafting.progress().done:
        _render_drafting()
        return True
    del st.session_state["plan_drafting"]
    if drafting.read_ahead is not None:  # its calls serve the plan when it is approved
        st.session_state["plan_read_ahead"] = drafting.read_ahead
    try:
        draft = drafting.result()
    except UnservableRequestError as exc:
        _refuse(exc)
        return False
    except PlanBoardError as exc:
        st.error(error_text(exc))
        return False
    _keep_draft(drafting.request, draft, usage, hierarchical=drafting.hierarchical)
    return False


@st.fragment(run_every=_DRAFTING_POLL_S)
def _render_drafting() -> None:
    """The steps written so far; once drafting is done the whole page takes the plan."""
    started = st.session_state.get("plan_drafting")
    if started is None:
        return
    progress = started[0].progress()
    if progress.done:
        st.rerun()
    render_plan_preview(started[0].request, progress.steps, state.registry())


def _keep_draft(request: str, draft: Draft, usage: Usage, *, hierarchical: bool = False
                ) -> None:
    """Keep a finished draft: its plan to review, or its questions to answer (drafted again
    in phases when ``hierarchical``, once they are answered)."""
    usage = usage + draft.usage
    if draft.plan is None:
        for key in [k for k in st.session_state if str(k).startswith("clarify_answer_")]:
            del st.session_state[key]  # answers to earlier questions
        st.session_state["clarify"] = {"request": request, "questions": draft.questions,
                                       "usage": usage, "language": draft.language,
                                       "hierarchical": hierarchical}
        plan_editor.set_plan(None)
        return
    variants_view.forget()
    st.session_state["plan_request"] = request
    st.session_state["planning_usage"] = usage
    st.session_state["plan_lessons"] = list(draft.lessons)
    st.session_state["plan_draft"] = draft.plan.model_copy(deep=True)  # to tell edits apart
    plan_editor.set_plan(draft.plan)


def _start_from_template(plan: Plan, request: str) -> None:
    """Review a saved plan filled for this request: no routing, no planning call."""
    _forget_read_ahead()
    for key in ("route_info", "clarify", "plan_lessons", "planning_usage", "plan_drafting"):
        st.session_state.pop(key, None)
    variants_view.forget()
    st.session_state["plan_request"] = request
    st.session_state["plan_draft"] = plan.model_copy(deep=True)  # to tell edits apart
    plan_editor.set_plan(plan)


def _draft_variants(request: str, count: int) -> None:
    """Draft up to ``count`` alternative plans to compare side by side (no routing: variants
    are plans; no clarifying questions: each is planned from the request as written)."""
    if not request.strip():
        st.warning(t("request_empty"))
        return
    from core.runs.variants import draft_variants

    try:
        with st.spinner(t("variants_working")):
            drafted = draft_variants(request, state.engine(), count=count,
                                     language=current_language(), store=state.runner().store)
    except UnservableRequestError as exc:
        _refuse(exc)
        return
    except PlanBoardError as exc:
        st.error(error_text(exc))
        return
    _forget_read_ahead()
    for key in ("route_info", "clarify", "plan_draft", "plan_drafting"):
        st.session_state.pop(key, None)
    st.session_state["plan_request"] = request
    plan_editor.set_plan(None)
    variants_view.keep(drafted)


def _use_variant(variant: Variant, drafted: Variants) -> None:
    """Send the chosen variant to the normal review; drafting every variant counts as its
    planning cost."""
    variants_view.forget()
    st.session_state["planning_usage"] = drafted.usage
    st.session_state["plan_lessons"] = list(drafted.lessons)
    st.session_state["plan_draft"] = variant.plan.model_copy(deep=True)  # to tell edits apart
    plan_editor.set_plan(variant.plan.model_copy(deep=True))


def _refuse(exc: UnservableRequestError) -> None:
    """Say that nothing can serve the request; no plan is left to approve."""
    plan_editor.set_plan(None)
    st.error(t("request_unservable"), icon=":material/block:")
    st.text(said(exc))  # the request's own words: shown as plain text, never as markup


def _answers_given() -> None:
    """Clarify form submitted: put the answers into the request; the page plans with it."""
    from core.planning.clarify import merge_answers

    clarify = st.session_state.get("clarify")
    if not clarify:
        return
    questions = clarify["questions"]
    answers = [str(st.session_state.get(f"clarify_answer_{n}") or "")
               for n in range(len(questions))]
    if not any(answer.strip() for answer in answers):
        st.session_state["clarify_missing"] = True
        return
    merged = merge_answers(clarify["request"], questions, answers, clarify["language"])
    st.session_state["request"] = merged
    st.session_state["clarified"] = {"request": merged, "usage": clarify["usage"],
                                     "language": clarify["language"],
                                     "hierarchical": clarify.get("hierarchical", False)}
    st.session_state.pop("clarify", None)


def _render_clarify() -> None:
    clarify = st.session_state.get("clarify")
    if not clarify:
        return
    with st.form("clarify_form"):
        st.markdown(f"**{t('clarify_title')}**")
        st.caption(t("clarify_caption"))
        for n, question in enumerate(clarify["questions"]):
            st.text_input(literal(question), key=f"clarify_answer_{n}")
        st.form_submit_button(t("clarify_submit"), key="clarify_submit", type="primary",
                              on_click=_answers_given, icon=":material/auto_awesome:")
    if st.session_state.pop("clarify_missing", False):
        st.warning(t("clarify_empty"))


def _render_route() -> None:
    info = st.session_state.get("route_info")
    if info:
        # a rule's reason is a code, worded in the UI's language; a model's is shown as written
        reason = reason_text(info.get("code", ""), info.get("params") or {},
                             current_language()) or info["reason"]
        st.info(t("route_chosen", mode=t(f"mode_{info['mode']}"), reason=literal(reason)),
                icon=":material/alt_route:")


def _render_reset_demo() -> None:
    """"Reset demo data", asked once more before the packs' data is recreated (no button
    when no toolset offers a reset, nor for anyone but an admin)."""
    from core.planning.packs import data_resets

    resets = data_resets(state.registry())
    if not resets or not identity.allows("admin"):
        return
    lang = current_language()
    what = "; ".join(r.what.word(lang) for r in resets)
    restores = "; ".join(r.restores.word(lang) for r in resets)
    if st.button(t("reset_demo"), key="reset_demo", icon=":material/restart_alt:",
                 help=t("reset_demo_help", what=what, restores=restores)):
        st.session_state["reset_demo_asked"] = True
    if st.session_state.get("reset_demo_asked"):
        st.warning(t("reset_demo_ask"))
        sure, cancel, _ = st.columns([1, 1, 3])
        if sure.button(t("reset_demo_confirm"), key="reset_demo_confirm", type="primary"):
            st.session_state.pop("reset_demo_asked", None)
            try:
                reset_data(state.registry(), state.runner().store, identity.actor())
            except PlanBoardError as exc:
                st.error(error_text(exc))
                return
            _forget_read_ahead()  # what was read before the reset is not the data now
            st.session_state["reset_demo_done"] = True
            st.rerun()
        if cancel.button(t("reset_demo_cancel"), key="reset_demo_cancel"):
            st.session_state.pop("reset_demo_asked", None)
            st.rerun()
    if st.session_state.pop("reset_demo_done", False):
        st.success(t("reset_demo_done", restores=restores))


def _render_lessons_used() -> None:
    used = st.session_state.get("plan_lessons") or []
    if used:
        with st.expander(t("lessons_used", count=len(used))):
            st.markdown("\n".join(f"- {literal(lesson)}" for lesson in used))


def _render_goal(goal: str) -> None:
    """The goal, or for a long request its start and the whole text in an expander."""
    if len(goal) <= _GOAL_PREVIEW:
        st.markdown(f"**{t('goal')}:** {literal(goal)}")
        return
    st.markdown(f"**{t('goal')}:** {literal(preview(goal, _GOAL_PREVIEW))}")
    with st.expander(t("goal_full_request", count=len(goal))):
        st.text(goal)


def _blank(request: str) -> None:
    goal = request.strip() or t("blank_goal")
    _forget_read_ahead()
    for key in ("route_info", "clarify", "plan_lessons", "planning_usage", "plan_draft",
                "plan_drafting"):  # a plan still being written is dropped too
        st.session_state.pop(key, None)
    variants_view.forget()
    st.session_state["plan_request"] = goal
    plan_editor.set_plan(Plan(goal=goal, steps=[Step(id="s1", description="")]))


def _approve(plan: Plan, *, once: bool = True) -> None:
    """Start the run of ``plan`` and open it. ``once``: one approval of a version starts one
    run (core's guard); a version that has a run already is said, with that run to open."""
    request = st.session_state.get("plan_request") or plan.goal
    options = state.run_options()
    read_ahead = st.session_state.get("plan_read_ahead")
    if read_ahead is not None:
        options = options.model_copy(update={"read_ahead": read_ahead.results()})
    try:
        run_id = state.runner().start(
            request, plan, engine=state.engine(), options=options,
            settings_public=state.settings_public(),
            planning_usage=st.session_state.get("planning_usage"),
            drafted=st.session_state.get("plan_draft"), actor=identity.actor(),
            once=once,
        )
    except RunExistsError as exc:
        st.session_state[_VERSION_RUN] = (exc.run_id, plan.canonical())
        return
    except PlanBoardError as exc:
        st.error(error_text(exc))
        return
    st.session_state.pop(_VERSION_RUN, None)
    st.session_state.pop("planning_usage", None)  # counted once, by this run
    st.session_state.pop("plan_draft", None)
    _forget_read_ahead()
    st.session_state["last_run_id"] = run_id
    st.switch_page("pages/run.py", query_params={"run": run_id})


_VERSION_RUN = "plan_version_run"  # (run id, plan): the run an approval of that plan found


def _render_version_run(plan: Plan) -> None:
    """Under Approve & run, after it found that this version of the plan has a run already
    (a second click, another tab): that run to open, or another run, started deliberately."""
    found = st.session_state.get(_VERSION_RUN)
    if found is None or found[1] != plan.canonical():
        return
    run_id = found[0]
    with st.container(key="version_run", border=True):
        st.warning(t("version_has_run", run_id=run_id), icon=":material/content_copy:")
        open_run, another = st.columns(2)
        if open_run.button(t("open_version_run", run_id=run_id), key="open_version_run",
                           type="primary", icon=":material/open_in_new:", width="stretch"):
            st.session_state.pop(_VERSION_RUN, None)
            st.switch_page("pages/run.py", query_params={"run": run_id})
        if another.button(t("start_another_run"), key="start_another_run",
                          icon=":material/add:", width="stretch"):
            _approve(plan, once=False)


def _refine(sentence: str) -> None:
    """Have the planner revise the plan under review as ``sentence`` says (one undo step);
    what changed is kept to show above the plan until the next new plan."""
    from core.plan.diff import diff_plans, format_diff
    from core.planning.refine import refine_plan

    def change(pending: Plan) -> tuple[Plan, list[str]]:
        refined, usage = refine_plan(pending, sentence, state.engine())
        spent = st.session_state.get("planning_usage") or Usage()
        st.session_state["planning_usage"] = spent + usage  # counted by the run it becomes
        st.session_state["plan_refine_diff"] = format_diff(diff_plans(pending, refined),
                                                           current_language())
        return refined, []

    try:
        with st.spinner(t("refine_working")):
            plan_editor.apply_edit(change)
    except PlanBoardError as exc:
        st.error(error_text(exc))
        return
    st.rerun()  # the table, the graph and the checks show the new version


def _render_refine_diff() -> None:
    diff = st.session_state.get("plan_refine_diff")
    if diff:
        with st.container(border=True, key="refine_diff"):
            st.caption(t("refine_changes"))
            st.text(diff)


def _render_refine() -> None:
    """"Tell the planner what to change": a sentence and the button that sends it."""
    sentence, send = st.columns([4, 1], vertical_alignment="bottom")
    sentence.text_input(t("refine_label"), key="refine_text",
                        placeholder=t("refine_placeholder"), help=t("refine_help"))
    if send.button(t("refine_button"), key="refine_plan", width="stretch",
                   icon=":material/edit_note:"):
        _refine(st.session_state.get("refine_text", ""))


def main() -> None:
    """Draw the plan page."""
    page_header("plan_title", "plan_caption")
    if not identity.allows("plan"):
        st.info(t("viewer_plan"), icon=":material/visibility:")
        st.page_link("pages/history.py", label=t("go_history"), icon=":material/history:")
        return
    if agent_review.render_agent_review():  # a plan an agent sent (?review=<id>)
        return
    if opened := template_offer.take_opened():  # "Use this plan" on the Templates page
        st.session_state["request"] = opened[1]
        _start_from_template(*opened)
    if "request" not in st.session_state:
        st.session_state["request"] = st.session_state.get("request_text", "")
    st.text_area(t("request"), key="request", height=100, placeholder=t("request_placeholder"))
    st.session_state["request_text"] = st.session_state["request"]  # survives other pages
    if offered := template_offer.render_offer(st.session_state["request"]):
        _start_from_template(*offered)
    _render_gallery()
    _render_reset_demo()
    labels = {mode: t(f"mode_{mode}") for mode in state.PLAN_MODES}  # AppTest keeps format_func
    st.radio(t("plan_mode"), options=list(labels), key="plan_mode", horizontal=True,
             format_func=labels.get, help=t("plan_mode_help"))
    mode = state.settings()
    what_happens = (t("generate_help_offline") if mode.offline
                    else t("generate_help_llm", model=mode.settings.planner_model))
    # a row as wide as its labels (columns of a fixed share cut "Start from a blank …")
    with st.container(horizontal=True, key="plan_actions"):
        generate = st.button(t("generate_plan"), key="generate_plan", type="primary",
                             help=what_happens, icon=":material/auto_awesome:")
        blank = st.button(t("blank_plan"), key="blank_plan")
        count = variants_view.render_control()
    if generate:
        _generate(st.session_state.get("request", ""))
    if blank:
        _blank(st.session_state.get("request", ""))
    if st.session_state.get("read_ahead") and not mode.offline:
        render_read_ahead_note()
    if count is not None:
        _draft_variants(st.session_state.get("request", ""), count)
    if clarified := st.session_state.pop("clarified", None):
        _draft(clarified["request"], state.engine(), clarified["usage"], allow_questions=False,
               language=clarified["language"],
               hierarchical=clarified.get("hierarchical", False))
    _render_route()
    _render_clarify()
    if _drafting() or variants_view.render_variants(_use_variant):
        return
    plan = st.session_state.get("plan")
    if plan is None:
        st.info(t("plan_empty"))
        return
    st.divider()
    _render_goal(plan.goal)
    _render_lessons_used()
    _render_refine_diff()
    edited, problems = plan_editor.render_plan_review(
        state.registry(), offline=mode.offline)
    _render_refine()
    render_approval_note(edited, state.registry(), state.run_options())
    needed = start_action(edited, state.registry(), state.run_options())
    allowed = identity.allows(needed)
    if not allowed:
        st.caption(":material/lock: " + t("needs_role", role=t(f"role_{NEEDS[needed]}")))
    if st.button(t("approve_run"), key="approve_run", type="primary",
                 disabled=bool(problems) or not allowed, icon=":material/play_arrow:",
                 help=t("approve_blocked") if problems else t("approve_help")):
        _approve(edited)
    _render_version_run(edited)
    template_offer.render_save(edited, st.session_state.get("plan_request") or edited.goal,
                               disabled=bool(problems))
    rehearsal_view.render_rehearsal(edited, state.registry(), offline=mode.offline,
                                    blocked=bool(problems))


main()
