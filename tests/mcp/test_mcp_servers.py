"""MCP servers as toolsets, against real servers: the reference git and time servers, and
the tests' own (tests/mcp_servers) for the bad paths.

The servers of one configuration are started once for the whole module (the process's
pool, as in the dashboard or a worker) and stopped at its end; each test names the
configuration in its own environment. Nothing here touches the network; the only timings
asserted are generous upper bounds ("it does not hang").
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.base.messages import render
from core.cli.main import main
from core.execution.executor import execute_step
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.tools.mcp.content import MAX_RESULT_CHARS
from core.tools.mcp.pool import current_pool, shutdown_pool
from core.tools.toolsets import default_registry
from tests.support.mcp import (
    REPO,
    branches,
    make_repo,
    own_server,
    process_state,
    reference_server,
    server_processes,
    write_config,
)
from tests.support.waiting import wait_until

pytestmark = pytest.mark.usefixtures("dbos_of_the_module")

CALL_TIMEOUT_S = 2


@pytest.fixture(scope="module")
def place(tmp_path_factory) -> Iterator[dict[str, Path]]:
    """The module's repository and configuration files; its servers stop at the end."""
    root = tmp_path_factory.mktemp("mcp")
    repo = make_repo(root / "repo")
    reference = write_config(root / "reference.json", {
        "git": reference_server("mcp_server_git"),
        "time": reference_server("mcp_server_time"),
    })
    troubles = write_config(root / "troubles.json", {
        "troubles": own_server("troubles"),
        # the same server with a short call limit, for the call that hangs (the others, a
        # 5 MB answer say, keep the default: a busy machine may take seconds over them)
        "stalls": own_server("troubles", timeout=CALL_TIMEOUT_S),
        "exits": own_server("broken_start", "exit"),
        "hangs": own_server("broken_start", "hang", startTimeout=2),
        "garbage": own_server("broken_start", "garbage", startTimeout=10),
    })
    yield {"repo": repo, "reference": reference, "troubles": troubles}
    shutdown_pool()


@pytest.fixture
def reference(place, monkeypatch) -> Path:
    """This test's environment: builtin tools and the git and time servers; the repo."""
    monkeypatch.setenv("PLANBOARD_TOOLSETS", "builtin")
    monkeypatch.setenv("PLANBOARD_MCP_CONFIG", str(place["reference"]))
    return place["repo"]


@pytest.fixture
def troubles(place, monkeypatch) -> None:
    """This test's environment: builtin tools and the misbehaving servers."""
    monkeypatch.setenv("PLANBOARD_TOOLSETS", "builtin")
    monkeypatch.setenv("PLANBOARD_MCP_CONFIG", str(place["troubles"]))


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_step(tool: str, args: dict) -> tuple:
    """Execute one step calling ``tool`` (a fresh registry, as a new run's engine has)."""
    step = Step(id="s1", description=f"call {tool}", tool=tool, args=args)
    plan = Plan(goal=f"call {tool}", steps=[step])
    started = time.monotonic()
    outcome = execute_step(plan, step, Engine(registry=default_registry(), model=None))
    return outcome, time.monotonic() - started


# ---- the reference servers ------------------------------------------------------------------


def test_tools_json_lists_the_servers_tools_with_source_and_side_effect(reference, capsys):
    code, out, err = cli(capsys, "tools", "--json")
    assert (code, err) == (0, "")
    tools = {entry["name"]: entry for entry in json.loads(out)}
    assert tools["git__git_log"]["side_effect"] is False  # the server's readOnlyHint
    assert tools["git__git_create_branch"]["side_effect"] is True
    assert tools["git__git_reset"]["side_effect"] is True
    assert tools["git__git_reset"]["idempotent"] is True  # its idempotentHint
    assert tools["git__git_create_branch"]["idempotent"] is False
    assert tools["time__get_current_time"]["source"] == "time"
    assert tools["git__git_log"]["source"] == "git"
    assert tools["calculate"]["source"] == "builtin"
    assert "query_order" not in tools and "apply_refund" not in tools  # no demo tool
    assert tools["git__git_log"]["parameters"]["required"] == ["repo_path"]


def test_call_prints_the_last_commits_message(reference, capsys):
    args = json.dumps({"repo_path": str(reference), "max_count": 1})
    code, out, _ = cli(capsys, "call", "git__git_log", "--args", args)
    assert code == 0 and "Message: first commit: the README" in out


def test_time_servers_structured_content_is_the_result_as_data(reference):
    outcome, _ = run_step("time__get_current_time", {"timezone": "Europe/London"})
    assert outcome.status == "completed"
    assert outcome.result["timezone"] == "Europe/London"
    assert set(outcome.result) >= {"datetime", "day_of_week", "is_dst"}


def test_arguments_are_checked_against_the_servers_schema_before_the_call(reference):
    outcome, _ = run_step("git__git_log", {"repo_path": 7})
    assert outcome.status == "failed"
    assert "repo_path: 7 is not of type 'string'" in outcome.error


def _branch_plan(tmp_path: Path, repo: Path, branch: str) -> str:
    steps = [
        {"id": "s1", "description": "Read the last commit", "tool": "git__git_log",
         "args": {"repo_path": str(repo), "max_count": 1}, "depends_on": []},
        {"id": "s2", "description": f"Create the branch {branch}",
         "tool": "git__git_create_branch",
         "args": {"repo_path": str(repo), "branch_name": branch}, "depends_on": ["s1"]},
        {"id": "s3", "description": "Say what was done", "tool": None,
         "depends_on": ["s1", "s2"]},
    ]
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"goal": f"Branch {branch} off the last commit",
                                "steps": steps}), encoding="utf-8")
    return str(path)


def test_a_plan_of_git_steps_runs_offline_and_creates_the_branch(reference, capsys, tmp_path):
    plan = _branch_plan(tmp_path, reference, "feature-yes")
    code, out, err = cli(capsys, "run", "--plan", plan, "--yes", "--offline", "--json")
    summary = json.loads(out)
    assert (code, summary["status"]) == (0, "completed"), err
    assert "feature-yes" in branches(reference)
    steps = {step["id"]: step for step in summary["plan"]["steps"]}
    assert "first commit: the README" in steps["s1"]["result"]
    assert "feature-yes" in steps["s2"]["result"]
    assert "feature-yes" in summary["answer"]  # the offline answer reports both results


def test_answering_no_to_the_plan_creates_no_branch(reference, capsys, tmp_path, monkeypatch):
    monkeypatch.setattr("builtins.input", lambda question: "n")
    plan = _branch_plan(tmp_path, reference, "feature-no")
    code, out, _ = cli(capsys, "run", "--plan", plan, "--offline")
    assert code == 1 and "Not executed." in out
    assert "feature-no" not in branches(reference)


# ---- servers that do not start ------------------------------------------------------------


def test_servers_that_cannot_start_are_one_line_each_and_the_others_work(troubles, capsys):
    started = time.monotonic()
    code, out, err = cli(capsys, "tools", "--json")
    assert code == 0 and time.monotonic() - started < 60  # a hanging start is cut off
    names = {entry["name"] for entry in json.loads(out)}
    assert {"calculate", "troubles__pid", "troubles__hang"} <= names
    assert not any(name.startswith(("exits__", "hangs__", "garbage__")) for name in names)
    lines = err.splitlines()
    assert len(lines) == 3, err
    exits, hangs, garbage = (next(line for line in lines if f"server {name} " in line)
                             for name in ("exits", "hangs", "garbage"))
    assert "could not start" in exits and "cannot open the database at /nowhere" in exits
    assert "did not answer within 2 s" in hangs and "startTimeout" in hangs
    assert "not MCP" in garbage and "Welcome to my server!" in garbage
    outcome, _ = run_step("troubles__pid", {})
    assert outcome.status == "completed"


def test_the_chinese_command_line_words_a_failed_server_in_chinese(troubles, capsys,
                                                                    monkeypatch):
    monkeypatch.setenv("PLANBOARD_LANG", "zh")
    _, _, err = cli(capsys, "tools")
    assert "MCP 服务器 exits 无法启动" in err


# ---- calls that go wrong ---------------------------------------------------------------------


def test_a_hanging_call_fails_its_step_within_the_servers_timeout(troubles):
    outcome, took = run_step("stalls__hang", {})
    assert outcome.status == "failed"
    assert outcome.error == (
        f"stalls__hang: MCP server stalls did not answer within {CALL_TIMEOUT_S} s; the "
        "call was abandoned (raise its \"timeout\" in "
        f"{os.environ['PLANBOARD_MCP_CONFIG']} if it needs longer).")
    assert took < CALL_TIMEOUT_S + 10
    again, _ = run_step("stalls__pid", {})  # the server still answers
    assert again.status == "completed", again.error


def test_is_error_fails_the_step_with_the_servers_text(troubles):
    outcome, _ = run_step("troubles__fail", {"reason": "the disk is full"})
    assert outcome.status == "failed"
    assert outcome.error.startswith("troubles__fail failed on MCP server troubles: ")
    assert outcome.error.endswith("the disk is full")
    assert "失败" in render(outcome.error_message, "zh")


def test_a_server_that_dies_is_started_again_for_the_next_call(troubles):
    first, _ = run_step("troubles__pid", {})
    died, _ = run_step("troubles__die", {})
    assert died.status == "failed" and "stopped during the call" in died.error
    assert "started again for the next call" in died.error
    second, _ = run_step("troubles__pid", {})
    assert second.status == "completed"
    assert second.result["pid"] != first.result["pid"]
    assert process_state(first.result["pid"]) is None  # reaped, no zombie
    os.kill(second.result["pid"], signal.SIGKILL)  # it dies between calls this time
    third, _ = run_step("troubles__pid", {})
    assert third.status == "completed", third.error
    assert third.result["pid"] != second.result["pid"]


def test_a_5_mb_answer_is_cut_before_it_reaches_the_run(troubles):
    outcome, _ = run_step("troubles__huge", {"megabytes": 5})
    assert outcome.status == "completed", outcome.error
    assert len(outcome.result) < MAX_RESULT_CHARS + 200
    assert "[cut: the answer was 5,242,880 characters" in outcome.result


def test_a_text_answer_that_is_a_json_object_has_fields_a_later_step_reads(troubles):
    steps = [Step(id="s1", description="look up", tool="troubles__order", args={}),
             Step(id="s2", description="echo its status", tool="troubles__mirror",
                  args={"text": "{{s1.status}}"}, depends_on=["s1"])]
    plan = Plan(goal="status", steps=steps)
    engine = Engine(registry=default_registry(), model=None)
    first = execute_step(plan, steps[0], engine)
    steps[0].status, steps[0].result = "completed", first.result
    second = execute_step(plan, steps[1], engine)
    assert (second.status, second.result) == ("completed", "shipped")


def test_a_new_tool_list_announced_by_the_server_is_in_the_next_registry(troubles):
    before = default_registry()
    assert "troubles__extra" not in before
    generation = current_pool().generation
    outcome, _ = run_step("troubles__grow", {})
    assert outcome.status == "completed"
    wait_until(lambda: "troubles__extra" in default_registry(),
               what="the server's new tool in the registry")
    assert current_pool().generation > generation  # a kept registry knows to rebuild
    called, _ = run_step("troubles__extra", {})
    assert (called.status, called.result) == ("completed", "extra!")
    assert "troubles__extra" not in before  # a registry is a snapshot


def test_stopping_the_pool_leaves_no_server_process_behind(troubles):
    run_step("troubles__pid", {})
    running = [pid for pid, _ in server_processes()]
    assert running
    shutdown_pool()
    assert [pid for pid in running if process_state(pid) is not None] == []
    outcome, _ = run_step("troubles__pid", {})  # a new pool starts them again
    assert outcome.status == "completed"


# ---- streamable HTTP ---------------------------------------------------------------------------


@pytest.fixture
def http_server() -> Iterator[tuple[subprocess.Popen, int]]:
    """tests/mcp_servers/over_http.py on a free port of 127.0.0.1."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "tests.mcp_servers.over_http", str(port)],
                              cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def listening() -> bool:
            assert server.poll() is None, "the HTTP server exited"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            except OSError:
                return False
            return True

        wait_until(listening, what="the MCP server over HTTP to listen")
        yield server, port
    finally:
        server.kill()
        server.wait()


def test_a_server_over_http_gets_its_headers_with_the_secret_from_the_environment(
        http_server, tmp_path, monkeypatch):
    server, port = http_server
    config = write_config(tmp_path / "http.json", {"web": {
        "url": f"http://127.0.0.1:{port}/mcp", "timeout": CALL_TIMEOUT_S,
        "headers": {"Authorization": "Bearer ${WEB_TOKEN}"}}})
    monkeypatch.setenv("PLANBOARD_TOOLSETS", "builtin")
    monkeypatch.setenv("PLANBOARD_MCP_CONFIG", str(config))
    monkeypatch.setenv("WEB_TOKEN", "web-token-73a1c9")
    assert default_registry().get("web__whoami").side_effect is False
    outcome, _ = run_step("web__whoami", {})
    # the header reached the server; its answer comes back with the secret redacted
    assert (outcome.status, outcome.result) == ("completed",
                                                "authorized as Bearer [secret WEB_TOKEN]")
    server.kill()
    server.wait()
    gone, took = run_step("web__whoami", {})
    assert gone.status == "failed" and "MCP server web" in gone.error
    assert took < CALL_TIMEOUT_S + 10
