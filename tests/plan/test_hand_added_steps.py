"""A step added by hand keeps the plan's promises: offline, a tool step that leaves out only
optional arguments runs with the tool's defaults (no model call, as the plan review says);
one that leaves out a required argument is a validation problem before approval, not a
failure after it; and the lesson of such a failure speaks of the tool step it was."""

from __future__ import annotations

import json
from pathlib import Path

from core.base.messages import render
from core.cli.main import main
from core.execution.executor import execute_step, predict_llm_calls
from core.learning.reflection import reflect_offline
from core.llm.engine import Engine
from core.plan.edit import plan_to_rows, rows_to_plan
from core.plan.model import Plan, Step
from core.tools.toolsets import default_registry
from tests.support.cli import write_plan

BASE = Plan(goal="what time is it, and how is order 88231", steps=[
    Step(id="s1", description="Look up order 88231", tool="query_order",
         args={"order_id": "88231"}),
    Step(id="s2", description="Summarise the results", depends_on=["s1"]),
])


def added_row(tool: str, description: str) -> dict[str, str]:
    """A row typed into the plan table's empty last line: no id, the args cell left empty."""
    return {"id": "", "description": description, "tool": tool, "args": "",
            "depends_on": "", "condition": "", "success_criteria": ""}


def test_a_hand_added_clock_step_runs_offline_with_its_default_arguments():
    registry = default_registry({})
    rows = plan_to_rows(BASE)
    plan, errors = rows_to_plan(BASE, [rows[0], added_row("get_current_time", "Get the time"),
                                       rows[1]])
    added = plan.step("s3")
    assert errors == [] and added.tool == "get_current_time" and added.args is None
    assert plan.validate(registry, can_infer=False) == []
    assert predict_llm_calls(plan, registry, offline=True) == 0
    outcome = execute_step(plan, added, Engine(registry))
    assert outcome.status == "completed" and outcome.mode == "direct"
    assert outcome.result["timezone"] == "Asia/Shanghai"  # the tool's default
    assert outcome.usage.llm_calls == 0


def test_a_required_argument_left_out_is_a_problem_offline_only():
    registry = default_registry({})
    rows = plan_to_rows(BASE)
    plan, _ = rows_to_plan(BASE, [*rows, added_row("query_order", "Look up another order")])
    problems = plan.validate(registry, can_infer=False)
    assert len(problems) == 1 and str(problems[0]).startswith("s3 needs arguments for query_order")
    assert "order_id" in str(problems[0])
    assert "s3" in render(problems[0], "zh")
    assert plan.validate(registry) == []  # a model fills it in at run time


def test_a_finished_step_is_not_judged_again():
    registry = default_registry({})
    done = Step(id="s1", description="Look up the order", tool="query_order", args=None)
    done.advance("running")
    done.advance("completed")
    plan = Plan(goal="g", steps=[done, Step(id="s2", description="Answer", depends_on=["s1"])])
    assert plan.validate(registry, can_infer=False) == []


def clock_plan(tmp_path: Path, tool: str) -> str:
    """A plan file whose s1 calls ``tool`` with no arguments, then answers."""
    return write_plan(tmp_path, [
        {"id": "s1", "description": "Get the current time", "tool": tool, "args": None},
        {"id": "s2", "description": "Tell the user", "tool": None, "depends_on": ["s1"]},
    ], goal="what time is it")


def test_the_cli_runs_a_clock_step_without_arguments_offline(capsys, tmp_path):
    code = main(["run", "--plan", clock_plan(tmp_path, "get_current_time"), "--offline",
                 "--yes", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0 and result["status"] == "completed"
    assert result["plan"]["steps"][0]["result"]["timezone"] == "Asia/Shanghai"
    assert result["usage"]["llm_calls"] == 0


def test_the_cli_refuses_before_approval_a_step_whose_arguments_nothing_can_fill(
        capsys, tmp_path, store):
    code = main(["run", "--plan", clock_plan(tmp_path, "query_order"), "--offline", "--yes"])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1
    assert "s1 needs arguments for query_order (missing: order_id)" in err
    assert store.list_runs() == []


def test_the_lesson_of_a_tool_step_without_its_arguments_names_the_tool():
    step = Step(id="s1", description="Look up the order", tool="query_order",
                status="failed",
                error="s1 needs arguments for query_order (missing: order_id) and no LLM is "
                      "configured to fill them in; write them into the step's args")
    plan = Plan(goal="check my order", steps=[step, Step(id="s2", description="Answer",
                                                         depends_on=["s1"])])
    reflection = reflect_offline(plan)
    assert "reasoning step" not in reflection.lesson
    assert "query_order" in reflection.lesson and "Look up the order" in reflection.lesson
    assert "args" in reflection.retry_hint
