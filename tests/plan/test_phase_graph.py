"""The graph of a plan with phases: clusters, folded phases, phases still to expand, defaults."""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET

import pytest

from core.plan.graph import FOLD_OVER, current_phase, default_folded, plan_to_dot
from core.plan.model import Phase, Plan, Step
from core.runs.export import render_svg

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz is not installed")
SVG = "{http://www.w3.org/2000/svg}"


def three_phases(per_phase: int = 2, statuses: dict[str, str] | None = None) -> Plan:
    statuses = statuses or {}
    steps, previous = [], None
    for number in range(1, 4):
        for _ in range(per_phase):
            sid = f"s{len(steps) + 1}"
            steps.append(Step(id=sid, description=f"work {sid}", phase=f"p{number}",
                              depends_on=[previous] if previous else [],
                              status=statuses.get(f"p{number}", "pending")))
            previous = sid
    return Plan(goal="g", phases=[
        Phase(id="p1", title="Collect"), Phase(id="p2", title="Analyse", depends_on=["p1"]),
        Phase(id="p3", title="Report", depends_on=["p2"])], steps=steps)


def clusters(dot: str) -> list[str]:
    return re.findall(r'subgraph "cluster_(p\d+)"', dot)


def test_every_open_phase_is_a_cluster_holding_its_steps():
    dot = plan_to_dot(three_phases(), folded=())
    assert clusters(dot) == ["p1", "p2", "p3"]
    body = dot.split('subgraph "cluster_p2"')[1].split("}")[0]
    assert '"s3" [' in body and '"s4" [' in body and '"s1" [' not in body
    assert 'label="▾ ○ p2 · Analyse   ○ 2"' in body


def test_a_folded_phase_is_one_node_with_its_steps_counted_by_status():
    plan = three_phases(statuses={"p1": "completed"})
    plan.steps[2].status = "running"
    dot = plan_to_dot(plan, folded={"p1", "p2"})
    assert clusters(dot) == ["p3"]
    assert '"s1" [' not in dot and '"s3" [' not in dot
    assert '"phase-p1" [label="▸ ✓ p1 · Collect\\n✓ 2"' in dot
    assert '"phase-p2" [label="▸ ▶ p2 · Analyse\\n▶ 1 · ○ 1"' in dot
    # edges of folded steps end at the phase's node, once; none inside a folded phase
    assert dot.count('"phase-p1" -> "phase-p2";') == 1
    assert '"phase-p2" -> "s5";' in dot
    assert "-> \"phase-p1\"" not in dot


def test_a_phase_still_to_expand_is_a_node_and_gets_a_dashed_edge():
    plan = three_phases()
    plan.steps = [s for s in plan.steps if s.phase != "p3"]
    dot = plan_to_dot(plan, folded=())
    assert clusters(dot) == ["p1", "p2"]
    assert '"phase-p3" [label="⋯ ○ p3 · Report\\n⋯"' in dot
    assert '"s4" -> "phase-p3" [style="dashed", color="#ADB5BD", ltail="cluster_p2"];' in dot


def test_small_plans_open_every_phase_and_large_ones_only_the_current():
    assert default_folded(three_phases(per_phase=2)) == set()
    per_phase = FOLD_OVER // 3 + 1
    fresh = three_phases(per_phase=per_phase)
    assert len(fresh.steps) > FOLD_OVER
    assert current_phase(fresh) == "p1"
    assert default_folded(fresh) == {"p2", "p3"}
    under_way = three_phases(per_phase=per_phase, statuses={"p1": "completed"})
    under_way.steps_of("p2")[0].status = "running"
    assert current_phase(under_way) == "p2"
    assert default_folded(under_way) == {"p1", "p3"}
    between = three_phases(per_phase=per_phase, statuses={"p1": "completed"})
    assert current_phase(between) == "p2"  # the next phase whose phases have finished
    done = three_phases(per_phase=per_phase, statuses={p: "completed" for p in ("p1", "p2",
                                                                               "p3")})
    assert current_phase(done) == "p3"


def test_the_default_is_used_when_nobody_chose():
    plan = three_phases(per_phase=FOLD_OVER // 3 + 1)
    assert clusters(plan_to_dot(plan)) == ["p1"]
    assert clusters(plan_to_dot(plan, folded=())) == ["p1", "p2", "p3"]


def test_a_plan_without_phases_draws_no_cluster():
    plan = Plan(goal="g", steps=[Step(id="s1", description="a"),
                                 Step(id="s2", description="b", depends_on=["s1"])])
    dot = plan_to_dot(plan)
    assert "subgraph" not in dot and "compound" not in dot


@needs_dot
def test_graphviz_draws_clusters_and_phase_nodes_with_their_ids():
    plan = three_phases()
    svg = ET.fromstring(render_svg(plan_to_dot(plan, folded={"p1"})))
    groups = {g.get("id"): g.get("class") for g in svg.iter(f"{SVG}g") if g.get("id")}
    assert groups["phase-p1"] == "node"
    assert groups["phase-p2"] == "cluster" and groups["phase-p3"] == "cluster"
    assert groups["step-s3"] == "node" and "step-s1" not in groups
