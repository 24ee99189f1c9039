"""Identifier arguments the request never names are sent back, then cleared (fake server)."""

from __future__ import annotations

import json

from core.llm.client import OpenAIChatModel
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.planning.checks.clear_invented import remove_invented_ids
from core.planning.checks.grounding import invented_ids, ungrounded_ids
from core.planning.planner import plan_request
from core.runs.session import request_language
from tests.support.checks import context, found

REQUEST = "Check order 70412 and tell me when it will arrive."


def _plan(*steps: Step, goal: str = REQUEST) -> Plan:
    return Plan(goal=goal, steps=list(steps))


def _reply(*steps: dict) -> str:
    return json.dumps({"goal": REQUEST, "steps": list(steps)})


ORDER = {"id": "s1", "description": "Look up order 70412", "tool": "query_order",
         "args": {"order_id": "70412"}, "depends_on": []}
COPIED = {"id": "s2", "description": "Track the parcel", "tool": "query_logistics",
          "args": {"tracking_no": "SF1234567890"}, "depends_on": ["s1"]}
REFERENCED = {**COPIED, "args": {"tracking_no": "{{s1.tracking_no}}"}}
ANSWER = {"id": "s3", "description": "Tell the user when it arrives", "tool": None,
          "depends_on": ["s1", "s2"]}


def test_an_id_from_the_request_or_a_reference_is_grounded(registry):
    plan = Plan.model_validate({"goal": REQUEST, "steps": [ORDER, REFERENCED, ANSWER]})
    assert list(ungrounded_ids(plan, context(plan.goal, registry))) == []


def test_an_example_id_the_request_never_names_is_a_problem_in_the_goals_language(registry):
    plan = Plan.model_validate({"goal": REQUEST, "steps": [ORDER, COPIED, ANSWER]})
    [problem] = found(invented_ids, plan, registry)
    assert problem.startswith("s2 passes tracking_no='SF1234567890'")
    zh = _plan(Step(id="s1", description="查物流", tool="query_logistics",
                    args={"tracking_no": "SF1234567890"}), goal="订单70412什么时候到？")
    [problem_zh] = found(invented_ids, zh, registry)
    assert "既不在请求中" in problem_zh


def test_an_id_seen_in_a_completed_result_is_grounded(registry):
    done = Step(id="s1", description="Look up order 70412", tool="query_order",
                args={"order_id": "70412"}, status="completed",
                result={"order_id": "70412", "tracking_no": "YT7001234567"})
    track = Step(id="s2", description="Track it", tool="query_logistics",
                 args={"tracking_no": "yt7001234567"}, depends_on=["s1"])
    assert found(invented_ids, _plan(done, track), registry) == []


def test_only_identifier_parameters_are_checked(registry):
    search = Step(id="s1", description="Search the guides", tool="search_knowledge",
                  args={"query": "refund policy for broken items"})
    assert found(invented_ids, _plan(search), registry) == []


def test_clearing_leaves_the_argument_to_be_filled_at_run_time(registry):
    alone = {**COPIED, "depends_on": []}  # no step it waits for returns a tracking number
    plan = Plan.model_validate({"goal": REQUEST, "steps": [ORDER, alone, ANSWER]})
    [warning] = found(remove_invented_ids, plan, registry)
    assert plan.steps[1].args == {}  # missing, to be inferred: never null
    assert plan.validate(registry) == []
    assert "SF1234567890" in warning and "cleared" in warning
    assert found(invented_ids, plan, registry) == []


def test_a_cleared_id_is_read_from_the_step_it_waits_for_that_returns_it(registry):
    plan = Plan.model_validate({"goal": REQUEST, "steps": [ORDER, COPIED, ANSWER]})
    cleared, linked = found(remove_invented_ids, plan, registry)
    assert plan.steps[1].args == {"tracking_no": "{{s1.tracking_no}}"}
    assert "cleared" in cleared and linked.startswith("s2 reads tracking_no from s1")


def planning(fake_openai, registry, *replies: str):
    fake_openai.script(*replies)
    with OpenAIChatModel(fake_openai.settings(provider="llamacpp")) as model:
        return plan_request(REQUEST, Engine(registry=registry, model=model),
                            language=request_language(REQUEST))


def test_the_corrective_retry_replaces_a_copied_id_with_a_reference(fake_openai, registry):
    result = planning(fake_openai, registry, _reply(ORDER, COPIED, ANSWER),
                      _reply(ORDER, REFERENCED, ANSWER))
    assert result.attempts == 2 and not result.plan.warnings
    assert result.plan.steps[1].args == {"tracking_no": "{{s1.tracking_no}}"}
    corrective = fake_openai.chat_bodies[1]["messages"][-1]["content"]
    assert "SF1234567890" in corrective and "{{sN.tracking_no}}" in corrective


def test_a_copied_id_that_stays_is_cleared_and_read_from_the_step_returning_it(fake_openai,
                                                                              registry):
    result = planning(fake_openai, registry, _reply(ORDER, COPIED, ANSWER),
                      _reply(ORDER, COPIED, ANSWER))
    assert result.plan.steps[1].args == {"tracking_no": "{{s1.tracking_no}}"}
    assert result.plan.validate(registry) == []
    # warnings for the approver, saying what was done; not the retry's request to the model
    cleared, linked = result.plan.warnings
    assert "SF1234567890" in cleared and "was cleared" in cleared
    assert linked == "s2 reads tracking_no from s1 (query_order), whose result holds it."


def test_a_side_effect_keeps_its_invented_id_for_the_person_approving_to_see(registry):
    refund = Step(id="s1", description="Refund the order", tool="apply_refund",
                  args={"order_id": "88231", "reason": "lost"})
    plan = _plan(refund, goal="Where is my parcel?")
    assert found(remove_invented_ids, plan, registry) == []
    assert plan.steps[0].args["order_id"] == "88231"
    assert found(invented_ids, plan, registry)  # still reported, as the plan's warning


def test_a_prefixed_number_spelled_in_words_is_grounded_and_only_with_its_prefix(registry):
    """BFCL multi_turn_base_153 and 183 write a passport as its prefix, then its number."""
    def check(request: str, passport: str) -> list[str]:
        step = Step(id="s1", description="Verify the traveler", tool="query_logistics",
                    args={"tracking_no": passport})
        return found(invented_ids, _plan(step, goal=request), registry)

    assert check("The number on my passport is P followed by 12345678.", "P12345678") == []
    assert check("His passport starts with 'US', numbered 9148817941.", "US9148817941") == []
    assert check("The number on my passport is P followed by 12345678.", "Q12345678") != []
    assert check("Order 12345678 arrived.", "P12345678") != []  # the number alone
    assert check("Order 12345678 arrived. P is for parcel.", "P12345678") != []
