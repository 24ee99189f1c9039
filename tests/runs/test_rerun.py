"""Re-running a finished run from one step (``python -m core rerun``): the steps before it
keep their results and are not run again (the counted tools and the fake model server say
so), the step and its descendants run, the run gains a version, and bad input records
nothing."""

from __future__ import annotations

import json
import threading

import pytest

from core.cli.main import main
from core.errors import PlanError
from core.plan.dag import descendants
from core.plan.model import Plan
from core.plan.rerun import StepEdit, rerun_from
from core.store.run_store import RunStore
from tests.support.cli import use_endpoint
from tests.support.fake_openai import text
from tests.support.waiting import DEFAULT_TIMEOUT_S, wait_until
from tests.toolsets import counted

pytestmark = pytest.mark.usefixtures("dbos_of_the_module")

FIRST_ANSWER = "Ticket T-7 was refunded; the help desk is open from 9:00 to 17:00."
AGAIN_ANSWER = "Ticket T-7 is still waiting for parts; the help desk opens at 9:00."
FIVE_STEPS = {
    "goal": "Refund ticket T-7 and tell the customer where their ticket stands",
    "steps": [
        {"id": "s1", "description": "Read the refund policy", "tool": "search_handbook",
         "args": {"query": "refund policy"}},
        {"id": "s2", "description": "Refund ticket T-7", "tool": "refund_ticket",
         "args": {"ticket_id": "T-7", "amount": 20}, "depends_on": ["s1"]},
        {"id": "s3", "description": "Look up ticket T-7", "tool": "lookup_ticket",
         "args": {"ticket_id": "T-7"}, "depends_on": ["s1"]},
        {"id": "s4", "description": "Search the handbook for the ticket's status",
         "tool": "search_handbook", "args": {"query": "{{s3.status}}"}, "depends_on": ["s3"]},
        {"id": "s5", "description": "Answer the customer", "tool": None,
         "depends_on": ["s2", "s4"]},
    ],
}


def five_step_plan() -> Plan:
    return Plan.model_validate(FIVE_STEPS)


# ---- the new version ------------------------------------------------------------------------


def finished(plan: Plan) -> Plan:
    for step in plan.steps:
        step.advance("running")
        step.advance("completed")
        step.result, step.llm_calls = {"from": step.id}, 1
    return plan


def test_descendants_are_the_step_and_every_step_reached_through_dependents():
    graph = five_step_plan().dependency_graph()
    assert descendants(graph, ["s3"]) == ["s3", "s4", "s5"]
    assert descendants(graph, ["s1"]) == ["s1", "s2", "s3", "s5", "s4"]
    assert descendants(graph, ["s5"]) == ["s5"]


def test_a_rerun_version_keeps_the_upstream_steps_and_starts_the_rest_afresh():
    plan = finished(five_step_plan())
    new = rerun_from(plan, "s3", StepEdit(args={"ticket_id": "T-9"}, condition=""))
    assert new.version == plan.version + 1 and new.id == plan.id and new.goal == plan.goal
    for kept in ("s1", "s2"):
        assert new.step(kept).model_dump() == plan.step(kept).model_dump()
    for fresh in ("s3", "s4", "s5"):
        step = new.step(fresh)
        assert (step.status, step.result, step.attempts, step.llm_calls, step.started_at) == (
            "pending", None, 0, 0, None)
    assert new.step("s3").args == {"ticket_id": "T-9"} and new.step("s3").condition is None
    assert new.step("s4").args == plan.step("s4").args  # only the chosen step is edited
    assert plan.step("s3").status == "completed"  # the old version is left as it was


def test_a_rerun_from_an_unknown_step_names_the_steps_there_are():
    with pytest.raises(PlanError, match="no step s9 to re-run from; the plan's steps are: "
                                        "s1, s2, s3, s4, s5"):
        rerun_from(five_step_plan(), "s9")


def test_an_edit_takes_only_the_fields_a_person_may_change():
    with pytest.raises(ValueError, match="status"):
        StepEdit.model_validate({"status": "pending"})


# ---- from the command line ------------------------------------------------------------------


def run_json(capsys, *argv: str, expect: int = 0) -> dict:
    code = main([*argv, "--json"])
    captured = capsys.readouterr()
    assert code == expect, captured.err
    return json.loads(captured.out)


@pytest.fixture
def endpoint(fake_openai, monkeypatch, tmp_path):
    """The fake model server as the endpoint; the counted tools and the counted refund."""
    use_endpoint(monkeypatch, fake_openai)
    monkeypatch.setenv("PLANBOARD_TOOLSETS", "tests.toolsets.counted,tests.toolsets.refunds")
    monkeypatch.setenv(counted.CALLS_ENV, str(tmp_path / "calls.txt"))
    return fake_openai


@pytest.fixture
def finished_run(endpoint, capsys, tmp_path) -> dict:
    """The five steps run once to completion (every tool called once, one model call)."""
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(FIVE_STEPS), encoding="utf-8")
    endpoint.script(text(FIRST_ANSWER))
    result = run_json(capsys, "run", "--plan", str(plan_file), "--yes")
    assert result["status"] == "completed" and result["answer"].startswith(FIRST_ANSWER)
    assert sorted(counted.calls()) == ["lookup_ticket", "refund_ticket", "search_handbook",
                                       "search_handbook"]  # s2 and s3 run side by side
    assert len(endpoint.chat_bodies) == 1
    return result


def steps_of(result: dict) -> dict[str, dict]:
    return {step["id"]: step for step in result["plan"]["steps"]}


def test_rerun_from_s3_runs_only_s3_and_its_descendants_and_repeats_no_refund(
        finished_run, endpoint, capsys):
    run_id = finished_run["run_id"]
    endpoint.script(text(AGAIN_ANSWER))
    result = run_json(capsys, "rerun", run_id, "--from", "s3", "--yes")
    assert result["run_id"] == run_id and result["status"] == "completed"
    assert result["versions"] == 2 and result["answer"].startswith(AGAIN_ANSWER)
    # s3 and s4 called their tools once more; s1's search and s2's refund were not repeated
    assert counted.calls()[4:] == ["lookup_ticket", "search_handbook"]
    (answer_call,) = endpoint.chat_bodies[1:]  # s5, the answer: the one model call
    assert "tools" not in answer_call
    before, after = steps_of(finished_run), steps_of(result)
    for kept in ("s1", "s2"):
        assert after[kept] == before[kept]  # results, times and attempts as recorded
    for ran in ("s3", "s4", "s5"):
        assert after[ran]["status"] == "completed"
        assert after[ran]["started_at"] > before["s5"]["finished_at"]
    store = RunStore()
    versions = store.plan_versions(run_id)
    kinds = [event.kind for event in store.events(run_id)]
    store.close()
    assert [(v.version, v.source) for v in versions][-1] == (2, "rerun")
    assert versions[-1].reason == "re-run from s3"
    assert kinds.count("replanned") == 1 and kinds.count("step_started") == 5 + 3


def test_rerun_with_args_runs_the_edited_step_with_them(finished_run, endpoint, capsys):
    endpoint.script(text(AGAIN_ANSWER))
    code = main(["rerun", finished_run["run_id"], "--from", "s3", "--args",
                 '{"ticket_id": "T-9"}', "--yes"])
    out = capsys.readouterr().out
    assert code == 0
    assert "~ changed s3: args: {\"ticket_id\": \"T-7\"} → {\"ticket_id\": \"T-9\"}" in out
    assert "Runs again: s3, s4, s5. Kept with their results (not run again): s1, s2." in out
    store = RunStore()
    plan = store.get_run(finished_run["run_id"]).plan
    store.close()
    assert plan is not None and plan.version == 2
    s3 = plan.step("s3")
    assert s3.args == s3.resolved_args == {"ticket_id": "T-9"}
    assert s3.result == {"ticket_id": "T-9", "status": "waiting for parts"}
    assert "T-9" in json.dumps(endpoint.chat_bodies[-1], ensure_ascii=False)  # s5 read it
    assert counted.calls()[4:] == ["lookup_ticket", "search_handbook"]


def test_a_side_effect_downstream_is_shown_and_asked_for_again(
        finished_run, endpoint, capsys, monkeypatch):
    run_id = finished_run["run_id"]
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    assert main(["rerun", run_id, "--from", "s1"]) == 1
    out = capsys.readouterr().out
    assert "s2 calls refund_ticket, which has a side effect: it runs again." in out
    assert "Not re-run; nothing was recorded." in out
    assert counted.calls()[4:] == []
    endpoint.script(text(AGAIN_ANSWER))
    monkeypatch.setattr("builtins.input", lambda prompt: "y")
    assert main(["rerun", run_id, "--from", "s1"]) == 0
    assert sorted(counted.calls()[4:]) == sorted(["search_handbook", "refund_ticket",
                                                  "lookup_ticket", "search_handbook"])


def test_a_cancelled_run_can_be_rerun(finished_run, endpoint, capsys):
    run_id = finished_run["run_id"]
    store = RunStore()
    store.set_status(run_id, "cancelled", reopen=True)  # as if cancelled as it ended
    store.close()
    endpoint.script(text(AGAIN_ANSWER))
    assert run_json(capsys, "rerun", run_id, "--from", "s5", "--yes")["status"] == "completed"
    assert counted.calls()[4:] == []  # only the answer ran again: no tool was called


def recorded(run_id: str) -> tuple:
    """What the store holds of a run: status, versions and events."""
    store = RunStore()
    try:
        return (store.get_run(run_id).status, len(store.plan_versions(run_id)),
                len(store.events(run_id)))
    finally:
        store.close()


@pytest.mark.parametrize(("argv", "said"), [
    (["--from", "s9"], "there is no step s9 to re-run from; the plan's steps are: s1, s2"),
    (["--from", "s3", "--args", "{oops"], "--args is not valid JSON"),
    (["--from", "s3", "--args", '["T-9"]'], "--args must be a JSON object"),
    (["--from", "s3", "--args", '{"ticket": "T-9"}'],
     "s3 leaves out ticket_id, which lookup_ticket requires; give every required"),
    (["--from", "s2", "--args", '{"ticket_id": "T-7", "amount": "lots"}'],
     "s2 argument 'amount' for refund_ticket"),
    (["--from", "s3", "--args", '{"ticket_id": "T-9", "urgent": true}'],
     "s3 gives lookup_ticket an unknown argument 'urgent'"),
    (["--from", "s3", "--tool", "no_such_tool"], "s3 uses"),
])
def test_bad_input_says_so_in_one_line_and_records_nothing(finished_run, endpoint, capsys,
                                                           argv, said):
    run_id = finished_run["run_id"]
    before = recorded(run_id)
    assert main(["rerun", run_id, *argv, "--yes"]) == 1
    err = capsys.readouterr().err
    assert said in err and err.startswith("error: ") and len(err.strip().splitlines()) == 1
    assert recorded(run_id) == before
    assert counted.calls()[4:] == [] and len(endpoint.chat_bodies) == 1


def test_an_unknown_run_says_how_to_list_them(endpoint, capsys):
    assert main(["rerun", "nope", "--from", "s3", "--yes"]) == 1
    err = capsys.readouterr().err
    assert err == "error: no run 'nope'; list the runs with: python -m core runs\n"


def test_a_run_still_running_is_not_rerun(endpoint, runner, store, capsys):
    from core.execution.options import RunOptions
    from core.llm.engine import engine_for
    from core.runs.session import public_settings
    from core.tools.toolsets import default_registry

    answering = threading.Event()
    endpoint.responder = lambda body: (answering.wait(DEFAULT_TIMEOUT_S), text(FIRST_ANSWER))[1]
    engine = engine_for(default_registry(), endpoint.settings())
    run_id = runner.start("refund T-7", five_step_plan(), engine=engine,
                          options=RunOptions(confirm_side_effects=False),
                          settings_public=public_settings(offline=False))
    wait_until(lambda: endpoint.chat_bodies, what="s5 waiting for its answer")
    try:
        before = recorded(run_id)
        assert before[0] == "running"
        assert main(["rerun", run_id, "--from", "s3", "--yes"]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"error: run {run_id} is running; a re-run starts from a "
                              "finished run")
        assert recorded(run_id) == before
    finally:
        answering.set()
    assert runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S).status == "completed"
