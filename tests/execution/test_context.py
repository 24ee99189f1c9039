"""Reference resolution and the folded step context."""

from __future__ import annotations

import pytest

from core.errors import ToolArgumentError
from core.execution.context import (
    TRUNCATION_MARKER,
    build_step_context,
    context_step_ids,
    fold_texts,
    resolve_args,
)
from core.plan.model import Plan, Step

RESULTS = {
    "s1": {"tracking_no": "SF123", "count": 3, "items": [{"sku": "A1"}, {"sku": "B2"}]},
    "s2": '{"status": "delivered"}',
    "s3": "plain text",
}


def test_whole_reference_keeps_the_type():
    resolved = resolve_args({"n": "{{s1.count}}", "all": "{{ s1 }}"}, RESULTS)
    assert resolved["n"] == 3
    assert resolved["all"] == RESULTS["s1"]


def test_embedded_references_are_stringified():
    resolved = resolve_args({"note": "parcel {{s1.tracking_no}} x{{s1.count}}"}, RESULTS)
    assert resolved["note"] == "parcel SF123 x3"


def test_index_paths_nested_values_and_json_text_results():
    resolved = resolve_args(
        {"sku": "{{s1.items[1].sku}}", "deep": {"list": ["{{s2.status}}"]}}, RESULTS
    )
    assert resolved == {"sku": "B2", "deep": {"list": ["delivered"]}}


def test_plain_values_are_untouched():
    args = {"a": 1, "b": "no reference", "c": None}
    assert resolve_args(args, RESULTS) == args


def test_missing_field_names_the_reference_and_the_fields():
    with pytest.raises(ToolArgumentError) as info:
        resolve_args({"order": "{{s1.order_id}}"}, RESULTS)
    message = str(info.value)
    assert "'order'" in message and "{{s1.order_id}}" in message
    assert "tracking_no" in message  # the fields that do exist


def test_missing_step_result_is_reported():
    with pytest.raises(ToolArgumentError, match=r"s9 has no result"):
        resolve_args({"x": "{{s9.a}}"}, RESULTS)


def test_field_of_a_text_result_is_an_error():
    with pytest.raises(ToolArgumentError, match="str"):
        resolve_args({"x": "{{s3.a}}"}, RESULTS)


def test_fold_texts_cuts_the_largest_first():
    texts = {"small": "x" * 100, "medium": "y" * 2000, "large": "z" * 9000}
    folded = fold_texts(texts, 3000)
    assert folded["small"] == texts["small"]
    assert sum(len(t) for t in folded.values()) <= 3000
    assert "truncated" in folded["large"] and "truncated" in folded["medium"]
    assert folded["large"].startswith("z")
    assert fold_texts({"a": "short"}, 3000) == {"a": "short"}


def _plan() -> Plan:
    steps = [
        Step(id="s1", description="look up the order", tool="q", status="completed",
             result={"status": "delivered", "blob": "A" * 20000}),
        Step(id="s2", description="unrelated lookup", tool="q", status="completed",
             result={"secret": "NOT-A-DEPENDENCY"}),
        Step(id="s3", description="small input", tool="q", status="completed",
             result={"ok": "SMALL-RESULT"}),
        Step(id="s4", description="decide the refund", depends_on=["s1", "s3"],
             success_criteria="a decision is made"),
        Step(id="s5", description="answer the user", depends_on=["s4"]),
    ]
    return Plan(goal="Refund order 88231 if delivered", definition_of_done="user informed",
                steps=steps)


def test_context_holds_only_dependency_results_and_is_folded():
    plan = _plan()
    text = build_step_context(plan, plan.step("s4"), budget=3000)
    assert "Refund order 88231" in text and "user informed" in text
    assert "decide the refund" in text and "a decision is made" in text
    assert "SMALL-RESULT" in text
    assert "NOT-A-DEPENDENCY" not in text
    assert TRUNCATION_MARKER.split("{")[0] in text
    assert len(text) <= 3200


def test_synthesis_context_sees_its_ancestors():
    plan = _plan()
    assert context_step_ids(plan, plan.step("s4")) == ["s1", "s3"]
    assert context_step_ids(plan, plan.step("s5")) == ["s1", "s3", "s4"]
    plan.steps[-1].depends_on = []
    assert context_step_ids(plan, plan.step("s5")) == ["s1", "s2", "s3", "s4"]


def test_failed_and_skipped_dependencies_are_mentioned():
    plan = _plan()
    plan.step("s3").status = "skipped"
    plan.step("s3").error = "condition not met"
    text = build_step_context(plan, plan.step("s4"))
    assert "s3" in text and "skipped" in text and "condition not met" in text
