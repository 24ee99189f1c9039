"""Tests of follow-up requests: a finished plan gains new steps without re-running old ones."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from core.errors import ConfigError, PlanError
from core.execution.executor import execute_step
from core.llm.engine import Engine
from core.plan.diff import diff_plans
from core.plan.model import Plan
from core.planning.followup import extend_goal, extend_plan_request
from core.tools.registry import ToolRegistry
from core.tools.toolsets import default_registry
from demo.offline import offline_plan
from tests.support.fakes import ScriptedChatModel


class CountingRegistry(ToolRegistry):
    """A registry that counts the calls of each tool."""

    def __init__(self, source: ToolRegistry) -> None:
        super().__init__()
        for item in source:
            self.add(item)
        for pack in source.packs():
            self.add_pack(pack)
        self.calls: Counter[str] = Counter()

    def call(self, name: str, args: dict[str, Any], *, idempotency_key: str | None = None
             ) -> Any:
        self.calls[name] += 1
        return super().call(name, args, idempotency_key=idempotency_key)


def run_pending(plan: Plan, engine: Engine) -> None:
    for step in plan.topological_order():
        if step.status == "pending":
            outcome = execute_step(plan, step, engine)
            step.advance("running")
            step.advance(outcome.status)
            step.result, step.error = outcome.result, outcome.error


@pytest.fixture
def counting_registry() -> CountingRegistry:
    return CountingRegistry(default_registry({}))


def finished_plan(counting_registry: ToolRegistry, request: str) -> Plan:
    plan = offline_plan(request, counting_registry)
    run_pending(plan, Engine(counting_registry))
    assert plan.is_finished()
    return plan


def test_offline_follow_up_appends_steps_and_keeps_the_old_ones(
    counting_registry: CountingRegistry,
) -> None:
    engine = Engine(counting_registry)
    plan = finished_plan(counting_registry, "查一下订单 88231")
    before = counting_registry.calls.copy()
    extended = extend_plan_request(plan, "另外帮我看看有没有新款耳机", engine)[0]

    assert extended.version == plan.version + 1 and extended.id == plan.id
    assert extended.goal == "查一下订单 88231\n追加：另外帮我看看有没有新款耳机"
    for old in plan.steps:
        assert extended.step(old.id).model_dump() == old.model_dump()
    diff = diff_plans(plan, extended)
    assert not diff.removed and not diff.changed
    added = [s.id for s in diff.added]
    assert added == [f"s{n}" for n in range(3, 3 + len(added))]
    assert any(s.tool == "search_knowledge" for s in diff.added)
    synthesis = extended.synthesis_step()
    assert synthesis is not None and synthesis.id == added[-1]
    assert "s2" in synthesis.depends_on  # the old answer is context for the new one
    assert plan.step("s2").status == "completed"  # the old synthesis stays as history

    run_pending(extended, engine)
    assert counting_registry.calls["query_order"] == before["query_order"]  # not re-run
    assert counting_registry.calls["search_knowledge"] == before["search_knowledge"] + 1
    assert "耳机" in extended.steps[-1].result


def test_follow_up_in_english_and_validation(counting_registry: CountingRegistry) -> None:
    plan = finished_plan(counting_registry, "check order 88231")
    extended, usage = extend_plan_request(plan, "also track its parcel SF1234567890",
                                          Engine(counting_registry))
    assert usage.llm_calls == 0
    assert extended.goal.endswith("Follow-up: also track its parcel SF1234567890")
    assert [s.tool for s in extended.steps if s.status == "pending"] == [
        "query_logistics", None]
    assert extend_goal("g", "加上这个", "zh") == "g\n追加：加上这个"
    with pytest.raises(PlanError, match="empty"):
        extend_plan_request(plan, "  ", Engine(counting_registry))[0]
    with pytest.raises(ConfigError, match="is 4,001 characters long; the limit is 4,000"):
        extend_plan_request(plan, "also track its parcel " + "x" * 3979,
                            Engine(counting_registry))


def test_llm_follow_up_uses_old_results_and_fresh_ids(counting_registry: CountingRegistry) -> None:
    plan = finished_plan(counting_registry, "check order 88231")
    new_steps = {"steps": [
        {"id": "s3", "description": "Track the parcel", "tool": "query_logistics",
         "args": {"tracking_no": "{{s1.tracking_no}}"}, "depends_on": ["s1"]},
        {"id": "s4", "description": "Answer the follow-up", "tool": None,
         "depends_on": ["s3", "s2"]},
    ]}
    model = ScriptedChatModel(["```json\n" + json.dumps(new_steps) + "\n```"])
    extended, usage = extend_plan_request(plan, "also track the parcel",
                                          Engine(counting_registry, model))
    assert usage.llm_calls == 1
    assert extended.ids() == ["s1", "s2", "s3", "s4"]
    assert extended.step("s3").args == {"tracking_no": "{{s1.tracking_no}}"}
    sent = model.requests[0]
    assert sent["role"] == "planner" and sent["tools"] is None
    assert "from s3 on" in sent["messages"][0]["content"]
    assert "also track the parcel" in sent["messages"][1]["content"]
    assert "SF1234567890" in sent["messages"][1]["content"]  # old results are shown
    run_pending(extended, Engine(counting_registry))
    assert extended.step("s3").result["tracking_no"] == "SF1234567890"


def test_llm_follow_up_renumbers_and_retries(counting_registry: CountingRegistry) -> None:
    plan = finished_plan(counting_registry, "check order 88231")
    restarted = {"steps": [
        {"id": "s1", "description": "Search earbuds", "tool": "search_knowledge",
         "args": {"query": "earbuds"}},
        {"id": "s2", "description": "Answer", "tool": None, "depends_on": ["s1"]},
    ]}
    model = ScriptedChatModel(["no JSON here", json.dumps(restarted)])
    extended, usage = extend_plan_request(plan, "any new earbuds?",
                                          Engine(counting_registry, model))
    assert usage.llm_calls == 2
    assert extended.ids() == ["s1", "s2", "s3", "s4"]
    assert extended.step("s4").depends_on == ["s3"]
    assert extended.step("s1").tool == "query_order"
    assert "could not be used" in model.requests[1]["messages"][-1]["content"]


def test_llm_follow_up_gives_up_after_two_bad_answers(counting_registry: CountingRegistry) -> None:
    plan = finished_plan(counting_registry, "check order 88231")
    bad = json.dumps({"steps": [{"id": "s3", "description": "x", "tool": "no_such_tool"}]})
    model = ScriptedChatModel([bad, bad])
    with pytest.raises(PlanError, match="Extending the plan failed"):
        extend_plan_request(plan, "do more", Engine(counting_registry, model))[0]


def test_the_scheduler_runs_only_the_new_steps_of_a_follow_up(
    counting_registry: CountingRegistry,
) -> None:
    from core.execution.scheduler import run_plan

    engine = Engine(counting_registry)
    first = run_plan(offline_plan("查一下订单 88231", counting_registry), engine)
    assert first.status == "completed"
    before = counting_registry.calls.copy()
    extended = extend_plan_request(first.plan, "另外帮我看看有没有新款耳机", engine)[0]
    second = run_plan(extended, engine)
    assert second.status == "completed"
    assert counting_registry.calls["query_order"] == before["query_order"]
    assert counting_registry.calls["search_knowledge"] == before["search_knowledge"] + 1
    assert second.plan.step("s1").result == first.plan.step("s1").result
    assert "耳机" in (second.answer or "")
