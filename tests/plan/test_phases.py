"""Phases in the plan model: validation that names the culprits, status, JSON, parsing, size."""

from __future__ import annotations

import json

import pytest

from core.base.messages import render
from core.errors import ConfigError, PlanTooLargeError
from core.plan.model import Phase, Plan, Step
from core.plan.parse import parse_plan
from core.plan.size import check_size, max_steps, size_problem


def phased(*steps: Step, phases: list[Phase] | None = None) -> Plan:
    return Plan(goal="review the quarter", phases=phases or [
        Phase(id="p1", title="Collect", goal="collect the numbers"),
        Phase(id="p2", title="Analyse", depends_on=["p1"]),
        Phase(id="p3", title="Report", depends_on=["p2"]),
    ], steps=list(steps))


def worded(plan: Plan, language: str = "en") -> list[str]:
    """The plan's problems as a face words them."""
    return [render(problem, language) for problem in plan.validate()]


def step(step_id: str, phase: str | None, *deps: str, **fields) -> Step:
    return Step(id=step_id, description=f"do {step_id}", phase=phase, depends_on=list(deps),
                **fields)


def test_a_plan_without_phases_is_what_it_was():
    plan = Plan(goal="g", steps=[step("s1", None), step("s2", None, "s1")])
    assert plan.validate() == []
    assert "phases" not in plan.canonical()
    assert plan.phase_statuses() == {}
    assert plan.synthesis_step().id == "s2"


def test_a_valid_phased_plan_has_no_problems():
    plan = phased(step("s1", "p1"), step("s2", "p2", "s1"), step("s3", "p3", "s1", "s2"))
    assert plan.validate() == []


def test_a_phase_plan_without_steps_yet_is_valid():
    assert phased().validate() == []
    assert worded(Plan(goal="g")) == ["the plan has no steps; add at least one step"]


@pytest.mark.parametrize(("steps", "problem"), [
    ([step("s1", "p9")], "s1 names unknown phase p9; phases are p1, p2, p3"),
    ([step("s1", None)], "s1 names no phase; give it one of p1, p2, p3"),
    ([step("s1", "p2"), step("s2", "p1", "s1")],
     "s2 (phase p1) depends on s1 of phase p2, which p1 does not come after; make p1 depend "
     "on p2 or drop the dependency"),
])
def test_step_problems_name_the_step_and_the_phases(steps, problem):
    assert worded(phased(*steps)) == [problem]


def test_a_step_may_depend_on_a_phase_its_phase_comes_after_indirectly():
    plan = phased(step("s1", "p1"), step("s2", "p2"), step("s3", "p3", "s1"))
    assert plan.validate() == []


def test_a_phase_cycle_names_exactly_the_phases_on_it():
    plan = phased(step("s1", "p1"), phases=[
        Phase(id="p1", title="A"), Phase(id="p2", title="B", depends_on=["p3"]),
        Phase(id="p3", title="C", depends_on=["p2"]), Phase(id="p4", title="D",
                                                            depends_on=["p3"])])
    assert worded(plan) == ["phases p2, p3 form a cycle; remove one link"]


@pytest.mark.parametrize(("phase", "problem"), [
    (Phase(id="p1", title="A", depends_on=["p1"]),
     "p1 comes after itself; remove it from its depends_on"),
    (Phase(id="p1", title="A", depends_on=["p7"]), "p1 comes after unknown phase p7"),
    (Phase(id="phase one", title="A"),
     "'phase one' is not a valid phase id; phase ids look like p1, p2, p3"),
    (Phase(id="p1", title=" "), "p1 has no title; say what the phase is for"),
])
def test_phase_problems_name_the_phase(phase, problem):
    plan = Plan(goal="g", phases=[phase], steps=[step("s1", phase.id)])
    assert problem in worded(plan)


def test_a_step_naming_a_phase_in_a_plan_without_phases_is_reported():
    plan = Plan(goal="g", steps=[step("s1", "p1")])
    assert worded(plan) == ["s1 names phase p1, but the plan has no phases; add the phase "
                               "or clear the step's phase"]


def test_problems_are_worded_in_chinese_too():
    [problem] = worded(phased(step("s1", "p9")), "zh")
    assert problem == "s1 属于不存在的阶段 p9；已有的阶段：p1, p2, p3"


@pytest.mark.parametrize(("statuses", "expected"), [
    ([], "pending"),
    (["pending", "pending"], "pending"),
    (["completed", "pending"], "running"),
    (["running"], "running"),
    (["completed", "failed"], "failed"),
    (["failed", "pending"], "running"),  # a replan may still recover it
    (["skipped", "skipped"], "skipped"),
    (["completed", "skipped"], "completed"),
])
def test_a_phase_status_is_derived_from_its_steps(statuses, expected):
    plan = phased(*(step(f"s{n}", "p2", status=status)
                    for n, status in enumerate(statuses, 1)))
    assert plan.phase_status("p2") == expected
    assert plan.phase_statuses()["p2"] == expected


def test_a_phase_still_to_expand_holds_back_the_answer_step():
    plan = phased(step("s1", "p1"), step("s2", "p2", "s1"))
    assert [p.id for p in plan.unexpanded_phases()] == ["p3"]
    assert plan.synthesis_step() is None
    plan.steps.append(step("s3", "p3", "s2"))
    assert plan.synthesis_step().id == "s3"


def test_canonical_json_carries_the_phases_and_each_step_its_phase():
    plan = phased(step("s1", "p1"), step("s2", "p2", "s1"))
    plan.phases[1].done_when = "the reasons are ranked"
    data = plan.canonical()
    assert data["phases"][1] == {"id": "p2", "title": "Analyse", "goal": "",
                                 "depends_on": ["p1"], "done_when": "the reasons are ranked"}
    assert [s["phase"] for s in data["steps"]] == ["p1", "p2"]
    again = parse_plan(json.dumps(data), "")
    assert again.canonical() == data
    assert Plan.from_json(plan.to_json()).phases == plan.phases


def test_the_parser_reads_steps_listed_inside_their_phase_and_bare_phase_numbers():
    reply = {"goal": "g", "phases": [
        {"id": 1, "title": "Collect", "steps": [{"id": "s1", "description": "look up"}]},
        {"id": "2", "name": "Report", "depends_on": [1], "done_when": "a report exists",
         "steps": [{"id": "s2", "description": "write", "depends_on": ["s1"]}]}]}
    plan = parse_plan(json.dumps(reply), "")
    assert [(p.id, p.title, p.depends_on) for p in plan.phases] == [
        ("p1", "Collect", []), ("p2", "Report", ["p1"])]
    assert plan.phases[1].done_when == "a report exists"
    assert [(s.id, s.phase) for s in plan.steps] == [("s1", "p1"), ("s2", "p2")]
    assert plan.validate() == []


def test_the_parser_accepts_a_phase_plan_with_no_steps_yet():
    plan = parse_plan('{"goal": "g", "phases": [{"id": "p1", "title": "A"}], "steps": []}', "")
    assert plan.steps == [] and [p.id for p in plan.phases] == ["p1"]


def test_summary_lists_each_phase_with_its_steps():
    plan = phased(step("s1", "p1", status="completed"), step("s2", "p2", "s1"))
    assert plan.summary().splitlines() == [
        "Plan v1: review the quarter", "  ✓ p1: Collect", "      ✓ s1: do s1",
        "  ○ p2: Analyse", "      ○ s2: do s2", "  ○ p3: Report"]


# ---- size ---------------------------------------------------------------------------------


def chain(count: int, phase: str | None = None) -> list[Step]:
    return [step(f"s{n}", phase, *([f"s{n - 1}"] if n > 1 else [])) for n in range(1, count + 1)]


def test_a_flat_plan_past_the_limit_is_refused_in_one_line_that_suggests_phases():
    plan = Plan(goal="g", steps=chain(201))
    assert size_problem(Plan(goal="g", steps=chain(200))) is None
    with pytest.raises(PlanTooLargeError) as caught:
        check_size(plan)
    text = str(caught.value)
    assert "\n" not in text
    assert text == ("The plan has 201 steps, more than the 200 a run takes "
                    "(PLANBOARD_MAX_STEPS); give it phases (--mode hierarchical), or split the "
                    "work into several runs.")


def test_the_limit_holds_per_phase_in_a_phased_plan(monkeypatch):
    monkeypatch.setenv("PLANBOARD_MAX_STEPS", "3")
    plan = phased(*chain(3, "p1"))
    plan.steps += [step("s4", "p2", "s3"), step("s5", "p2", "s4"), step("s6", "p3", "s5")]
    assert size_problem(plan) is None  # 6 steps, at most 3 in a phase
    plan.steps.insert(3, step("s9", "p1"))
    assert str(size_problem(plan)) == (
        "Phase p1 has 4 steps, more than the 3 a run takes in one phase (PLANBOARD_MAX_STEPS); "
        "split it into smaller phases.")


@pytest.mark.parametrize("raw", ["0", "-1", "many"])
def test_a_bad_limit_is_a_config_error(raw):
    with pytest.raises(ConfigError, match="PLANBOARD_MAX_STEPS"):
        max_steps({"PLANBOARD_MAX_STEPS": raw})
