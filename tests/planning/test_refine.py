"""Refining a plan with a sentence: the model's revision is merged onto the current plan."""

from __future__ import annotations

import json

import pytest

from core.errors import ConfigError, PlanError
from core.llm.client import OpenAIChatModel
from core.llm.engine import Engine
from core.plan.diff import diff_plans
from core.plan.model import Plan, Step
from core.planning.refine import merge_revision, refine_plan
from core.tools.toolsets import default_registry
from tests.support.fake_openai import text

GOAL = "Check whether order 88231 arrived; if it did, refund the broken one"


def edited_plan() -> Plan:
    """A reviewed plan whose s1 and s2 a person edited by hand (66001, the reason)."""
    return Plan(goal=GOAL, version=2, steps=[
        Step(id="s1", description="Look up the order", tool="query_order",
             args={"order_id": "66001"}),
        Step(id="s2", description="Refund the order if it was delivered", tool="apply_refund",
             args={"order_id": "{{s1.order_id}}", "reason": "screen cracked on arrival"},
             depends_on=["s1"], condition="s1.status == 'delivered'"),
        Step(id="s3", description="Summarise the results", depends_on=["s1", "s2"]),
    ])


def revision(*steps: dict) -> str:
    return json.dumps({"goal": GOAL, "steps": list(steps)})


# the model's revision for "also search the knowledge base for the refund policy": it drops
# the edited reason, puts back the draft's order number, and adds a step
LAZY_REVISION = revision(
    {"id": "s1", "description": "Look up the order", "tool": "query_order",
     "args": {"order_id": "88231"}},
    {"id": "s2", "description": "Refund the order", "tool": "apply_refund",
     "args": {"order_id": "{{s1.order_id}}"}, "depends_on": ["s1"],
     "condition": "s1.status == 'delivered'"},
    {"id": "s4", "description": "Search the knowledge base for the refund policy",
     "tool": "search_knowledge", "args": {"query": "refund policy"}},
    {"id": "s3", "description": "Summarise the results", "tool": None,
     "depends_on": ["s1", "s2", "s4"]},
)


@pytest.fixture
def refining_engine(fake_openai):
    """The demo tools and a model on the fake endpoint (test_realmodel's ``engine`` is real)."""
    with OpenAIChatModel(fake_openai.settings(provider="openai")) as model:
        yield Engine(default_registry({}), model)


def test_refining_keeps_the_ids_and_hand_edits_of_the_steps_the_sentence_does_not_touch(
    fake_openai, refining_engine,
):
    fake_openai.script(text(LAZY_REVISION))
    current = edited_plan()

    refined, usage = refine_plan(current, "Also search the knowledge base for the policy",
                                 refining_engine)

    assert refined.version == 3 and refined.id == current.id
    assert refined.step("s1").args == {"order_id": "66001"}  # not the draft's 88231
    assert refined.step("s2").args == {"order_id": "{{s1.order_id}}",
                                       "reason": "screen cracked on arrival"}
    assert refined.step("s2").description == "Refund the order if it was delivered"
    diff = diff_plans(current, refined)
    assert [s.id for s in diff.added] == ["s4"] and not diff.removed
    assert [(c.new.id, c.fields) for c in diff.changed] == [("s3", ["depends_on"])]
    assert usage.llm_calls == 1
    sent = fake_openai.chat_bodies[0]["messages"]
    assert "Also search the knowledge base for the policy" in sent[-1]["content"]
    assert '"66001"' in sent[-1]["content"]  # the model is shown the edited plan


def test_a_sentence_that_names_an_argument_changes_it(fake_openai, refining_engine):
    fake_openai.script(text(revision(
        {"id": "s1", "description": "Look up the order", "tool": "query_order",
         "args": {"order_id": "10086"}},
        {"id": "s2", "description": "Refund the order", "tool": "apply_refund",
         "args": {"order_id": "{{s1.order_id}}"}, "depends_on": ["s1"],
         "condition": "s1.status == 'delivered'"},
        {"id": "s3", "description": "Summarise the results", "tool": None,
         "depends_on": ["s1", "s2"]},
    )))

    refined, _ = refine_plan(edited_plan(), "Look up order 10086 instead", refining_engine)

    assert refined.step("s1").args == {"order_id": "10086"}
    assert refined.step("s2").args["reason"] == "screen cracked on arrival"


def test_a_step_the_revision_leaves_out_is_removed_and_the_rest_is_detached_from_it():
    current = edited_plan()
    proposal = Plan(goal=GOAL, steps=[
        Step(id="s1", description="Look up the order", tool="query_order", args={}),
        Step(id="s3", description="Summarise the results", depends_on=["s1"]),
    ])

    merged = merge_revision(current, proposal, "drop the refund")

    assert merged.ids() == ["s1", "s3"]
    assert merged.step("s1").args == {"order_id": "66001"}
    assert merged.step("s3").depends_on == ["s1"]  # the sentence points at no s3 term


def test_new_steps_are_numbered_after_the_current_plan_and_references_follow():
    current = edited_plan()
    proposal = Plan(goal=GOAL, steps=[
        *current.model_copy(deep=True).steps[:2],
        Step(id="s2b", description="Look up the parcel", tool="query_logistics",
             args={"tracking_no": "{{s1.tracking_no}}"}, depends_on=["s1"]),
        Step(id="s3", description="Summarise the results", depends_on=["s1", "s2", "s2b"]),
    ])

    merged = merge_revision(current, proposal, "also track the parcel")

    assert merged.ids() == ["s1", "s2", "s4", "s3"]
    assert merged.step("s3").depends_on == ["s1", "s2", "s4"]


def test_a_kept_step_the_model_renumbered_keeps_its_id():
    """The revision lists the kept lookup second: it stays s1, the new clock step is s4."""
    current = Plan(goal="Look up order 88231", steps=[
        Step(id="s1", description="Look up order 88231", tool="query_order",
             args={"order_id": "88231"}),
        Step(id="s2", description="Summarise the results", depends_on=["s1"]),
    ])
    proposal = Plan(goal=current.goal, steps=[
        Step(id="s1", description="Get the time in Shanghai", tool="get_current_time",
             args={"timezone": "Asia/Shanghai"}),
        Step(id="s2", description="Look up order 88231", tool="query_order",
             args={"order_id": "88231"}),
        Step(id="s3", description="Summarise the results", depends_on=["s1", "s2"]),
    ])

    merged = merge_revision(current, proposal, "also tell me the time in Shanghai")

    assert [(s.id, s.tool) for s in merged.steps] == [
        ("s3", "get_current_time"), ("s1", "query_order"), ("s2", None)]
    assert merged.step("s2").depends_on == ["s1", "s3"]
    assert diff_plans(current, merged).removed == []


def test_refining_without_a_model_or_without_a_sentence_is_a_one_line_error():
    offline = Engine(default_registry({}), None)
    with pytest.raises(ConfigError, match="needs a model"):
        refine_plan(edited_plan(), "add a step", offline)
    with pytest.raises(ConfigError, match="sentence is empty"):
        refine_plan(edited_plan(), "  ", offline)


def test_two_unusable_revisions_are_a_plan_error(fake_openai, refining_engine):
    fake_openai.script(text("I cannot do that."), text("Still no plan."))
    with pytest.raises(PlanError, match="revision could not be used"):
        refine_plan(edited_plan(), "make it better", refining_engine)
