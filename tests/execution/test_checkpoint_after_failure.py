"""A checkpoint may not drop pending steps while a step of the current version failed.

churn-count-en on the local 1.5B model: the SQL lookup that answered the question failed
(a column that does not exist), an adaptive checkpoint after another step said "the goal
is already met", and the run ended ``completed`` answering "1" instead of 260. The
checkpoint's prompt lists only completed and pending steps, so it judged blind to the
failure; the failure replan is what recovers it.
"""

from __future__ import annotations

import json

import pytest

from core.errors import ToolExecutionError
from core.execution.scheduler import RunOptions, run_plan
from core.llm.engine import Engine
from core.plan.model import Plan
from core.tools.registry import ToolRegistry, make_tool
from tests.support.fakes import ScriptedChatModel, answer, lookup

GOAL_MET = "the goal is already met"


def registry(calls: list[str]) -> ToolRegistry:
    """A lookup tool: "bad" fails as the churn SQL did, "one" returns 1, "churn" 260."""
    values = {"one": 1, "churn": 260}

    def lookup(key: str) -> dict:
        """Look something up.

        Args:
            key: what to look up.
        """
        calls.append(key)
        if key == "bad":
            raise ToolExecutionError("run_sql: bad SQL (no such column: churned_at)")
        return {"count": values.get(key, 0)}

    tools = ToolRegistry()
    tools.add(make_tool(lookup, read_only=True))
    return tools


def churn_plan(goal: str = "How many subscriptions were cancelled in Q1 2026?") -> Plan:
    """s1 (the answering lookup) fails, s2 completes beside it, s3 needs s1."""
    return Plan(goal=goal, steps=[
        lookup("s1", "bad"), lookup("s2", "one"), lookup("s3", "total", "s1"),
        answer("s4", "s2", "s3")])


def from_context(request: dict) -> str:
    """The answer step's reply: the count its context holds (260 only if it was found)."""
    return "260 subscriptions" if "260" in json.dumps(request["messages"]) else "1 subscription"


def small_model_replanner(reasons: list[str]):
    """Asked by the checkpoint, it only answers from what completed (as the small model
    did); asked after the failure, it looks the churn up again."""

    def replanner(old: Plan, reason: str, _engine: Engine) -> Plan:
        reasons.append(reason)
        kept = [s.model_copy(deep=True) for s in old.steps if s.status == "completed"]
        number = int(old.next_step_id()[1:])
        new = [] if GOAL_MET in reason else [lookup(f"s{number}", "churn")]
        final = answer(f"s{number + len(new)}", *(s.id for s in [*kept, *new]))
        return Plan(id=old.id, goal=old.goal, version=old.version + 1,
                    steps=[*kept, *new, final])

    return replanner


@pytest.mark.parametrize("decision", [
    {"can_finish_early": True, "reason": GOAL_MET},
    {"needs_replan": True, "reason": GOAL_MET, "updated_pending_steps": None},
    {"needs_replan": True, "reason": GOAL_MET, "updated_pending_steps": [
        {"id": "s4", "description": "answer the user", "tool": None, "depends_on": ["s2"]}]},
], ids=["finish-early", "replan-without-steps", "pending-steps-left-out"])
def test_a_checkpoint_after_a_failure_drops_nothing(decision):
    calls: list[str] = []
    reasons: list[str] = []
    model = ScriptedChatModel(replies=[json.dumps(decision), from_context])
    outcome = run_plan(churn_plan(), Engine(registry(calls), model),
                       replanner=small_model_replanner(reasons),
                       options=RunOptions(checkpoint="adaptive", max_replans=1))
    assert (outcome.status, outcome.answer) == ("completed", "260 subscriptions")
    assert "churn" in calls  # the failure replan looked it up again
    assert [v.version for v in outcome.versions] == [1, 2]  # v2 is the failure replan's
    assert "no such column" in reasons[-1]
    refusal = [w for w in outcome.warnings if "checkpoint after s2 was refused" in w]
    assert len(refusal) == 1 and "s1" in refusal[0] and "s3" in refusal[0]
    assert GOAL_MET in refusal[0]
    assert "Plan adjusted" not in outcome.answer


def test_the_refusal_is_worded_in_the_goals_language():
    decision = {"can_finish_early": True, "reason": "目标已经达成"}
    model = ScriptedChatModel(replies=[json.dumps(decision), "260 个"])
    outcome = run_plan(churn_plan("2026 年第一季度有多少订阅被取消？"),
                       Engine(registry([]), model), replanner=small_model_replanner([]),
                       options=RunOptions(checkpoint="adaptive", max_replans=1))
    assert outcome.status == "completed"
    assert any("s2 之后的检查点被拒绝" in w and "目标已经达成" in w for w in outcome.warnings)


def test_without_a_failure_a_checkpoint_may_still_finish_early():
    calls: list[str] = []
    decision = {"can_finish_early": True, "reason": GOAL_MET}
    model = ScriptedChatModel(replies=[json.dumps(decision), "1"])
    plan = Plan(goal="g", steps=[lookup("s1", "one"), lookup("s2", "churn", "s1"),
                                 answer("s3", "s1", "s2")])
    outcome = run_plan(plan, Engine(registry(calls), model),
                       options=RunOptions(checkpoint="adaptive"))
    assert outcome.status == "completed" and calls == ["one"]
    assert [v.version for v in outcome.versions] == [1, 2]
    assert not any("refused" in w for w in outcome.warnings)
