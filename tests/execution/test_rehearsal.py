"""Rehearsals: a plan simulated from its tools' declared results, checked step by step, with
no tool called."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from core.execution.rehearsal import rehearse
from core.plan.model import Plan, Step
from core.tools.registry import ToolRegistry, make_tool, tool
from core.tools.result_shape import (
    FieldFound,
    FieldMissing,
    FieldOpen,
    field_schema,
    possible_values,
    sample_value,
)
from core.tools.toolsets import default_registry
from tests.toolsets import counted

SHIPMENT_STATUSES = ["label_created", "in_transit", "delivered"]


@pytest.fixture
def parcels(parcel_tools) -> ToolRegistry:
    """The built-in and parcel tools, counting their calls in this test's file."""
    return default_registry()


def _plan(*steps: Step) -> Plan:
    return Plan(goal="Tell the customer about parcel P-1", steps=list(steps))


def _find() -> Step:
    return Step(id="s1", description="Find the shipment", tool="find_shipment",
                args={"shipment_id": "P-1"})


def _texts(findings) -> list[tuple[str, str]]:
    return [(f.step_id, str(f.message)) for f in findings]


# ---- declaring a result shape ---------------------------------------------------------------


class Receipt(BaseModel):
    receipt_id: str
    paid: bool


def test_a_tool_declares_its_results_as_a_schema_or_a_pydantic_model():
    @tool(read_only=True, output_schema=Receipt, examples=({"receipt_id": "R-9", "paid": True},))
    def receipt(number: str) -> dict:
        """A receipt.

        Args:
            number: its number.
        """
        return {}

    assert receipt.output_schema == {
        "type": "object", "required": ["receipt_id", "paid"],
        "properties": {"receipt_id": {"type": "string"}, "paid": {"type": "boolean"}}}
    assert receipt.output_examples == ({"receipt_id": "R-9", "paid": True},)
    assert make_tool(lambda: None).output_schema is None  # declaring is optional


def test_a_field_is_found_missing_or_open_by_what_the_schema_declares():
    shape = {"type": "object", "properties": {
        "order": {"$ref": "#/$defs/Order"}, "extra": {"type": "object"},
        "lines": {"type": "array", "items": {"type": "object", "properties": {
            "sku": {"type": "string"}}}}},
        "$defs": {"Order": {"type": "object", "properties": {"state": {"enum": ["a", "b"]}}}}}
    assert field_schema(shape, ["order", "state"], root="s1") == FieldFound({"enum": ["a", "b"]})
    assert field_schema(shape, ["order", "colour"], root="s1") == FieldMissing(
        "s1.order", "colour", ("state",))
    assert field_schema(shape, ["lines", 0, "sku"], root="s1") == FieldFound({"type": "string"})
    assert field_schema(shape, ["lines", 0, "sku", "x"], root="s1") == FieldMissing(
        "s1.lines[0].sku", "x", ())
    assert field_schema(shape, ["extra", "anything"], root="s1") == FieldOpen()
    more = {"type": "object", "properties": {"a": {}}, "additionalProperties": True}
    assert field_schema(more, ["b"], root="s1") == FieldOpen()


def test_a_sample_follows_examples_then_listed_values_then_types():
    assert sample_value({"type": "object", "properties": {
        "status": {"enum": ["x", "y"]}, "count": {"type": "integer"},
        "note": {"type": "string", "examples": ["hello"]}, "ok": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "maybe": {"anyOf": [{"type": "number"}, {"type": "null"}]}}}) == {
        "status": "x", "count": 1, "note": "hello", "ok": True, "tags": ["example"],
        "maybe": 1.0}
    assert possible_values({"type": "boolean"}) == [True, False]
    assert possible_values({"const": 3}) == [3]
    assert possible_values({"type": "string"}) is None


# ---- what a rehearsal finds -----------------------------------------------------------------


def test_a_reference_to_an_undeclared_field_is_named_by_its_step(parcels):
    plan = _plan(_find(), Step(
        id="s2", description="Text the tracking number", tool="notify_customer",
        args={"message": "Tracking: {{s1.tracking_number}}", "carrier": "{{s1.carrier}}"},
        depends_on=["s1"]))
    [problem] = rehearse(plan, parcels, model_available=False).problems
    assert problem.step_id == "s2" and problem.kind == "reference"
    assert "{{s1.tracking_number}}" in str(problem.message)
    assert "shipment_id, status, carrier, weight_kg" in str(problem.message)
    assert counted.calls() == []


def test_a_comparison_with_a_value_outside_the_enum_never_holds(parcels):
    plan = _plan(_find(), Step(
        id="s3", description="File a claim if lost", tool="file_claim",
        args={"shipment_id": "{{s1.shipment_id}}"}, depends_on=["s1"],
        condition="s1.status == 'lost'"))
    [problem] = rehearse(plan, parcels, model_available=False).problems
    assert (problem.step_id, problem.kind) == ("s3", "condition")
    assert str(problem.message) == (
        "s3: s1.status == 'lost' in its condition can never be true (s1.status is one of "
        "'label_created', 'in_transit', 'delivered')")


@pytest.mark.parametrize("condition", [
    "s1.status in ['label_created', 'in_transit', 'delivered']", "s1.status != 'lost'"])
def test_a_comparison_every_declared_value_satisfies_always_holds(parcels, condition):
    plan = _plan(_find(), Step(id="s2", description="Text", tool="notify_customer",
                               args={"message": "hi"}, depends_on=["s1"], condition=condition))
    [problem] = rehearse(plan, parcels, model_available=False).problems
    assert problem.step_id == "s2" and "is always true" in str(problem.message)


@pytest.mark.parametrize("condition", [
    "s1.status == 'delivered'", "s1.carrier == 'ACME'", "s1.status == 'lost' or s1.weight_kg > 2"])
def test_a_condition_that_may_go_either_way_is_no_problem(parcels, condition):
    plan = _plan(_find(), Step(id="s2", description="Text", tool="notify_customer",
                               args={"message": "hi"}, depends_on=["s1"], condition=condition))
    problems = rehearse(plan, parcels, model_available=False).problems
    assert _texts(problems) == ([] if "lost" not in condition else [
        ("s2", "s2: s1.status == 'lost' in its condition can never be true (s1.status is one of "
               "'label_created', 'in_transit', 'delivered')")])


def test_a_condition_reading_an_undeclared_field_is_a_reference_problem(parcels):
    plan = _plan(_find(), Step(id="s2", description="Text", tool="notify_customer",
                               args={"message": "hi"}, depends_on=["s1"],
                               condition="s1.state == 'delivered'"))
    [problem] = rehearse(plan, parcels, model_available=False).problems
    assert (problem.step_id, problem.kind) == ("s2", "reference")
    assert "reads 'state' of s1" in str(problem.message)


def test_a_result_without_a_declared_shape_is_not_checked(parcels):
    plan = _plan(
        Step(id="s1", description="Weather", tool="weather", args={"city": "Paris"}),
        Step(id="s2", description="Tell", tool="notify_customer",
             args={"message": "{{s1.anything}}"}, depends_on=["s1"],
             condition="s1.sky == 'never'"),
        Step(id="s3", description="Think", depends_on=["s1"]),
        Step(id="s4", description="Tell", tool="notify_customer",
             args={"message": "{{s3.verdict}}"}, depends_on=["s3"]))
    found = rehearse(plan, parcels, model_available=False)
    assert found.problems == []
    assert _texts(found.notes) == [
        ("s2", "s2: what it reads from s1 is not checked: weather declares no result shape "
               "(output schema)"),
        ("s4", "s4: what it reads from s3 is not checked: s3 is a reasoning step whose result "
               "is not declared")]


def test_arguments_that_would_not_fit_or_cannot_be_filled(parcels):
    plan = _plan(_find(), Step(
        id="s2", description="Claim", tool="file_claim",
        args={"shipment_id": "{{s1.shipment_id}}", "weight_kg": "{{s1.carrier}}"},
        depends_on=["s1"]), Step(id="s3", description="Text", tool="notify_customer", args={}))
    offline = rehearse(plan, parcels, model_available=False)
    assert [(f.step_id, f.kind) for f in offline.problems] == [
        ("s2", "arguments"), ("s3", "arguments")]
    assert "weight_kg" in str(offline.problems[0].message)
    assert "notify_customer needs message" in str(offline.problems[1].message)
    with_model = rehearse(plan, parcels, model_available=True)
    assert [f.step_id for f in with_model.problems] == ["s2"]
    assert ("s3", "s3: the model fills message for notify_customer when the step runs") in \
        _texts(with_model.notes)
    assert with_model.llm_calls == 1


def test_side_effects_are_listed_and_no_tool_is_called(parcels):
    plan = _plan(_find(), Step(id="s2", description="Claim", tool="file_claim",
                               args={"shipment_id": "{{s1.shipment_id}}"}, depends_on=["s1"]),
                 Step(id="s3", description="Answer", depends_on=["s1", "s2"]))
    found = rehearse(plan, parcels, model_available=False)
    assert _texts(found.side_effects) == [
        ("s2", "s2: would call file_claim, which has a side effect (not called in a rehearsal)")]
    assert found.simulated["s1"] == {"shipment_id": "example", "status": "label_created",
                                     "carrier": "example", "weight_kg": 1.0}
    assert found.simulated["s3"] is None
    assert all(step.status == "pending" and step.result is None for step in plan.steps)
    assert counted.calls() == []


def test_the_report_is_worded_in_the_readers_language(parcels):
    plan = _plan(_find(), Step(id="s2", description="Claim", tool="file_claim",
                               args={"shipment_id": "{{s1.id}}"}, depends_on=["s1"],
                               condition="s1.status == 'lost'"))
    report = rehearse(plan, parcels, model_available=False).report("zh")
    assert report["executed"] is False
    assert [p["step"] for p in report["problems"]] == ["s2", "s2"]
    assert "声明的结果里没有这个字段" in report["problems"][0]["text"]
    assert "永远不会成立" in report["problems"][1]["text"]
    assert "排练时不调用" in report["side_effects"][0]["text"]


def test_the_demo_shops_plans_rehearse_without_false_alarms():
    from core.runs.session import build_engine, draft_plan
    from demo.scenarios import SCENARIOS

    engine = build_engine(offline=True, environ={})
    for scenario in SCENARIOS:
        for request in (scenario.request_en, scenario.request_zh):
            plan = draft_plan(request, engine).plan
            assert rehearse(plan, engine.registry, model_available=False).problems == [], request


def test_the_demo_shop_declares_what_its_order_lookup_returns(registry):
    plan = Plan(goal="order 10001", steps=[
        Step(id="s1", description="Look up the order", tool="query_order",
             args={"order_id": "10001"}),
        Step(id="s2", description="Track it", tool="query_logistics",
             args={"tracking_no": "{{s1.tracking_number}}"}, depends_on=["s1"]),
        Step(id="s3", description="Refund if lost", tool="apply_refund",
             args={"order_id": "10001"}, depends_on=["s1"], condition="s1.status == 'lost'")])
    found = rehearse(plan, registry, model_available=False)
    assert [(f.step_id, f.kind) for f in found.problems] == [("s2", "reference"),
                                                             ("s3", "condition")]
    assert [f.step_id for f in found.side_effects] == ["s3"]
