"""A follow-up obeys the same honest status as a run: when every step it added failed, it
does not end ``completed`` and the command exits non-zero, however ignorable a lookup that
found nothing is beside other results."""

from __future__ import annotations

import json

from core.cli.main import main
from core.execution.options import RunOptions
from core.execution.scheduler import run_plan
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.tools.toolsets import default_registry


def run_json(capsys, *argv: str) -> tuple[int, dict]:
    code = main([*argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_a_follow_up_whose_lookup_failed_is_not_completed(capsys):
    code, first = run_json(capsys, "run", "check order 88231", "--offline", "--yes")
    assert code == 0 and first["status"] == "completed"
    code, result = run_json(capsys, "followup", first["run_id"], "check order 10086",
                            "--offline", "--yes")
    assert code == 1 and result["status"] == "failed"
    failed = [s for s in result["plan"]["steps"] if s["status"] == "failed"]
    assert [s["args"] for s in failed] == [{"order_id": "10086"}]
    assert "does not exist" in result["answer"]


def test_the_unknown_order_error_names_each_known_order_once(capsys):
    code = main(["call", "query_order", "--args", '{"order_id": "10086"}'])
    error = capsys.readouterr().err
    known = error.split("include ")[1].rstrip(")\n").split(", ")
    assert code == 1 and "88231" in known and len(known) == len(set(known))


def lookup(step_id: str, order_id: str) -> Step:
    return Step(id=step_id, description=f"Look up order {order_id}", tool="query_order",
                args={"order_id": order_id})


def answer(step_id: str, *sources: str) -> Step:
    return Step(id=step_id, description="Summarise the results", depends_on=list(sources))


def test_a_lookup_that_found_nothing_is_ignorable_only_beside_other_results():
    engine = Engine(default_registry({}))
    beside = Plan(goal="g", steps=[lookup("s1", "10086"), lookup("s2", "88231"),
                                   answer("s3", "s1", "s2")])
    alone = Plan(goal="g", steps=[lookup("s1", "10086"), answer("s2", "s1")])
    assert run_plan(beside, engine).status == "completed"
    assert run_plan(alone, engine).status == "failed"


def test_a_follow_up_does_not_stand_on_the_steps_of_the_request_it_extends():
    engine = Engine(default_registry({}))
    plan = Plan(goal="g", steps=[lookup("s1", "88231"), answer("s2", "s1")])
    assert run_plan(plan, engine).status == "completed"
    extended = plan.model_copy(deep=True, update={
        "version": 2, "steps": [*plan.steps, lookup("s3", "10086"), answer("s4", "s3", "s2")]})
    options = RunOptions(confirm_side_effects=False, earlier_steps=["s1", "s2"])
    outcome = run_plan(extended, engine, options=options)
    assert outcome.status == "failed"
    assert extended.step("s1").status == "completed"  # the earlier request's result stays
