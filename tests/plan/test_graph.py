"""Tests for core.plan.graph: the DOT drawing of a plan."""

from __future__ import annotations

import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from core.plan.graph import dot_escape, plan_to_dot, side_effect_tool_names
from core.plan.label_text import clip_columns, display_width, text_em, wrap_label
from core.plan.model import Plan, Step
from core.runs.export import render_svg
from core.tools.registry import ToolRegistry, tool
from tests.support.fuzzing import FUZZ

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz is not installed")


@tool
def apply_refund(order_id: str) -> dict:
    """Refund an order.

    Args:
        order_id: the order.
    """
    return {"order_id": order_id}


@tool(read_only=True)
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


@needs_dot
def test_dot_output_is_accepted_by_graphviz():
    result = subprocess.run(
        ["dot", "-Tsvg"], input=plan_to_dot(_plan(), registry=_registry()).encode(),
        capture_output=True, check=False, timeout=30,
    )
    assert result.returncode == 0, result.stderr.decode()
    assert "<svg" in result.stdout.decode()


def _node_line(dot: str, step_id: str) -> str:
    return next(line for line in dot.splitlines() if line.startswith(f'  "{step_id}" ['))


def test_display_width_counts_cjk_characters_twice():
    assert display_width("run_sql") == 7
    assert display_width("流失率") == 6
    assert display_width("（2026 Q1）") == 11  # full-width brackets are wide too


def test_latin_text_wraps_at_spaces_within_the_width():
    lines = wrap_label("Summarise the churn numbers and give a short reason for each month", 28)
    assert lines == ["Summarise the churn numbers", "and give a short reason for", "each month"]


def test_cjk_text_wraps_anywhere_but_not_before_closing_punctuation():
    assert wrap_label("综合以上结果，给出最终回复", 28) == ["综合以上结果，给出最终回复"]
    assert wrap_label("综合以上结果给出最终回复", 12) == ["综合以上结果", "给出最终回复"]
    # "，" would start the second line: it moves down with "果"
    assert wrap_label("综合以上结果，给出最终回复", 12) == ["综合以上结", "果，给出最终", "回复"]


def test_mixed_text_keeps_its_spaces_and_a_long_word_is_cut():
    assert wrap_label("查询 order 88231 的物流状态", 28) == ["查询 order 88231 的物流状态"]
    assert wrap_label("统计上个季度（2026 Q1）的流失原因", 14) == [
        "统计上个季度（", "2026 Q1）的流", "失原因"]
    assert wrap_label("x" * 30, 12) == ["x" * 12, "x" * 12, "x" * 6]
    assert wrap_label("  ", 12) == []


@given(st.text(alphabet="ab 流失率，。 Q1", max_size=60), st.integers(min_value=4, max_value=30))
def test_wrapped_lines_fit_and_lose_no_character(text, width):
    lines = wrap_label(text, width)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    assert all(display_width(line) <= width for line in lines)


def test_step_nodes_carry_their_step_id_and_room_for_chinese_text():
    plan = Plan(goal="g", steps=[
        Step(id="s1", description="综合以上结果，给出最终回复"),
        Step(id="s2", description="look it up", depends_on=["s1", "s9"]),
    ])
    dot = plan_to_dot(plan)
    assert 'id="step-s1"' in _node_line(dot, "s1") and 'id="step-s2"' in _node_line(dot, "s2")
    assert "id=" not in _node_line(dot, "s9")  # a missing dependency is not selectable
    width = _width(_node_line(dot, "s1"))
    # 13 CJK characters drawn at 1 em of 10 pt, plus the node's margins (0.1 in a side)
    assert width >= 13 * 10 / 72 + 0.2
    assert _width(_node_line(dot, "s2")) < width


def _width(node_line: str) -> float:
    return float(node_line.split("width=")[1].split(",")[0])


def test_a_newline_inside_a_list_argument_stays_on_its_line():
    plan = _args_plan({"n": ["a\nb", {"k": "c\n\nd"}]})
    lines = _label_lines(_node_line(plan_to_dot(plan), "s2"))
    assert lines[1] == 'n=["a b", {"k": "c d"}]'


def _label_lines(node_line: str) -> list[str]:
    """A node's label as its lines, read as Graphviz reads its escapes (``\\n`` breaks a
    line; ``\\\\`` is a backslash, so ``\\\\n`` is a backslash and an "n")."""
    label = re.search(r'label="((?:[^"\\]|\\.)*)"', node_line)[1]
    lines = [""]
    for escape, plain in re.findall(r"\\(.)|([^\\])", label):
        if escape == "n":
            lines.append("")
        else:
            lines[-1] += escape or plain
    return lines


def test_latin_widths_are_helveticas_and_other_characters_a_full_em():
    assert text_em("Summarise") == pytest.approx(0.667 + 0.556 + 0.833 * 2 + 0.556 + 0.333
                                                 + 0.222 + 0.5 + 0.556)
    assert text_em("WM@") == pytest.approx(0.944 + 0.833 + 1.015)  # wider than an em
    assert text_em("流失，○") == 4.0
    assert clip_columns("query order", 20) == "query order"
    assert clip_columns("统计上个季度", 7) == "统计上…"  # six columns and the ellipsis


def _args_plan(args: dict) -> Plan:
    return Plan(goal="g", steps=[
        Step(id="s1", description="Look up order", tool="query_order", args={"order_id": "1"}),
        Step(id="s2", description="Track the parcel", tool="query_logistics", args=args,
             depends_on=["s1"]),
    ])


def test_arguments_show_under_the_tool_as_name_value_pairs():
    dot = plan_to_dot(_args_plan({"tracking_no": "{{ s1.tracking_no }}", "days": 3,
                                  "express": True}))
    assert _label_lines(_node_line(dot, "s2")) == [
        "○ s2 · query_logistics",
        "tracking_no=s1.tracking_no",  # a reference reads as in a condition
        "days=3, express=true",  # a line breaks between arguments
        "Track the parcel",
    ]
    dot = plan_to_dot(_args_plan({"order": "{{s1}}", "note": "s1.x", "ids": ["a", 2]}))
    # text that reads like a reference is quoted; a list is JSON
    assert _label_lines(_node_line(dot, "s2"))[1:3] == ['order=s1, note="s1.x"', 'ids=["a", 2]']
    assert _label_lines(_node_line(dot, "s1"))[1] == "order_id=1"
    reasoning = Plan(goal="g", steps=[Step(id="s1", description="Think", args={})])
    assert _label_lines(_node_line(plan_to_dot(reasoning), "s1")) == ["○ s1", "Think"]


def test_text_values_are_quoted_clipped_and_the_arguments_capped_at_two_lines():
    dot = plan_to_dot(_args_plan({"reason": "item is broken", "note": "x" * 80,
                                  "query": "SELECT reason, COUNT(*) FROM churn_events",
                                  "more": "ignored"}))
    lines = _label_lines(_node_line(dot, "s2"))
    assert lines[1:4] == ['reason="item is broken"', "note=xxxxxxxxxxxxxxxxxxxxxx…",
                          "Track the parcel"]
    assert "more=" not in dot and "query=" not in dot  # past the second line
    chinese = plan_to_dot(_args_plan({"reason": "商品故障，用户要求退货并尽快处理",
                                       "order_id": "88231"}))
    lines = _label_lines(_node_line(chinese, "s2"))
    assert lines[1:3] == ["reason=商品故障，用户要求退…", "order_id=88231"]
    assert all(display_width(line) <= 28 for line in lines)


def test_an_argument_edit_changes_the_drawing():
    plan = _args_plan({"tracking_no": "SF1"})
    edited = plan.model_copy(deep=True)
    edited.steps[1].args = {"tracking_no": "SF2"}
    assert "tracking_no=SF1" in plan_to_dot(plan)
    assert "tracking_no=SF2" in plan_to_dot(edited) and "SF1" not in plan_to_dot(edited)


def test_a_rank_of_four_or_more_steps_wraps_narrower():
    description = "Count the churned users of each month in the last quarter"
    fan = Plan(goal="g", steps=[
        *(Step(id=f"s{n}", description=description, tool="run_sql") for n in range(1, 5)),
        Step(id="s5", description=description, depends_on=["s1", "s2", "s3", "s4"]),
    ])
    dot = plan_to_dot(fan)
    assert all(display_width(line) <= 22 for line in _label_lines(_node_line(dot, "s1")))
    assert max(map(display_width, _label_lines(_node_line(dot, "s5")))) > 22  # alone: 28
    fan.steps[3].depends_on = ["s3"]  # three side by side: the usual width
    assert max(map(display_width, _label_lines(_node_line(plan_to_dot(fan), "s1")))) > 22


HOSTILE_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats()
    | st.text(alphabet=st.sampled_from(list('{}"\\\n\x00\x1b&#;<>=, s1.x流\ufffe')), max_size=40)
    | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=3),
    max_leaves=6,
)


@needs_dot
@settings(FUZZ, max_examples=40)  # each example runs Graphviz once
@given(args=st.dictionaries(st.text(max_size=30), HOSTILE_VALUES, max_size=4))
@example(args={"": ["\n\n"]})
@example(args={"q": "a\\nb", "r": {"k\n": "x\ny"}})
def test_any_arguments_give_dot_graphviz_renders_and_svg_that_parses(args):
    dot = plan_to_dot(_args_plan(args))
    assert "\x00" not in dot and "\x1b" not in dot
    ET.fromstring(render_svg(dot))
    assert len(_label_lines(_node_line(dot, "s2"))) <= 2 + 1 + 1  # header, args, description
