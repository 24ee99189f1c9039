"""AppTest of plans in phases: the Plan page's tables by phase, the graph's clusters and folds,
the step panel's phase, approval, and the Run page's phase strip; the tables' merge logic
(AppTest cannot edit a data editor) as functions."""

from __future__ import annotations

import re

from core.plan.edit import apply_grouped_changes, grouped_rows_to_plan, phase_groups
from core.plan.model import Phase, Plan, Step
from tests.support.app import open_app, wait_for
from tests.support.shown import graph_dots
from tests.support.waiting import DEFAULT_TIMEOUT_S


def clusters(dot: str) -> list[str]:
    return re.findall(r'subgraph "cluster_(p\d+)"', dot)


def expanders(at) -> dict[str, object]:
    return {e.label: e for e in at.expander if re.match(r"^\S+ p\d+ · ", e.label)}


def long_plan(phases: int = 12, per_phase: int = 5) -> Plan:
    steps, previous = [], None
    for number in range(1, phases + 1):
        for _ in range(per_phase):
            sid = f"s{len(steps) + 1}"
            steps.append(Step(id=sid, description=f"work {sid}", tool="calculate",
                              args={"expression": f"{len(steps) + 1} + 1"},
                              depends_on=[previous] if previous else [], phase=f"p{number}"))
            previous = sid
    return Plan(goal="a long job in twelve phases", phases=[
        Phase(id=f"p{n}", title=f"Stage {n}", depends_on=[f"p{n - 1}"] if n > 1 else [])
        for n in range(1, phases + 1)], steps=steps)


def test_the_review_is_planned_in_phases_and_reviewed_phase_by_phase(runner):
    at = open_app()
    at.button(key="scenario_ops-quarterly-review").click().run()
    at.button(key="generate_plan").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["route_info"]["mode"] == "hierarchical"
    plan: Plan = at.session_state["plan"]
    assert len(plan.phases) == 4
    labels = list(expanders(at))
    assert labels[0] == "○ p1 · Check the fleet's health — 2 step(s)"
    assert [label.split(" · ")[0] for label in labels] == ["○ p1", "○ p2", "○ p3", "○ p4"]
    revision = at.session_state["plan_revision"]
    for phase in plan.phases:
        assert f"plan_editor_{revision}_{phase.id}" in at.session_state
    [dot] = graph_dots(at)
    assert clusters(dot) == ["p1", "p2", "p3", "p4"]  # ten steps: every phase open
    assert at.selectbox(key="step_phase").value == "p1"
    assert not at.button(key="approve_run").disabled
    at.button(key="approve_run").click().run()
    run_id = at.query_params["run"]
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
    at = wait_for(at, lambda a: any(m.value.startswith("**Phases:**") and "p4 ✓" in m.value
                                    for m in a.markdown))
    strip = next(m.value for m in at.markdown if m.value.startswith("**Phases:**"))
    assert strip == "**Phases:** p1 ✓ · p2 ✓ · p3 ✓ · p4 ✓"


def test_a_long_plan_opens_with_only_its_current_phase(runner):
    at = open_app(plan=long_plan())
    assert not at.exception, [e.value for e in at.exception]
    [dot] = graph_dots(at)
    assert clusters(dot) == ["p1"]
    assert len(re.findall(r"^  \"phase-p\d+\" \[label=", dot, re.M)) == 11  # one node each
    shown = expanders(at)
    assert len(shown) == 12
    assert [e.proto.expanded for e in shown.values()] == [True] + [False] * 11


def test_a_phase_plan_without_steps_can_be_approved(runner):
    plan = Plan(goal="three stages", phases=[
        Phase(id="p1", title="Collect"), Phase(id="p2", title="Report", depends_on=["p1"])])
    at = open_app(plan=plan)
    assert not at.exception, [e.value for e in at.exception]
    labels = list(expanders(at))
    assert labels == ["○ p1 · Collect — expanded into steps when reached",
                      "○ p2 · Report — expanded into steps when reached"]
    assert not at.button(key="approve_run").disabled
    [dot] = graph_dots(at)
    assert '"phase-p1" [label="⋯ ○ p1 · Collect\\n⋯"' in dot


def test_the_phase_tables_read_in_chinese(runner):
    at = open_app(language="zh", plan=long_plan(phases=3, per_phase=2))
    assert [label.split(" · ")[0] for label in expanders(at)] == ["○ p1", "○ p2", "○ p3"]
    assert "2 个步骤" in next(iter(expanders(at)))


# ---- the tables' merge logic -----------------------------------------------------------------


def two_phases() -> Plan:
    return Plan(goal="g", phases=[Phase(id="p1", title="A"),
                                  Phase(id="p2", title="B", depends_on=["p1"])], steps=[
        Step(id="s1", description="one", phase="p1"),
        Step(id="s2", description="two", phase="p1", depends_on=["s1"]),
        Step(id="s3", description="three", phase="p2", depends_on=["s2"])])


def test_each_phase_table_edits_its_own_rows():
    plan = two_phases()
    changed = apply_grouped_changes(plan, {
        "p1": {"edited_rows": {1: {"description": "two, better"}}},
        "p2": {"edited_rows": {0: {"description": "three, better"}}}})
    assert [s.description for s in changed.steps] == ["one", "two, better", "three, better"]
    assert [s.phase for s in changed.steps] == ["p1", "p1", "p2"]


def test_a_phase_cell_moves_a_step_and_a_deleted_row_detaches_its_step():
    plan = two_phases()
    moved = apply_grouped_changes(plan, {"p1": {"edited_rows": {1: {"phase": "p2"}}}})
    assert moved.step("s2").phase == "p2" and moved.validate() == []
    gone = apply_grouped_changes(plan, {"p1": {"deleted_rows": [1]}})
    assert gone.ids() == ["s1", "s3"] and gone.step("s3").depends_on == ["s1"]


def test_a_new_row_joins_the_phase_of_its_table():
    plan = two_phases()
    rows = {group: [{"id": s.id, "description": s.description, "tool": "none",
                     "depends_on": ", ".join(s.depends_on), "phase": s.phase}
                    for s in steps] for group, steps in phase_groups(plan)}
    rows["p2"].append({"description": "four", "tool": "none", "depends_on": "s3"})
    merged, errors = grouped_rows_to_plan(plan, rows)
    assert errors == []
    assert merged.step("s4").phase == "p2" and merged.validate() == []
