"""AppTest of a plan an agent sent for review, on the Plan page (``?review=<id>``) like one of
PlanBoard's own, and on its run page while it waits."""

from __future__ import annotations

import json
import threading

from core.access.audit import record_act
from core.access.identity import os_actor
from core.base.messages import msg, render
from core.plan.model import Plan
from core.review.client import ReviewClient
from core.review.intake import read_submission
from core.review.reviews import approve_review, decision_of, submit_review
from tests.support.app import block_text, keyed_block, open_app
from tests.support.review import agent_plan, in_process, langgraph_agent, store_content
from tests.support.shown import graph_dots, shown
from tests.support.waiting import wait_until


def _sent(runner, **extra) -> str:
    return submit_review(runner.store, read_submission(agent_plan(**extra)), None)


def _open(review: str, **preset):
    return open_app("pages/plan.py", query={"review": review}, **preset)


def _keys(at) -> set[str]:
    return {button.key for button in at.button}


def test_the_agents_plan_is_the_plan_pages_table_graph_and_panel_marked_with_the_agent(
        app_runner):
    review = _sent(app_runner)
    at = _open(review)
    assert "Plan sent for review by the agent research-graph: pending" in [
        shown(i.value) for i in at.info]
    assert at.selectbox(key="step_pick").options == ["s1", "s2", "s3", "s4"]
    dot = graph_dots(at)[0]
    assert all(f'"{step}"' in dot for step in ("s1", "s2", "s3", "s4"))
    assert "⚠ ○ s4 · send_email" in dot  # the side effect is the agent's declaration
    at.selectbox(key="step_pick").set_value("s1").run()
    assert at.text_input(key="step_arg_query").value == "news"  # the declared schema's field
    assert "s4 (send_email)" in shown(block_text(keyed_block(at, "agent_review_effects")))
    assert at.success[0].value == "The plan is valid."
    assert not at.button(key="agent_review_approve").disabled
    # PlanBoard's own planning is not on the page, nor its model-call estimate
    assert {"generate_plan", "approve_run"}.isdisjoint(_keys(at))
    assert "LLM calls" not in [m.label for m in at.metric]


def test_approving_unedited_gives_the_agent_version_1_and_opens_the_run(app_runner):
    review = _sent(app_runner)
    at = _open(review)
    at.button(key="agent_review_approve").click().run()
    decision = decision_of(app_runner.store, review)
    assert (decision.status, decision.version) == ("approved", 1)
    assert decision.plan == app_runner.store.get_run(review).plan.canonical()
    assert at.query_params["run"] == review  # the review's run page, where its steps show


def test_an_edit_in_the_step_panel_is_what_the_agent_receives(app_runner, api):
    review = _sent(app_runner)
    at = _open(review)
    at.selectbox(key="step_pick").set_value("s4").run()
    at.text_input(key="step_arg_to").input("bob@example.com").run()
    at.button(key="agent_review_approve").click().run()
    versions = {v.version: v.plan for v in app_runner.store.plan_versions(review)}
    assert sorted(versions) == [1, 2]
    assert versions[2].step("s4").args == {"to": "bob@example.com"}
    answer = api.get(f"/api/v1/reviews/{review}")
    received = json.loads(answer.content)
    assert (received["status"], received["version"]) == ("approved", 2)
    assert json.dumps(received["plan"], sort_keys=True) == json.dumps(
        versions[2].canonical(), sort_keys=True)  # byte for byte the version approved


def test_an_argument_the_declared_schema_refuses_blocks_the_approval(app_runner):
    review = _sent(app_runner)
    at = _open(review)
    plan: Plan = at.session_state["plan"].model_copy(deep=True)
    plan.step("s1").args = {"query": 5}
    at.session_state["plan"] = plan
    at.run()
    assert at.button(key="agent_review_approve").disabled
    assert "s1" in at.error[0].value and "query" in at.error[0].value
    assert decision_of(app_runner.store, review).status == "pending"


def test_rejecting_needs_a_comment_and_the_comment_reaches_the_agent(app_runner):
    review = _sent(app_runner)
    at = _open(review, language="zh")
    before = store_content(app_runner.store)
    at.button(key="agent_review_reject").click().run()
    assert [e.value for e in at.error] == ["请在说明里写明原因：代理会收到它。"]
    assert store_content(app_runner.store) == before
    at.text_area(key="agent_review_comment").input("不要发邮件。").run()
    at.button(key="agent_review_reject").click().run()
    decision = decision_of(app_runner.store, review)
    assert (decision.status, decision.comment) == ("rejected", "不要发邮件。")


def test_a_decided_review_says_so_and_the_persons_own_plan_comes_back(app_runner):
    own = Plan.model_validate({"goal": "My own plan", "steps": [
        {"id": "s1", "description": "Think"}]})
    review = _sent(app_runner)
    at = _open(review, plan=own)
    assert at.session_state["plan"].goal == "Mail a summary of the news"
    at.button(key="agent_review_close").click().run()
    assert at.session_state["plan"].goal == "My own plan"
    assert "review" not in at.query_params
    at.query_params["review"] = review
    at.run()
    approve_review(app_runner.store, review, None)
    at.run()
    assert "Plan sent for review by the agent research-graph: approved" in [
        shown(i.value) for i in at.info]
    assert at.session_state["plan"].goal == "My own plan"
    assert "agent_review_approve" not in _keys(at)


def test_an_unknown_review_is_a_one_line_error_and_the_page_plans_as_usual(app_runner):
    at = _open("no-such-review")
    assert [e.value for e in at.error] == [
        "There is no plan no-such-review sent for review. Open runs from the history."]
    assert "generate_plan" in _keys(at)


def test_a_waiting_reviews_run_page_offers_no_pause_and_claims_no_confirmation(app_runner):
    review = _sent(app_runner)
    at = open_app("pages/run.py", query={"run": review})
    assert {"run_pause", "run_resume", "run_cancel"}.isdisjoint(_keys(at))
    assert keyed_block(at, "run_safety") is None
    assert "review_approve" in _keys(at)


def test_a_rejection_on_the_plan_page_reaches_a_langgraph_agent_and_no_tool_runs(
        app_runner, api, fake_openai):
    graph, calls = langgraph_agent(fake_openai, ReviewClient("http://testserver",
                                                             send=in_process(api)))
    final: dict = {}
    agent = threading.Thread(target=lambda: final.update(
        graph.invoke({"request": "Mail Ann a summary of the news"})))
    agent.start()
    review = wait_until(lambda: app_runner.store.list_runs(), timeout=30)[0].run_id
    at = _open(review)
    at.text_area(key="agent_review_comment").input("Not Ann: mail Bob.").run()
    at.button(key="agent_review_reject").click().run()
    agent.join(timeout=30)
    assert (final["rejected"], calls) == ("Not Ann: mail Bob.", [])
    assert app_runner.store.get_run(review).status == "cancelled"


def test_history_and_audit_list_an_agents_run_beside_planboards_own_with_the_agent(
        app_runner):
    store = app_runner.store
    own = store.create_run("What is 6 * 7?", plan=Plan.model_validate({
        "goal": "What is 6 * 7?", "steps": [{"id": "s1", "description": "Calculate"}]}))
    record_act(store, os_actor(), "approve", run_id=own, version=1)
    review = _sent(app_runner)
    approve_review(store, review, None)
    unnamed = submit_review(store, read_submission({"plan": "1. look\n2. answer"}), None)
    at = open_app("pages/history.py")
    table = at.dataframe[0].value
    assert dict(zip(table["Run"], table["Agent"], strict=True)) == {
        own: "PlanBoard", review: "research-graph", unnamed: "(unnamed)"}
    at = open_app("pages/audit.py", language="zh")
    rows = at.table[0].value
    assert sorted(zip(rows["运行"], rows["代理"], rows["操作"], strict=True)) == sorted([
        (own, "PlanBoard", shown_action("approve", "zh")),
        (review, "research-graph", shown_action("approve", "zh"))])


def shown_action(action: str, language: str) -> str:
    return render(msg(f"audit_action.{action}"), language)
