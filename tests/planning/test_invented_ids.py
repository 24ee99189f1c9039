"""Invented ids are not facts: no lookup runs on an id seen nowhere, and examples are no records.

For "Which carrier is shipping order 53156, and what is its tracking number?" a local model
planned query_logistics with the tool description's example tracking number, a real parcel
of order 88231 in the demo data, and the run answered with that order's carrier. An id the
planner invents is removed (missing, never null), an id the executor is then given must have
been seen in the request or an earlier result, and no description's example is a record.
"""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass, field

from core.base.usage import Usage
from core.cli.main import main
from core.execution.executor import execute_step
from core.execution.react import run_react
from core.llm.engine import Engine
from core.plan.identifiers import Grounds
from core.plan.model import Plan, Step
from core.store.run_store import RunStore
from core.tools.tool_texts import tool_description, tool_parameters
from core.tools.toolsets import default_registry
from demo.ops import ensure_ops_db
from demo.shop import ensure_shop_db
from tests.support.fake_openai import FakeOpenAI, text, tool_call
from tests.support.fakes import ScriptedChatModel, tool_reply
from tests.support.planning import planning

CARRIER = "Which carrier is shipping order 53156, and what is its tracking number?"
EXAMPLE_PARCEL = "SF1234567890"  # order 88231's parcel, once the description's example


def _plan(*steps: dict, goal: str = CARRIER) -> str:
    return json.dumps({"goal": goal, "steps": list(steps)})


COPIED = {"id": "s1", "description": "Track the parcel", "tool": "query_logistics",
          "args": {"tracking_no": EXAMPLE_PARCEL}, "depends_on": []}
ANSWER = {"id": "s2", "description": "Tell the user the carrier and the tracking number",
          "tool": None, "depends_on": ["s1"]}


@dataclass
class Tally:
    usage: Usage = field(default_factory=Usage)


def _records() -> set[str]:
    with sqlite3.connect(ensure_shop_db()) as shop:
        found = {row[0] for row in shop.execute(
            "SELECT order_id FROM orders UNION SELECT tracking_no FROM orders "
            "UNION SELECT refund_id FROM refunds") if row[0]}
    with sqlite3.connect(ensure_ops_db()) as ops:
        found |= {row[0] for row in ops.execute("SELECT name FROM services")}
    return found


def test_no_demo_tool_description_quotes_a_real_record():
    registry = default_registry({})
    records = _records()
    quoted = re.compile(r'"([^"]+)"|“([^”]+)”')
    examples: dict[str, set[str]] = {}
    for tool in registry:
        if tool.source != "demo":
            continue
        for lang in ("en", "zh"):
            texts = [tool_description(tool, lang)] + [
                prop.get("description", "") for prop in
                (tool_parameters(tool, lang).get("properties") or {}).values()]
            for match in quoted.finditer(" ".join(texts)):
                examples.setdefault(tool.name, set()).add(match.group(1) or match.group(2))
    assert {"query_order", "query_logistics", "apply_refund", "check_health"} <= set(examples)
    real = {name: found & records for name, found in examples.items() if found & records}
    assert not real, f"descriptions quote real demo records: {real}"


def test_an_invented_order_is_removed_and_the_plan_still_validates(fake_openai, registry):
    request = "Where is my parcel?"
    invented = {"id": "s1", "description": "Look up the order", "tool": "query_order",
                "args": {"order_id": "99999"}, "depends_on": []}
    track = {"id": "s2", "description": "Track its parcel", "tool": "query_logistics",
             "args": {"tracking_no": "{{s1.tracking_no}}"}, "depends_on": ["s1"]}
    answer = {"id": "s3", "description": "Tell the user", "tool": None, "depends_on": ["s2"]}
    reply = _plan(invented, track, answer, goal=request)
    result = planning(fake_openai, registry, request, reply, reply)
    assert result.plan.step("s1").args == {}  # missing: to be inferred or asked for
    assert result.plan.validate(registry) == []
    assert any("99999" in warning and "cleared" in warning for warning in result.plan.warnings)


def test_a_react_call_on_an_invented_id_is_refused_and_an_id_seen_in_a_result_runs(registry):
    model = ScriptedChatModel(replies=[
        tool_reply("query_logistics", {"tracking_no": EXAMPLE_PARCEL}),
        tool_reply("query_order", {"order_id": "53156"}, call_id="call_2"),
        tool_reply("query_logistics", {"tracking_no": "ZT5893143322"}, call_id="call_3"),
        "Order 53156 ships with 中通快递 under ZT5893143322.",
    ])

    tally = Tally()
    result = run_react(model, registry, [{"role": "user", "content": CARRIER}], tally=tally,
                       rounds=4, grounds=Grounds([CARRIER]))
    observations = [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"]
    assert observations[0].startswith("error: query_logistics was not called: tracking_no=")
    assert "88231" not in observations[0]
    assert '"order_id": "53156"' in observations[1]
    assert '"tracking_no": "ZT5893143322"' in observations[2]
    assert result.tools_used == ["query_order", "query_logistics"]


def test_no_run_answers_from_the_example_number(capsys, monkeypatch):
    """The fake server replays the example-number plan: the planner's copy is removed and the
    parcel lookup reads the tracking number of the order the request names, looked up
    first; no step runs on the example, nothing is replanned."""
    def respond(body: dict):
        if body.get("tools"):  # a step's argument, again the description's example
            return tool_call("query_logistics", {"tracking_no": EXAMPLE_PARCEL})
        if body.get("response_format"):  # the planner, twice: the same copied number
            return text(_plan(COPIED, ANSWER))
        return text("Order 53156 ships with 中通快递; its tracking number is ZT5893143322.")

    server = FakeOpenAI(responder=respond).start()
    try:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
        monkeypatch.setenv("PLANBOARD_MAX_RETRIES", "0")
        code = main(["run", CARRIER, "--yes", "--json"])
        out = capsys.readouterr().out
        asked_for_arguments = [body for body in server.chat_bodies if body.get("tools")]
    finally:
        server.stop()
    assert code == 0, out
    result = json.loads(out)
    assert result["status"] == "completed" and result["versions"] == 1
    events = RunStore().events(result["run_id"])
    assert not [e for e in events if e.kind in ("step_failed", "replanned")]
    lookup, track = [s for s in result["plan"]["steps"] if s["tool"]]
    assert (lookup["tool"], lookup["args"]) == ("query_order", {"order_id": "53156"})
    assert track["args"] == {"tracking_no": "{{" + lookup["id"] + ".tracking_no}}"}
    assert [lookup["result"]["order_id"], track["result"]["order_id"]] == ["53156", "53156"]
    assert not asked_for_arguments  # every argument was given: no model call to infer one
    # the steps' words, arguments and results (their timestamps' digits could hold any number)
    told = [{key: value for key, value in step.items() if not key.endswith("_at")}
            for step in result["plan"]["steps"]]
    assert "88231" not in json.dumps([result["plan"]["goal"], told], ensure_ascii=False)


def test_an_example_number_the_executor_is_given_is_refused_when_the_step_runs(registry):
    """A lookup left to infer its id, where no step can find it: the model's copy of the
    description's example does not run, and the step fails saying so."""
    step = Step(id="s1", description="Track the parcel", tool="query_logistics", args={})
    plan = Plan(goal="Which carrier is shipping my parcel?", steps=[step])
    model = ScriptedChatModel(replies=[tool_reply("query_logistics",
                                                  {"tracking_no": EXAMPLE_PARCEL})])
    outcome = execute_step(plan, step, Engine(registry=registry, model=model))
    assert outcome.status == "failed"
    assert f"tracking_no='{EXAMPLE_PARCEL}'" in outcome.error and outcome.result is None
