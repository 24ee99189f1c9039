"""The model calls a plan may spend: counted, configurable, and an honest failure past them."""

from __future__ import annotations

import pytest

from core.base.messages import render
from core.base.usage import Usage
from core.errors import ConfigError, LLMBudgetError
from core.execution.options import RunOptions, default_model_calls
from core.execution.scheduler import run_plan
from core.llm.budget import DEFAULT_MODEL_CALLS, BudgetedModel, CallBudget, budgeted
from core.llm.engine import Engine
from core.llm.providers import PROFILES
from core.plan.model import Plan, Step
from core.prompts.adaptive import REFLECTION_SYSTEM
from core.runs.runner import Runner
from core.tools.builtin import register_builtin_tools
from core.tools.registry import ToolRegistry
from tests.support.fakes import ScriptedChatModel
from tests.support.waiting import DEFAULT_TIMEOUT_S

REFLECTION_START = REFLECTION_SYSTEM.template[:30]


class Profiled(ScriptedChatModel):
    profile = PROFILES["llamacpp"]


def engine_with(*replies) -> tuple[Engine, ScriptedChatModel]:
    registry = ToolRegistry()
    register_builtin_tools(registry)
    model = Profiled(replies=list(replies))
    return Engine(registry=registry, model=model), model


def reasoning_plan() -> Plan:
    """Three model calls in order: two reasoning steps (one ReAct round each), the answer."""
    return Plan(goal="think twice", steps=[
        Step(id="s1", description="think once"),
        Step(id="s2", description="think again", depends_on=["s1"]),
        Step(id="s3", description="answer", depends_on=["s1", "s2"])])


def test_a_budget_counts_calls_and_refuses_the_one_past_it():
    budget = CallBudget(2, spent=1)
    budget.spend()
    with pytest.raises(LLMBudgetError) as raised:
        budget.spend()
    assert budget.spent == 2
    assert "all 2 model calls" in str(raised.value) and "PLANBOARD_MAX_MODEL_CALLS" in str(
        raised.value)
    assert render(raised.value, "zh").startswith("本次运行已用完计划可用的全部 2 次大模型调用")


def test_the_budgeted_model_is_the_model_to_the_engine():
    engine, model = engine_with("ok")
    wrapped = budgeted(engine, 1)
    assert isinstance(wrapped.model, BudgetedModel) and wrapped.registry is engine.registry
    assert wrapped.model.profile.prompt_style == "compact"  # the planner still reads it
    assert wrapped.model.chat([{"role": "user", "content": "hi"}]).content == "ok"
    with pytest.raises(LLMBudgetError):
        wrapped.model.chat([{"role": "user", "content": "again"}])
    assert len(model.requests) == 1  # the refused call never reached the model
    assert budgeted(wrapped, 10) is wrapped  # one budget: a second wrap changes nothing
    assert budgeted(Engine(registry=engine.registry), 1).model is None


def test_the_budget_comes_from_the_environment_or_the_default():
    assert default_model_calls({}) == DEFAULT_MODEL_CALLS
    assert default_model_calls({"PLANBOARD_MAX_MODEL_CALLS": " 12 "}) == 12
    for bad in ("0", "-3", "many"):
        with pytest.raises(ConfigError, match=f"PLANBOARD_MAX_MODEL_CALLS={bad} is not a whole"):
            default_model_calls({"PLANBOARD_MAX_MODEL_CALLS": bad})


def test_the_run_options_read_it(monkeypatch):
    monkeypatch.setenv("PLANBOARD_MAX_MODEL_CALLS", "7")
    assert RunOptions().max_model_calls == 7
    assert RunOptions(max_model_calls=3).max_model_calls == 3


def test_a_plan_within_its_budget_runs_as_before():
    engine, model = engine_with("first thought", "second thought", "the answer")
    outcome = run_plan(reasoning_plan(), engine, options=RunOptions(max_model_calls=3))
    assert outcome.status == "completed" and outcome.answer == "the answer"
    assert len(model.requests) == 3


def test_past_its_budget_a_plan_fails_saying_so_and_keeps_what_it_found():
    engine, model = engine_with("first thought", "never asked", "never asked")
    outcome = run_plan(reasoning_plan(), engine,
                       options=RunOptions(max_model_calls=1, checkpoint="rigid"))
    steps = {step.id: step for step in outcome.plan.steps}
    assert len(model.requests) == 1
    assert outcome.status == "failed"
    assert steps["s1"].status == "completed" and steps["s1"].result == "first thought"
    assert steps["s2"].status == "failed" and "all 1 model calls" in steps["s2"].error
    assert steps["s3"].status != "completed"  # no answer was written without a call
    assert "first thought" in outcome.answer  # what it found is in the answer


def test_a_replan_spends_the_same_budget():
    engine, model = engine_with("first thought", "never asked")
    outcome = run_plan(reasoning_plan(), engine, options=RunOptions(max_model_calls=1))
    assert len(model.requests) == 1  # the replan after s2's failure was not made either
    assert outcome.status == "failed"
    assert any("model calls" in warning for warning in outcome.warnings)


def test_a_run_counts_its_planning_calls_against_the_budget(launched, runner: Runner):
    engine, model = engine_with("first thought", "never asked", "never asked")
    run_id = runner.start("think twice", reasoning_plan(), engine=engine,
                          options=RunOptions(max_model_calls=3, checkpoint="rigid",
                                             confirm_side_effects=False),
                          planning_usage=Usage(llm_calls=2))
    record = runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S)
    assert record.status == "failed"
    plan_calls = [r for r in model.requests  # the reflection afterwards is not the plan's
                  if not r["messages"][0]["content"].startswith(REFLECTION_START)]
    assert len(plan_calls) == 1  # 3 calls, 2 of them spent on planning
    failed = next(step for step in record.plan.steps if step.id == "s2")
    assert "all 3 model calls" in failed.error
