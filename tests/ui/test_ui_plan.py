"""AppTest of the Plan page: scenarios, offline planning, review, validation and approval."""

from __future__ import annotations

import json
from pathlib import Path

from core.plan.model import Plan, Step
from demo.scenarios import SCENARIOS
from tests.support.app import (
    block_text,
    drafted,
    generated_plan,
    keyed_block,
    open_app,
    plan_dot,
    wait_for,
)
from tests.support.shown import shown
from tests.support.waiting import DEFAULT_TIMEOUT_S

VACUUM = next(s for s in SCENARIOS if s.id == "shop-refund")


def _editor_key(at) -> str:
    key = f"plan_editor_{at.session_state['plan_revision']}"
    assert key in at.session_state, "the plan table is not on screen"
    return key


def _problems(at) -> str:
    return shown("\n".join(e.value for e in at.error))


def test_the_page_opens_with_a_request_box_and_the_gallery(runner):
    at = open_app()
    assert at.text_area(key="request").value == ""
    for scenario in SCENARIOS:
        button = at.button(key=f"scenario_{scenario.id}")
        assert scenario.title_en.startswith(button.label) and ":" not in button.label
        assert scenario.title_en in button.help and scenario.request_en in button.help
    assert at.button(key="scenario_shop-refund").label == "Customer service"
    assert at.button(key="generate_plan") and at.button(key="blank_plan")
    assert at.info[0].value.startswith("No plan yet")


def test_the_planner_is_named_once_and_generate_says_what_will_happen(runner):
    at = open_app()
    captions = [c.value for c in at.main.caption] + [c.value for c in at.sidebar.caption]
    assert sum("Planner:" in c for c in captions) == 1
    assert "no API key" not in at.button(key="generate_plan").help
    assert "offline rules" in at.button(key="generate_plan").help
    at = open_app(language="zh")
    assert at.button(key="scenario_shop-refund").label == "电商客服"
    assert "离线规则" in at.button(key="generate_plan").help


def test_a_very_long_request_is_previewed_as_the_goal(runner):
    request = "Check order 88231 and tell me when it arrives. " * 110
    assert len(request) > 5_000
    at = open_app()
    at.text_area(key="request").input(request).run()
    at.button(key="blank_plan").click().run()
    goal = next(m.value for m in at.markdown if m.value.startswith("**Goal:**"))
    assert len(goal) < 400 and goal.endswith("…")
    expander = next(e for e in at.expander if e.label.startswith("The whole request"))
    assert f"({len(request.strip())} characters)" in expander.label
    assert expander.text[0].value == request.strip()


def test_generate_offline_shows_table_graph_metrics_and_enables_approval(runner):
    at = generated_plan()
    assert at.text_area(key="request").value == VACUUM.request_en
    plan: Plan = at.session_state["plan"]
    assert [s.tool for s in plan.steps] == [
        "search_knowledge", "query_order", "apply_refund", None]
    assert _editor_key(at).startswith("plan_editor_")
    assert list(at.dataframe[0].value["id"]) == ["s1", "s2", "s3", "s4"]
    dot = plan_dot(at)
    assert "⚠ ○ s3 · apply_refund" in dot and "◇ s2.status == 'delivered'" in dot
    metrics = {m.label: m.value for m in at.metric}
    assert metrics == {"Steps": "4", "Critical path": "3", "Expected LLM calls": "0"}
    assert at.success[0].value == "The plan is valid."
    assert not at.button(key="approve_run").disabled
    assert at.button(key="undo_edit").disabled  # nothing edited yet


def test_a_cycle_blocks_approval_and_is_named_by_step(runner):
    at = generated_plan()
    cyclic = at.session_state["plan"].model_copy(deep=True)
    cyclic.step("s2").depends_on = ["s3"]
    cyclic.step("s1").description = ""  # another problem does not hide the cycle
    at.session_state["plan"] = cyclic
    at.run()
    assert "s2, s3 form a dependency cycle; remove one link" in _problems(at)
    assert "s1 has no description" in _problems(at)
    assert at.button(key="approve_run").disabled
    dot = plan_dot(at)
    assert "penwidth=2.5" not in dot  # no critical path through a cycle
    assert '"s2" -> "s3" [color="#E03131"' in dot and '"s3" -> "s2" [color="#E03131"' in dot
    assert '"s2" -> "s4" [color' not in dot  # s4 only depends on the cycle
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Critical path"] == "— (cycle: s2, s3)"
    assert any("red arrows = dependency cycle" in c.value for c in at.main.caption)


def test_an_unknown_tool_blocks_approval_and_is_named_by_step(runner):
    at = generated_plan()
    wrong = at.session_state["plan"].model_copy(deep=True)
    wrong.step("s1").tool = "search_the_web_please"
    at.session_state["plan"] = wrong
    at.run()
    assert "s1 uses unknown tool 'search_the_web_please'" in _problems(at)
    assert at.button(key="approve_run").disabled


def test_problems_are_worded_in_the_chosen_language(runner):
    at = generated_plan(language="zh")
    cyclic = at.session_state["plan"].model_copy(deep=True)
    cyclic.step("s2").depends_on = ["s3"]
    at.session_state["plan"] = cyclic
    at.run()
    assert "s2, s3 形成了循环依赖" in _problems(at)
    assert at.button(key="approve_run").disabled


def test_step_controls_move_delete_and_add(runner):
    at = generated_plan()
    revision = at.session_state["plan_revision"]
    at.selectbox(key="step_pick").set_value("s2").run()
    at.button(key="step_up").click().run()
    assert at.session_state["plan"].ids() == ["s2", "s1", "s3", "s4"]
    assert at.session_state["plan_revision"] > revision
    at.button(key="step_down").click().run()
    assert at.session_state["plan"].ids() == ["s1", "s2", "s3", "s4"]
    at.selectbox(key="step_pick").set_value("s2").run()
    at.button(key="step_delete").click().run()
    plan = at.session_state["plan"]
    assert plan.ids() == ["s1", "s3", "s4"] and plan.step("s4").depends_on == ["s1", "s3"]
    assert "unknown step" not in _problems(at)
    # the refund's guard is kept: approval waits until a person rewrites it
    assert "s3 condition reads s2" in _problems(at)
    assert any("s3 condition reads the deleted s2" in shown(i.value) for i in at.info)
    assert at.button(key="approve_run").disabled
    at.button(key="step_add").click().run()
    assert at.session_state["plan"].ids() == ["s1", "s5", "s3", "s4"]  # after the picked step
    assert at.selectbox(key="step_pick").value == "s5"
    assert "s5 has no description" in _problems(at)


def test_deleting_s1_leaves_no_dangling_dependency_and_approval_enabled(runner):
    at = generated_plan()
    at.selectbox(key="step_pick").set_value("s1").run()
    at.button(key="step_delete").click().run()
    assert not at.exception
    plan = at.session_state["plan"]
    assert plan.ids() == ["s2", "s3", "s4"] and plan.step("s4").depends_on == ["s2", "s3"]
    assert not at.error and at.success[0].value == "The plan is valid."
    assert not at.button(key="approve_run").disabled
    assert '"s1"' not in plan_dot(at)


def test_undo_goes_back_one_edit_at_a_time(runner):
    at = generated_plan()
    drafted = at.session_state["plan"].canonical()
    at.selectbox(key="step_pick").set_value("s1").run()
    at.button(key="step_delete").click().run()
    at.selectbox(key="step_pick").set_value("s3").run()
    at.button(key="step_up").click().run()
    at.button(key="step_add").click().run()
    assert at.session_state["plan"].ids() == ["s3", "s5", "s2", "s4"]
    at.button(key="undo_edit").click().run()
    assert at.session_state["plan"].ids() == ["s3", "s2", "s4"]
    at.button(key="undo_edit").click().run()
    assert at.session_state["plan"].ids() == ["s2", "s3", "s4"]
    assert list(at.dataframe[0].value["id"]) == ["s2", "s3", "s4"]  # the table follows
    at.button(key="undo_edit").click().run()
    assert at.session_state["plan"].canonical() == drafted
    assert at.button(key="undo_edit").disabled
    assert not at.exception


def test_undo_after_a_refused_cell_keeps_the_move_before_it(runner):
    at = generated_plan()
    at.selectbox(key="step_pick").set_value("s3").run()
    at.button(key="step_up").click().run()
    moved = at.session_state["plan"].ids()
    # the table's own state, as a browser would hold it: s1's args typed without a quote
    at.session_state[_editor_key(at)] = {
        "edited_rows": {0: {"args": '{"order_id": "88231}'}}, "added_rows": [],
        "deleted_rows": []}
    at.run()
    assert "s1 args are not valid JSON" in _problems(at)
    at.button(key="undo_edit").click().run()
    assert at.session_state["plan"].ids() == moved  # the move stays
    assert "s1 args are not valid JSON" not in _problems(at)  # the refused cell is gone
    at.button(key="undo_edit").click().run()
    assert at.session_state["plan"].ids() != moved  # the next Undo takes the move back
    assert not at.exception


def test_a_new_plan_starts_a_new_undo_history(runner):
    at = generated_plan()
    at.button(key="step_add").click().run()
    assert not at.button(key="undo_edit").disabled
    at.button(key="generate_plan").click().run()
    assert at.button(key="undo_edit").disabled


def test_blank_plan_starts_with_one_empty_step(runner):
    at = open_app()
    at.button(key="blank_plan").click().run()
    plan = at.session_state["plan"]
    assert plan.ids() == ["s1"] and plan.goal == "A plan written by hand"
    assert "s1 has no description" in _problems(at)
    assert at.button(key="approve_run").disabled


def test_planner_warnings_are_shown(runner):
    plan = Plan(goal="g", warnings=["the model replied with prose; used the fallback plan"],
                steps=[Step(id="s1", description="Add", tool="calculate",
                            args={"expression": "1 + 1"})])
    at = open_app(plan=plan)
    assert any("used the fallback plan" in w.value for w in at.warning)


def test_an_empty_request_is_not_planned(runner):
    at = open_app()
    at.button(key="generate_plan").click().run()
    assert at.warning[0].value.startswith("Type a request first")
    assert at.session_state["plan"] is None


def test_a_request_over_the_limit_is_refused_saying_the_limit(runner):
    at = open_app(request="refund order 88231 because it arrived broken. " * 500)
    at.button(key="generate_plan").click().run()
    assert [e.value for e in at.error] == [
        "The request is 23,000 characters long; the limit is 4,000. Shorten it to what should "
        "be done and send it again."]
    assert at.session_state["plan"] is None


def test_generate_approve_run_complete(runner):
    at = generated_plan(confirm_side_effects=False)
    at.button(key="approve_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    run_id = at.query_params["run"]
    assert at.title[0].value == "Run"
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
    at = wait_for(at, lambda a: "Completed" in " ".join(m.value for m in a.markdown))
    answer = block_text(keyed_block(at, "run_answer"))
    assert "S10 Lite" in answer
    refund = runner.store.get_run(run_id).plan.step("s3").result["refund_id"]
    assert refund in answer
    assert runner.store.get_run(run_id).settings == {"offline": True}


def test_an_edited_plan_runs_as_version_2_with_the_draft_kept_as_version_1(runner):
    at = generated_plan(confirm_side_effects=False)
    drafted = at.session_state["plan"].step("s1").description
    edited = at.session_state["plan"].model_copy(deep=True)
    edited.step("s1").description = "Find an easy robot vacuum for my parents"
    at.session_state["plan"] = edited
    at.run()
    at.button(key="approve_run").click().run()
    run_id = at.query_params["run"]
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
    versions = runner.store.plan_versions(run_id)
    assert [v.version for v in versions] == [1, 2]
    assert versions[0].plan.step("s1").description == drafted
    assert versions[1].reason == "manual edit"
    assert runner.store.get_run(run_id).plan.step("s1").description.endswith("my parents")
    at = wait_for(at, lambda a: "Completed" in " ".join(m.value for m in a.markdown))
    titles = [e.label for e in at.expander]
    assert any("1 → 2" in title and "manual edit" in title for title in titles), titles


def test_an_unedited_plan_runs_as_version_1(runner):
    at = generated_plan(confirm_side_effects=False)
    at.button(key="approve_run").click().run()
    run_id = at.query_params["run"]
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
    assert [v.version for v in runner.store.plan_versions(run_id)] == [1]


def test_chinese_request_generates_a_chinese_plan(runner):
    at = generated_plan(language="zh")
    assert at.text_area(key="request").value == VACUUM.request_zh
    assert at.session_state["plan"].steps[0].description.startswith("搜索知识库")
    assert at.button(key="approve_run").label == "批准并运行"


def test_a_language_switch_starts_a_new_table_from_the_canonical_plan(runner):
    at = generated_plan()
    edited = at.session_state["plan"].model_copy(deep=True)
    edited.step("s1").description = "Find an easy robot vacuum"
    at.session_state["plan"] = edited
    at.run()
    revision = at.session_state["plan_revision"]
    at.radio(key="language").set_value("zh").run()
    assert at.session_state["plan_revision"] == revision + 1
    assert at.session_state["plan"].step("s1").description == "Find an easy robot vacuum"
    assert at.dataframe[0].value["description"][0] == "Find an easy robot vacuum"


def test_leaving_the_page_keeps_the_request_and_the_plan(runner):
    at = generated_plan()
    plan = at.session_state["plan"]
    at.switch_page("pages/tools.py").run()
    at.switch_page("pages/plan.py").run()
    assert not at.exception
    assert at.text_area(key="request").value == VACUUM.request_en
    assert at.session_state["plan"].canonical() == plan.canonical()
    assert list(at.dataframe[0].value["id"]) == plan.ids()


def test_with_a_session_key_the_llm_planner_plans_and_the_key_is_never_stored(
    runner, isolated_environment
):
    from tests.support.fake_openai import DEFAULT_KEY, FakeOpenAI, text

    plan_json = json.dumps({
        "goal": "What is 6 * 7?", "definition_of_done": "the product is known",
        "steps": [{"id": "s1", "description": "Multiply six by seven", "tool": "calculate",
                   "args": {"expression": "6 * 7"}, "depends_on": []}],
    })
    route_json = json.dumps({"mode": "plan", "reason": "a calculation to plan"})

    def responder(body: dict) -> object:
        system = body["messages"][0]["content"]
        return text(route_json if system.startswith("You route a user's request") else plan_json)

    with FakeOpenAI(responder=responder) as server:
        at = open_app()
        at.text_input(key="base_url").input(server.base_url).run()
        at.text_input(key="api_key").input(DEFAULT_KEY).run()
        at.toggle(key="offline_mode").set_value(False).run()
        assert "Planner: gpt-4o-mini at " + server.base_url in " ".join(
            c.value for c in at.sidebar.caption)
        at.text_area(key="request").input("What is 6 * 7?").run()
        at = drafted(at.button(key="generate_plan").click().run())
        assert not at.exception and not at.error, [e.value for e in at.error]
        assert len(server.requests) == 2, "the router and the planner each call once"
        assert at.info[0].value == "Mode: Plan — a calculation to plan"
        assert at.session_state["plan"].steps[0].description == "Multiply six by seven"
        at.button(key="approve_run").click().run()
        run_id = at.query_params["run"]
        assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
    settings = runner.store.get_run(run_id).settings
    assert settings["offline"] is False and settings["base_url"] == server.base_url
    for path in Path(isolated_environment).rglob("*"):
        if path.is_file():
            assert DEFAULT_KEY.encode() not in path.read_bytes(), path
