"""The ``python -m core`` command line end to end: tools, plans, runs, in and out of process."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.base.messages import msg
from core.cli.main import main
from core.cli.output import print_progress
from core.execution.events import RunEvent
from core.execution.executor import StepOutcome
from tests.support import REPO
from tests.support.cli import use_endpoint, write_plan
from tests.support.fake_openai import FakeOpenAI, FakeRaw, text, tool_call
from tests.support.shop import refunds_for

SEED_000_ZH = (
    "我家老人想要一台扫地机，预算 2000 以内，要好操作的。"
    "另外帮我看看订单 {order} 到了没，到了的话帮我把那台坏的退掉。"
)
SEED_000_EN = (
    "My elderly parents want a robot vacuum under 2000 that is easy to use. Also check "
    "whether order {order} has arrived, and if it has, refund the broken one."
)


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_json(capsys, *argv: str) -> dict:
    code, out, err = run_cli(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)








# ---- tools and call ----------------------------------------------------------------------


def test_tools_json_lists_every_tool_with_its_schema(capsys):
    tools = run_json(capsys, "tools")
    by_name = {t["name"]: t for t in tools}
    assert by_name["apply_refund"]["side_effect"] is True
    assert by_name["calculate"]["parameters"]["required"] == ["expression"]
    assert "web_search" not in by_name  # no SearXNG configured


def test_call_prints_exactly_the_tool_result(capsys):
    result = run_json(capsys, "call", "search_knowledge", "--args",
                      '{"query": "扫地机 老人"}')
    assert list(result) == ["hits"]
    assert "S10 Lite" in result["hits"][0]["content"]


def test_call_with_arguments_that_are_not_json_says_how_to_fix_it(capsys):
    code, _, err = run_cli(capsys, "call", "calculate", "--args", "{expression: 1}")
    assert code == 1
    assert err.startswith("error: --args is not valid JSON") and err.count("\n") == 1


# ---- runs on a fake endpoint -------------------------------------------------------------


def test_llm_calls_per_step_kind_on_a_fake_endpoint(tmp_path, capsys, monkeypatch,
                                                    fake_openai):
    use_endpoint(monkeypatch, fake_openai)
    fake_openai.script(tool_call("calculate", {"expression": "2 + 3"}),
                       text("Both sums are done: 4 and 5."))
    plan = write_plan(tmp_path, [
        {"id": "s1", "description": "Add two and two", "tool": "calculate",
         "args": {"expression": "2 + 2"}, "depends_on": []},
        {"id": "s2", "description": "Add two and three", "tool": "calculate",
         "depends_on": []},
        {"id": "s3", "description": "Report both sums", "tool": None,
         "depends_on": ["s1", "s2"]},
    ])
    result = run_json(capsys, "run", "--plan", plan, "--yes")
    assert result["status"] == "completed"
    steps = {s["id"]: s for s in result["plan"]["steps"]}
    assert [steps[i]["llm_calls"] for i in ("s1", "s2", "s3")] == [0, 1, 1]
    assert steps["s2"]["result"]["value"] == 5
    forced, synthesis = fake_openai.chat_bodies
    assert [t["function"]["name"] for t in forced["tools"]] == ["calculate"]
    assert "tools" not in synthesis
    assert result["usage"]["llm_calls"] == 2
    assert result["usage"]["prompt_tokens"] > 0
    assert result["answer"] == "Both sums are done: 4 and 5."


def test_a_failing_step_is_replanned_into_version_2(tmp_path, capsys, monkeypatch,
                                                    fake_openai):
    use_endpoint(monkeypatch, fake_openai)
    replacement = {"goal": "divide", "steps": [
        {"id": "s4", "description": "Divide six by two instead", "tool": "calculate",
         "args": {"expression": "6 / 2"}, "depends_on": []},
        {"id": "s5", "description": "Report the results", "tool": None,
         "depends_on": ["s4"]},
    ]}
    fake_openai.script(text(json.dumps(replacement)), text("1+1 is 2 and 6/2 is 3."))
    plan = write_plan(tmp_path, [
        {"id": "s1", "description": "Add", "tool": "calculate",
         "args": {"expression": "1 + 1"}, "depends_on": []},
        {"id": "s2", "description": "Divide by zero", "tool": "calculate",
         "args": {"expression": "1 / 0"}, "depends_on": []},
        {"id": "s3", "description": "Report", "tool": None, "depends_on": ["s1", "s2"]},
    ], goal="divide")
    result = run_json(capsys, "run", "--plan", plan, "--yes")
    assert result["status"] == "completed"
    assert result["versions"] == 2
    steps = {s["id"]: s for s in result["plan"]["steps"]}
    assert steps["s1"]["status"] == "completed" and steps["s1"]["result"]["value"] == 2
    assert "s2" not in steps or steps["s2"]["status"] != "completed"
    assert any(s["status"] == "completed" and (s["result"] or {}).get("value") == 3
               for s in steps.values() if isinstance(s["result"], dict))
    assert result["answer"] == "1+1 is 2 and 6/2 is 3."
    assert result["usage"]["llm_calls"] == 2  # the replanning call and the synthesis


def test_without_a_key_the_cli_points_to_the_offline_planner(capsys):
    code, _, err = run_cli(capsys, "plan", "check order 88231")
    assert code == 1
    assert "--offline" in err and "OPENAI_API_KEY" in err


@pytest.mark.parametrize("argv", [("plan", "--offline"), ("run", "--offline", "--yes"),
                                  ("run", "--offline", "--yes", "--detach")])
def test_a_request_over_the_limit_is_refused_with_the_limit_not_cut(capsys, argv):
    """Issue 44: a 20,000-character request was planned from its first 4,000, cut mid-word."""
    request = "check whether order 88231 has arrived. " + "It was delivered broken. " * 800
    code, out, err = run_cli(capsys, *argv, request)
    assert code == 1 and out == ""
    assert err.strip().splitlines() == [
        "error: The request is 20,039 characters long; the limit is 4,000. Shorten it to "
        "what should be done and send it again."]


def test_a_request_at_the_limit_is_planned(capsys):
    request = "check whether order 88231 has arrived. " + "It was delivered broken. " * 158
    assert len(request) == 3989
    plan = run_json(capsys, "plan", "--offline", request + " Thank you.")
    assert plan["goal"] == request + " Thank you."  # all 4,000 characters
    assert plan["steps"][0]["args"] == {"order_id": "88231"}


def test_run_asks_before_executing_and_stops_on_no(capsys, monkeypatch):
    monkeypatch.setattr("builtins.input", lambda _question: "n")
    code, out, _ = run_cli(capsys, "run", "check order 70412", "--offline")
    assert code == 1
    assert "Not executed." in out
    assert refunds_for("70412") == []


# ---- the offline seed-000 scenario ------------------------------------------------------


def test_seed_000_offline_refunds_once_and_names_the_refund(capsys):
    first = run_json(capsys, "run", SEED_000_ZH.format(order="88231"), "--offline", "--yes")
    tools = [s["tool"] for s in first["plan"]["steps"]]
    assert tools == ["search_knowledge", "query_order", "apply_refund", None]
    assert "status" in first["plan"]["steps"][2]["condition"]
    refund_id = first["plan"]["steps"][2]["result"]["refund_id"]
    assert first["status"] == "completed"
    assert "比特 S10 Lite" in first["answer"] and refund_id in first["answer"]

    second = run_json(capsys, "run", SEED_000_ZH.format(order="88231"), "--offline", "--yes")
    assert second["status"] == "completed"
    assert refund_id in second["answer"]
    assert len(refunds_for("88231")) == 1


def test_seed_000_in_english_has_the_same_plan_shape(capsys):
    result = run_json(capsys, "run", SEED_000_EN.format(order="88231"), "--offline", "--yes")
    assert [s["tool"] for s in result["plan"]["steps"]] == [
        "search_knowledge", "query_order", "apply_refund", None]
    assert "S10 Lite" in result["answer"]


def test_an_order_in_transit_is_not_refunded_and_the_answer_says_why(capsys):
    result = run_json(capsys, "run", SEED_000_ZH.format(order="70412"), "--offline", "--yes")
    refund = result["plan"]["steps"][2]
    assert refund["status"] == "skipped"
    assert refunds_for("70412") == []
    assert "70412" in result["answer"] and "运输" in result["answer"]


def test_an_order_already_refunding_gets_no_second_refund(capsys):
    before = refunds_for("66001")
    result = run_json(capsys, "run", SEED_000_ZH.format(order="66001"), "--offline", "--yes")
    assert result["status"] == "completed"
    assert refunds_for("66001") == before
    assert before[0][0] in result["answer"]


def test_the_operations_scenario_names_every_unhealthy_service(capsys):
    from demo.scenarios import get_scenario

    health = run_json(capsys, "call", "check_health", "--args", '{"service": "all"}')
    unhealthy = health["unhealthy"]
    assert unhealthy
    result = run_json(capsys, "run", get_scenario("ops-health").request_en, "--offline",
                      "--yes")
    assert result["status"] == "completed"
    diagnosis, scaling = result["answer"].split("Diagnosis:")[1].split("Scaling suggestions:")
    for service in unhealthy:
        assert f"- {service} (" in diagnosis and "likely cause" in diagnosis
        assert f"- {service}: replicas" in scaling


# ---- bad input, as a user sees it: one line, non-zero exit, no traceback -----------------


def cli_process(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items()
                   if not k.startswith(("OPENAI_", "PLANBOARD_"))}
    environment.update(PYTHONPATH=str(REPO), PLANBOARD_HOME=str(tmp_path / "home"))
    return subprocess.run([sys.executable, "-m", "core", *argv], cwd=tmp_path, env=environment,
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


def one_error_line(code: int, err: str) -> str:
    assert code == 1, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, err
    return lines[0]


def refused(capsys, caplog, *argv: str) -> tuple[str, str, str]:
    """``python -m core ARGV`` run in this process (``main``), refused: exit code 1, no
    traceback, one error line, and nothing logged at ERROR, which the process would print
    too. Its error line, stdout and stderr."""
    code, out, err = run_cli(capsys, *argv)
    assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    return one_error_line(code, err), out, err


def test_a_plan_file_with_an_unknown_tool_is_one_line_from_the_process(tmp_path):
    plan = write_plan(tmp_path, [{"id": "s1", "description": "fly", "tool": "teleport",
                                  "depends_on": []}])
    result = cli_process(tmp_path, "run", "--plan", plan, "--yes", "--offline")
    line = one_error_line(result.returncode, result.stderr)
    assert "s1" in line and "teleport" in line


def test_a_cyclic_plan_file_is_refused(tmp_path, capsys, caplog):
    plan = write_plan(tmp_path, [
        {"id": "s1", "description": "a", "tool": "calculate",
         "args": {"expression": "1"}, "depends_on": ["s2"]},
        {"id": "s2", "description": "b", "tool": "calculate",
         "args": {"expression": "2"}, "depends_on": ["s1"]},
    ])
    line, _, _ = refused(capsys, caplog, "run", "--plan", plan, "--yes", "--offline")
    assert "cycle" in line


def test_invalid_tool_arguments_are_refused(capsys, caplog):
    line, _, _ = refused(capsys, caplog, "call", "calculate", "--args", '{"formula": "1+1"}')
    assert "calculate" in line and "expression" in line


def _endpoint(monkeypatch, base_url: str, key: str) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", base_url)
    monkeypatch.setenv("OPENAI_API_KEY", key)
    monkeypatch.setenv("PLANBOARD_MAX_RETRIES", "0")


def test_a_wrong_key_is_reported(capsys, caplog, monkeypatch):
    with FakeOpenAI() as server:
        _endpoint(monkeypatch, server.base_url, "sk-wrong")
        line, out, err = refused(capsys, caplog, "plan", "check order 88231")
    assert "API key" in line
    assert "sk-wrong" not in err + out + caplog.text


def test_an_unreachable_endpoint_is_reported(capsys, caplog, monkeypatch):
    with FakeOpenAI() as server:
        closed = server.base_url  # the port is closed once the server stops
    _endpoint(monkeypatch, closed, "sk-any")
    monkeypatch.setenv("PLANBOARD_TIMEOUT", "5")
    line, _, _ = refused(capsys, caplog, "plan", "check order 88231")
    assert "Cannot reach" in line


def test_a_garbage_reply_while_planning_is_one_line_on_stderr(capsys, caplog, monkeypatch):
    with FakeOpenAI(responder=lambda _request: FakeRaw(body='{"choices": "nope"}')) as server:
        _endpoint(monkeypatch, server.base_url, server.api_key)
        line, out, err = refused(capsys, caplog, "plan", "check order 88231")
    assert server.base_url in line and "without choices" in line
    assert err.count("\n") == 1 and out == ""


def test_a_plan_file_and_a_routing_mode_do_not_mix(tmp_path, capsys):
    plan = write_plan(tmp_path, [{"id": "s1", "description": "add", "tool": "calculate",
                                  "args": {"expression": "1 + 1"}, "depends_on": []}])
    code, _, err = run_cli(capsys, "run", "--plan", plan, "--mode", "auto", "--offline",
                           "--yes")
    assert code == 1 and "Drop --mode or --plan" in err


def test_the_command_line_speaks_chinese_when_asked(capsys, monkeypatch):
    monkeypatch.setenv("PLANBOARD_LANG", "zh")
    monkeypatch.setattr("builtins.input", lambda question: "否")
    code, out, _ = run_cli(capsys, "run", "查一下订单 70412", "--offline")
    assert code == 1
    assert "个步骤，关键路径" in out and "未执行。" in out
    monkeypatch.setenv("PLANBOARD_LANG", "en")
    code, out, _ = run_cli(capsys, "run", "查一下订单 70412", "--offline")
    assert "steps, critical path" in out and "Not executed." in out


def test_a_step_skipped_by_its_condition_is_said_in_the_command_lines_language(
        tmp_path, capsys, monkeypatch):
    plan = write_plan(tmp_path, [
        {"id": "s1", "description": "Look up order 88231", "tool": "query_order",
         "args": {"order_id": "88231"}, "depends_on": []},
        {"id": "s2", "description": "Add when it is lost", "tool": "calculate",
         "args": {"expression": "1 + 1"}, "depends_on": ["s1"],
         "condition": "s1.status == 'lost'"},
        {"id": "s3", "description": "Say what it is", "tool": None, "depends_on": ["s1", "s2"]},
    ])
    monkeypatch.setenv("PLANBOARD_LANG", "zh")
    code, out, _ = run_cli(capsys, "run", "--plan", plan, "--yes", "--offline")
    assert code == 0 and "  ⏭ s2 跳过：条件不满足：s1.status == 'lost'\n" in out
    monkeypatch.setenv("PLANBOARD_LANG", "en")
    code, out, _ = run_cli(capsys, "run", "--plan", plan, "--yes", "--offline")
    assert code == 0 and "  ⏭ s2 skipped: condition not met: s1.status == 'lost'\n" in out


def test_the_final_line_says_how_the_run_ended_in_the_command_lines_language(
        tmp_path, capsys, monkeypatch):
    plan = write_plan(tmp_path, [{"id": "s1", "description": "add", "tool": "calculate",
                                  "args": {"expression": "1 + 1"}, "depends_on": []}])
    monkeypatch.setenv("PLANBOARD_LANG", "zh")
    code, out, _ = run_cli(capsys, "run", "--plan", plan, "--yes", "--offline")
    assert code == 0 and "\n已完成：" in out and "\ncompleted:" not in out
    monkeypatch.setenv("PLANBOARD_LANG", "en")
    code, out, _ = run_cli(capsys, "run", "--plan", plan, "--yes", "--offline")
    assert code == 0 and "\ncompleted: " in out


@pytest.mark.parametrize(("language", "line"), [
    ("zh", "  [已重新规划] v2: s1, s2\n"), ("en", "  [replanned] v2: s1, s2\n")])
def test_a_replan_is_labelled_in_the_command_lines_language(monkeypatch, language, line):
    monkeypatch.setenv("PLANBOARD_LANG", language)
    out = io.StringIO()
    print_progress(RunEvent(kind="replanned", data={"version": 2, "steps": ["s1", "s2"]}), out)
    assert out.getvalue() == line


def test_a_step_skipped_after_a_failure_is_said_in_the_command_lines_language(
        tmp_path, capsys, monkeypatch):
    plan = write_plan(tmp_path, [
        {"id": "s1", "description": "Look up order 99999", "tool": "query_order",
         "args": {"order_id": "99999"}, "depends_on": []},
        {"id": "s2", "description": "Add", "tool": "calculate",
         "args": {"expression": "1 + 1"}, "depends_on": ["s1"]},
        {"id": "s3", "description": "Say what it is", "tool": None, "depends_on": ["s2"]},
    ])
    monkeypatch.setenv("PLANBOARD_LANG", "zh")
    _, out, _ = run_cli(capsys, "run", "--plan", plan, "--yes", "--offline")
    assert "  ⏭ s2 跳过：所依赖的步骤 s1 失败\n" in out
    monkeypatch.setenv("PLANBOARD_LANG", "en")
    _, out, _ = run_cli(capsys, "run", "--plan", plan, "--yes", "--offline")
    assert "  ⏭ s2 skipped: depends on failed step s1\n" in out


@pytest.mark.parametrize(("code", "zh", "en"), [
    ("step.rejected", "已被人拒绝", "rejected by a person"),
    ("step.cancelled", "已被人取消", "cancelled by a person"),
    ("step.never_ready", "所依赖的步骤始终没有完成", "its dependencies never finished"),
])
def test_every_reason_the_scheduler_skips_a_step_for_is_said_in_either_language(
        monkeypatch, code, zh, en):
    skipped = StepOutcome.skipped(msg(code))
    event = RunEvent(kind="step_skipped", step_id="s2",
                     data={"error": skipped.error,
                           "error_message": skipped.error_message.model_dump()})
    for language, reason, word in (("zh", zh, "跳过："), ("en", en, "skipped: ")):
        monkeypatch.setenv("PLANBOARD_LANG", language)
        out = io.StringIO()
        print_progress(event, out)
        assert out.getvalue() == f"  ⏭ s2 {word}{reason}\n"


@pytest.mark.parametrize("argv", [("runs",), ("tools",), ("tools", "--json")])
def test_a_reader_that_closed_the_pipe_ends_the_command_quietly(tmp_path, argv):
    main(["run", "--offline", "--yes", "check whether order 88231 has arrived"])
    reading, writing = os.pipe()
    os.close(reading)  # like `| head -1` that has already gone: every write gets EPIPE
    try:
        result = subprocess.run(
            [sys.executable, "-m", "core", *argv], cwd=tmp_path, stdout=writing,
            stderr=subprocess.PIPE, text=True, timeout=60, stdin=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": str(REPO)})
    finally:
        os.close(writing)
    assert (result.returncode, result.stderr) == (0, "")


def test_print_json_prints_strict_json_whatever_the_value(capsys):
    from core.cli.output import print_json

    print_json({"nan": float("nan"), "inf": float("-inf"), "blob": b"\x01", "text": "\ud800"})
    assert json.loads(capsys.readouterr().out) == {
        "nan": "nan", "inf": "-inf", "blob": "X'01'", "text": "\ufffd"}
