"""The same call, defined once: steps whose arguments are still to be inferred never are one.

A plan of four ``calculate`` steps with different descriptions and no arguments yet
("compute part 1" … "compute part 4", arguments worked out when each runs) is four calls,
not one repeated four times: the planner keeps all four, and they run side by side.
"""

from __future__ import annotations

import json
import threading

from core.cli.main import main
from core.llm.engine import Engine
from core.plan.calls import call_key, determinate, same_call
from core.plan.model import Plan, Step
from core.planning.checks.repeated_calls import repeated_calls
from core.planning.checks.repeated_effects import fold_repeated_effects
from core.planning.checks.repeated_reads import fold_repeated_reads
from core.planning.planner import plan_request
from core.runs.session import request_language
from core.tools.builtin import register_builtin_tools
from core.tools.registry import ToolRegistry, make_tool
from tests.support.checks import found
from tests.support.fake_openai import FakeOpenAI, text, tool_call
from tests.support.fakes import ScriptedChatModel

REQUEST = "Work out the four parts of the estimate"


def calculator() -> ToolRegistry:
    registry = ToolRegistry()
    register_builtin_tools(registry)
    return registry


def parts_plan(count: int = 4, *, chain: bool = False) -> dict:
    steps = [{"id": f"s{n}", "description": f"compute part {n}", "tool": "calculate",
              "depends_on": [f"s{n - 1}"] if chain and n > 1 else []}
             for n in range(1, count + 1)]
    steps.append({"id": f"s{count + 1}", "description": "add the parts up for the user",
                  "tool": None, "depends_on": [f"s{n}" for n in range(1, count + 1)]})
    return {"goal": REQUEST, "steps": steps}


def test_a_step_with_arguments_still_to_infer_is_no_determinate_call():
    registry = calculator()
    no_args = Step(id="s1", description="compute part 1", tool="calculate")
    empty = Step(id="s2", description="compute part 2", tool="calculate", args={})
    cleared = Step(id="s3", description="x", tool="calculate", args={"expression": None})
    given = Step(id="s4", description="x", tool="calculate", args={"expression": "1 + 1"})
    clock = Step(id="s5", description="the time", tool="get_current_time", args={})
    for step in (no_args, empty, cleared):
        assert not determinate(step, registry) and call_key(step, registry) is None
    assert not same_call(no_args, no_args.model_copy(update={"id": "s9"}), registry)
    assert determinate(given, registry)
    assert determinate(clock, registry)  # nothing required: the tool's defaults are the call


def test_references_are_part_of_the_call_and_the_condition_only_when_asked():
    registry = calculator()
    first = Step(id="s2", description="a", tool="calculate",
                 args={"expression": "{{s1.value}} * 2"}, depends_on=["s1"])
    twin = first.model_copy(update={"id": "s3", "description": "b"})
    other = first.model_copy(update={"id": "s4", "args": {"expression": "{{s1.value}} * 3"}})
    guarded = twin.model_copy(update={"id": "s5", "condition": "s1.value > 2"})
    assert same_call(first, twin, registry)
    assert not same_call(first, other, registry)
    assert same_call(first, guarded, registry)
    assert not same_call(first, guarded, registry, condition=True)


def test_four_calculate_steps_without_arguments_keep_four_steps():
    registry = calculator()
    plan = Plan.model_validate(parts_plan())
    assert found(fold_repeated_reads, plan, registry) == []
    assert len(plan.steps) == 5 and not plan.warnings


def test_the_planner_keeps_a_parallel_plan_and_a_chain_of_twelve():
    registry = calculator()
    for reply, count in ((parts_plan(), 4), (parts_plan(12, chain=True), 12)):
        model = ScriptedChatModel(replies=[json.dumps(reply)] * 2)
        result = plan_request(REQUEST, Engine(registry=registry, model=model),
                              language=request_language(REQUEST))
        assert not result.fallback, result.errors
        tools = [step.tool for step in result.plan.steps]
        assert tools == ["calculate"] * count + [None]
        assert not any("repeated" in warning for warning in result.plan.warnings)


def test_side_effects_with_arguments_still_to_infer_are_not_repeats(registry):
    plan = Plan.model_validate({"goal": "Refund the two broken orders", "steps": [
        {"id": "s1", "description": "Refund the first broken order", "tool": "apply_refund"},
        {"id": "s2", "description": "Refund the second broken order", "tool": "apply_refund"},
        {"id": "s3", "description": "Answer", "depends_on": ["s1", "s2"]},
    ]})
    assert found(repeated_calls, plan, registry) == []
    plan.steps[0].advance("running")
    plan.steps[0].advance("completed")
    assert found(fold_repeated_effects, plan, registry, stage="replan") == []
    assert len(plan.steps) == 3


def test_the_four_argument_calls_overlap_under_max_parallel_4(capsys, monkeypatch):
    """Each forced call waits at a barrier of four: a run that did not have all four in
    flight at once would break the barrier, and the server's log shows them overlap."""
    barrier = threading.Barrier(4, timeout=20)

    def respond(body: dict):
        if body.get("tools"):  # a step's arguments, forced through its one tool
            barrier.wait()
            return tool_call("calculate", {"expression": "6 * 7"})
        if body.get("response_format"):  # the planner
            return text(json.dumps(parts_plan()))
        return text("The four parts are 42 each, 168 in all.")

    server = FakeOpenAI(responder=respond).start()
    try:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
        monkeypatch.setenv("PLANBOARD_MAX_RETRIES", "0")
        monkeypatch.setenv("PLANBOARD_TOOLSETS", "builtin")
        code = main(["run", REQUEST, "--yes", "--json", "--max-parallel", "4"])
        out = capsys.readouterr().out
        assert code == 0, out
        result = json.loads(out)
        forced = [r for r in server.requests if isinstance(r.body, dict) and r.body.get("tools")]
    finally:
        server.stop()
    assert result["status"] == "completed"
    steps = result["plan"]["steps"]
    assert [s["tool"] for s in steps] == ["calculate"] * 4 + [None]
    assert [s["result"]["value"] for s in steps[:4]] == [42] * 4
    assert len(forced) == 4
    assert max(r.started for r in forced) < min(r.finished for r in forced)


def _tools_with_a_directory() -> ToolRegistry:
    def cd(folder: str) -> dict:
        """Change the current directory.

        Args:
            folder: the folder to enter, ".." for the parent.
        """
        return {"current_working_directory": folder}

    def mv(source: str, destination: str) -> dict:
        """Move a file.

        Args:
            source: the file.
            destination: the folder.
        """
        return {"result": f"{source} moved to {destination}"}

    tools = ToolRegistry()
    tools.add(make_tool(cd, idempotent=True))
    tools.add(make_tool(mv))
    return tools


def _follow_up(*calls: tuple[str, dict]) -> Plan:
    """A first request that entered temp, then a follow-up's chain of ``calls``."""
    steps = [{"id": "s1", "description": "Enter temp", "tool": "cd",
              "args": {"folder": "temp"}, "status": "completed",
              "result": {"current_working_directory": "temp"}}]
    for number, (tool, args) in enumerate(calls, 2):
        steps.append({"id": f"s{number}", "description": f"{tool} {args}", "tool": tool,
                      "args": args, "depends_on": [f"s{number - 1}"] if number > 2 else []})
    steps.append({"id": "s9", "description": "Answer", "depends_on": [steps[-1]["id"]]})
    return Plan.model_validate({"goal": "Move the other report to temp too", "steps": steps})


def test_an_idempotent_call_after_another_side_effect_is_done_again_not_folded():
    """BFCL multi_turn_base_0: cd('..'), mv(...), cd('temp') after an earlier turn's
    cd('temp'): the folded plan would compare the files in the parent folder."""
    tools = _tools_with_a_directory()
    again = _follow_up(("cd", {"folder": ".."}), ("mv", {"source": "b.pdf",
                                                            "destination": "temp"}),
                       ("cd", {"folder": "temp"}))
    assert found(fold_repeated_effects, again, tools, stage="follow_up") == []
    assert [step.id for step in again.steps] == ["s1", "s2", "s3", "s4", "s9"]
    nothing_between = _follow_up(("cd", {"folder": "temp"}))
    assert found(fold_repeated_effects, nothing_between, tools, stage="follow_up") == [
        "s1 already did “cd {'folder': 'temp'}”; it is not done again"]
    moved_again = _follow_up(("cd", {"folder": ".."}), ("mv", {"source": "b.pdf",
                                                                  "destination": "temp"}))
    moved_again.steps[0] = moved_again.steps[0].model_copy(update={
        "tool": "mv", "args": {"source": "b.pdf", "destination": "temp"}})
    assert found(fold_repeated_effects, moved_again, tools, stage="follow_up") == [
        "s1 already did “mv {'source': 'b.pdf', 'destination': 'temp'}”; it is not done "
        "again"]  # a side effect that is not idempotent is never done twice
