"""Traces where teams look: with OTEL_EXPORTER_OTLP_ENDPOINT set, a run is one OpenTelemetry
trace (submit → run → step → LLM call and tool call), linked across the processes that
execute it, carrying the GenAI attributes and never a key, an MCP secret or an argument's
value; with it unset, no SDK is imported and no exporter thread runs.

The traces go to an OTLP/HTTP receiver each test starts (tests/support/otlp_receiver.py), which
decodes them with the protobuf classes the exporter itself uses.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
from opentelemetry import trace as otel_trace

from core.base import tracing
from core.execution.scheduler import RunOptions
from core.llm.client import OpenAIChatModel
from core.llm.engine import Engine
from core.plan.model import Phase, Plan, Step
from core.runs import dispatch, durable
from core.runs.session import public_settings
from core.store.run_store import RunStore
from core.tools.toolsets import default_registry
from tests.support import REPO
from tests.support.core_processes import CoreProcesses
from tests.support.durable_runs import await_status
from tests.support.fake_openai import FakeOpenAI, text, tool_call
from tests.support.mcp import own_server, write_config
from tests.support.otlp_receiver import OTLPReceiver, ReceivedSpan
from tests.support.waiting import DEFAULT_TIMEOUT_S

pytestmark = pytest.mark.usefixtures("dbos_of_the_module", "mcp_pool_of_the_module")

API_KEY = "sk-trace-canary-4d1f0e9c8b7a6d5e"  # recognisable wherever it would leak
MCP_SECRET = "pb-mcp-canary-a1b2c3d4e5f6a7b8"  # given to the MCP server as ${PB_TRACE_TOKEN}
ARGUMENT_VALUE = "arg-canary-9e8d7c6b5a49"  # a tool argument's value
MODEL = "gpt-4o-mini"


@pytest.fixture
def receiver(monkeypatch: pytest.MonkeyPatch) -> Iterator[OTLPReceiver]:
    """A receiver, and this process's traces pointed at it (batches every 50 ms); the
    exporter is shut down while the receiver still listens."""
    with OTLPReceiver() as started:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", started.endpoint)
        monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
        try:
            yield started
        finally:
            tracing.shutdown()


def _answer(body: dict) -> object:
    """The fake model: a forced call of the one tool offered, else a short answer."""
    tools = body.get("tools") or []
    if len(tools) == 1:
        return tool_call(tools[0]["function"]["name"], {"expression": "6 * 7"})
    return text("The result is 42: six times seven, as computed by the calculator.")


def five_step_plan() -> Plan:
    """An MCP tool (given a secret), an MCP tool with an argument, a calculation whose
    arguments the model fills in, a reasoning step and the answer."""
    return Plan(goal="What is six times seven?", steps=[
        Step(id="s1", description="ask the vault who it is", tool="vault__whoami", args={}),
        Step(id="s2", description="mirror a value", tool="vault__mirror",
             args={"text": ARGUMENT_VALUE}),
        Step(id="s3", description="calculate six times seven", tool="calculate",
             depends_on=["s1", "s2"]),
        Step(id="s4", description="explain the result of the calculation", depends_on=["s3"]),
        Step(id="s5", description="answer the question", depends_on=["s4"]),
    ])


def by_name(spans: list[ReceivedSpan], prefix: str) -> list[ReceivedSpan]:
    return [span for span in spans if span.name.startswith(prefix)]


def test_a_five_step_run_is_one_trace_with_genai_spans_and_no_secret(
        receiver, runner, tmp_path, monkeypatch):
    config = write_config(tmp_path / "mcp.json", {
        "vault": own_server("troubles", env={"API_TOKEN": "${PB_TRACE_TOKEN}"})})
    monkeypatch.setenv("PB_TRACE_TOKEN", MCP_SECRET)
    monkeypatch.setenv("PLANBOARD_TOOLSETS", "builtin")
    monkeypatch.setenv("PLANBOARD_MCP_CONFIG", str(config))
    with FakeOpenAI(api_key=API_KEY, responder=_answer) as server:
        model = OpenAIChatModel(server.settings(model=MODEL))
        engine = Engine(registry=default_registry(), model=model)
        settings = {"offline": False, "base_url": server.base_url, "executor_model": MODEL,
                    "planner_model": MODEL, "provider": "generic"}
        run_id = runner.start("What is six times seven?", five_step_plan(), engine=engine,
                              options=RunOptions(confirm_side_effects=False),
                              settings_public=settings)
        record = runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S)
        calls = len(server.chat_bodies)
    assert record.status == "completed", record
    tracing.flush()
    spans = receiver.wait_for(lambda found: len(by_name(found, "step ")) == 5
                              and by_name(found, "run"), what="five step spans and the run")

    # one trace: submit (the root) → run → five steps → their LLM and tool calls
    assert {span.trace_id for span in spans} == {spans[0].trace_id}
    [submit] = by_name(spans, "submit run")
    [run] = [span for span in spans if span.name == "run"]
    assert submit.parent_id == "" and submit.kind == "producer"
    assert run.parent_id == submit.span_id
    assert run.attributes["planboard.run.id"] == run_id
    assert run.attributes["planboard.run.status"] == "completed"
    steps = {span.attributes["planboard.step.id"]: span for span in by_name(spans, "step ")}
    assert sorted(steps) == ["s1", "s2", "s3", "s4", "s5"]
    assert {span.parent_id for span in steps.values()} == {run.span_id}
    assert {span.attributes["planboard.step.status"] for span in steps.values()} == {
        "completed"}
    assert steps["s3"].attributes["planboard.step.mode"] == "forced_tool"

    # a span per LLM call, under its step (or a decision of the run), with GenAI attributes
    chats = by_name(spans, "chat ")
    assert calls >= 3 and len(chats) == calls
    parents = {span.span_id: span for span in spans}
    assert all(parents[chat.parent_id].name.startswith(("step ", "decide "))
               for chat in chats), chats
    for chat in chats:
        assert chat.name == f"chat {MODEL}" and chat.kind == "client"
        assert chat.attributes["gen_ai.operation.name"] == "chat"
        assert chat.attributes["gen_ai.provider.name"] == "openai"
        assert chat.attributes["gen_ai.request.model"] == MODEL
        assert chat.attributes["gen_ai.response.model"] == MODEL
        assert chat.attributes["gen_ai.usage.input_tokens"] > 0
        assert chat.attributes["gen_ai.usage.output_tokens"] > 0
        assert chat.attributes["gen_ai.response.finish_reasons"] in (["stop"], ["tool_calls"])
        assert chat.attributes["server.address"] == "127.0.0.1"
    forced = [chat for chat in chats if chat.parent_id == steps["s3"].span_id]
    assert [chat.attributes["gen_ai.response.finish_reasons"] for chat in forced] == [
        ["tool_calls"]]

    # a span per tool call: its name and outcome, the arguments' names but not their values
    tools = {span.attributes["gen_ai.tool.name"]: span for span in by_name(spans, "execute_tool")}
    assert set(tools) >= {"vault__whoami", "vault__mirror", "calculate"}
    assert tools["vault__mirror"].parent_id == steps["s2"].span_id
    assert tools["vault__mirror"].attributes["planboard.tool.argument_names"] == ["text"]
    assert tools["vault__mirror"].attributes["planboard.tool.outcome"] == "ok"
    assert tools["calculate"].attributes["gen_ai.operation.name"] == "execute_tool"

    # no key, no MCP secret, no argument value anywhere in what was exported
    exported = b"".join(receiver.bodies)
    for secret in (API_KEY, MCP_SECRET, ARGUMENT_VALUE):
        assert secret.encode() not in exported, secret
    # the spans of the libraries below (the MCP SDK's carry a server's unredacted errors)
    # are not exported: PlanBoard's provider is not the global one
    assert isinstance(otel_trace.get_tracer_provider(), otel_trace.ProxyTracerProvider)


def test_a_run_submitted_here_and_executed_by_a_worker_is_one_trace(
        receiver, tmp_path, isolated_environment):
    env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint}
    processes = CoreProcesses(tmp_path / "processes", env)
    try:
        worker = processes.start("worker", "worker", "--name", "tracer", "--concurrency", "2")
        processes.await_output(worker, "serving runs", 120)
        assert f"traces of its runs go to {receiver.endpoint}" in worker.output()
        store = RunStore()
        try:
            plan = Plan(goal="add up", steps=[
                Step(id="s1", description="add", tool="calculate", args={"expression": "2+3"}),
                Step(id="s2", description="double", tool="calculate",
                     args={"expression": "5*2"}, depends_on=["s1"])])
            run_id = dispatch.submit(store, "add up", plan,
                                     settings_public=public_settings(offline=True),
                                     options=RunOptions(confirm_side_effects=False))
            assert await_status(store, run_id, {"completed", "failed"}, 120) == "completed"
        finally:
            durable.shutdown()
            store.close()
        tracing.flush()
        spans = receiver.wait_for(
            lambda found: len(by_name(found, "step ")) == 2 and by_name(found, "submit run"),
            timeout=60, what="the worker's step spans and the submission")
    finally:
        processes.kill_all()

    assert {span.trace_id for span in spans} == {spans[0].trace_id}, spans
    [submit] = by_name(spans, "submit run")
    [run] = [span for span in spans if span.name == "run"]
    assert run.parent_id == submit.span_id
    assert run.attributes["planboard.worker"] == "tracer"
    assert {span.parent_id for span in by_name(spans, "step ")} == {run.span_id}
    # two processes: each exporter names its own service instance
    assert submit.resource["service.name"] == run.resource["service.name"] == "planboard"
    assert submit.resource["service.instance.id"] != run.resource["service.instance.id"]


_OFF_PROBE = """
import json, sys, threading
from core.cli.main import main
code = main(["run", "--plan", sys.argv[1], "--yes", "--offline", "--json"])
print(json.dumps({"code": code,
                  "sdk": sorted(m for m in sys.modules if m.startswith("opentelemetry.sdk")),
                  "exporter": sorted(m for m in sys.modules if ".exporter" in m),
                  "threads": sorted(t.name for t in threading.enumerate())}))
"""


def test_without_an_endpoint_a_run_imports_no_sdk_and_starts_no_exporter(tmp_path):
    plan = tmp_path / "plan.json"
    plan.write_text(Plan(goal="add up", steps=[
        Step(id="s1", description="add", tool="calculate", args={"expression": "2+3"}),
    ]).to_json(), encoding="utf-8")
    env = {name: value for name, value in os.environ.items() if not name.startswith("OTEL_")}
    done = subprocess.run([sys.executable, "-c", _OFF_PROBE, str(plan)], cwd=tmp_path,
                          env={**env, "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["code"] == 0, done.stdout
    assert found["sdk"] == [] and found["exporter"] == []
    assert not [name for name in found["threads"] if name.startswith("OtelBatch")]


def test_switched_off_by_the_standard_variables(receiver, monkeypatch):
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    assert not tracing.enabled()
    with tracing.span("ignored") as span:
        assert not span.recording
    monkeypatch.delenv("OTEL_SDK_DISABLED")
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "none")
    assert not tracing.enabled()
    monkeypatch.delenv("OTEL_TRACES_EXPORTER")
    with tracing.span("kept") as span:
        assert span.recording
    tracing.flush()
    assert [span.name for span in receiver.wait_for(bool)] == ["kept"]


def test_an_unsupported_protocol_says_why_once_and_traces_nothing(receiver, monkeypatch, caplog):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    caplog.set_level(logging.WARNING, logger="core.base.tracing")
    for _ in range(2):
        with tracing.span("refused") as span:
            assert not span.recording
    assert [record.getMessage() for record in caplog.records] == [
        "PlanBoard exports traces over OTLP/HTTP (protobuf) only, not grpc: set "
        "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf and point the endpoint at the collector's "
        "HTTP port (4318 by default); runs go on without traces."]


def test_a_span_left_by_an_error_is_marked_with_its_class_not_its_text(receiver):
    with pytest.raises(ValueError), tracing.span("failing"):
        raise ValueError(f"a message holding {ARGUMENT_VALUE}")
    tracing.flush()
    [span] = receiver.wait_for(bool)
    assert span.status == "error" and span.attributes["error.type"] == "ValueError"
    assert ARGUMENT_VALUE.encode() not in b"".join(receiver.bodies)


def test_an_answer_without_a_plan_is_a_run_span_around_its_calls(receiver, runner, registry):
    from core.planning.router import person_route

    store = runner.store
    with FakeOpenAI(api_key=API_KEY, responder=_answer) as server:
        engine = Engine(registry=registry,
                        model=OpenAIChatModel(server.settings(model=MODEL)))
        run_id = runner.answer("What is the return policy?", person_route("knowledge"),
                               engine=engine, settings_public={"offline": False})
        runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S)
    tracing.flush()
    spans = receiver.wait_for(lambda found: any(s.name == "run" for s in found),
                              what="the answer's run span")
    [run] = [span for span in spans if span.name == "run"]
    assert run.attributes["planboard.run.id"] == run_id
    assert run.attributes["planboard.run.mode"] == "knowledge"
    assert run.attributes["planboard.run.status"] == store.get_run(run_id).status
    children = [span for span in spans if span.parent_id == run.span_id]
    assert {span.name for span in children} == {"execute_tool search_knowledge",
                                                f"chat {MODEL}"}
    assert API_KEY.encode() not in b"".join(receiver.bodies)


def test_a_phase_is_a_span_between_the_run_and_its_steps(receiver, runner):
    plan = Plan(goal="add up in two phases", phases=[
        Phase(id="p1", title="Numbers"), Phase(id="p2", title="Sum", depends_on=["p1"])],
        steps=[
            Step(id="s1", description="two", tool="calculate", args={"expression": "1+1"},
                 phase="p1"),
            Step(id="s2", description="three", tool="calculate", args={"expression": "1+2"},
                 phase="p1"),
            Step(id="s3", description="sum", tool="calculate",
                 args={"expression": "{{s1.value}} + {{s2.value}}"}, depends_on=["s1", "s2"],
                 phase="p2")])
    run_id = runner.start(plan.goal, plan, engine=Engine(registry=default_registry()),
                          options=RunOptions(confirm_side_effects=False),
                          settings_public={"offline": True})
    assert runner.wait(run_id, timeout=120).status == "completed"
    tracing.flush()
    spans = receiver.wait_for(lambda found: len(by_name(found, "phase ")) == 2
                              and len(by_name(found, "step ")) == 3,
                              what="two phase spans and three step spans")
    [run] = [span for span in spans if span.name == "run"]
    phases = {span.attributes["planboard.phase.id"]: span for span in by_name(spans, "phase ")}
    assert {span.parent_id for span in phases.values()} == {run.span_id}
    assert {p: s.attributes["planboard.phase.status"] for p, s in phases.items()} == {
        "p1": "completed", "p2": "completed"}
    assert phases["p1"].attributes["planboard.phase.steps"] == 2
    steps = {span.attributes["planboard.step.id"]: span for span in by_name(spans, "step ")}
    assert steps["s1"].parent_id == steps["s2"].parent_id == phases["p1"].span_id
    assert steps["s3"].parent_id == phases["p2"].span_id
