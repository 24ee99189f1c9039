"""An answer that leaves out a result it is there for is asked for once more (weak models)."""

from __future__ import annotations

from core.execution.executor import execute_step
from core.execution.left_out import left_out_results
from core.llm.engine import Engine
from core.llm.providers import PROFILES
from core.plan.model import Plan, Step
from core.tools.registry import ToolRegistry, make_tool
from tests.support.fakes import ScriptedChatModel

GOAL = "/srv/repo 仓库最后一次提交的说明是什么？东京现在几点？"
LOG = ("Commit history:\nCommit: 3e2c02e0749e\nAuthor: PlanBoard\n"
       "Date: 2026-12-03 01:12:09+00:00\n"
       "Message: Teach the parcel tracker to read the carrier's Tokyo timestamps\n")
TIME_ONLY = "东京现在是10:12。"
BOTH = "最后一次提交的说明是 Teach the parcel tracker to read the carrier's Tokyo timestamps。" + (
    "东京现在是10:12。")


class Hosted(ScriptedChatModel):
    profile = PROFILES["openai"]


def _plan() -> Plan:
    return Plan(goal=GOAL, language="zh", steps=[
        Step(id="s1", description="获取东京现在的时间", tool="time__get_current_time",
             args={"timezone": "Asia/Tokyo"}, status="completed",
             result={"timezone": "Asia/Tokyo", "datetime": "2026-12-03T10:12:59+09:00"}),
        Step(id="s2", description="获取最后一次提交的说明", tool="git__git_log",
             args={"repo_path": "/srv/repo", "max_count": 1}, status="completed", result=LOG),
        Step(id="s3", description="综合以上结果，给出最终回复", depends_on=["s1", "s2"])])


def _registry() -> ToolRegistry:
    registry = ToolRegistry()

    def time__get_current_time(timezone: str) -> dict:
        """The time in a zone."""
        return {}

    def git__git_log(repo_path: str, max_count: int = 10) -> str:
        """The commit log."""
        return ""

    registry.add(make_tool(time__get_current_time, read_only=True))
    registry.add(make_tool(git__git_log, read_only=True))
    return registry


def _engine(model: ScriptedChatModel) -> Engine:
    return Engine(registry=_registry(), model=model)


def test_an_answer_that_shares_nothing_with_a_result_leaves_it_out():
    plan, registry = _plan(), _registry()
    left_out = left_out_results(TIME_ONLY, plan, plan.step("s3"), registry)
    assert [step.id for step in left_out] == ["s2"]
    assert left_out_results(BOTH, plan, plan.step("s3"), registry) == []


def test_a_side_effects_result_is_left_to_the_required_notes():
    plan = _plan()
    plan.step("s2").tool = "git__git_commit"  # not in the registry: it may have an effect
    assert left_out_results(TIME_ONLY, plan, plan.step("s3"), _registry()) == []


def test_a_result_another_step_reads_or_a_tiny_one_is_not_counted():
    plan = _plan()
    plan.steps.insert(2, Step(id="s4", description="read it", tool="time__get_current_time",
                              depends_on=["s2"], status="completed", result={"ok": True}))
    plan.step("s3").depends_on.append("s4")
    # s2 is read by s4, and s4's result has too little of its own to tell
    assert left_out_results(TIME_ONLY, plan, plan.step("s3"), _registry()) == []


def test_the_model_is_asked_once_more_naming_what_was_left_out():
    model = ScriptedChatModel(replies=[TIME_ONLY, BOTH])
    plan = _plan()
    outcome = execute_step(plan, plan.step("s3"), _engine(model))
    assert outcome.status == "completed" and outcome.result == BOTH
    assert len(model.requests) == 2
    follow_up = model.requests[1]["messages"]
    assert follow_up[-2] == {"role": "assistant", "content": TIME_ONLY}
    assert "- s2 (获取最后一次提交的说明)" in follow_up[-1]["content"]
    assert "the answer left out what s2 found; the model was asked again" in outcome.notes


def test_an_answer_asked_again_that_still_leaves_it_out_keeps_the_first_and_quotes_it():
    model = ScriptedChatModel(replies=[TIME_ONLY, "东京时间是上午十点。"])
    plan = _plan()
    outcome = execute_step(plan, plan.step("s3"), _engine(model))
    assert outcome.status == "completed" and outcome.result.startswith(TIME_ONLY + "\n\n")
    assert ("⚠️ 以上回答没有提到 s2（获取最后一次提交的说明）的结果：Commit history: "
            "Commit: 3e2c02e0749e") in outcome.result
    assert "Teach the parcel tracker" in outcome.result  # what it found, there to read
    assert any("did not add it" in note for note in outcome.notes)


def test_a_hosted_model_is_not_asked_again():
    model = Hosted(replies=[TIME_ONLY])
    plan = _plan()
    outcome = execute_step(plan, plan.step("s3"), _engine(model))
    assert outcome.result == TIME_ONLY and len(model.requests) == 1


def test_a_failing_second_call_keeps_the_first_answer_and_quotes_what_it_left_out():
    from core.errors import LLMBudgetError

    model = ScriptedChatModel(replies=[TIME_ONLY, LLMBudgetError("the plan's model calls ran out")])
    plan = _plan()
    outcome = execute_step(plan, plan.step("s3"), _engine(model))
    assert outcome.status == "completed" and outcome.result.startswith(TIME_ONLY)
    assert "Teach the parcel tracker" in outcome.result


def test_a_result_retold_in_the_other_language_is_not_called_left_out():
    """Translated, a result keeps none of its words: without a number or id of its own,
    whether the answer used it cannot be told."""
    plan = _plan()
    plan.step("s2").result = "errors come from a dependency, not load: keep the replicas"
    retold = "东京现在是10:12。错误来自依赖而不是负载，副本数保持不变。"
    assert left_out_results(retold, plan, plan.step("s3"), _registry()) == []
    plan.step("s2").result += " (incident INC-40211)"  # an id of its own: it can be told
    assert [s.id for s in left_out_results(retold, plan, plan.step("s3"), _registry())] == [
        "s2"]
