"""The planner's shortlist: a large catalogue is described in part, named in full, and the
prompt keeps what does not change first (no network; the fake server for the prefix)."""

from __future__ import annotations

import json

import pytest

from bench.catalogues import catalogue_registry
from core.base.usage import Usage
from core.llm.client import OpenAIChatModel
from core.llm.engine import Engine
from core.llm.prompt_cache import shared_prefix
from core.plan.model import Phase, Plan, Step
from core.planning.planner import plan_request, replan_request
from core.planning.shortlist import SEND_ALL_UP_TO, SHORTLIST_SIZE, shortlist
from core.planning.tool_match import matches, relevance
from core.prompts.planning import EVERY_TOOL_TEMPLATE
from core.runs.session import request_language
from core.tools.registry import ToolRegistry
from tests.support.fakes import ScriptedChatModel

PARCEL = "Where is the parcel for order 70412 right now?"
PARCEL_ZH = "订单 70412 的快递现在到哪里了？"


def parcel_plan(tool: str = "query_logistics", **args: str) -> str:
    return json.dumps({"goal": PARCEL, "steps": [
        {"id": "s1", "description": "Look up the order", "tool": "query_order",
         "args": {"order_id": "70412"}, "depends_on": []},
        {"id": "s2", "description": "Find the parcel", "tool": tool,
         **({"args": args} if args else {}), "depends_on": ["s1"]},
        {"id": "s3", "description": "Answer", "tool": None, "depends_on": ["s2"]}]})


@pytest.fixture(scope="module")
def hundred() -> ToolRegistry:
    return catalogue_registry(100)


def names(registry: ToolRegistry, request: str) -> list[str]:
    return [tool.name for tool in shortlist(request, registry).described]


# ---- which tools ----------------------------------------------------------------------------


def test_a_small_catalogue_is_described_whole():
    registry = catalogue_registry(15)
    listed = shortlist(PARCEL, registry)
    assert len(registry) <= SEND_ALL_UP_TO
    assert [t.name for t in listed.described] == registry.names()
    assert not listed.cut and listed.every_name == () and listed.note("en") is None


def test_a_hundred_tools_are_cut_to_the_ones_the_request_needs(hundred):
    listed = shortlist(PARCEL, hundred)
    described = [tool.name for tool in listed.described]
    assert {"query_order", "query_logistics"} <= set(described)
    assert len(described) <= SHORTLIST_SIZE
    assert listed.cut and listed.every_name == tuple(hundred.names())
    assert described == sorted(described)  # the registry's order, whatever the ranking


def test_a_chinese_request_finds_english_described_tools_through_their_chinese_texts(hundred):
    assert {"query_order", "query_logistics"} <= set(names(hundred, PARCEL_ZH))
    assert "run_sql" in names(hundred, "2026 年第一季度用户流失的最主要原因是什么？")


def test_each_need_of_a_request_gets_a_tool_before_a_second_one_for_the_same_need(hundred):
    described = names(hundred, "read the file /etc/hosts and tell me the weather in Paris")
    assert "filesystem__read_text_file" in described
    assert any(name.startswith("weather__") for name in described)


def test_a_word_shared_by_chance_does_not_bring_in_a_server(hundred):
    described = names(hundred, "How many subscriptions were cancelled in the first quarter of "
                               "2026 (January to March)? Count the churn events.")
    assert "run_sql" in described
    assert sum(name.startswith("calendar__") for name in described) <= 1


def test_tools_the_caller_keeps_are_described_whatever_the_request(hundred):
    listed = shortlist("what time is it in Tokyo?", hundred, keep=["git__git_log", "nope"])
    assert "git__git_log" in {tool.name for tool in listed.described}


def test_relevance_adds_up_what_a_tool_matches_each_word_once():
    registry = catalogue_registry(100)
    git_log = registry.get("git__git_log")
    found = matches(git_log, "show the git log of the repo")
    assert found == {"git": 2, "log": 2, "repo": 1}
    assert relevance(git_log, "show the git log of the repo") == 5


@pytest.mark.parametrize(("request_text", "found"), [
    ("read the logs", True),  # a word may go on
    ("log: see above", True), ("a git-log of it", True), ("日志 log", True),
    ("a backlog of work", False),  # but it starts where a word starts
    ("the changelog", False), ("git_log", False), ("日志log", False), ("2log", False),
])
def test_a_word_of_a_tool_counts_where_a_word_of_the_request_starts(request_text, found):
    """What ``\\blog`` finds, a regular expression per word no more (the planner's checks
    match every word of every tool against every request and step)."""
    log = catalogue_registry(100).get("git__git_log")
    assert ("log" in matches(log, request_text)) is found


def test_the_note_says_so_in_the_language_of_the_request(hundred):
    listed = shortlist(PARCEL, hundred)
    shown = len(listed.described)
    assert listed.note("en").startswith(f"The planner was shown {shown} of the 100 tools")
    assert listed.note("zh").startswith(f"规划器只看到了 100 个工具中与请求相关的 {shown} 个")


# ---- the prompt -----------------------------------------------------------------------------


def plan_with(registry: ToolRegistry, request: str, *replies: str, **kwargs):
    model = ScriptedChatModel(replies=list(replies))
    result = plan_request(request, Engine(registry=registry, model=model), **kwargs,
                          language=request_language(request))
    return result, model


def test_the_prompt_stays_flat_from_15_to_100_tools(hundred):
    sizes = {}
    for count, registry in ((15, catalogue_registry(15)), (100, hundred)):
        _, model = plan_with(registry, PARCEL, parcel_plan())
        sizes[count] = sum(len(m["content"]) for m in model.requests[0]["messages"])
    every_schema = sum(len(json.dumps(t.parameters)) + len(t.description) for t in hundred)
    assert sizes[100] < 1.25 * sizes[15]
    assert sizes[100] < every_schema / 2


def test_the_plan_says_the_prompt_held_a_shortlist(hundred):
    result, model = plan_with(hundred, PARCEL, parcel_plan())
    system = model.requests[0]["messages"][0]["content"]
    assert EVERY_TOOL_TEMPLATE.substitute(count=100, names="")[:-1] in system
    assert "git__git_log" in system and "git__git_log(" not in system  # named, not described
    assert "- query_logistics(" in system
    assert any(w.startswith("The planner was shown") for w in result.plan.warnings)
    result, _ = plan_with(hundred, PARCEL_ZH, parcel_plan())
    assert any(w.startswith("规划器只看到了") for w in result.plan.warnings)


def test_a_small_catalogue_plans_as_before_without_a_note():
    result, model = plan_with(catalogue_registry(15), PARCEL, parcel_plan())
    system = model.requests[0]["messages"][0]["content"]
    assert "Available tools:\n" in system and "Every tool, by name" not in system
    assert not any("planner was shown" in w for w in result.plan.warnings)


def test_a_plan_may_use_a_tool_that_was_only_named(hundred):
    result, _ = plan_with(hundred, PARCEL, parcel_plan("fetch__fetch"))
    assert result.attempts == 1 and not result.fallback
    assert result.plan.steps[1].tool == "fetch__fetch"


def test_the_corrective_turn_describes_a_tool_that_was_only_named(hundred):
    bad = parcel_plan("fetch__fetch", url=7)  # the wrong type: sent back once
    result, model = plan_with(hundred, PARCEL, bad, parcel_plan())
    first, second = (request["messages"] for request in model.requests)
    assert second[:len(first)] == first  # a follow-up turn: the same messages, then more
    assert second[len(first)] == {"role": "assistant", "content": bad}
    correction = second[len(first) + 1]["content"]
    assert "- fetch__fetch(url: string" in correction
    assert result.attempts == 2 and result.plan.steps[1].tool == "query_logistics"


def test_what_does_not_change_comes_before_the_request(hundred):
    _, first = plan_with(hundred, PARCEL, parcel_plan())
    _, second = plan_with(hundred, "What time is it in Tokyo?", parcel_plan(), parcel_plan())
    one = first.requests[0]["messages"][0]["content"]
    two = second.requests[0]["messages"][0]["content"]
    shared = shared_prefix(one, two)
    # the instructions and every tool's name, and the described tools both have in front
    assert f"{hundred.names()[-1]}\n\nThe tools that fit this request:\n" in one[:shared]
    assert first.requests[0]["messages"][-1]["content"].endswith(PARCEL)


def test_with_every_tool_described_two_requests_share_the_whole_system_prompt():
    registry = catalogue_registry(15)
    _, first = plan_with(registry, PARCEL, parcel_plan())
    _, second = plan_with(registry, "What time is it in Tokyo?", parcel_plan(), parcel_plan())
    assert (first.requests[0]["messages"][0]["content"]
            == second.requests[0]["messages"][0]["content"])


def test_a_replan_describes_the_tools_of_the_plan(hundred):
    plan = Plan(goal=PARCEL, steps=[
        Step(id="s1", description="Look up the order", tool="git__git_log",
             args={"repo_path": "/r"}, status="completed", result={"ok": 1}),
        Step(id="s2", description="Answer", depends_on=["s1"], status="failed",
             error="boom")])
    reply = json.dumps({"goal": PARCEL, "steps": [
        {"id": "s3", "description": "Answer", "tool": None, "depends_on": ["s1"]}]})
    model = ScriptedChatModel(replies=[reply])
    result = replan_request(plan, "s2 failed: boom", Engine(registry=hundred, model=model))
    system = model.requests[0]["messages"][0]["content"]
    assert "- git__git_log(" in system
    assert result.plan is not None
    assert any(w.startswith("The planner was shown") for w in result.plan.warnings)


def test_the_corrective_retry_reaches_the_endpoint_as_a_follow_up_turn(fake_openai, hundred):
    fake_openai.script("not a plan", parcel_plan())
    with OpenAIChatModel(fake_openai.settings()) as model:
        result = plan_request(PARCEL, Engine(registry=hundred, model=model),
                              language=request_language(PARCEL))
    first, second = (body["messages"] for body in fake_openai.chat_bodies)
    assert second[:len(first)] == first and len(second) == len(first) + 2
    assert result.attempts == 2 and not result.fallback


# ---- the ReAct rounds of a large catalogue -------------------------------------------------


def test_a_reasoning_step_over_a_hundred_tools_is_offered_the_shortlist(hundred):
    from core.execution.executor import execute_step

    plan = Plan(goal="What time is it in Tokyo?", steps=[
        Step(id="s1", description="Work out the time in Tokyo"),
        Step(id="s2", description="Answer", depends_on=["s1"])])
    model = ScriptedChatModel(replies=["It is 10:00 in Tokyo."])
    outcome = execute_step(plan, plan.steps[0], Engine(registry=hundred, model=model))
    offered = [spec["function"]["name"] for spec in model.requests[0]["tools"]]
    assert outcome.status == "completed"
    assert "time__get_current_time" in offered and len(offered) <= SHORTLIST_SIZE
    assert all(not hundred.get(name).side_effect for name in offered)


def test_a_tool_only_named_may_still_be_called_in_a_react_round(hundred):
    from core.execution.react import run_react
    from tests.support.fakes import tool_reply

    class Tally:
        usage = Usage()

    model = ScriptedChatModel(replies=[tool_reply("git__git_status", {"repo_path": "/r"}),
                                       "done"])
    result = run_react(model, hundred, [{"role": "user", "content": "status?"}], tally=Tally(),
                       offered=["time__get_current_time"])
    observation = model.requests[1]["messages"][-1]["content"]
    assert [spec["function"]["name"] for spec in model.requests[0]["tools"]] == [
        "time__get_current_time"]
    assert "not available" not in observation  # read-only: called (it fails: no server here)
    assert result.text == "done"


# ---- plans in phases ------------------------------------------------------------------------


def parcel_in_phases(second: list[Step]) -> Plan:
    """The parcel question in two phases, the first done with a tool the request does not
    name (kept in view as the plan's own)."""
    return Plan(goal=PARCEL, phases=[
        Phase(id="p1", title="Order", goal="look up order 70412"),
        Phase(id="p2", title="Parcel", goal="find where the parcel is and answer",
              depends_on=["p1"])],
        steps=[Step(id="s1", description="Look up the order", tool="git__git_log",
                    args={"repo_path": "/r"}, phase="p1", status="completed",
                    result={"ok": 1}), *second])


ANSWER_STEP = json.dumps({"steps": [
    {"id": "s2", "description": "Answer", "tool": None, "depends_on": ["s1"]}]})


def test_a_phase_expansion_describes_the_shortlist_of_its_goal(hundred):
    from core.planning.expansion import expand_phase

    bad = json.dumps({"steps": [{"id": "s2", "description": "Fetch the tracking page",
                                 "tool": "fetch__fetch", "args": {"url": 7},
                                 "depends_on": ["s1"]}]})
    model = ScriptedChatModel(replies=[bad, ANSWER_STEP])
    result = expand_phase(parcel_in_phases([]), "p2", Engine(registry=hundred, model=model))
    system = model.requests[0]["messages"][0]["content"]
    assert EVERY_TOOL_TEMPLATE.substitute(count=100, names="")[:-1] in system
    assert "- query_logistics(" in system and "- git__git_log(" in system
    described = sum(f"- {name}(" in system for name in hundred.names())
    assert described <= SHORTLIST_SIZE + 1
    correction = model.requests[1]["messages"][-1]["content"]
    assert "- fetch__fetch(url: string" in correction  # only named, described when used
    assert result.plan is not None and [s.id for s in result.plan.steps_of("p2")] == ["s2"]


def test_a_replan_inside_a_phase_describes_the_shortlist_and_the_plan_tools(hundred):
    from core.planning.phase_replan import replan_phase

    failed = Step(id="s2", description="Find the parcel", tool="query_logistics",
                  args={"tracking_no": "SF1"}, depends_on=["s1"], phase="p2",
                  status="failed", error="boom")
    reply = json.dumps({"steps": [
        {"id": "s3", "description": "Answer", "tool": None, "depends_on": ["s1"]}]})
    model = ScriptedChatModel(replies=[reply])
    result = replan_phase(parcel_in_phases([failed]), "s2 (Find the parcel) failed: boom",
                          Engine(registry=hundred, model=model))
    system = model.requests[0]["messages"][0]["content"]
    assert EVERY_TOOL_TEMPLATE.substitute(count=100, names="")[:-1] in system
    assert "- git__git_log(" in system and "- query_logistics(" in system
    assert sum(f"- {name}(" in system for name in hundred.names()) < len(hundred.names()) // 4
    assert result.plan is not None
    assert [(s.tool, s.status) for s in result.plan.steps_of("p2")] == [(None, "pending")]
