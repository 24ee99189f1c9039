"""Planning in phases end to end offline: stages, the router's third answer, the demo's phased
draft, the command line (plan, run, show, export), and plan files with phases."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from core.cli.main import main
from core.planning.router import route_offline
from core.planning.stages import read_stages
from core.runs.session import build_engine, choose_route, draft_plan
from demo.scenarios import SCENARIOS, get_scenario

REVIEW_EN = ("Quarterly operations review: check the fleet's health, diagnose every unhealthy "
             "service, count the churned users of Q1 and their top reasons, then write a report "
             "with recommendations")
REVIEW_ZH = ("季度运维复盘：先检查整个集群的健康状态，诊断每个异常服务，再统计第一季度流失用户数量"
             "及主要原因，最后写一份带建议的报告")


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_json(capsys, *argv: str) -> dict:
    code, out, err = run_cli(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


# ---- stages and the router -----------------------------------------------------------------


@pytest.mark.parametrize(("request_text", "stages"), [
    (REVIEW_EN, ["check the fleet's health", "diagnose every unhealthy service",
                 "count the churned users of Q1 and their top reasons",
                 "write a report with recommendations"]),
    (REVIEW_ZH, ["检查整个集群的健康状态", "诊断每个异常服务", "统计第一季度流失用户数量及主要原因",
                 "写一份带建议的报告"]),
    ("1. collect the numbers 2. compare them with Q4 3. write a short report",
     ["collect the numbers", "compare them with Q4", "write a short report"]),
])
def test_a_request_in_announced_stages_is_multi_stage(request_text, stages):
    found = read_stages(request_text)
    assert list(found.parts) == stages
    assert found.multi_stage


@pytest.mark.parametrize("request_text", [
    "First back up the database, then upgrade the system",  # two stages stay one plan
    "先备份再升级系统",
    "Design the API, build it and test it",  # no stage word: one clause
    *(scenario.request_en for scenario in SCENARIOS if scenario.id != "ops-quarterly-review"),
    *(scenario.request_zh for scenario in SCENARIOS if scenario.id != "ops-quarterly-review"),
])
def test_other_requests_are_not_multi_stage(request_text):
    assert not read_stages(request_text).multi_stage


def test_the_router_sends_a_long_staged_request_to_phases_and_says_why(registry):
    route = route_offline(REVIEW_EN, registry)
    assert (route.mode, route.code) == ("hierarchical", "stages")
    assert route.reason == ("the request has 4 stages (first … then … finally …), so it is "
                            "planned in phases, each expanded into steps when it is reached")
    assert route.reason_in("zh").startswith("请求分成 4 个阶段")
    assert route_offline(get_scenario("ops-health").request_en, registry).mode == "plan"


def test_a_person_may_ask_for_phases(registry):
    engine = build_engine(offline=True)
    route, _ = choose_route("check the fleet", engine, "hierarchical")
    assert (route.mode, route.source) == ("hierarchical", "person")


# ---- the demo's phased draft ---------------------------------------------------------------


@pytest.mark.parametrize("request_text", [REVIEW_EN, REVIEW_ZH])
def test_the_offline_draft_of_the_review_has_phases_and_every_step_one(request_text):
    plan = draft_plan(request_text, build_engine(offline=True), hierarchical=True).plan
    assert plan.validate() == []
    assert len(plan.phases) >= 3
    assert {step.phase for step in plan.steps} == {phase.id for phase in plan.phases}
    last = plan.phases[-1]
    assert plan.synthesis_step().phase == last.id
    assert set(last.depends_on) == {phase.id for phase in plan.phases[:-1]}
    diagnose = next(s for s in plan.steps if s.tool == "diagnose")
    health = plan.step(diagnose.depends_on[0])
    assert health.tool == "check_health"  # a later phase reads what an earlier one found
    assert health.phase in plan.phase(diagnose.phase).depends_on


def test_the_scenario_picker_offers_the_review():
    scenario = get_scenario("ops-quarterly-review")
    assert scenario.request_en == REVIEW_EN and scenario.request_zh == REVIEW_ZH


# ---- the command line ----------------------------------------------------------------------


def test_plan_then_run_then_show_a_phased_plan_offline(capsys):
    planned = run_json(capsys, "plan", REVIEW_EN, "--offline", "--mode", "hierarchical")
    phase_ids = {phase["id"] for phase in planned["phases"]}
    assert len(phase_ids) >= 3
    assert all(step["phase"] in phase_ids for step in planned["steps"])

    ran = run_json(capsys, "run", REVIEW_EN, "--offline", "--mode", "hierarchical", "--yes")
    assert ran["status"] == "completed" and ran["mode"] == "hierarchical"
    shown = run_json(capsys, "show", ran["run_id"])
    assert [phase["status"] for phase in shown["phases"]] == ["completed"] * len(phase_ids)
    assert sum(phase["steps"] for phase in shown["phases"]) == len(shown["plan"]["steps"])

    code, dot, _ = run_cli(capsys, "export", ran["run_id"], "--format", "dot")
    assert code == 0
    assert sorted(re.findall(r'subgraph "cluster_(p\d+)"', dot)) == sorted(phase_ids)


def test_auto_routes_the_review_to_phases(capsys):
    ran = run_json(capsys, "run", REVIEW_ZH, "--offline", "--mode", "auto", "--yes")
    assert ran["mode"] == "hierarchical" and ran["status"] == "completed"
    assert "请求分成 4 个阶段" not in ran["route_reason"]  # the JSON contract is English
    assert ran["route_reason"].startswith("the request has 4 stages")


def plan_file(tmp_path: Path, phases: list[dict], steps: list[dict]) -> str:
    path = tmp_path / "phased.json"
    path.write_text(json.dumps({"goal": "a plan in phases", "phases": phases, "steps": steps}),
                    encoding="utf-8")
    return str(path)


PHASES = [{"id": "p1", "title": "Numbers"},
          {"id": "p2", "title": "Sum", "depends_on": ["p1"]},
          {"id": "p3", "title": "Answer", "depends_on": ["p2"]}]


def calc(step_id: str, phase: str, expression: str, *deps: str) -> dict:
    return {"id": step_id, "description": f"compute {expression}", "tool": "calculate",
            "args": {"expression": expression}, "depends_on": list(deps), "phase": phase}


def test_a_plan_file_with_phases_runs(capsys, tmp_path):
    path = plan_file(tmp_path, PHASES, [
        calc("s1", "p1", "2 + 3"), calc("s2", "p1", "4 * 5"),
        {**calc("s3", "p2", "{{s1.value}} + {{s2.value}}", "s1", "s2")},
        {"id": "s4", "description": "Answer", "tool": None, "depends_on": ["s3"],
         "phase": "p3"}])
    ran = run_json(capsys, "run", "--plan", path, "--yes", "--offline")
    assert ran["status"] == "completed"
    assert [p["status"] for p in ran["phases"]] == ["completed"] * 3
    assert {s["id"]: s["result"] for s in ran["plan"]["steps"]}["s3"]["value"] == 25


@pytest.mark.parametrize(("phases", "steps", "named"), [
    (PHASES, [calc("s1", "p9", "1 + 1")], "s1 names unknown phase p9"),
    ([{"id": "p1", "title": "A", "depends_on": ["p2"]},
      {"id": "p2", "title": "B", "depends_on": ["p1"]}],
     [calc("s1", "p1", "1 + 1")], "phases p1, p2 form a cycle"),
    (PHASES, [calc("s1", "p2", "1 + 1"), calc("s2", "p1", "2 + 2", "s1")],
     "s2 (phase p1) depends on s1 of phase p2, which p1 does not come after"),
])
def test_a_plan_file_with_bad_phases_is_refused_before_running(capsys, tmp_path, phases,
                                                                steps, named):
    code, out, err = run_cli(capsys, "run", "--plan", plan_file(tmp_path, phases, steps),
                             "--yes", "--offline")
    assert code == 1
    assert named in err
    assert "run " not in out  # nothing was recorded or started
    assert run_json(capsys, "runs") == []


def test_a_5000_step_plan_file_is_refused_in_one_line_before_anything_opens(
        capsys, tmp_path, isolated_environment):
    steps = [calc(f"s{n}", "", f"{n} + 1") | {"phase": None} for n in range(1, 5001)]
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"goal": "big", "steps": steps}), encoding="utf-8")
    code, _, err = run_cli(capsys, "run", "--plan", str(path), "--yes", "--offline")
    assert code == 1
    assert err.strip().count("\n") == 0
    assert "5000 steps, more than the 200 a run takes" in err and "phases" in err
    assert not list(isolated_environment.glob("*.sqlite*"))  # no store, no engine was opened


def test_a_follow_up_of_a_phased_run_is_a_phase_of_its_own(registry):
    from core.llm.engine import Engine
    from core.planning.followup import extend_plan_request

    plan = draft_plan(REVIEW_EN, build_engine(offline=True), hierarchical=True).plan
    for step in plan.steps:
        step.status = "completed"
    extended, _ = extend_plan_request(plan, "also check order 88231",
                                      Engine(registry=registry, model=None))
    new = extended.phases[-1]
    assert new.id == f"p{len(plan.phases) + 1}" and new.title == "also check order 88231"
    assert new.depends_on == [p.id for p in plan.phases]
    added = [s for s in extended.steps if s.id not in plan.ids()]
    assert added and {s.phase for s in added} == {new.id}
    assert extended.phases_version == plan.phases_version + 1
    assert extended.validate(registry) == []


def test_the_model_router_may_answer_hierarchical(registry):
    from core.planning.router import route_with_llm
    from tests.support.fakes import ScriptedChatModel

    model = ScriptedChatModel(['{"mode": "hierarchical", "reason": "four stages"}'])
    route, _ = route_with_llm(REVIEW_EN, model, registry, language="en")
    assert (route.mode, route.reason, route.source) == ("hierarchical", "four stages", "llm")
    [request] = model.requests
    assert '"hierarchical": a long task in three or more explicit stages' in (
        request["messages"][0]["content"])


def test_approving_a_phase_plan_says_its_steps_come_later(capsys, tmp_path):
    path = plan_file(tmp_path, PHASES, [calc("s1", "p1", "2 + 3")])
    code, out, _ = run_cli(capsys, "run", "--plan", path, "--yes", "--offline")
    assert "2 phase(s) (p2, p3) get their steps when the run reaches them" in out
    assert code == 1  # offline, no rule drafts "Sum": the run says so, and failed
    assert "phase p2 (Sum) is pending: the work was not done" in out
    assert "phase p3 (Answer) is pending" in out
