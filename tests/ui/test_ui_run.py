"""AppTest of the Run page: live progress, confirm and reject, pause, resume and cancel."""

from __future__ import annotations

import pytest

from core.execution.scheduler import RunOptions
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.tools.toolsets import default_registry
from tests.support.app import block_text, keyed_block, open_app, wait_for
from tests.support.shown import graph_dots, shown, step_heads
from tests.support.waiting import DEFAULT_TIMEOUT_S


def _refund_plan() -> Plan:
    return Plan(goal="Refund order 88231 if it was delivered", steps=[
        Step(id="s1", description="Look up order 88231", tool="query_order",
             args={"order_id": "88231"}),
        Step(id="s2", description="Refund it if delivered", tool="apply_refund",
             args={"order_id": "88231", "reason": "broken"}, depends_on=["s1"],
             condition="s1.status == 'delivered'"),
    ])


def _start(runner, *, confirm: bool = True) -> str:
    plan = _refund_plan()
    return runner.start(plan.goal, plan, engine=Engine(default_registry()),
                        options=RunOptions(confirm_side_effects=confirm),
                        settings_public={"offline": True})


def _open_run(run_id: str):
    return open_app("pages/run.py", query={"run": run_id})


def _status(at) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("**Status:**"))


def _keys(at) -> set[str]:
    return {button.key for button in at.button}


def test_without_a_run_the_page_says_how_to_open_one(runner):
    at = open_app("pages/run.py")
    assert at.info[0].value.startswith("No run selected")


def test_an_unknown_run_is_a_one_line_error(runner):
    at = _open_run("nope")
    assert at.error[0].value == "There is no run nope. Open one from the history."
    assert not at.exception


def test_confirming_the_refund_runs_it_and_the_button_disappears(runner):
    run_id = _start(runner)
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S, until_confirmation=True).status == (
        "waiting_confirmation")
    at = _open_run(run_id)
    assert _status(at) == "**Status:** Waiting for confirmation"
    assert {"confirm_step_s2", "reject_step_s2"} <= _keys(at)
    assert graph_dots(at) == []  # the graph's tab is closed: not drawn
    at.session_state["run_tabs"] = "Dependency graph"
    at.run()
    assert graph_dots(at)[0].count("#D3F9D8") == 1  # s1 completed
    at.button(key="confirm_step_s2").click().run()
    assert "confirm_step_s2" not in _keys(at)
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
    at = wait_for(at, lambda a: "Completed" in _status(a))
    assert "confirm_step_s2" not in _keys(at) and "reject_step_s2" not in _keys(at)
    refund_id = runner.store.get_run(run_id).plan.step("s2").result["refund_id"]
    assert refund_id in block_text(keyed_block(at, "run_answer"))
    assert at.button(key="run_pause").disabled and at.button(key="run_cancel").disabled
    assert at.progress[0].value == 100


def test_rejecting_the_refund_skips_it(runner):
    run_id = _start(runner)
    runner.wait(run_id, DEFAULT_TIMEOUT_S, until_confirmation=True)
    at = _open_run(run_id)
    at.button(key="reject_step_s2").click().run()
    assert "reject_step_s2" not in _keys(at)
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status in {"completed", "failed"}
    plan = runner.store.get_run(run_id).plan
    assert plan.step("s2").status == "skipped"
    at = wait_for(at, lambda a: "Waiting" not in _status(a) and "Running" not in _status(a))
    assert step_heads(at)["s2"].startswith("⏭ s2 Skipped · ")


def test_pause_resume_and_cancel(runner):
    run_id = _start(runner)
    runner.wait(run_id, DEFAULT_TIMEOUT_S, until_confirmation=True)
    at = _open_run(run_id)
    at.button(key="run_pause").click().run()
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "paused"
    at = wait_for(at, lambda a: _status(a) == "**Status:** Paused")
    assert "confirm_step_s2" not in _keys(at)
    assert not at.button(key="run_resume").disabled
    at.button(key="run_resume").click().run()
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S, until_confirmation=True).status == (
        "waiting_confirmation")
    at = wait_for(at, lambda a: "confirm_step_s2" in _keys(a))
    at.button(key="run_cancel").click().run()
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "cancelled"
    at = wait_for(at, lambda a: _status(a) == "**Status:** Cancelled")
    assert "confirm_step_s2" not in _keys(at)
    assert at.button(key="run_resume").disabled and at.button(key="run_cancel").disabled


def _replanner(plan: Plan, failure: str, engine) -> Plan:
    new = plan.model_copy(deep=True)
    new.version = plan.version + 1
    new.steps = [Step(id="s2", description="Calculate something that works",
                      tool="calculate", args={"expression": "1 + 1"})]
    return new


def test_replan_history_shows_the_diff_between_versions(runner):
    plan = Plan(goal="Divide", steps=[
        Step(id="s1", description="Divide by zero", tool="calculate", args={"expression": "1/0"}),
    ])
    run_id = runner.start(plan.goal, plan, engine=Engine(default_registry()),
                          options=RunOptions(max_replans=1), replanner=_replanner,
                          settings_public={"offline": True})
    runner.wait(run_id, DEFAULT_TIMEOUT_S)
    at = _open_run(run_id)
    titles = [e.label for e in at.expander]
    assert "Version 1 → 2 · replan after a failure" in titles
    diff = next(e for e in at.expander if e.label.startswith("Version 1 → 2"))
    text = " ".join(m.value for m in diff.markdown)
    assert ":material/add: **s2** Calculate something that works" in text
    assert ":material/remove: ~~s1 Divide by zero~~" in text


def _replan_to_a_refund(plan: Plan, failure: str, engine) -> Plan:
    """s1 failed; the new version refunds another order (the approval-boundary scenario)."""
    return Plan(goal=plan.goal, version=plan.version + 1, steps=[
        Step(id="s3", description="Refund order 88231 instead", tool="apply_refund",
             args={"order_id": "88231", "reason": "lost"}),
    ])


def _start_widening(runner) -> str:
    plan = Plan(goal="Where is my parcel?", steps=[
        Step(id="s1", description="Look up order 00000", tool="query_order",
             args={"order_id": "00000"}),
        Step(id="s2", description="Track its parcel", tool="query_logistics",
             args={"tracking_no": "{{s1.tracking_no}}"}, depends_on=["s1"]),
    ])
    return runner.start(plan.goal, plan, engine=Engine(default_registry()),
                        options=RunOptions(max_replans=1, max_attempts=1),
                        replanner=_replan_to_a_refund, settings_public={"offline": True})


@pytest.mark.parametrize("approve", [True, False])
def test_a_new_version_that_adds_a_refund_waits_for_approval(runner, approve):
    run_id = _start_widening(runner)
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S, until_confirmation=True).status == (
        "waiting_confirmation")
    at = _open_run(run_id)
    assert {"approve_version", "reject_version"} <= _keys(at)
    shown = block_text(keyed_block(at, "version_wait"))
    assert ":material/add: **s3** Refund order 88231 instead" in shown
    assert "Plan version 2 adds or changes" in at.warning[0].value
    assert runner.store.get_run(run_id).plan.step("s3").status == "pending"  # not run yet
    at.button(key="approve_version" if approve else "reject_version").click().run()
    assert "approve_version" not in _keys(at)
    runner.wait(run_id, DEFAULT_TIMEOUT_S)
    refund = runner.store.get_run(run_id).plan.step("s3")
    if approve:
        assert refund.status == "completed" and refund.result["created"] is True
    else:
        assert (refund.status, refund.error) == ("skipped", "rejected by a person")
    assert not at.exception


# ---- a run page that tells the truth ----------------------------------------------------


def _card(at, step_id: str):
    return keyed_block(at, f"step_card_{step_id}")


def test_a_rejected_step_is_a_neutral_note_with_its_reason_not_an_error(runner):
    run_id = _start(runner)
    runner.wait(run_id, DEFAULT_TIMEOUT_S, until_confirmation=True)
    runner.reject(run_id, "s2")
    runner.wait(run_id, DEFAULT_TIMEOUT_S)
    at = _open_run(run_id)
    card = _card(at, "s2")
    assert list(card.error) == []
    assert any(c.value.endswith("Skipped: a person rejected it.") for c in card.caption)
    assert at.progress[0].proto.text == "1 done · 1 skipped · 2 steps"
    assert at.progress[0].value == 100


def _skipped_by_condition(runner) -> str:
    plan = _refund_plan()
    plan.steps[1].condition = "s1.status == 'lost'"
    return runner.start(plan.goal, plan, engine=Engine(default_registry()),
                        options=RunOptions(confirm_side_effects=False),
                        settings_public={"offline": True})


@pytest.mark.parametrize(("language", "reason", "progress"), [
    ("en", "Skipped: its condition was not met (s1.status == 'lost').",
     "1 done · 1 skipped · 2 steps"),
    ("zh", "已跳过：条件不满足（s1.status == 'lost'）。", "1 个完成 · 1 个跳过 · 共 2 个步骤"),
])
def test_a_step_whose_condition_is_false_says_so_in_both_languages(runner, language, reason,
                                                                  progress):
    run_id = _skipped_by_condition(runner)
    runner.wait(run_id, DEFAULT_TIMEOUT_S)
    at = open_app("pages/run.py", query={"run": run_id}, language=language)
    card = _card(at, "s2")
    assert list(card.error) == []
    assert reason in [shown(c.value.removeprefix(":material/skip_next: ")) for c in card.caption]
    assert at.progress[0].proto.text == progress


def test_a_cancelled_run_says_cancelled_and_its_bar_stops_where_it_stopped(runner):
    run_id = _start(runner)
    runner.wait(run_id, DEFAULT_TIMEOUT_S, until_confirmation=True)
    runner.cancel(run_id, timeout=DEFAULT_TIMEOUT_S)
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "cancelled"
    at = _open_run(run_id)
    assert at.progress[0].proto.text == "Cancelled: 1 done · 1 not run · 2 steps"
    assert at.progress[0].value == 50
    card = _card(at, "s2")
    assert list(card.error) == []
    assert any(c.value.endswith("Not run: the run was cancelled.") for c in card.caption)


def test_the_run_link_returns_to_the_latest_run_after_another_page(runner):
    run_id = _start(runner, confirm=False)
    runner.wait(run_id, DEFAULT_TIMEOUT_S)
    at = _open_run(run_id)
    at.switch_page("pages/history.py").run()
    at.query_params.clear()  # what st.navigation does when the sidebar's Run link is used
    at.switch_page("pages/run.py").run()
    assert not at.exception
    assert not at.info  # not "No run selected"
    assert _status(at) == "**Status:** Completed"
    assert at.query_params["run"] == run_id  # put back into the address


def test_a_finished_runs_page_offers_its_exports_and_a_running_ones_does_not(runner):
    """Issue 44: only History had the exports."""
    run_id = _start(runner)
    runner.wait(run_id, DEFAULT_TIMEOUT_S, until_confirmation=True)
    at = _open_run(run_id)
    assert not at.get("download_button")
    runner.cancel(run_id, timeout=DEFAULT_TIMEOUT_S)
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "cancelled"
    at.run()
    keys = {button.key for button in at.get("download_button")}
    assert {"export_json", "export_md", "export_dot"} <= keys
    assert "Export" in [header.value for header in at.subheader]


def _sql_run(runner) -> str:
    plan = Plan(goal="Churn by plan", steps=[
        Step(id="s1", description="Count churn by plan", tool="run_sql",
             args={"query": "SELECT plan, COUNT(*) AS churned FROM churn_events "
                            "GROUP BY plan ORDER BY plan"}),
    ])
    return runner.start(plan.goal, plan, engine=Engine(default_registry()),
                        options=RunOptions(confirm_side_effects=False),
                        settings_public={"offline": True})


def test_a_tabular_result_is_a_data_frame_on_its_card(runner):
    run_id = _sql_run(runner)
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
    result = runner.store.get_run(run_id).plan.step("s1").result
    at = _open_run(run_id)
    card = _card(at, "s1")
    shown_result = next(e for e in card.expander if e.label == "Result")
    frames = shown_result.get("dataframe")
    assert len(frames) == 1 and not shown_result.get("json")
    frame = frames[0].value
    assert list(frame.columns) == result["columns"] == ["plan", "churned"]
    assert frame.values.tolist() == [[str(cell) for cell in row] for row in result["rows"]]
    assert any(c.value.startswith(f"{len(result['rows'])} rows") for c in shown_result.caption)


def test_the_presentation_view_has_no_sidebar_and_no_editors(runner):
    run_id = _start(runner)
    runner.wait(run_id, DEFAULT_TIMEOUT_S, until_confirmation=True)
    at = open_app("pages/run.py", query={"run": run_id, "present": "1"})
    assert len(at.sidebar.children) == 0
    view = keyed_block(at, "present_view")
    assert view is not None and keyed_block(at, "present_now") is not None
    assert len(graph_dots(keyed_block(at, "present_graph"))) == 1
    assert keyed_block(at, "run_answer") is not None
    keys = _keys(at)
    assert not {"run_pause", "run_cancel", "followup_submit"} & keys
    assert {"confirm_step_s2", "reject_step_s2"} <= keys  # the demo can still go on
    assert _card(at, "s1") is None and _card(at, "s2") is None  # no cards: the decision
    assert keyed_block(at, "decision_s2") is not None
    at.button(key="confirm_step_s2").click().run()
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
    at = wait_for(at, lambda a: "Completed" in _status(a))
    refund_id = runner.store.get_run(run_id).plan.step("s2").result["refund_id"]
    assert refund_id in block_text(keyed_block(at, "run_answer"))


def test_the_working_view_links_to_the_presentation(runner):
    run_id = _start(runner, confirm=False)
    runner.wait(run_id, DEFAULT_TIMEOUT_S)
    at = _open_run(run_id)
    assert len(at.sidebar.children) > 0 and keyed_block(at, "present_view") is None
    at.button(key="present_open").click().run()
    assert at.query_params["present"] == "1" and at.query_params["run"] == run_id
    assert keyed_block(at, "present_view") is not None and len(at.sidebar.children) == 0
    at.button(key="present_leave").click().run()
    assert "present" not in at.query_params and keyed_block(at, "run_view") is not None


@pytest.mark.parametrize(("language", "labels"), [
    ("en", ("Steps", "Dependency graph", "Timeline")), ("zh", ("步骤", "依赖关系图", "时间线")),
])
def test_the_step_cards_are_the_first_tab_and_the_graph_has_a_tab_of_its_own(
        runner, language, labels):
    run_id = _start(runner, confirm=False)
    runner.wait(run_id, DEFAULT_TIMEOUT_S)
    at = open_app("pages/run.py", query={"run": run_id}, language=language)
    steps, graph, timeline = at.tabs
    assert (steps.label, graph.label, timeline.label) == labels
    assert _cards_in(steps) == ["s1", "s2"] and graph_dots(steps) == []
    assert graph_dots(graph) == []  # a closed tab is not drawn
    at.session_state["run_tabs"] = labels[1]
    at.run()
    steps, graph, timeline = at.tabs
    assert len(graph_dots(graph)) == 1 and _cards_in(graph) == []
    assert _cards_in(steps) == [] and keyed_block(at, "run_timeline") is None
    at.session_state["run_tabs"] = labels[2]
    at.run()
    assert keyed_block(at, "run_timeline") is not None and graph_dots(at) == []
    charts = at.get("vega_lite_chart")
    assert len(charts) == 1, "the timeline draws one chart"


@pytest.mark.parametrize(("language", "tab", "lanes"), [
    ("en", "Timeline", "L1, L2 … are lanes: steps that ran at the same time sit on separate "
                       "lanes, so a step on L2 ran while another step was running."),
    ("zh", "时间线", "L1、L2……是并行线：同时运行的步骤分在不同的线上"),
])
def test_the_timeline_says_what_its_lanes_are(runner, language, tab, lanes):
    run_id = _start(runner, confirm=False)
    runner.wait(run_id, DEFAULT_TIMEOUT_S)
    at = open_app("pages/run.py", query={"run": run_id}, language=language, run_tabs=tab)
    assert lanes in block_text(keyed_block(at, "run_timeline"))


def _cards_in(block) -> list[str]:
    """The ids of the step cards drawn inside ``block`` (an AppTest block such as a tab)."""
    found, stack = [], [block]
    while stack:
        node = stack.pop()
        key = str(getattr(node.proto, "id", "") or "")
        if "-step_card_" in key:
            found.append(key.rsplit("-step_card_", 1)[1])
        stack.extend(getattr(node, "children", {}).values())
    return sorted(found)


def test_edit_and_rerun_from_a_step_card_runs_only_that_step_again_with_the_edit(runner):
    run_id = _start(runner, confirm=False)
    first = runner.wait(run_id, DEFAULT_TIMEOUT_S).plan
    at = _open_run(run_id)
    assert {"rerun_from_s1", "rerun_from_s2"} <= _keys(at)
    at.button(key="rerun_from_s2").click().run()
    form = keyed_block(at, "rerun_form")
    assert form is not None
    (warning,) = form.warning  # its side effect, shown before it is approved again
    assert "apply_refund" in warning.value and "runs it again" in warning.value
    at.text_area(key="rerun_args_s2").input('["88231"]').run()
    (error,) = keyed_block(at, "rerun_form").error
    assert "not a JSON object" in error.value
    assert at.button(key="rerun_submit").disabled
    at.text_area(key="rerun_args_s2").input(
        '{"order_id": "88231", "reason": "arrived broken"}').run()
    assert "arrived broken" in block_text(keyed_block(at, "rerun_form"))  # the diff
    at.button(key="rerun_submit").click().run()
    assert not at.exception, [e.value for e in at.exception]
    record = runner.wait(run_id, DEFAULT_TIMEOUT_S)
    assert record.status == "completed" and record.plan.version == 2
    assert record.plan.step("s1").model_dump() == first.step("s1").model_dump()  # not run again
    assert record.plan.step("s2").resolved_args == {"order_id": "88231",
                                                    "reason": "arrived broken"}
    at = wait_for(at, lambda a: "Completed" in _status(a))
    assert keyed_block(at, "rerun_form") is None


def test_a_plan_an_agent_sent_for_review_is_marked_with_the_agent(runner):
    from core.review.intake import read_submission
    from core.review.reviews import approve_review, submit_review

    review = submit_review(runner.store, read_submission(
        {"agent": "research-graph", "plan": "1. look\n2. answer"}), None)
    at = _open_run(review)
    assert "Plan sent for review by the agent research-graph: pending" in [
        shown(c.value) for c in at.caption]
    approve_review(runner.store, review, None)
    at = open_app("pages/run.py", query={"run": review}, language="zh")
    # the process's view of the run is kept for a moment: the page shows the change next
    wait_for(at, lambda a: "由代理 research-graph 送审的计划：已批准" in [
        shown(c.value) for c in a.caption], what="the approval")


def test_the_person_approves_or_rejects_an_agents_plan_on_the_run_page(runner):
    from core.review.intake import read_submission
    from core.review.reviews import decision_of, submit_review

    def sent() -> str:
        return submit_review(runner.store, read_submission(
            {"agent": "research-graph", "plan": "1. look\n2. answer"}), None)

    approved = sent()
    at = _open_run(approved)
    at.button(key="review_approve").click().run()
    assert decision_of(runner.store, approved).status == "approved"
    wait_for(at, lambda a: "review_approve" not in _keys(a), what="no decision to make")

    rejected = sent()
    at = _open_run(rejected)
    at.button(key="review_reject").click().run()
    assert at.error[0].value == "Say why in the comment: the agent receives it."
    assert decision_of(runner.store, rejected).status == "pending"
    at.text_area(key="review_comment").input("Too vague.")
    at.button(key="review_reject").click().run()
    assert (decision_of(runner.store, rejected).status,
            decision_of(runner.store, rejected).comment) == ("rejected", "Too vague.")


def test_an_agents_reported_steps_are_the_run_pages_completed_cards(runner):
    from core.review.agent_events import accept_event
    from core.review.intake import read_submission
    from core.review.reviews import approve_review, submit_review
    from tests.support.review import agent_plan

    review = submit_review(runner.store, read_submission(agent_plan()), None)
    approve_review(runner.store, review, None)
    events = [{"type": "RUN_STARTED", "threadId": "t", "runId": review}]
    for name in ("find", "read", "draft", "mail"):
        events += [{"type": "STEP_STARTED", "stepName": name},
                   {"type": "STEP_FINISHED", "stepName": name}]
    for event in [*events, {"type": "RUN_FINISHED", "threadId": "t", "runId": review}]:
        accept_event(runner.store, review, event, None)
    at = wait_for(_open_run(review), lambda a: len(step_heads(a)) == 4 and all(
        head.startswith("✓") for head in step_heads(a).values()), what="4 completed cards")
    heads = step_heads(at)
    assert sorted(heads) == ["s1", "s2", "s3", "s4"]
    assert all(head.startswith(f"✓ {step} Completed · ") for step, head in heads.items())
    assert heads["s4"].split("\n")[0].endswith("send_email ⚠")  # declared no read-only
