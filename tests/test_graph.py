"""Tests for core.plan.graph: the DOT drawing of a plan."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from core.plan.graph import dot_escape, plan_to_dot, side_effect_tool_names
from core.plan.model import Plan, Step
from core.tools.registry import ToolRegistry, tool


@tool(side_effect=True)
def apply_refund(order_id: str) -> dict:
    """Refund an order.

    Args:
        order_id: the order.
    """
    return {"order_id": order_id}


@tool
def query_order(order_id: str) -> dict:
    """Look up an order.

    Args:
        order_id: the order.
    """
    return {"order_id": order_id}


def _registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.add(apply_refund)
    registry.add(query_order)
    return registry


def _plan() -> Plan:
    return Plan(
        goal="退掉坏的扫地机",
        steps=[
            Step(id="s1", description='查询订单 "88231"', tool="query_order",
                 args={"order_id": "88231"}, status="completed"),
            Step(id="s2", description="搜索扫地机", tool=None, status="running"),
            Step(id="s3", description="申请退款", tool="apply_refund", depends_on=["s1"],
                 condition="s1.status == 'delivered'"),
            Step(id="s4", description="Summarise\nfor the user", depends_on=["s2", "s3"]),
        ],
    )


def test_escape_handles_quotes_backslashes_and_newlines():
    assert dot_escape('a "b" \\ c\nd') == 'a \\"b\\" \\\\ c\\nd'


def test_status_colours_conditions_side_effects_and_critical_path():
    dot = plan_to_dot(_plan(), registry=_registry())
    node = {line.split(" [", 1)[0].strip(): line for line in dot.splitlines() if " [label=" in line}
    assert 'fillcolor="#D3F9D8"' in node['"s1"']  # completed
    assert 'fillcolor="#D0EBFF"' in node['"s2"']  # running
    assert "dashed" in node['"s3"'] and "◇ s1.status == 'delivered'" in node['"s3"']
    assert "⚠" in node['"s3"'] and "penwidth=2" in node['"s3"']
    assert "⚠" not in node['"s1"']
    assert '查询订单 \\"88231\\"' in node['"s1"']
    assert "Summarise for the user" in node['"s4"']  # newlines in text are folded
    bold = [line for line in dot.splitlines() if "->" in line and "penwidth=2.5" in line]
    assert sorted(bold) == sorted([
        '  "s1" -> "s3" [color="#1C3D5A", penwidth=2.5, style="bold"];',
        '  "s3" -> "s4" [color="#1C3D5A", penwidth=2.5, style="bold"];',
    ])
    assert '"s2" -> "s4";' in dot


def test_critical_path_can_be_switched_off_with_either_name():
    assert "penwidth=2.5" not in plan_to_dot(_plan(), highlight_critical=False)
    assert "penwidth=2.5" not in plan_to_dot(_plan(), critical_path=False)


def test_side_effect_names_can_be_given_without_a_registry():
    assert side_effect_tool_names(_registry()) == {"apply_refund"}
    dot = plan_to_dot(_plan(), side_effect_tools={"query_order"})
    s1 = next(line for line in dot.splitlines() if line.startswith('  "s1" ['))
    assert "⚠" in s1


def test_cycles_and_missing_dependencies_still_draw():
    plan = Plan(goal="g", steps=[
        Step(id="s1", description="a", depends_on=["s2"]),
        Step(id="s2", description="b", depends_on=["s1", "s9"]),
    ])
    dot = plan_to_dot(plan)
    # the cycle is drawn red (nodes and edges); only s1 and s2 are on it
    assert '"s1" -> "s2" [color="#E03131"' in dot and '"s2" -> "s1" [color="#E03131"' in dot
    assert '"s9" -> "s2";' in dot
    assert '"s9" [label="s9 ?", style="dashed"' in dot
    assert "penwidth=2.5" not in dot


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz 'dot' binary is not installed")
def test_dot_output_is_accepted_by_graphviz():
    result = subprocess.run(
        ["dot", "-Tsvg"], input=plan_to_dot(_plan(), registry=_registry()).encode(),
        capture_output=True, check=False, timeout=30,
    )
    assert result.returncode == 0, result.stderr.decode()
    assert "<svg" in result.stdout.decode()
