"""``refine RUN_ID "…"`` and ``plan --refine FILE "…"`` against the fake model server."""

from __future__ import annotations

import json

import pytest

from core.cli.main import main
from core.plan.model import Plan, Step
from core.runs.executors import embedded_executor_id
from core.store.claims import HOLDER
from core.store.run_store import RunStore
from tests.support.cli import use_endpoint
from tests.support.fake_openai import text

ADD_POLICY = "Also search the knowledge base for the return policy"


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def finished_run(capsys) -> dict:
    code, out, err = run_cli(capsys, "run", "Check order 88231", "--offline", "--yes", "--json")
    assert code == 0, err
    return json.loads(out)


def revision_adding_policy(plan: dict, *, drop_args: bool = False) -> str:
    """The model's revision: the old steps (their arguments dropped when asked) plus a
    knowledge search before the answer."""
    steps = [dict(step) for step in plan["steps"]]
    if drop_args:
        for step in steps:
            step.pop("args", None)
    answer = steps.pop()
    search = {"id": "s9", "description": "Search the knowledge base for the return policy",
              "tool": "search_knowledge", "args": {"query": "return policy"},
              "depends_on": []}
    answer["depends_on"] = [*answer["depends_on"], "s9"]
    return json.dumps({"goal": plan["goal"], "steps": [*steps, search, answer]})


def test_refine_shows_the_diff_and_asks_before_running_and_no_records_nothing(
    capsys, monkeypatch, fake_openai,
):
    run = finished_run(capsys)
    use_endpoint(monkeypatch, fake_openai)
    fake_openai.script(text(revision_adding_policy(run["plan"])))
    asked: list[str] = []
    monkeypatch.setattr("builtins.input", lambda question: asked.append(question) or "n")

    code, out, _ = run_cli(capsys, "refine", run["run_id"], ADD_POLICY)

    assert code == 1
    assert "+ added s3 [search_knowledge]" in out  # numbered after the run's plan
    assert out.index("+ added s3") < out.index("Not executed.")
    assert asked == ["Execute? [y/N] "]
    assert [r.run_id for r in RunStore().list_runs()] == [run["run_id"]]


def test_refine_yes_runs_the_refined_plan_as_a_new_run_with_both_versions(
    capsys, monkeypatch, fake_openai,
):
    run = finished_run(capsys)
    use_endpoint(monkeypatch, fake_openai)
    fake_openai.script(text(revision_adding_policy(run["plan"])),
                       *[text("Order 88231 was delivered; returns within 7 days.")] * 3)

    code, out, err = run_cli(capsys, "refine", run["run_id"], ADD_POLICY, "--yes", "--json")

    assert code == 0, err
    result = json.loads(out)
    assert result["run_id"] != run["run_id"] and result["status"] == "completed"
    assert [s["id"] for s in result["plan"]["steps"]] == ["s1", "s3", "s2"]
    assert result["plan"]["steps"][0]["args"] == {"order_id": "88231"}
    versions = RunStore().plan_versions(result["run_id"])
    assert [v.version for v in versions] == [1, 2]
    assert versions[0].plan.ids() == ["s1", "s2"]


def test_plan_refine_keeps_a_hand_edited_argument_the_revision_dropped(
    capsys, monkeypatch, fake_openai, tmp_path,
):
    edited = Plan(goal="Check order 88231", steps=[
        Step(id="s1", description="Look up the order", tool="query_order",
             args={"order_id": "66001"}),  # edited by hand from 88231
        Step(id="s2", description="Answer the user", depends_on=["s1"]),
    ])
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(edited.canonical()), encoding="utf-8")
    use_endpoint(monkeypatch, fake_openai)
    fake_openai.script(text(revision_adding_policy(edited.canonical(), drop_args=True)))

    code, out, err = run_cli(capsys, "plan", "--refine", str(path), ADD_POLICY, "--json")

    assert code == 0, err
    refined = json.loads(out)
    assert refined["steps"][0]["args"] == {"order_id": "66001"}
    assert [s["id"] for s in refined["steps"]] == ["s1", "s3", "s2"]
    assert "+ added s3 [search_knowledge]" in err


@pytest.mark.parametrize("argv, says", [
    (("refine", "nosuchrun", ADD_POLICY), "nosuchrun"),
    (("refine", "{run}", "   "), "sentence is empty"),
])
def test_bad_refine_input_is_one_line_and_records_nothing(capsys, argv, says):
    run = finished_run(capsys)

    code, _, err = run_cli(capsys, *(arg.format(run=run["run_id"]) for arg in argv))

    assert code == 1 and says in err and len(err.strip().splitlines()) == 1
    assert [r.run_id for r in RunStore().list_runs()] == [run["run_id"]]


def test_refine_without_a_model_says_refining_needs_one(capsys):
    run = finished_run(capsys)

    code, _, err = run_cli(capsys, "refine", run["run_id"], ADD_POLICY)

    assert code == 1 and "Refining a plan needs a model" in err
    assert len(err.strip().splitlines()) == 1


def test_refine_refuses_a_run_that_is_being_executed(capsys, monkeypatch, fake_openai,
                                                     launched):
    use_endpoint(monkeypatch, fake_openai)
    store = RunStore()
    plan = Plan(goal="Check order 88231", steps=[Step(id="s1", description="Answer")])
    # recorded a moment ago by a live process (this one), which is starting its workflow
    run_id = store.create_run("Check order 88231", plan=plan, workflow_id="starting-now",
                              options={HOLDER: embedded_executor_id()})
    store.close()

    code, _, err = run_cli(capsys, "refine", run_id, ADD_POLICY)

    assert code == 1 and "being executed" in err and len(err.strip().splitlines()) == 1
    assert fake_openai.chat_bodies == []  # refused before the model was asked
