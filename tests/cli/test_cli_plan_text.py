"""What ``plan`` and ``run`` print for a person to read: each step's tool, arguments,
condition and side effect in aligned rows, and how each step ran in plain words."""

from __future__ import annotations

import re

import pytest

from core.cli.main import main

REQUEST = ("Check whether order 88231 has arrived; if it has, refund it, and tell me the "
           "refund number.")
REQUEST_ZH = "帮我查一下订单 88231 到了没，如果已签收就退款，然后告诉我退款单号"


def _rows_under(out: str, step_id: str) -> list[str]:
    """The rows printed under step ``step_id``'s line, up to the next step."""
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(f"  ○ {step_id}: "))
    rows = []
    for line in lines[at + 1:]:
        if not line.startswith("    "):
            break
        rows.append(line)
    return rows


def test_plan_shows_each_steps_tool_arguments_condition_and_side_effect(capsys):
    assert main(["plan", REQUEST, "--offline"]) == 0
    out, err = capsys.readouterr()
    assert "planning…" not in err  # the rules write the plan at once (README: only a model's
    # reply is printed step by step: tests/cli/test_cli_plan_stream.py)
    assert "  ○ s1: Look up order 88231 and its status\n" in out  # no side effect: no mark
    assert re.search(r"  ○ s2: If order 88231 was delivered, .*  ⚠ side effect\n", out)
    assert _rows_under(out, "s1") == ['    tool:    query_order(order_id="88231")']
    assert _rows_under(out, "s2") == [
        '    tool:    apply_refund(order_id="88231", reason="the customer asked for a refund")',
        "    runs if: s1.status == 'delivered'",
        "    after:   s1"]
    assert _rows_under(out, "s3") == ["    tool:    none: the model writes this step",
                                      "    after:   s1, s2"]


def test_plan_in_chinese_says_it_in_chinese_in_aligned_rows(capsys, monkeypatch):
    monkeypatch.setenv("PLANBOARD_LANG", "zh")
    assert main(["plan", REQUEST_ZH, "--offline"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"  ○ s2: .*  ⚠ 有副作用\n", out)
    assert _rows_under(out, "s2") == [
        '    工具： apply_refund(order_id="88231", reason="用户申请退款")',
        "    条件： s1.status == 'delivered'", "    依赖： s1"]
    assert _rows_under(out, "s3") == ["    工具： 无：这一步由大模型完成", "    依赖： s1, s2"]


@pytest.mark.parametrize(("language", "done", "answered"), [
    ("en", "✓ s1 completed: its tool was called with the plan's arguments",
     "✓ s3 completed: the answer was written from the earlier steps' results"),
    ("zh", "✓ s1 完成：已按计划中的参数调用工具", "✓ s3 完成：已根据前面步骤的结果写出答案"),
])
def test_run_says_how_each_step_ran_in_plain_words(capsys, monkeypatch, language, done,
                                                   answered):
    monkeypatch.setenv("PLANBOARD_LANG", language)
    assert main(["run", REQUEST if language == "en" else REQUEST_ZH, "--offline",
                 "--yes"]) == 0
    out = capsys.readouterr().out
    assert done in out and answered in out
    assert not re.search(r"\b(direct|synthesis)\b", out)
