"""AppTest of the adaptive parts: routing, clarifying questions, checkpoints, follow-ups."""

from __future__ import annotations

from core.plan.diff import diff_plans
from core.runs.runner import Runner
from demo.scenarios import SCENARIOS
from tests.support.app import block_text, drafted, keyed_block, open_app, wait_for
from tests.support.shown import shown
from tests.support.waiting import DEFAULT_TIMEOUT_S

SEED_000 = ("我家老人想要一台扫地机，预算 2000 以内，要好操作的。另外帮我看看订单 66001 到了没，"
            "到了的话帮我把那台坏的退掉。")


def _ask(request: str, **state: object):
    at = open_app(**state)
    assert at.radio(key="plan_mode").value == state.get("plan_mode", "auto")
    at.text_area(key="request").input(request).run()
    at.button(key="generate_plan").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _status(at) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("**Status:**"))


def _answered(at, runner: Runner):
    """The run page of the answer just asked for, once its run has completed."""
    assert at.title[0].value == "Run"  # a run like the others, followed on its page
    assert runner.wait(at.query_params["run"], DEFAULT_TIMEOUT_S).status == "completed"
    return wait_for(at, lambda a: "Completed" in _status(a))


def test_a_policy_question_is_answered_from_the_knowledge_base_without_a_plan(runner):
    at = _answered(_ask("退货政策是什么？"), runner)
    run_id = at.query_params["run"]
    record = runner.store.get_run(run_id)
    assert record.status == "completed" and record.options["mode"] == "knowledge"
    assert [s.tool for s in record.plan.steps] == ["search_knowledge", None]
    assert _status(at) == "**Status:** Completed"
    answer = block_text(keyed_block(at, "run_answer"))
    assert "退货" in answer and "7 天" in answer


def test_an_order_lookup_takes_the_direct_route(runner):
    at = _answered(_ask("查一下订单 88231"), runner)
    record = runner.store.get_run(at.query_params["run"])
    assert record.options["mode"] == "direct" and record.status == "completed"
    assert record.plan.steps[0].tool == "query_order"
    assert "88231" in block_text(keyed_block(at, "run_answer"))


def test_the_person_can_force_a_plan_and_seed_000_is_planned_on_auto(runner):
    at = _ask(SEED_000)
    assert at.info[0].value.startswith("Mode: Plan — ")
    assert [s.tool for s in at.session_state["plan"].steps] == [
        "search_knowledge", "query_order", "apply_refund", None]
    assert list(at.dataframe[0].value["id"]) == ["s1", "s2", "s3", "s4"]
    at = _ask("查一下订单 88231", plan_mode="plan")
    assert at.info[0].value == "Mode: Plan — chosen by a person: plan"  # in the UI language
    assert at.title[0].value == "Plan" and at.session_state["plan"] is not None


def test_a_refund_without_an_order_id_asks_first_then_plans_with_the_answer(runner):
    at = _ask("帮我把那台坏的扫地机退掉")
    assert at.session_state["plan"] is None
    question = at.text_input(key="clarify_answer_0")
    assert "订单号" in question.label
    question.input("88231")
    at.button(key="clarify_submit").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert "clarify_answer_0" not in {w.key for w in at.text_input}
    plan = at.session_state["plan"]
    lookup = next(s for s in plan.steps if s.tool == "query_order")
    assert lookup.args == {"order_id": "88231"}
    assert "88231" in at.text_area(key="request").value


def test_an_empty_clarify_answer_keeps_asking(runner):
    at = _ask("帮我把那台坏的扫地机退掉")
    at.button(key="clarify_submit").click().run()
    assert at.warning[0].value.startswith("Answer at least one question")
    assert at.text_input(key="clarify_answer_0") is not None
    assert at.session_state["plan"] is None


def test_adaptive_checkpoint_drops_the_refund_of_an_order_already_refunding(runner):
    at = _ask(SEED_000, checkpoint_policy="adaptive")
    assert at.selectbox(key="checkpoint_policy").value == "adaptive"
    at.button(key="approve_run").click().run()
    run_id = at.query_params["run"]
    assert runner.store.get_run(run_id).options["checkpoint"] == "adaptive"
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
    at = wait_for(at, lambda a: "Completed" in _status(a))
    change = next(e for e in at.expander if e.label.startswith("Version 1 → 2"))
    assert change.label == "Version 1 → 2 · checkpoint"
    text = " ".join(m.value for m in change.markdown)
    assert ":material/remove: ~~s3" in text and "66001" in change.caption[0].value
    assert "退款中" in block_text(keyed_block(at, "run_answer"))
    assert "Success check met" in " ".join(c.value for c in at.caption)


def test_a_follow_up_extends_a_finished_run_without_rerunning_old_steps(runner):
    scenario = next(s for s in SCENARIOS if s.id == "shop-refund")
    at = open_app(confirm_side_effects=False)
    at.text_area(key="request").input(scenario.request_zh).run()
    at.button(key="generate_plan").click().run()
    at.button(key="approve_run").click().run()
    run_id = at.query_params["run"]
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
    at = wait_for(at, lambda a: "Completed" in _status(a))
    before = runner.store.get_run(run_id).plan
    at.text_area(key="followup_text").input("另外帮我看看有没有新款耳机").run()
    at.button(key="followup_submit").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
    at = wait_for(at, lambda a: "Completed" in _status(a))
    after = runner.store.get_run(run_id).plan
    diff = diff_plans(before, after)
    assert diff.added and not diff.removed and after.version == before.version + 1
    for step in before.steps:
        if step.status == "completed" and step.tool:
            kept = after.step(step.id)
            assert (kept.result, kept.finished_at) == (step.result, step.finished_at)
    assert all(after.step(s.id).status == "completed" for s in diff.added)
    title = f"Version {before.version} → {after.version} · follow-up"
    change = next(e for e in at.expander if e.label == title)
    assert ":material/add:" in " ".join(m.value for m in change.markdown)
    assert at.text_area(key="followup_text").value == ""


def test_a_follow_up_needs_text(runner):
    at = _answered(_ask("查一下订单 88231"), runner)
    at.button(key="followup_submit").click().run()
    assert at.error[0].value == "Type what to add first."


def test_a_missed_success_check_is_shown_on_the_step_card(runner):
    from core.execution.scheduler import RunOptions
    from core.llm.engine import Engine
    from core.plan.model import Plan, Step
    from core.tools.toolsets import default_registry

    plan = Plan(goal="Is order 88231 refunding?", steps=[
        Step(id="s1", description="Look up order 88231", tool="query_order",
             args={"order_id": "88231"}, success_criteria="result['status'] == 'refunding'"),
    ])
    run_id = runner.start(plan.goal, plan, engine=Engine(default_registry()),
                          options=RunOptions(checkpoint="rigid"),
                          settings_public={"offline": True})
    runner.wait(run_id, DEFAULT_TIMEOUT_S)
    at = open_app("pages/run.py", query={"run": run_id})
    card = keyed_block(at, "step_card_s1")
    missed = [shown(w.value) for w in card.warning]
    assert missed == ["Success check missed: the expression \"result['status'] == "
                      "'refunding'\" is false"]


def test_with_an_llm_the_lessons_in_the_planner_prompt_are_shown(runner):
    import json

    from core.learning.lessons import LessonBook
    from tests.support.fake_openai import DEFAULT_KEY, FakeOpenAI, text

    lesson = "Check the order status before any refund."
    LessonBook(runner.store).add(lesson, ["query_order"], run_id="earlier-run")
    plan_json = json.dumps({"goal": "Refund 88231", "steps": [
        {"id": "s1", "description": "Look up order 88231", "tool": "query_order",
         "args": {"order_id": "88231"}, "depends_on": []}]})
    route_json = json.dumps({"mode": "plan", "reason": "a refund with a condition"})

    def responder(body: dict) -> object:
        system = body["messages"][0]["content"]
        return text(route_json if system.startswith("You route a user's request") else plan_json)

    with FakeOpenAI(responder=responder) as server:
        at = open_app(base_url=server.base_url, api_key=DEFAULT_KEY, offline_mode=False)
        at.text_area(key="request").input("Refund order 88231 if it was delivered").run()
        at = drafted(at.button(key="generate_plan").click().run())
        assert not at.exception and not at.error, [e.value for e in at.error]
        prompts = [json.dumps(b, ensure_ascii=False) for b in server.chat_bodies]
    assert sum(lesson in p for p in prompts) == 1  # the planner's prompt, not the router's
    used = next(e for e in at.expander if e.label.startswith("Lessons from earlier runs"))
    assert used.label.endswith("(1)")
    assert lesson in used.markdown[0].value
    assert at.session_state["planning_usage"].llm_calls == 2
