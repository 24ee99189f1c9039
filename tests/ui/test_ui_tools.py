"""AppTest of the Tools page: where the tools come from (toolsets and MCP servers, running or
failed with the reason), the catalogue with sources, schemas and side effects, and trying a
tool (an MCP server's too)."""

from __future__ import annotations

import json

import pytest

from core.tools.sources import retry_server
from core.tools.toolsets import default_registry
from tests.support.app import open_app
from tests.support.mcp import own_server, reference_server, write_config
from tests.support.shown import step_heads

pytestmark = pytest.mark.usefixtures("mcp_pool_of_the_module")


@pytest.fixture
def mcp_servers(tmp_path, monkeypatch) -> None:
    """The time server and one that cannot start, beside builtin and the demo pack."""
    config = write_config(tmp_path / "mcp.json", {
        "time": reference_server("mcp_server_time"),
        "exits": own_server("broken_start", "exit"),
    })
    monkeypatch.setenv("PLANBOARD_MCP_CONFIG", str(config))


def test_every_tool_is_listed_with_its_side_effect_flag(runner):
    at = open_app("pages/tools.py")
    registry = default_registry()
    labels = [expander.label for expander in at.expander]
    for tool in registry:
        flag = " ⚠" if tool.side_effect else ""
        assert f"`{tool.name}`{flag}" in labels
    assert any("apply_refund" in label and "⚠" in label for label in labels)
    schemas = [json.loads(element.value) for element in at.json]
    assert registry.get("calculate").parameters in schemas


def test_the_chinese_catalogue_describes_the_parameters_in_chinese(runner):
    at = open_app("pages/tools.py", language="zh")
    schemas = [json.loads(element.value) for element in at.json]
    order = next(s for s in schemas if "order_id" in (s.get("properties") or {})
                 and "reason" in s["properties"])  # apply_refund's
    assert order["properties"]["order_id"]["description"] == "要退款的订单号，例如“10001”。"


def test_trying_a_tool_shows_its_result(runner):
    at = open_app("pages/tools.py")
    at.selectbox(key="tool_pick").set_value("calculate").run()
    at.text_area(key="tool_args").input('{"expression": "1999 + 1"}').run()
    at.button(key="tool_run").click().run()
    assert not at.exception and not at.error
    assert json.loads(at.json[-1].value)["value"] == 2000
    [listed] = runner.store.list_runs()  # the call is a run of the shared store
    record = runner.store.get_run(listed.run_id)
    assert record.status == "completed" and record.plan.steps[0].tool == "calculate"
    assert record.run_id in at.get("page_link")[-1].proto.label


def test_bad_arguments_give_one_line_errors(runner):
    at = open_app("pages/tools.py")
    at.selectbox(key="tool_pick").set_value("calculate").run()
    at.text_area(key="tool_args").input('{"expression": ').run()
    at.button(key="tool_run").click().run()
    assert at.error[0].value == "The arguments are not valid JSON: a value is missing at column 15"
    at.text_area(key="tool_args").input('{"expression": "1+').run()
    at.session_state["language"] = "zh"
    at.button(key="tool_run").click().run()
    assert at.error[0].value == "参数不是合法的 JSON：从第 16 列开始的字符串缺少结尾的引号"
    at.session_state["language"] = "en"
    at.text_area(key="tool_args").input('["x"]').run()
    at.button(key="tool_run").click().run()
    assert at.error[0].value.startswith("The arguments must be a JSON object")
    at.text_area(key="tool_args").input('{"nope": 1}').run()
    at.button(key="tool_run").click().run()
    assert "calculate" in at.error[0].value and "\n" not in at.error[0].value


def test_a_side_effecting_tool_needs_an_explicit_tick(runner):
    at = open_app("pages/tools.py")
    at.selectbox(key="tool_pick").set_value("apply_refund").run()
    assert at.button(key="tool_run").disabled
    at.checkbox(key="tool_side_effect_ok").check().run()
    assert not at.button(key="tool_run").disabled


def test_a_refund_tried_on_the_page_is_recorded_with_its_idempotency_key(runner):
    at = open_app("pages/tools.py")
    at.selectbox(key="tool_pick").set_value("apply_refund").run()
    at.checkbox(key="tool_side_effect_ok").check().run()
    at.text_area(key="tool_args").input(
        '{"order_id": "88231", "reason": "the item is broken"}').run()
    at.button(key="tool_run").click().run()
    assert not at.exception
    [listed] = runner.store.list_runs()
    record = runner.store.get_run(listed.run_id)
    started = [e for e in runner.store.events(record.run_id) if e.kind == "step_started"]
    assert started[0].data["idempotency_key"] == f"{record.run_id}:s1:v1"
    assert record.plan.steps[0].tool == "apply_refund"
    assert record.status in {"completed", "failed"}  # the demo shop decides; it is recorded


def test_toolsets_and_mcp_servers_are_listed_with_their_state(runner, mcp_servers):
    at = open_app("pages/tools.py")
    lines = [element.value for element in at.markdown]
    assert any("**builtin** · toolset · loaded · 2 tools" in line for line in lines)
    assert any("**demo** · toolset · loaded" in line for line in lines)
    assert any("**time** · MCP server (stdio) · running · 2 tools" in line for line in lines)
    [failed] = [element.value for element in at.error]
    assert "**exits** · MCP server (stdio) · failed · 0 tools" in failed
    assert "cannot open the database at /nowhere/db.sqlite" in failed


def test_an_mcp_tool_shows_its_server_and_badge_and_can_be_tried(runner, mcp_servers):
    at = open_app("pages/tools.py")
    labels = [expander.label for expander in at.expander]
    assert "`time__get_current_time`" in labels  # the server says it only reads: no ⚠
    captions = [caption.value for caption in at.caption]
    assert "Read-only. · from MCP server time" in captions
    assert "Read-only. · from toolset builtin" in captions
    at.selectbox(key="tool_pick").set_value("time__get_current_time").run()
    assert not at.get("checkbox")  # read-only: no tick needed
    at.text_area(key="tool_args").input('{"timezone": "Asia/Shanghai"}').run()
    at.button(key="tool_run").click().run()
    assert not at.exception and not at.error[1:]  # only the failed server's line
    assert json.loads(at.json[-1].value)["timezone"] == "Asia/Shanghai"
    [listed] = runner.store.list_runs()
    assert runner.store.get_run(listed.run_id).plan.steps[0].tool == "time__get_current_time"
    card = open_app("pages/run.py", query={"run": listed.run_id})  # the trial's step card
    assert "time__get_current_time · MCP server time" in step_heads(card)["s1"]


def test_the_chinese_page_words_the_servers_state_in_chinese(runner, mcp_servers):
    at = open_app("pages/tools.py", language="zh")
    lines = [element.value for element in at.markdown]
    assert any("**time** · MCP 服务器（stdio） · 运行中 · 2 个工具" in line for line in lines)
    assert "MCP 服务器 exits 无法启动" in at.error[0].value
    assert "只读。 · 来自 MCP 服务器 time" in [caption.value for caption in at.caption]


def test_a_server_that_failed_starts_again_once_fixed_without_a_restart(runner, tmp_path,
                                                                        monkeypatch):
    fixed = tmp_path / "configured"
    config = write_config(tmp_path / "mcp.json", {
        "late": own_server("troubles", env={"NEEDS_FILE": str(fixed)})})
    monkeypatch.setenv("PLANBOARD_MCP_CONFIG", str(config))
    at = open_app("pages/tools.py")
    [failed] = [element.value for element in at.error]
    assert "**late** · MCP server (stdio) · failed · 0 tools" in failed
    assert "configured is missing" in failed  # its stderr, the reason
    assert "`late__pid`" not in [expander.label for expander in at.expander]

    fixed.touch()  # the person fixes what kept it from starting
    at.button(key="retry_server_late").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    lines = [element.value for element in at.markdown]
    assert any("**late** · MCP server (stdio) · running" in line for line in lines)
    assert "`late__pid`" in [expander.label for expander in at.expander]
    assert not any(button.key == "retry_server_late" for button in at.button)
    assert not retry_server("late") and not retry_server("unknown")  # only a failed one
