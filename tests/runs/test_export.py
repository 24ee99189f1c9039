"""Exports of a stored run: JSON, Markdown (every plan version), DOT, SVG, and no secrets."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from core.base.usage import Usage
from core.errors import PlanBoardError
from core.execution.events import RunEvent
from core.plan.model import Plan, Step
from core.runs import export as export_module
from core.runs.export import ExportError, GraphvizMissingError, export_run, render_svg
from core.store.run_store import RunStore
from core.store.schema import runs

FAKE_KEY = "sk-test-SECRET123"


@pytest.fixture
def stored_run():
    """A finished run with two plan versions, a few events and an answer."""
    store = RunStore()
    v1 = Plan(goal="退款 order 88231", steps=[
        Step(id="s1", description="查询订单", tool="query_order", args={"order_id": "88231"}),
        Step(id="s2", description="申请退款 | refund", tool="apply_refund",
             args={"order_id": "88231"}, depends_on=["s1"]),
    ])
    run_id = store.create_run("帮我查询订单 88231 并退款", {"api_key": FAKE_KEY, "model": "m"}, v1)
    v1.steps[0].advance("running")
    v1.steps[0].advance("completed")
    v1.steps[0].result = {"status": "delivered", "note": "```fenced```"}
    v1.steps[1].advance("running")
    v1.steps[1].advance("failed")
    v1.steps[1].error = "refund service down"
    store.save_plan_version(run_id, v1)
    v2 = Plan(goal=v1.goal, version=2, steps=[
        v1.steps[0],
        Step(id="s3", description="再试一次退款", tool="apply_refund",
             args={"order_id": "88231"}, depends_on=["s1"]),
    ])
    v2.steps[1].advance("running")
    v2.steps[1].advance("completed")
    v2.steps[1].result = "refund R-1"
    store.save_plan_version(run_id, v2, reason="s2 failed: refund service down")
    for event in (RunEvent(kind="run_started"), RunEvent(kind="step_failed", step_id="s2"),
                  RunEvent(kind="replanned", plan_version=2, data={"reason": "s2 failed"})):
        store.append_event(run_id, event)
    store.set_answer(run_id, "已退款 R-1")
    store.set_usage(run_id, Usage(llm_calls=3, prompt_tokens=120, completion_tokens=30))
    store.set_status(run_id, "completed", event=RunEvent(kind="run_finished", plan_version=2))
    yield store, run_id
    store.close()


def test_json_is_the_full_record(stored_run):
    store, run_id = stored_run
    data = json.loads(export_run(store, run_id, "json"))
    assert data["run_id"] == run_id and data["status"] == "completed"
    assert data["answer"] == "已退款 R-1"
    assert data["settings"] == {"model": "m"}
    assert [v["version"] for v in data["plan_versions"]] == [1, 2]
    assert data["plan_versions"][1]["reason"] == "s2 failed: refund service down"
    assert [e["kind"] for e in data["events"]] == [
        "run_started", "step_failed", "replanned", "run_finished"]
    assert data["plan"]["version"] == 2
    assert data["usage"] == {"llm_calls": 3, "prompt_tokens": 120, "completion_tokens": 30}


def test_markdown_shows_request_results_answer_usage_and_every_version(stored_run):
    store, run_id = stored_run
    text = export_run(store, run_id, "md")
    assert text.startswith(f"# 运行 {run_id}\n")  # a Chinese request gets Chinese headings
    assert "帮我查询订单 88231 并退款" in text
    assert "## 计划版本历史" in text
    assert "### 版本 1" in text and "### 版本 2 — 原因: s2 failed: refund service down" in text
    assert "申请退款 \\| refund" in text  # a pipe inside a cell does not break the table
    assert "refund service down" in text and "已退款 R-1" in text
    assert "大模型调用次数: 3" in text
    assert "**状态:** 已完成" in text and "| ✓ 已完成 |" in text  # statuses in Chinese too
    assert "````json" in text  # a result holding ``` gets a longer fence
    tables = [line for line in text.splitlines() if line.startswith("| 步骤 |")]
    assert len(tables) == 3  # current plan + two versions
    for line in text.splitlines():
        if line.startswith("|"):
            assert len(re.findall(r"(?<!\\)\|", line)) == 7  # six cells in every row


def test_markdown_in_english_for_an_english_request():
    store = RunStore()
    run_id = store.create_run("Add two numbers", {}, Plan(goal="Add", steps=[
        Step(id="s1", description="add", tool="calculate", args={"expression": "1+1"})]))
    text = export_run(store, run_id, "md")
    assert "## Plan versions" in text and "### Version 1 — reason: initial plan" in text
    assert "## Answer\n\n(none)" in text
    store.close()


def test_dot_and_svg(stored_run):
    store, run_id = stored_run
    dot = export_run(store, run_id, "dot")
    assert dot.startswith("digraph") and '"s1" -> "s3"' in dot
    if shutil.which("dot") is None:
        pytest.skip("graphviz is not installed here")
    svg = export_run(store, run_id, "svg")
    assert isinstance(svg, bytes) and b"<svg" in svg and b"s3" in svg


def test_svg_without_the_dot_binary_is_a_clear_error(stored_run, monkeypatch):
    store, run_id = stored_run
    monkeypatch.setattr(export_module.shutil, "which", lambda name: None)
    with pytest.raises(GraphvizMissingError, match="Graphviz 'dot' program") as caught:
        export_run(store, run_id, "svg")
    assert isinstance(caught.value, PlanBoardError)


def test_bad_dot_text_and_unknown_format(stored_run):
    store, run_id = stored_run
    if shutil.which("dot") is not None:
        with pytest.raises(ExportError, match="Graphviz 'dot' failed"):
            render_svg("digraph {")
    with pytest.raises(ExportError, match="unknown export format"):
        export_run(store, run_id, "pdf")


def test_no_api_key_in_any_export(stored_run, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    store, run_id = stored_run
    for fmt in ("json", "md", "dot"):
        assert FAKE_KEY not in export_run(store, run_id, fmt)
    if shutil.which("dot") is not None:
        assert FAKE_KEY.encode() not in export_run(store, run_id, "svg")


def test_a_json_export_holds_no_secret_and_no_removed_field(tmp_path):
    """A record has no owner, heartbeat nor control request any more: what an older version
    left in those unused columns does not reach an export, nor does a secret."""
    store = RunStore(f"sqlite:///{tmp_path / 'runs.db'}")
    run_id = store.create_run("a request", {"offline": True, "api_key": FAKE_KEY},
                              options={"token": FAKE_KEY, "max_parallel": 2}, workflow_id="wf-1")
    with store.engine.begin() as conn:
        conn.execute(runs.update().where(runs.c.id == run_id).values(
            owner_pid=4242, owner_host="host-that-ran-it", control_request="pause"))
    text = export_run(store, run_id, "json")
    data = json.loads(text)
    assert (data["run_id"], data["request"], data["workflow_id"]) == (run_id, "a request", "wf-1")
    assert (data["settings"], data["options"]) == ({"offline": True}, {"max_parallel": 2})
    removed = {"owner_pid", "owner_host", "heartbeat_at", "control_request", "control_at"}
    assert not removed & set(data)
    assert FAKE_KEY not in text and "host-that-ran-it" not in text
    store.close()
